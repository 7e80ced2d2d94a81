"""cocotb testbench of ``hw.histogram_lane.HistogramLane`` against
``sw.methods.forest.histogram.best_split_of_histogram`` (``min_samples_leaf = 1``).

A case is a train of nodes sent back to back: per node a header (its class totals and
rows) and its samples, a run as ``sim.tb_histogram`` draws them (each sample one of the
node's rows). Each split that comes out is checked, in order, against the model's split of
that node's histogram: found, threshold, the score's numerator and denominator, the left
class counts.

Settings (from the runner): ``random_cases``, ``longest_run``, ``idle_probability``,
``stall_probability``.
"""

import cocotb
from cocotb.triggers import ClockCycles
from cocotb.utils import get_sim_time

from hw.gini import segment_layout
from hw.histogram import sample_layout
from hw.histogram_lane import lane_split_layout
from sim.coverage import coverage_for
from sim.support.testbench import CLOCK_PERIOD_NS, StreamTestbench
from sim.tb_histogram import random_run
from sw.methods.forest.histogram import best_split_of_histogram, class_histogram


class HistogramLaneTestbench(StreamTestbench):
    def __init__(self, dut):
        super().__init__(dut)
        self.classes, self.count_bits = self.design["classes"], self.design["count_bits"]
        self.code_bits, self.row_bits = self.design["code_bits"], self.design["row_bits"]
        self.headers = self.source("headers", segment_layout(self.classes, self.count_bits, self.row_bits))
        self.samples = self.source("samples", sample_layout(self.code_bits, self.classes, self.count_bits))
        self.splits = self.sink("splits", lane_split_layout(self.classes, self.code_bits, self.count_bits))
        most = min((1 << self.row_bits) - 1, (1 << self.count_bits) - 1)
        self.longest = min(most, self.settings.get("longest_run", most))
        self.coverage = coverage_for(self)

    def random_run(self, length=None):
        return random_run(self.rng, self.code_bits, self.classes, self.count_bits, self.longest, length)

    def send(self, codes, labels, weights):
        totals = [0] * self.classes
        for label, weight in zip(labels, weights):
            totals[int(label)] += int(weight)
        self.headers.send({"class_counts": totals, "rows": len(codes)})
        for i, (code, label, weight) in enumerate(zip(codes, labels, weights)):
            self.samples.send({"code": int(code), "label_one_hot": 1 << int(label),
                               "weight_less_one": int(weight) - 1, "last": int(i == len(codes) - 1)})

    def expected(self, codes, labels, weights):
        counts, rows = class_histogram(codes, labels, weights, 1 << self.code_bits, self.classes)
        split = best_split_of_histogram(counts, rows, 1)
        if not split.valid:
            return {"found": 0}
        return {"found": 1, "threshold": split.threshold_code, "numerator": split.score_numerator,
                "denominator": split.score_denominator,
                "left_counts": [int(count) for count in split.left_class_counts]}

    def observed(self, split):
        if not split["found"]:
            return {"found": 0}
        mask = (1 << self.count_bits) - 1
        return {"found": 1, "threshold": split["threshold"], "numerator": split["numerator"],
                "denominator": split["denominator"],
                "left_counts": [(split["left_counts"] >> (c * self.count_bits)) & mask
                                for c in range(self.classes)]}

    async def run_case(self, runs, label):
        """Send the nodes back to back and check every split."""
        self.splits.clear()
        expected = []
        for run in runs:
            self.send(*run)
            expected.append(self.expected(*run))
        budget = 10 * sum(len(codes) for codes, _, _ in runs) + (60 + 2 * self.classes) * len(runs) + 100
        await self.expect_received(self.splits, expected, budget, f"{label} splits", self.observed)


@cocotb.test()
async def random_nodes_match_model(dut):
    """Trains of 1 to 5 nodes with random idle and stall cycles."""
    tb = HistogramLaneTestbench(dut)
    await tb.begin()
    for case in range(tb.settings.get("random_cases", 30)):
        await tb.run_case([tb.random_run() for _ in range(tb.rng.randint(1, 5))], f"case {case}")


@cocotb.test()
async def cycles_without_stalls(dut):
    """Nodes back to back without stalls: one unit gathers while the other is scanned, so
    a train takes about the larger of its samples and its scans (logged, and held below
    the samples and scans in sequence)."""
    tb = HistogramLaneTestbench(dut)
    for driver in tb.sources:
        driver.idle_probability = 0.0
    tb.splits.stall_probability = 0.0
    await tb.begin()
    runs = [tb.random_run(min(tb.longest, 200)) for _ in range(6)]
    samples = sum(len(run[0]) for run in runs)
    cells = sum(len(set(zip(run[0].tolist(), run[1].tolist()))) for run in runs)
    started = get_sim_time("ns")
    await tb.run_case(runs, "timed")
    cycles = int((get_sim_time("ns") - started) // CLOCK_PERIOD_NS) - 4
    dut._log.info("6 nodes, %d samples, %d cells: %d cycles", samples, cells, cycles)
    assert cycles < samples + cells, f"{cycles} cycles for {samples} samples and {cells} cells"


@cocotb.test()
async def reset_in_the_middle_then_again(dut):
    tb = HistogramLaneTestbench(dut)
    await tb.begin()
    for case in range(6):
        run = tb.random_run()
        tb.send(*run)
        await ClockCycles(dut.clk, tb.rng.randint(1, 3 * len(run[0]) + 10))
        await tb.reset()
        await tb.run_case([tb.random_run() for _ in range(3)], f"after reset {case}")
