"""Protocol monitors: the stream rules a design's output streams must keep.

A design's output stream (``amaranth.lib.stream``) must, once it raises valid, hold valid
and the payload unchanged until the cycle in which ready is high (the transfer), and
valid and, while valid is high, the payload must be 0s and 1s (no X or Z).
:class:`StreamMonitor` checks these rules on the values a consumer samples once per
cycle (in the read-only phase before the rising edge) and raises
:class:`ProtocolViolation`, naming the stream, the simulated time and cycle, and the rule.
Every :class:`sim.support.streams.StreamSink` owns one, so every testbench and the host
driver check every stream they consume, at no cost while the stream is idle.

The rule "valid never waits for ready" cannot be seen from one run; the formal proofs
check it.
"""

__all__ = ["ProtocolViolation", "StreamMonitor", "RULES", "resolved"]

#: The rules, by the short name the messages use.
RULES = {
    "valid-dropped": "valid fell before the transfer (valid was high and ready low in the cycle before)",
    "payload-changed": "the payload changed while valid was high and ready low in the cycle before",
    "valid-unknown": "valid is X or Z",
    "payload-unknown": "the payload has X or Z bits while valid is high",
}


class ProtocolViolation(AssertionError):
    """A design broke a stream rule on one of its output streams."""

    def __init__(self, stream, time_ns, cycle, rule, detail=""):
        self.stream, self.time_ns, self.cycle, self.rule = stream, time_ns, cycle, rule
        super().__init__(f"stream rule violated on output stream {stream!r} at {time_ns:g} ns "
                         f"(cycle {cycle}): {rule}: {RULES[rule]}{'; ' + detail if detail else ''}")


def resolved(value):
    """The integer of a sampled signal value, or None when it has X or Z bits."""
    try:
        return int(value)
    except ValueError:
        return None


class StreamMonitor:
    """The stream rules of one output stream, fed one sample per cycle.

    ``name`` names the stream in messages; ``period_ns`` turns simulated time into cycles.
    Call :meth:`sample` in every cycle in which valid is high, and in the first cycle after
    one in which it was high (the consumer may skip the cycles in between: valid low
    with nothing pending breaks no rule). :meth:`forget` drops the history (a reset).
    """

    def __init__(self, name, period_ns=10):
        self.name = name
        self.period_ns = period_ns
        self.checked = 0            # samples checked
        self._held = None           # payload a stall obliges the design to hold, or None

    @property
    def pending(self):
        """Whether the last sample was a stall, so the next cycle must be sampled."""
        return self._held is not None

    def forget(self):
        self._held = None

    def sample(self, time_ns, valid, ready, payload, in_reset=False):
        """Check one cycle's ``valid``, ``ready`` and ``payload`` (signal values or ints);
        return ``(valid, payload)`` as integers (payload None while valid is low).
        ``in_reset``: the design is held in reset in this cycle (no rule applies, and the
        next cycle does not continue this one)."""
        self.checked += 1
        valid_bit = resolved(valid)
        if in_reset:
            self._held = None
            return valid_bit or 0, resolved(payload) if valid_bit else None
        if valid_bit is None:
            self._fail(time_ns, "valid-unknown", f"valid = {valid}")
        held, self._held = self._held, None
        if not valid_bit:
            if held is not None:
                self._fail(time_ns, "valid-dropped")
            return 0, None
        word = resolved(payload)
        if word is None:
            self._fail(time_ns, "payload-unknown", f"payload = {payload}")
        if held is not None and word != held:
            self._fail(time_ns, "payload-changed", f"held {held:#x}, now {word:#x}")
        if not int(ready):
            self._held = word
        return 1, word

    def _fail(self, time_ns, rule, detail=""):
        self._held = None
        raise ProtocolViolation(self.name, time_ns, int(time_ns // self.period_ns), rule, detail)
