"""The property library finds a component's streams, memories and state registers."""

from amaranth.hdl import Module, Signal
from amaranth.lib import enum, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.formal.properties import (fragment_of, input_ports, memory_bounds, output_ports,
                                  state_bounds, stream_ports)


class _Colour(enum.Enum, shape=2):
    RED = 0
    GREEN = 1
    BLUE = 2


class Toy(wiring.Component):
    """Two output streams (one inside a sub-interface), one input stream, a memory of
    ``depth`` entries, an FSM of three states and an enumerated register."""

    def __init__(self, depth=5):
        self.depth = depth
        inner = wiring.Signature({"answers": Out(stream.Signature(3))})
        super().__init__({"requests": In(stream.Signature(2)), "results": Out(stream.Signature(4)),
                          "nested": Out(inner), "go": In(1), "error": Out(1)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.store = store = Memory(shape=4, depth=self.depth, init=[])
        write, read = store.write_port(), store.read_port()
        colour = Signal(_Colour)
        m.d.sync += [colour.eq(_Colour.GREEN), write.addr.eq(write.addr + 1),
                     read.addr.eq(self.requests.payload)]
        with m.FSM():
            with m.State("A"):
                m.next = "B"
            with m.State("B"):
                m.next = "C"
            with m.State("C"):
                m.next = "A"
        return m


def test_streams_are_found_with_their_direction_at_any_depth():
    toy = Toy()
    ports = [(port.name, port.output, len(port.payload)) for port in stream_ports(toy)]
    assert ports == [("requests", False, 2), ("results", True, 4), ("nested__answers", True, 3)]
    assert sorted(name for name, _ in input_ports(toy)) == [
        "go", "nested__answers__ready", "requests__payload", "requests__valid", "results__ready"]
    assert sorted(name for name, _ in output_ports(toy)) == [
        "error", "nested__answers__payload", "nested__answers__valid", "requests__ready",
        "results__payload", "results__valid"]
    fragment_of(toy)


def test_an_array_of_streams_is_one_stream_per_element():
    class Lanes(wiring.Component):
        def __init__(self):
            super().__init__({"splits": In(stream.Signature(3)).array(2, 3),
                              "best": Out(stream.Signature(3))})

        def elaborate(self, platform):
            return Module()

    lanes = Lanes()
    lanes._MustUse__silence = True         # read for its ports only, never elaborated
    ports = [(port.name, port.output) for port in stream_ports(lanes)]
    assert ports == [(f"splits__{i}__{j}", False) for i in range(2) for j in range(3)] + [("best", True)]
    assert stream_ports(lanes)[4].interface is lanes.splits[1][1]
    assert {f"splits__{i}__{j}__valid" for i in range(2) for j in range(3)} <= {
        name for name, _ in input_ports(lanes)}


def test_memories_of_a_depth_that_is_not_a_power_of_two_are_bounded():
    assert [(bound.name, bound.depth, bound.write) for bound in memory_bounds(fragment_of(Toy(5)))] == [
        ("store write port 0", 5, True), ("store read port 0", 5, False)]
    assert memory_bounds(fragment_of(Toy(5)), reads=False)[0].write
    assert memory_bounds(fragment_of(Toy(8))) == []


def test_fsm_and_enum_registers_are_bounded_to_their_named_values():
    bounds = {bound.name: bound.values for bound in state_bounds(fragment_of(Toy()))}
    assert bounds == {"fsm_state": (0, 1, 2), "colour": tuple(member.value for member in _Colour)}
