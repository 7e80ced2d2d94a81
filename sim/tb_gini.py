"""cocotb testbench of ``hw.gini.GiniScanner`` against ``sw.methods.forest.model.best_split_of_segment``.

Settings (from the runner): ``random_segments``, ``idle_probability``, ``stall_probability``.
"""

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotb.utils import get_sim_time

from hw.gini import entry_layout, segment_layout, split_layout
from sim.coverage import bins, coverage_for
from sim.support.testbench import CLOCK_PERIOD_NS, StreamTestbench
from sw.methods.forest.model import best_split_of_segment


class GiniTestbench(StreamTestbench):
    def __init__(self, dut):
        super().__init__(dut)
        self.classes, self.count_bits = self.design["classes"], self.design["count_bits"]
        self.code_bits, self.row_bits = self.design["code_bits"], self.design["row_bits"]
        self.segments = self.source("segments", segment_layout(self.classes, self.count_bits,
                                                               self.row_bits))
        self.entries = self.source("entries", entry_layout(self.code_bits, self.classes,
                                                           self.count_bits))
        self.splits = self.sink("splits", split_layout(self.classes, self.code_bits,
                                                       self.count_bits, self.row_bits))
        dut.min_samples_leaf.value = 1
        self.coverage = coverage_for(self)

    def send(self, codes, labels, weights):
        totals = np.bincount(labels, weights=weights, minlength=self.classes).astype(int)
        header = {"class_counts": 0, "rows": len(codes)}
        # ArrayLayout fields are packed by hand: count c at bits c*count_bits.
        header["class_counts"] = sum(int(t) << (c * self.count_bits) for c, t in enumerate(totals))
        self.segments.send(header)
        for i, (code, label, weight) in enumerate(zip(codes, labels, weights)):
            self.entries.send({"code": int(code), "label_one_hot": 1 << int(label),
                               "weight_less_one": int(weight) - 1,
                               "last": int(i == len(codes) - 1)})

    async def check(self, codes, labels, weights, min_samples_leaf, label):
        self.dut.min_samples_leaf.value = min_samples_leaf
        self.splits.clear()
        self.send(codes, labels, weights)
        for _ in range(30 * len(codes) + 40 * self.classes + 200):
            if self.splits.received:
                break
            await RisingEdge(self.dut.clk)
        else:
            raise AssertionError(f"{label}: no split reported")
        got = self.splits.received[0]
        expected = best_split_of_segment(codes, labels, weights, self.classes, min_samples_leaf)
        self.coverage.record(bins.gini_segment, codes, labels, weights, min_samples_leaf, self.classes,
                             self.row_bits)
        assert got["found"] == int(expected.valid), f"{label}: found {got['found']}, model {expected.valid}"
        if expected.valid:
            left_counts = [(got["left_counts"] >> (c * self.count_bits)) & ((1 << self.count_bits) - 1)
                           for c in range(self.classes)]
            observed = (got["threshold"], got["rows_left"], got["numerator"], got["denominator"], left_counts)
            wanted = (expected.threshold_code, expected.n_rows_left, expected.score_numerator,
                      expected.score_denominator, [int(v) for v in expected.left_class_counts])
            assert observed == wanted, f"{label}: got {observed}, model {wanted}"

    def random_segment(self):
        n = self.rng.choice([1, 2, 3, self.rng.randint(1, 60), (1 << self.row_bits) - 1])
        n = min(n, 300, (1 << self.row_bits) - 1)
        classes_used = self.rng.choice([1, 2, self.classes])
        code_range = self.rng.choice([1, 2, 5, 1 << self.code_bits])
        codes = np.sort(np.array([self.rng.randrange(code_range) for _ in range(n)]))
        labels = np.array([self.rng.randrange(classes_used) for _ in range(n)])
        # Weights sum below 2**count_bits (the bootstrap's sample count).
        budget = (1 << self.count_bits) - 1
        cap = max(1, min(self.rng.choice([1, 3, 50]), budget // n))
        weights = np.array([self.rng.randint(1, cap) for _ in range(n)])
        return codes, labels, weights


@cocotb.test()
async def random_segments_match_model(dut):
    tb = GiniTestbench(dut)
    await tb.begin()
    for case in range(tb.settings.get("random_segments", 100)):
        codes, labels, weights = tb.random_segment()
        leaf = tb.rng.choice([1, 1, 2, 5])
        await tb.check(codes, labels, weights, leaf, f"segment {case}")


@cocotb.test()
async def corner_cases_match_model(dut):
    tb = GiniTestbench(dut)
    await tb.begin()
    top = (1 << tb.count_bits) - 1
    cases = {
        "all codes equal": (np.zeros(20, int), np.arange(20) % 2, np.ones(20, int), 1),
        "one class": (np.arange(20), np.zeros(20, int), np.ones(20, int), 1),
        "two samples": (np.array([3, 9]), np.array([0, 1]), np.array([1, 1]), 1),
        "one sample": (np.array([3]), np.array([1]), np.array([2]), 1),
        "every class": (np.arange(tb.classes * 3), np.arange(tb.classes * 3) % tb.classes,
                        np.ones(tb.classes * 3, int), 1),
        "maximum weights": (np.array([0, 1]), np.array([0, 1]), np.array([top // 2, top - top // 2]), 1),
        "ties between boundaries": (np.array([0, 1, 2, 3]), np.array([0, 1, 1, 0]), np.ones(4, int), 1),
        "min_samples_leaf too large": (np.arange(6), np.array([0, 0, 0, 1, 1, 1]), np.ones(6, int), 4),
    }
    longest = (1 << tb.row_bits) - 1          # a segment holds fewer than 2**row_bits entries
    for label, (codes, labels, weights, leaf) in cases.items():
        await tb.check(codes[:longest], labels[:longest], weights[:longest], leaf, label)


@cocotb.test()
async def reset_in_the_middle_then_again(dut):
    tb = GiniTestbench(dut)
    await tb.begin()
    for case in range(6):
        tb.send(*tb.random_segment())
        await ClockCycles(dut.clk, tb.rng.randint(1, 80))
        await tb.reset()
        codes, labels, weights = tb.random_segment()
        await tb.check(codes, labels, weights, 1, f"after reset {case}")


async def _count_headers(dut, cycles):
    """Append the cycle of every header transfer to ``cycles`` (as the sink counts its own)."""
    while True:
        await RisingEdge(dut.clk)
        await ReadOnly()
        if int(dut.segments__valid.value) and int(dut.segments__ready.value):
            cycles.append(int(get_sim_time("ns") // CLOCK_PERIOD_NS))


@cocotb.test()
async def latency_is_as_documented(dut):
    """Without idles or stalls: header to result, both counted, in ``entries + max(0, classes
    present - 1) + 6`` cycles, one fewer when the last entry closes no boundary, two fewer
    when neither of the last two entries does, three fewer when none of the last three
    does."""
    tb = GiniTestbench(dut)
    tb.segments.idle_probability = tb.entries.idle_probability = tb.splits.stall_probability = 0
    headers = []
    cocotb.start_soon(_count_headers(dut, headers))
    await tb.begin()
    n = min(12, (1 << tb.row_bits) - 1)
    cases = [  # (codes, labels, classes present, how many of the last two entries close none)
        (np.arange(n), np.zeros(n, int), 1, 0),
        (np.arange(n), np.arange(n) % 2, 2, 0),
        (np.arange(n), np.arange(n) % tb.classes, min(n, tb.classes), 0),
        (np.minimum(np.arange(n), n - 2), np.arange(n) % 2, 2, 1),
        (np.minimum(np.arange(n), n - 3), np.arange(n) % 2, 2, 2),
        (np.minimum(np.arange(n), n - 4), np.arange(n) % 2, 2, 3),
    ]
    for index, (codes, labels, present, silent) in enumerate(cases):
        headers.clear()
        await tb.check(codes, labels, np.ones(n, int), 1, f"latency case {index}")
        latency = tb.splits.cycles[0] - headers[0] + 1
        expected = n + max(0, present - 1) + 6 - silent
        assert latency == expected, f"latency case {index}: {latency} cycles, documented {expected}"
