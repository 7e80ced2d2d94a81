"""cocotb testbench of ``hw.histogram.HistogramUnit`` against
``sw.methods.forest.histogram.class_histogram`` and ``histogram_cells``.

A case is a train of runs sent back to back, each a histogram's samples. The cells that
come out are checked, field by field and in order, against the model's cells of each
run's histogram. The unit's block RAM is never cleared, so every run after the first
also checks that nothing of an earlier histogram leaks into a later one.

Settings (from the runner): ``random_cases``, ``longest_run`` (a cap on a run's samples,
for builds that count millions), ``idle_probability``, ``stall_probability``.
"""

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles
from cocotb.utils import get_sim_time

from hw.histogram import TURNAROUND_CYCLES, cell_layout, sample_layout
from sim.coverage import bins, coverage_for
from sim.support.testbench import CLOCK_PERIOD_NS, StreamTestbench
from sw.methods.forest.histogram import class_histogram, histogram_cells


def random_run(rng, code_bits, classes, count_bits, longest, length=None):
    """(codes, labels, weights) of one histogram's run of at most ``longest`` samples,
    weights summing below ``2**count_bits``: codes anywhere, in a few bins, in runs of
    one bin, in the first and last bins only, or in code order; one class or many."""
    n_bins = 1 << code_bits
    if length is None:
        length = rng.choice([1, 2, longest, rng.randint(1, min(longest, 400))])
    kind = rng.randrange(5)
    if kind == 0:                                   # anywhere
        codes = [rng.randrange(n_bins) for _ in range(length)]
    elif kind == 1:                                 # a few bins, often the same twice running
        few = [rng.randrange(n_bins) for _ in range(rng.randint(1, 3))]
        codes = [rng.choice(few) for _ in range(length)]
    elif kind == 2:                                 # runs of one bin (the forwarding)
        codes = []
        while len(codes) < length:
            codes += [rng.randrange(n_bins)] * rng.randint(1, 6)
        codes = codes[:length]
    elif kind == 3:                                 # the first and the last bins
        codes = [rng.choice([0, n_bins - 1]) for _ in range(length)]
    else:                                           # in code order
        codes = sorted(rng.randrange(n_bins) for _ in range(length))
    one_class = rng.random() < 0.2
    first = rng.randrange(classes)
    labels = [first if one_class else rng.randrange(classes) for _ in range(length)]
    budget = (1 << count_bits) - 1 - length         # weight above 1, summed
    weights = []
    for _ in range(length):
        extra = rng.randint(0, rng.choice([budget, min(budget, 3)])) if rng.random() < 0.2 else 0
        budget -= extra
        weights.append(1 + extra)
    return np.array(codes), np.array(labels), np.array(weights)


class HistogramTestbench(StreamTestbench):
    def __init__(self, dut):
        super().__init__(dut)
        self.classes, self.count_bits = self.design["classes"], self.design["count_bits"]
        self.code_bits, self.row_bits = self.design["code_bits"], self.design["row_bits"]
        self.samples = self.source("samples", sample_layout(self.code_bits, self.classes,
                                                            self.count_bits))
        self.cells = self.sink("cells", cell_layout(self.code_bits, self.classes,
                                                    self.count_bits, self.row_bits))
        # A run holds fewer than 2**row_bits samples whose weights sum below 2**count_bits.
        self.most = min((1 << self.row_bits) - 1, (1 << self.count_bits) - 1)
        self.longest = min(self.most, self.settings.get("longest_run", self.most))
        self.coverage = coverage_for(self)

    def random_run(self, length=None):
        """(codes, labels, weights) of one histogram's run."""
        return random_run(self.rng, self.code_bits, self.classes, self.count_bits, self.longest, length)

    def send(self, codes, labels, weights):
        for i, (code, label, weight) in enumerate(zip(codes, labels, weights)):
            self.samples.send({"code": int(code), "label_one_hot": 1 << int(label),
                               "weight_less_one": int(weight) - 1, "last": int(i == len(codes) - 1)})

    def expected(self, codes, labels, weights):
        counts, rows = class_histogram(codes, labels, weights, 1 << self.code_bits, self.classes)
        self.coverage.record(bins.histogram_run, codes, labels, self.classes, self.code_bits,
                             self.most)
        cells = histogram_cells(counts, rows)
        return [{"code": code, "label_one_hot": 1 << label, "weight_less_one": weight - 1,
                 "rows": bin_rows, "last": int(k == len(cells) - 1)}
                for k, (code, label, weight, bin_rows) in enumerate(cells)]

    async def run_case(self, runs, label):
        """Send the runs back to back and check every cell of every run."""
        self.cells.clear()
        expected = []
        for codes, labels, weights in runs:
            self.send(codes, labels, weights)
            expected += self.expected(codes, labels, weights)
        budget = 8 * (sum(len(codes) for codes, _, _ in runs) + len(expected)) + 40 * len(runs) + 100
        await self.expect_received(self.cells, expected, budget, f"{label} cells")


@cocotb.test()
async def random_runs_match_model(dut):
    """Trains of 1 to 4 histograms with random idle and stall cycles."""
    tb = HistogramTestbench(dut)
    await tb.begin()
    for case in range(tb.settings.get("random_cases", 30)):
        runs = [tb.random_run() for _ in range(tb.rng.randint(1, 4))]
        await tb.run_case(runs, f"case {case}")


@cocotb.test()
async def cycles_without_stalls(dut):
    """Back to back without stalls, a histogram of n samples and c cells occupies the unit
    for n + c + ``TURNAROUND_CYCLES`` cycles, whatever n and c (the out-of-core cost model
    prices a lane's histograms with it)."""
    tb = HistogramTestbench(dut)
    for driver in tb.sources:
        driver.idle_probability = 0.0
    tb.cells.stall_probability = 0.0
    await tb.begin()

    async def overhead(runs, label):
        cells = sum(len(tb.expected(*run)) for run in runs)
        samples = sum(len(run[0]) for run in runs)
        started = get_sim_time("ns")
        await tb.run_case(runs, label)
        # From the cycle the first sample is offered to the 4 cycles run_case waits after
        # the cycle it saw the last cell in: one cycle more than the unit is occupied.
        cycles = int((get_sim_time("ns") - started) // CLOCK_PERIOD_NS) - 4 - 1
        dut._log.info("%s: %d samples, %d cells: %d cycles", label, samples, cells, cycles)
        return cycles - samples - cells

    lengths = (1, tb.longest, min(tb.longest, 64))
    alone = [await overhead([tb.random_run(n)], f"one run of {n}") for n in lengths]
    train = await overhead([tb.random_run(n) for n in lengths], "three runs back to back")
    assert alone == [TURNAROUND_CYCLES] * 3, f"overheads {alone}"
    assert train == 3 * TURNAROUND_CYCLES, f"overhead of the three runs {train}"


@cocotb.test()
async def reset_in_the_middle_then_again(dut):
    """A reset leaves the block RAM as it was; the runs after it must not see it."""
    tb = HistogramTestbench(dut)
    await tb.begin()
    for case in range(6):
        run = tb.random_run()
        tb.send(*run)
        await ClockCycles(dut.clk, tb.rng.randint(1, 3 * len(run[0]) + 10))
        await tb.reset()
        await tb.run_case([tb.random_run() for _ in range(2)], f"after reset {case}")
