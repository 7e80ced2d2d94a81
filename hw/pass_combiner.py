"""Pass combiner: a node's best split over the passes of the planned out-of-core PE's
lanes, with the lazy draw's choice of lanes (``docs/out_of_core.md``).

Reference: ``sw.methods.forest.histogram`` (``_draw_lazily`` with ``lanes``, then
``_best_of_node``). A node's features are drawn a pass of ``lanes`` at a time; each lane
reports its feature's split (``hw.histogram_lane``). At ``min_samples_leaf = 1`` a lane
finds a split exactly when its feature is not constant. The model takes the non-constant
features in draw order until it has the ``needed`` ones, so in each pass the lanes used
are the first ``needed`` that found a split, and the lanes after the last of them were
drawn past the model's stop (the generator is rewound to after ``last_used``'s draw).
The used lanes' splits go to the PE's :class:`~hw.pe.combiner.LaneCombiner`, with the
visit ``(pass, lane)``, so the node's best is the highest score, then the earliest draw.

Per pass: a header on ``passes`` (the lanes drawn, the features still needed, whether the
pass starts a node), every drawn lane's split on ``splits``, then one result on
``results``: how many lanes were used and the last of them, and the node's best so far
(its lane and pass, and the split).
"""

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hw.checks import bits, check_integer, refuse_construction
from hw.histogram_lane import lane_split_layout
from hw.lane import result_layout
from hw.pe.combiner import LaneCombiner

__all__ = ["PassCombiner", "pass_layout", "pass_result_layout"]


def pass_layout(lanes):
    """A pass's header: the lanes drawn, the non-constant features still needed (at least
    1), and whether it is the node's first pass."""
    return data.StructLayout({"drawn": lanes, "needed": range(lanes + 1), "first": 1})


def pass_result_layout(lanes, pass_bits, classes, code_bits, count_bits):
    """A pass's result: the lanes used and the last of them; the node's best so far."""
    return data.StructLayout({
        "used": range(lanes + 1), "last_used": range(lanes), "found": 1,
        "pass_index": pass_bits, "lane": range(lanes),
        "split": lane_split_layout(classes, code_bits, count_bits),
    })


