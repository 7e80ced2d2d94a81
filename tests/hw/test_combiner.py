"""The PE's lane combiner (hw/pe/combiner.py) in Amaranth's simulator: random nodes of
scan results offered on random lanes at random times, the best split checked against the
golden model's order key (higher score as an exact fraction, then the earlier visit), and
the cycles a result takes to be counted."""

import random
from fractions import Fraction

import pytest
from amaranth.sim import Simulator

from hw.lane import result_layout
from hw.pe.combiner import LaneCombiner

CLASSES, CODE_BITS, COUNT_BITS, POSITION_BITS, VISIT_BITS = 3, 16, 12, 11, 5


def make(lanes):
    lane_bits = (lanes - 1).bit_length()
    slot_bits = 2
    return LaneCombiner(result_shape=result_layout(slot_bits, VISIT_BITS, CLASSES, CODE_BITS,
                                                   COUNT_BITS, POSITION_BITS),
                        lanes=lanes, lane_bits=lane_bits, visit_bits=VISIT_BITS,
                        feature_bits=lane_bits + slot_bits, count_bits=VISIT_BITS + 1)


def random_score(rng, weight):
    """A split score ``(A nR + B nL) / (nL nR)`` of a node of total weight ``weight``, as
    the Gini scanner forms it (so within the bounds the combiner relies on)."""
    n_left = rng.randrange(1, weight)
    n_right = weight - n_left
    a = rng.randrange(n_left, n_left * n_left + 1)          # sum of squares, n <= A <= n^2
    b = rng.randrange(n_right, n_right * n_right + 1)
    return a * n_right + b * n_left, n_left * n_right


def random_node(rng, lanes):
    """Results of one node: ``[(lane, visit, found, numerator, denominator, threshold)]``,
    with equal scores among them often (the visit decides those)."""
    weight = rng.choice([2, 3, 40, (1 << COUNT_BITS) - 1])
    count = rng.randrange(1, 2 * lanes + 1)
    scores = [random_score(rng, weight) for _ in range(rng.randrange(1, 4))]
    results = []
    for visit in rng.sample(range(1 << VISIT_BITS), count):
        found = rng.random() < 0.85
        numerator, denominator = rng.choice(scores) if found else (0, 1)
        results.append((rng.randrange(lanes), visit, found, numerator, denominator,
                        rng.randrange(1 << CODE_BITS)))
    rng.shuffle(results)
    return results


def expected_best(results):
    found = [r for r in results if r[2]]
    if not found:
        return None
    return max(found, key=lambda r: (Fraction(r[3], r[4]), -r[1]))


def run(lanes, nodes, seed, stall):
    """Offers each node's results (each lane's in its own order, with random gaps when
    ``stall``), waits until ``combined`` counts them all, and returns per node the
    combiner's (found, visit, threshold, feature) and the cycles the last result took."""
    dut = make(lanes)
    rng = random.Random(seed)
    outcome = []

    async def bench(ctx):
        for results in nodes:
            ctx.set(dut.clear, 1)
            await ctx.tick()
            ctx.set(dut.clear, 0)
            queues = [[r for r in results if r[0] == lane] for lane in range(lanes)]
            waited = 0
            while ctx.get(dut.combined) < len(results):
                for lane, queue in enumerate(queues):
                    port = dut.results[lane]
                    if queue and not ctx.get(port.valid) and (not stall or rng.random() < 0.4):
                        _, visit, found, numerator, denominator, threshold = queue[0]
                        ctx.set(port.p, {"slot": visit % 4, "visit": visit, "split": {
                            "found": found, "threshold": threshold, "numerator": numerator,
                            "denominator": denominator}})
                        ctx.set(port.valid, 1)
                taken = [lane for lane in range(lanes) if ctx.get(dut.results[lane].valid)
                         and ctx.get(dut.results[lane].ready)]
                await ctx.tick()
                for lane in taken:
                    queues[lane].pop(0)
                    ctx.set(dut.results[lane].valid, 0)
                waited = 0 if any(queues) else waited + 1
                assert waited < 10, "results taken but never counted"
            assert all(not queue for queue in queues)
            outcome.append((ctx.get(dut.found), ctx.get(dut.visit), ctx.get(dut.split.threshold),
                            ctx.get(dut.feature), waited))

    simulator = Simulator(dut)
    simulator.add_clock(1e-8)
    simulator.add_testbench(bench)
    simulator.run()
    return outcome


@pytest.mark.parametrize("lanes", [1, 2, 8])
@pytest.mark.parametrize("stall", [False, True])
def test_best_split_is_the_models(lanes, stall):
    rng = random.Random(lanes * 10 + stall)
    nodes = [random_node(rng, lanes) for _ in range(60)]
    lane_bits = (lanes - 1).bit_length()
    for results, (found, visit, threshold, feature, _) in zip(nodes, run(lanes, nodes, 7, stall)):
        best = expected_best(results)
        assert found == (best is not None)
        if best is not None:
            lane, best_visit = best[0], best[1]
            assert (visit, threshold) == (best_visit, best[5])
            assert feature == ((best_visit % 4) << lane_bits) + lane


def test_latency_first_split_at_once_later_splits_four_cycles():
    """The first split is counted the cycle after it is taken, as is a result without a
    split; a split compared with the best four cycles after (its tile products, its
    difference's two rows, its decision, then the rest of the split written a cycle later)."""
    score = random_score(random.Random(1), 40)
    alone = [[(0, 3, True, *score, 9)]]
    assert run(1, alone, 0, False)[0][4] == 1
    missing = [[(0, 3, False, 0, 1, 9)]]
    assert run(1, missing, 0, False)[0][4] == 1
    pair = [[(0, 3, True, *score, 9), (1, 4, True, *score, 10)]]
    # Both offered together: the first at once, the second taken a cycle later, compared.
    assert run(2, pair, 0, False)[0][4] == 5
