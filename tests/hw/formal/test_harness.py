"""The harness's properties catch broken output streams (mutation tests).

A register slice written here is correct; its mutants drop valid before the transfer,
change the payload under a stall, or raise valid only when ready is high. The same
property code that proves the catalogue's designs must prove the slice and fail on each
mutant with a counterexample (or, for the valid that waits for ready, find the
combinational path). A mutated wrapper of a real block (the radix sorter whose payload
is disturbed while stalled) is caught the same way.
"""

from pathlib import Path

import pytest
from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hw.formal import FormalHarness, prove, ready_to_valid_paths, stream_ports
from hw.sorter import RadixSorter, code_layout, sorted_row_layout


class Slice(wiring.Component):
    """A one-entry register slice; ``mutation`` breaks its output stream on purpose."""

    def __init__(self, mutation=None):
        self.mutation = mutation
        super().__init__({"input": In(stream.Signature(4)), "output": Out(stream.Signature(4))})

    def elaborate(self, platform):
        m = Module()
        full = Signal()
        data = Signal(4)
        waited = Signal(2)
        m.d.comb += [self.input.ready.eq(~full | self.output.ready), self.output.payload.eq(data),
                     self.output.valid.eq(full & self.output.ready if self.mutation == "wait" else full)]
        with m.If(self.input.valid & self.input.ready):
            m.d.sync += [full.eq(1), data.eq(self.input.payload), waited.eq(0)]
        with m.Elif(self.output.ready):
            m.d.sync += full.eq(0)
        with m.Elif(full):
            m.d.sync += waited.eq(waited + 1)
            if self.mutation == "drop":         # gives up after two stalled cycles
                with m.If(waited == 1):
                    m.d.sync += full.eq(0)
            if self.mutation == "change":       # counts up while stalled
                m.d.sync += data.eq(data + 1)
        return m


class DisturbedSorter(wiring.Component):
    """A real block with a mutated output: the radix sorter's ``sorted`` stream with its
    code inverted in every other cycle while the consumer stalls."""

    def __init__(self):
        self.sorter = RadixSorter(max_rows=2, code_bits=1, radix_bits=1)
        super().__init__({"codes": In(stream.Signature(code_layout(1))),
                          "sorted": Out(stream.Signature(sorted_row_layout(1, 1)))})

    def elaborate(self, platform):
        m = Module()
        m.submodules.sorter = sorter = self.sorter
        toggle = Signal()
        m.d.sync += toggle.eq(~toggle)
        wiring.connect(m, wiring.flipped(self.codes), sorter.codes)
        stalled = sorter.sorted.valid & ~self.sorted.ready
        m.d.comb += [self.sorted.valid.eq(sorter.sorted.valid),
                     sorter.sorted.ready.eq(self.sorted.ready),
                     self.sorted.p.eq(sorter.sorted.p),
                     self.sorted.p.code.eq(sorter.sorted.p.code ^ (stalled & toggle))]
        return m


def _prove(tmp_path, component, checks, **options):
    return prove(FormalHarness(component, checks), Path(tmp_path) / "proof", **options)


def test_the_slice_is_proved_and_has_no_path_from_ready_to_valid(tmp_path):
    outcome = _prove(tmp_path, Slice(), ("valid", "payload"), mode="prove", depth=4)
    assert outcome.status == "pass", outcome.log
    assert outcome.trace is None
    paths, _ = ready_to_valid_paths(Slice(), tmp_path / "paths", ["output"], name="slice")
    assert paths == {"output": False}


@pytest.mark.parametrize("mutation, check", [("drop", "valid"), ("change", "payload")])
def test_a_broken_output_stream_fails_with_a_counterexample(tmp_path, mutation, check):
    outcome = _prove(tmp_path, Slice(mutation), (check,), mode="prove", depth=4)
    assert outcome.status == "fail", outcome.log
    assert outcome.trace is not None and Path(outcome.trace).stat().st_size > 0
    assert outcome.failed, "the failed assertion is named"