class PassCombiner(wiring.Component):
    """Chooses a pass's lanes as the lazy draw does and keeps the node's best split.

    Parameters
    ----------
    lanes : int
        Lanes a pass draws (1 to 16).
    pass_bits : int
        Width of a node's pass count (1 to 8; a node takes at most ``2**pass_bits`` passes).
    classes, code_bits, count_bits : int
        As the lanes' (``hw.histogram_lane``).
    """

    def __init__(self, *, lanes=8, pass_bits=4, classes=8, code_bits=8, count_bits=13):
        try:
            check_integer("lanes", lanes, 1, 16)
            check_integer("pass_bits", pass_bits, 1, 8)
            check_integer("classes", classes, 2, 64)
            check_integer("code_bits", code_bits, 1, 10)
            check_integer("count_bits", count_bits, 1, 24)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        self.lanes, self.pass_bits = lanes, pass_bits
        self.classes, self.code_bits, self.count_bits = classes, code_bits, count_bits
        self.lane_bits = bits(lanes - 1) if lanes > 1 else 0
        split = lane_split_layout(classes, code_bits, count_bits)
        super().__init__({
            "passes": In(stream.Signature(pass_layout(lanes))),
            "splits": In(stream.Signature(split)).array(lanes),
            "results": Out(stream.Signature(pass_result_layout(lanes, pass_bits, classes, code_bits,
                                                               count_bits))),
        })

    def elaborate(self, platform):
        m = Module()
        L = self.lanes
        visit_bits = self.lane_bits + self.pass_bits
        shape = result_layout(self.pass_bits, visit_bits, self.classes, self.code_bits, self.count_bits, 1)
        m.submodules.combiner = combiner = LaneCombiner(
            result_shape=shape, lanes=L, lane_bits=self.lane_bits, visit_bits=visit_bits,
            feature_bits=visit_bits, count_bits=self.pass_bits + self.lane_bits + 1)

        header = Signal.like(self.passes.payload)
        pass_index = Signal(self.pass_bits)
        held = [Signal.like(split.payload, name=f"held{j}") for j, split in enumerate(self.splits)]
        captured, used, fed = Signal(L), Signal(L), Signal(L)
        expected = Signal(len(combiner.combined))      # results combined since the node began
        used_count, last_used = Signal(range(L + 1)), Signal(range(L))

        with m.FSM(name="pass_combiner"):
            with m.State("Wait for a pass"):
                m.d.comb += self.passes.ready.eq(1)
                with m.If(self.passes.valid):
                    m.d.sync += [header.eq(self.passes.payload), captured.eq(0), fed.eq(0)]
                    with m.If(self.passes.payload.first):
                        m.d.comb += combiner.clear.eq(1)
                        m.d.sync += [pass_index.eq(0), expected.eq(0)]
                    with m.Else():
                        m.d.sync += pass_index.eq(pass_index + 1)
                    m.next = "Collect the lanes' splits"
            with m.State("Collect the lanes' splits"):
                for j, split in enumerate(self.splits):
                    m.d.comb += split.ready.eq(header.drawn[j] & ~captured[j])
                    with m.If(split.valid & split.ready):
                        m.d.sync += [held[j].eq(split.payload), captured[j].eq(1)]
                with m.If(captured == header.drawn):
                    self._choose(m, header, held, used, used_count, last_used)
                    m.next = "Combine the used lanes"
            with m.State("Combine the used lanes"):
                self._feed(m, combiner, held, used, fed, pass_index)
                # Once every used lane is counted, the best is final: the result is
                # registered from it as the offer begins.
                with m.If((fed == used) & (combiner.combined == expected + used_count)):
                    result = self.results.payload
                    m.d.sync += [expected.eq(expected + used_count),
                                 result.used.eq(used_count), result.last_used.eq(last_used),
                                 result.found.eq(combiner.found),
                                 result.lane.eq(combiner.feature[:self.lane_bits] if self.lane_bits else 0),
                                 result.pass_index.eq(combiner.feature[self.lane_bits:]),
                                 *[getattr(result.split, name).eq(getattr(combiner.split, name))
                                   for name in ("found", "threshold", "numerator", "denominator",
                                                "left_counts")]]
                    m.next = "Offer the result"
            with m.State("Offer the result"):
                m.d.comb += self.results.valid.eq(1)
                with m.If(self.results.ready):
                    m.next = "Wait for a pass"
        return m

    def _choose(self, m, header, held, used, used_count, last_used):
        """The lanes used: in lane order, the first ``needed`` that found a split."""
        taken = 0
        chosen = []
        for j, split in enumerate(held):
            use = Signal(name=f"use{j}")
            m.d.comb += use.eq(header.drawn[j] & split.found & (taken < header.needed))
            chosen.append(use)
            taken = taken + use
        m.d.sync += [used.eq(Cat(*chosen)), used_count.eq(taken)]
        for j, use in enumerate(chosen):
            with m.If(use):
                m.d.sync += last_used.eq(j)

    def _feed(self, m, combiner, held, used, fed, pass_index):
        """The used lanes' splits into the combiner, each with its visit (pass, lane)."""
        for j, split in enumerate(held):
            port = combiner.results[j]
            m.d.comb += [port.valid.eq(used[j] & ~fed[j]),
                         port.payload.slot.eq(pass_index),
                         port.payload.visit.eq(Cat(Const(j, self.lane_bits), pass_index)),
                         *[getattr(port.payload.split, name).eq(getattr(split, name))
                           for name in ("found", "threshold", "numerator", "denominator", "left_counts")]]
            with m.If(port.valid & port.ready):
                m.d.sync += fed[j].eq(1)
