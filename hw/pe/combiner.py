"""The lane-result combiner: the best split of a node over every lane's scan results."""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hw.arith import carry_save_pair, tiles

__all__ = ["LaneCombiner"]


class LaneCombiner(wiring.Component):
    """Keeps the best split of the node under review as the lanes' results arrive.

    Results arrive in any order; the order key (highest score, then first visit) is the
    model's, so the order they are combined in does not matter. A result is taken from
    the lowest lane offering one, and:

    * a result without a split is counted at once;
    * the first split of a node becomes the best at once (thesis mode has only that one,
      so its trees take no cycle more);
    * any later split is compared with the best in two registered stages: the chosen
      result is registered (no priority select in front of a multiplier), then the tile
      products of its cross products with the best (:func:`hw.arith.tiles`), then their
      difference reduced by carry-save adders to two registered rows, with the visits in
      its low bits so that equal scores go to the earlier visit without a second,
      equality compare; the decision is the sign of the two rows' sum (one carry chain).
      The decision writes only what the next comparison needs (the best's fraction and
      visit); the rest of the split and its feature follow a cycle later, so the decision
      drives a few enables, not the whole result's. The next result is taken in the cycle
      of that decision, so a compared result is counted four cycles after it is taken
      (one before) and results are taken at most one per three cycles while the best is
      being compared.

    Members
    -------
    results : In(stream.Signature(result_shape)).array(lanes)
        Each lane's scan results.
    clear : In(1)
        A new node: no best split, no result combined, no comparison in flight (wins over
        a result taken in the same cycle). Asserted only once every result of the node
        before was counted.
    combined : Out(count_bits)
        Results counted since ``clear``: taken and, for a compared split, decided.
    found, split, feature : Out
        Whether a split was found, the best one, and its feature (lane and slot).
    """

    def __init__(self, *, result_shape, lanes, lane_bits, visit_bits, feature_bits, count_bits):
        self._lanes = lanes
        self._lane_bits = lane_bits
        self._feature_bits = feature_bits
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
        offered = Cat(result.valid for result in results).any()
        chosen_lane = Signal(max(1, lane_bits))
        for index in reversed(range(lanes_n)):
            with m.If(results[index].valid):
                m.d.comb += chosen_lane.eq(index)
        chosen = Signal(results[0].p.shape())
        for index, result in enumerate(results):
            with m.If(chosen_lane == index):
                m.d.comb += chosen.eq(result.p)
        chosen_feature = Cat(chosen_lane[:lane_bits], chosen.slot) if lane_bits else chosen.slot

        # Stage 1: the result to compare; stage 2: it again, with the tile products of
        # its cross products with the best; stage 3: their difference as two rows, whose
        # sum's sign is the decision.
        compared = Signal.like(chosen, name="compared")
        compared_feature = Signal(self._feature_bits, name="compared_feature")
        compared_valid = Signal(name="compared_valid")
        held = Signal.like(chosen, name="held")
        held_feature = Signal(self._feature_bits, name="held_feature")
        held_valid = Signal(name="held_valid")
        best = self.split
        over, under = _cross_products(m, compared.split, best)
        # ``held`` changes only with a new compared result (at most every third cycle),
        # so it still holds the decided one in the cycle after its decision.
        with m.If(compared_valid):
            m.d.sync += [held.eq(compared), held_feature.eq(compared_feature)]
        m.d.sync += [held_valid.eq(compared_valid), compared_valid.eq(0)]
        visit_bits = len(self.visit)
        # Higher score wins, then the earlier visit: ~visit in the low bits (visits of one
        # node differ, so the two sides are never equal).
        rows, width = carry_save_pair(
            m, [(0, ~self.visit), *((shift + visit_bits, tile) for shift, tile in under)],
            [(0, ~held.visit), *((shift + visit_bits, tile) for shift, tile in over)])
        difference_rows = [Signal(width, name=f"difference{index}") for index in range(len(rows))]
        deciding = Signal(name="deciding")           # the rows of held's difference are in
        with m.If(held_valid):
            m.d.sync += [row.eq(value) for row, value in zip(difference_rows, rows)]
        m.d.sync += deciding.eq(held_valid)
        difference = Signal(width)
        m.d.comb += difference.eq(sum(difference_rows))
        take = deciding & difference[-1]

        counted = Signal(2)
        taking = offered & ~compared_valid & ~held_valid
        with m.If(taking):
            for index, result in enumerate(results):
                m.d.comb += result.ready.eq(chosen_lane == index)
        with m.If(taking & chosen.split.found & self.found):
            m.d.sync += [compared.eq(chosen), compared_feature.eq(chosen_feature),
                         compared_valid.eq(1)]
        with m.Elif(taking & chosen.split.found):
            self._keep(m, chosen, chosen_feature)
        decided = Signal(name="decided")             # held was decided a cycle ago ...
        taken = Signal(name="taken")                 # ... and is the best: the rest follows
        m.d.sync += [decided.eq(deciding), taken.eq(take)]
        m.d.comb += counted.eq((taking & ~(chosen.split.found & self.found)) + decided)
        with m.If(take):
            m.d.sync += [self.visit.eq(held.visit), self.split.numerator.eq(held.split.numerator),
                         self.split.denominator.eq(held.split.denominator)]
        with m.If(taken):
            self._keep(m, held, held_feature)
        m.d.sync += self.combined.eq(self.combined + counted)
        with m.If(self.clear):
            m.d.sync += [self.found.eq(0), self.combined.eq(0), compared_valid.eq(0),
                         held_valid.eq(0), deciding.eq(0), decided.eq(0), taken.eq(0)]
        return m

    def _keep(self, m, result, feature):
        """``result`` (of ``feature``) becomes the best split."""
        m.d.sync += [self.found.eq(1), self.visit.eq(result.visit), self.split.eq(result.split),
                     self.feature.eq(feature)]


def _cross_products(m, candidate, best):
    """Registered tile products of ``candidate.numerator x best.denominator`` (over) and
    ``best.numerator x candidate.denominator`` (under). A score's numerator is at most
    ``N^3 / 4`` and its denominator ``N^2 / 4`` (``N < 2**count_bits`` the node's weight,
    ``hw.gini``), so only their low ``3 count_bits - 2`` and ``2 count_bits - 2`` bits
    take part."""
    count_bits = (len(candidate.numerator) - 1) // 3

    def numerator(split):
        return split.numerator[:max(1, 3 * count_bits - 2)]

    def denominator(split):
        return split.denominator[:max(1, 2 * count_bits - 2)]

    return (tiles(m, "over", numerator(candidate), denominator(best)),
            tiles(m, "under", numerator(best), denominator(candidate)))
