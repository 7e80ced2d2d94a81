"""Construction-time parameter checks and widths shared by every gateware block: the one
integer check of the gateware and the one bit-width rule."""

__all__ = ["check_integer", "refuse_construction", "bits"]


def check_integer(name, value, minimum, maximum):
    """Return ``value`` if it is an integer in [minimum, maximum], else raise a clear error."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    if not minimum <= value <= maximum:
        raise ValueError(f"{name} must be between {minimum} and {maximum}, not {value}")
    return value


def refuse_construction(component):
    """Mark a half-built component as deliberately unused before its constructor raises.

    Amaranth warns about every elaboratable that is never elaborated; one whose
    parameters were refused is not a forgotten design, so silence that warning.
    """
    component._MustUse__silence = True


def bits(maximum):
    """Bits to hold the integers 0 .. ``maximum`` (at least 1)."""
    return max(1, int(maximum).bit_length())
