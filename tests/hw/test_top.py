"""forest_top's register map and memory format (``hw/top.py``) against ``docs/registers.md``;
the behaviour is simulated in ``tests/sim/test_tb_top.py``."""

import re

import pytest
from amaranth.hdl import Elaboratable, Shape
from amaranth.lib import data

from hw.designs import component
from hw.system import REGISTERS
from hw.top import ForestTop, TOP_REGISTERS
from sim.runner import PROJECT_ROOT
from sim.support.streams import pack

DOC = (PROJECT_ROOT / "docs" / "registers.md").read_text()


def test_wrapper_registers_are_documented_and_apart_from_the_system():
    for name, (address, access, width, _) in TOP_REGISTERS.items():
        assert 0x30 <= address <= 0x3F, f"{name} is outside the wrapper's decode"
        assert f"| `{name}` | `{address:#04x}` | {access} | {width} |" in DOC, f"{name} is not documented as built"
    addresses = [address for address, *_ in {**REGISTERS, **TOP_REGISTERS}.values()]
    assert len(addresses) == len(set(addresses)), "two registers share an address"


def _ones(shape):
    """A field value (or struct / array of them) with every bit set."""
    if isinstance(shape, data.StructLayout):
        return {name: _ones(field.shape) for name, field in shape}
    return (1 << Shape.cast(shape).width) - 1


def _zeros(shape):
    if isinstance(shape, data.StructLayout):
        return {name: _zeros(field.shape) for name, field in shape}
    return 0


def _ranges(layout, prefix=""):
    """(field, low bit, high bit) found by packing each field alone at all ones."""
    for name, field in layout:
        if isinstance(field.shape, data.StructLayout):
            yield from ((f"{name}.{inner}", low + field.offset, high + field.offset)
                        for inner, low, high in _ranges(field.shape))
            continue
        fields = {other: _zeros(f.shape) for other, f in layout}
        fields[name] = _ones(field.shape)
        value = pack(layout, fields)
        yield name, (value & -value).bit_length() - 1, value.bit_length() - 1


def _constructed_only(elaboratable, seen=None):
    """Mark a component built only for its layouts, and those it made, as never elaborated."""
    seen = set() if seen is None else seen
    if id(elaboratable) in seen:
        return
    seen.add(id(elaboratable))
    elaboratable._MustUse__silence = True
    for value in vars(elaboratable).values():
        if isinstance(value, Elaboratable):
            _constructed_only(value, seen)


def test_memory_format_table_is_the_default_build():
    top = component("forest_top")
    _constructed_only(top)
    system = top._system
    for stream in ("dataset", "trees_in", "rows", "trees", "predictions"):
        layout = getattr(system, stream).signature.members["payload"].shape
        width = Shape.cast(layout).width
        cells = ", ".join(f"`{name}` {low}..{high}" if high > low else f"`{name}` {low}"
                          for name, low, high in _ranges(layout))
        row = f"| `{stream}` | {width} | {-(-width // 32)} | {cells} |"
        assert row in DOC, f"docs/registers.md's memory format of {stream} is not the build's:\n{row}"
        assert top.words[stream] == -(-width // 32)


@pytest.mark.parametrize("arguments, error, text", [
    ({"pe_count": 0}, ValueError, "pe_count must be between 1 and 64, not 0"),
    ({"separate_core_clock": 1}, TypeError, "separate_core_clock must be True or False, not 1"),
    ({"read_fifo_depth": 0}, ValueError, "read_fifo_depth must be between 1 and 256, not 0"),
    ({"read_fifo_depth": 2.0}, TypeError, "read_fifo_depth"),
    ({"crossing_depth": 1}, ValueError, "crossing_depth must be between 2 and 64, not 1"),
    ({"crossing_depth": 12}, ValueError, "crossing_depth must be a power of two, not 12"),
])
def test_bad_parameters_are_refused(arguments, error, text):
    with pytest.raises(error, match=text):
        ForestTop(**arguments)
    assert re.search(r"\| `csr` \| Avalon-MM slave", DOC)
