"""The lane-result combiner: the best split of a node over every lane's scan results."""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["LaneCombiner"]


class LaneCombiner(wiring.Component):
    """Keeps the best split of the node under review as the lanes' results arrive.

    Results arrive in any order; the order key (highest score, then first visit) is the
    model's, so the order they are combined in does not matter. One result is taken per
    cycle (the lowest lane offering one).

    Members
    -------
    results : In(stream.Signature(result_shape)).array(lanes)
        Each lane's scan results.
    clear : In(1)
        A new node: no best split, no result combined (wins over a result taken in the
        same cycle).
    combined : Out(count_bits)
        Results taken since ``clear``.
    found, split, feature : Out
        Whether a split was found, the best one, and its feature (lane and slot).
    """

    def __init__(self, *, result_shape, lanes, lane_bits, visit_bits, feature_bits, count_bits):
        self._lanes = lanes
        self._lane_bits = lane_bits
        super().__init__({
            "results": In(stream.Signature(result_shape)).array(lanes),
            "clear": In(1),
            "combined": Out(count_bits),
            "found": Out(1),
            "visit": Out(visit_bits),
            "split": Out(result_shape["split"].shape),
            "feature": Out(feature_bits),
        })

    def elaborate(self, platform):
        m = Module()
        lanes_n, lane_bits = self._lanes, self._lane_bits
        results = self.results
        result_valid = Cat(result.valid for result in results)
        chosen_lane = Signal(max(1, lane_bits))
        for index in reversed(range(lanes_n)):
            with m.If(results[index].valid):
                m.d.comb += chosen_lane.eq(index)
        chosen = Signal(results[0].p.shape())
        for index, result in enumerate(results):
            with m.If(chosen_lane == index):
                m.d.comb += [chosen.eq(result.p), result.ready.eq(1)]
        candidate = chosen.split
        best_split = self.split
        cross_new = Signal(len(candidate.numerator) + len(candidate.denominator))
        cross_best = Signal.like(cross_new)
        m.d.comb += [cross_new.eq(candidate.numerator * best_split.denominator),
                     cross_best.eq(best_split.numerator * candidate.denominator)]
        better = (~self.found | (cross_new > cross_best) |
                  ((cross_new == cross_best) & (chosen.visit < self.visit)))
        with m.If(result_valid.any()):
            m.d.sync += self.combined.eq(self.combined + 1)
            with m.If(candidate.found & better):
                m.d.sync += [self.found.eq(1), self.visit.eq(chosen.visit), best_split.eq(candidate),
                             self.feature.eq(Cat(chosen_lane[:lane_bits], chosen.slot)
                                             if lane_bits else chosen.slot)]
        with m.If(self.clear):
            m.d.sync += [self.found.eq(0), self.combined.eq(0)]
        return m
