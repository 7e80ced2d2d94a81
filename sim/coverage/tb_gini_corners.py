"""A cocotb test that adds back-to-back segments to ``sim.tb_gini`` (run by ``python -m
sim.coverage``): ``GiniTestbench.check`` offers one segment at a time, so the scanner never
holds a waiting segment header off; here whole batches of random segments are queued at
once, each split compared in order with ``best_split_of_segment``."""

import cocotb
from cocotb.triggers import RisingEdge

from sim.coverage import bins
from sim.tb_gini import GiniTestbench
from sw.methods.forest.model import best_split_of_segment


def _observed(split, classes, count_bits):
    mask = (1 << count_bits) - 1
    left = [(split["left_counts"] >> (c * count_bits)) & mask for c in range(classes)]
    return (split["threshold"], split["rows_left"], split["numerator"], split["denominator"], left)


@cocotb.test()
async def queued_segments_match_model(dut):
    tb = GiniTestbench(dut)
    await tb.begin()
    for batch in range(tb.settings.get("batches", 6)):
        leaf = tb.rng.choice([1, 2])
        dut.min_samples_leaf.value = leaf
        tb.splits.clear()
        segments = [tb.random_segment() for _ in range(tb.rng.randint(2, 6))]
        for segment in segments:
            tb.send(*segment)
            tb.coverage.record(bins.gini_segment, *segment, leaf, tb.classes, tb.row_bits)
        budget = sum(30 * len(codes) + 40 * tb.classes + 200 for codes, _, _ in segments)
        for _ in range(budget):
            if len(tb.splits.received) == len(segments):
                break
            await RisingEdge(dut.clk)
        assert len(tb.splits.received) == len(segments), f"batch {batch}: {len(tb.splits.received)} splits"
        for index, ((codes, labels, weights), got) in enumerate(zip(segments, tb.splits.received)):
            expected = best_split_of_segment(codes, labels, weights, tb.classes, leaf)
            label = f"batch {batch} segment {index}"
            assert got["found"] == int(expected.valid), label
            if expected.valid:
                wanted = (expected.threshold_code, expected.n_rows_left, expected.score_numerator,
                          expected.score_denominator, [int(v) for v in expected.left_class_counts])
                assert _observed(got, tb.classes, tb.count_bits) == wanted, label