def test_the_other_rule_still_holds_for_each_mutant(tmp_path):
    # Dropping valid keeps the payload; changing the payload keeps valid: each mutant
    # breaks exactly the rule it was written to break.
    assert _prove(tmp_path, Slice("drop"), ("payload",), mode="prove", depth=4).status == "pass"
    assert _prove(tmp_path, Slice("change"), ("valid",), mode="prove", depth=4).status == "pass"


def test_a_valid_that_waits_for_ready_is_found_in_the_netlist(tmp_path):
    paths, _ = ready_to_valid_paths(Slice("wait"), tmp_path, ["output"], name="slice")
    assert paths == {"output": True}


def test_a_mutated_wrapper_of_a_real_block_is_caught(tmp_path):
    # The earliest stall on an emitted row is found at 22 steps (clear, load, offsets,
    # scatter through the fetched row, the output register), so 24.
    outcome = _prove(tmp_path, DisturbedSorter(), ("payload",), mode="bmc", depth=24)
    assert outcome.status == "fail", outcome.log
    assert outcome.trace is not None
    original = _prove(tmp_path, RadixSorter(max_rows=2, code_bits=1, radix_bits=1), ("payload",),
                      mode="prove", depth=4)
    assert original.status == "pass", original.log


def test_an_abort_releases_the_obligation_and_only_then_the_proof_passes(tmp_path):
    from hw.rng import TreeRandom
    strict = prove(FormalHarness(TreeRandom(bound_bits=2, tree_index_bits=1), ("valid",)),
                   tmp_path / "strict", mode="bmc", depth=30)   # derivation, a draw, a start
    assert strict.status == "fail", "a start abandons a pending draw"
    aborted = prove(FormalHarness(TreeRandom(bound_bits=2, tree_index_bits=1), ("valid",),
                                  aborts=("start",)), tmp_path / "aborted", mode="prove", depth=4)
    assert aborted.status == "pass", aborted.log


def test_input_streams_are_assumed_and_output_streams_asserted():
    harness = FormalHarness(Slice(), ("valid", "payload"))
    ports = {port.name: port.output for port in stream_ports(harness.component)}
    assert ports == {"input": False, "output": True}
    assert harness.plan() == [("valid", "output"), ("payload", "output")]


class Silent(wiring.Component):
    """An output stream that is never valid: every stream rule holds, vacuously."""

    def __init__(self):
        super().__init__({"output": Out(stream.Signature(4))})

    def elaborate(self, platform):
        return Module()


def test_a_cover_finds_a_transfer_and_a_dead_stream_is_told_apart(tmp_path):
    # The silent stream passes the stream rules like the slice: only the cover tells
    # that nothing can ever move on it.
    assert _prove(tmp_path, Silent(), ("valid", "payload"), mode="prove", depth=2).status == "pass"
    reached = _prove(tmp_path, Slice(), ("cover",), mode="cover", depth=5)
    assert reached.status == "pass" and reached.reached == 1, reached.log   # loaded, then sent
    assert reached.trace is not None
    dead = _prove(tmp_path, Silent(), ("cover",), mode="cover", depth=5)
    assert dead.status == "fail" and dead.reached is None, dead.log


class Nested(wiring.Component):
    """A block inside a block, each with a register called ``count``."""

    def __init__(self, inner=None):
        self.inner = inner
        super().__init__({"go": In(1), "total": Out(4)})

    def elaborate(self, platform):
        m = Module()
        count = Signal(4, name="count")
        m.d.sync += count.eq(count + self.go)
        m.d.comb += self.total.eq(count)
        if self.inner is not None:
            m.submodules.inner = self.inner
            m.d.comb += self.inner.go.eq(self.go)
        return m


def test_internals_find_signals_by_dotted_path_and_blocks_by_path():
    from amaranth.hdl import Fragment

    from hw.formal.harness import Internals
    inner = Nested()
    outer = Nested(inner)
    internals = Internals(outer, Fragment.get(outer, None))
    with pytest.raises(KeyError, match="2 signals named 'count'"):
        internals["count"]
    assert internals[".count"] is not internals["inner.count"]
    assert internals["inner.total"] is inner.total     # a port of an inner block, by path
    assert internals.block("") is outer and internals.block("inner") is inner
    with pytest.raises(KeyError, match="no component at 'nowhere'"):
        internals.block("nowhere")
