"""cocotb testbench of ``hw.pass_engine.PassEngine`` against the golden model's growth
from histograms (``sw.methods.forest.histogram``).

A case loads a random dataset, a tree's weights and its root rows, then grows a random
tree over the two banks, as a PE's controller would: per node, the model draws a random
number of features from a tree's stream lazily, ``lanes`` at a time (``_draw_lazily``),
over the node's rows as the testbench's copy of the banks holds them; the testbench cuts
the draws into passes and sends them as jobs, each after the result before (as a PE's
controller does) or all back to back (so that lanes still offering one histogram's
cells hold up the next one's rows). Each pass's result is checked against the model: the
lanes used, the last of them and the node's best so far
(``sim.tb_pass_combiner.check_pass_result``). A node with a split is then partitioned by
it: the rows going left are checked, and the children, placed in the other bank as the
partition must place them, are grown in turn.

Settings (from the runner): ``random_cases``, ``nodes``, ``idle_probability``,
``stall_probability``.
"""

import cocotb
import numpy as np
from amaranth.lib import data
from cocotb.triggers import ClockCycles
from cocotb.utils import get_sim_time

from hw.pass_combiner import pass_result_layout
from hw.pass_engine import engine_job_layout, pass_overhead_cycles
from sim.tb_pass_combiner import check_pass_result
from sim.support.testbench import CLOCK_PERIOD_NS
from sim.tb_row_gather import DatasetLoader
from sw.methods.forest.histogram import HistogramWork, _best_of_node, _draw_lazily, class_histogram
from sw.methods.forest.model import NodeFeatureDrawer, TreeRandom


class PassEngineTestbench(DatasetLoader):
    def __init__(self, dut):
        super().__init__(dut, "count_bits")
        self.count_bits, self.pass_bits = self.design["count_bits"], self.design["pass_bits"]
        self.jobs = self.source("jobs", engine_job_layout(self.row_bits, self.lanes, self.feature_bits,
                                                          self.code_bits, self.classes, self.count_bits))
        self.results = self.sink("results", pass_result_layout(self.lanes, self.pass_bits, self.classes,
                                                               self.code_bits, self.count_bits))
        self.partitioned = self.sink("partitioned", data.StructLayout({"left": self.row_bits + 1}))

    def job(self, bank, base, count, features=(), threshold=0, partition=0, needed=1, first=1,
            totals=None):
        self.jobs.send({"partition": partition, "bank": bank, "base": base, "count": count,
                        "features": list(features) + [0] * (self.lanes - len(features)),
                        "threshold": threshold, "drawn": (1 << len(features)) - 1 if not partition else 0,
                        "needed": needed, "first": first,
                        "class_counts": [0] * self.classes if totals is None else [int(t) for t in totals]})

    async def search(self, case, bank, base, count, label):
        """The node's passes, each result checked; returns the model's best split."""
        codes, labels, weights, banks = case
        rows = banks[bank][base:base + count]
        bins = 1 << self.code_bits
        totals = np.bincount(labels[rows], weights=weights[rows], minlength=self.classes)
        drawn = []

        def histogram_of(feature):
            drawn.append(feature)
            return class_histogram(codes[rows, feature], labels[rows], weights[rows], bins, self.classes)

        needed = self.rng.randint(1, self.features)
        drawer = NodeFeatureDrawer(TreeRandom(self.rng.randrange(1 << 16), self.rng.randrange(100)))
        visited = _draw_lazily(drawer, histogram_of, self.features, needed, HistogramWork(), self.lanes)
        # The lanes the model uses per pass, so that the passes can go back to back (as
        # the engine allows) or each after the result before (as a PE's controller sends).
        visited_features = {feature for feature, _ in visited}
        passes = [drawn[start:start + self.lanes] for start in range(0, len(drawn), self.lanes)]
        used = [sum(feature in visited_features for feature in features) for features in passes]
        back_to_back = self.rng.random() < 0.5
        self.results.clear()
        used_before = 0
        for index, features in enumerate(passes):
            self.job(bank, base, count, features, needed=min(needed - sum(used[:index]), self.lanes),
                     first=int(index == 0), totals=totals)
            if not back_to_back or index == len(passes) - 1:
                await self.wait_until(lambda: len(self.results.received) > index, 60 * count * (index + 1) + 400,
                                      f"{label} pass {index}")
        for index, got in enumerate(self.results.received):
            used_before = check_pass_result(got, f"{label} pass {index}", index, drawn, visited, used_before,
                                            self.lanes, self.count_bits)
        best, _ = _best_of_node(visited, 1)
        return best

    async def partition(self, case, bank, base, count, split, label):
        """Partition a node by its split into the other bank; returns the children's counts."""
        codes, _, _, banks = case
        rows = banks[bank][base:base + count]
        goes_left = codes[rows, split.feature] <= split.threshold_code
        self.partitioned.clear()
        self.job(bank, base, count, [split.feature], split.threshold_code, partition=1)
        return await self.check_partitioned(banks, bank, base, goes_left, label)

    async def grow(self, case, n_roots, label, nodes):
        """Search nodes from the root in a random order, partitioning those with a split."""
        pending = [(0, 0, n_roots)]
        for k in range(nodes):
            if not pending:
                break
            bank, base, count = pending.pop(self.rng.randrange(len(pending)))
            best = await self.search(case, bank, base, count, f"{label} node {k}")
            if best.valid:
                left, right = await self.partition(case, bank, base, count, best, f"{label} node {k} partition")
                pending += [(1 - bank, base, left), (1 - bank, base + left, right)]

    async def empty_pass(self, label):
        """A pass over no rows uses no lane and finds nothing."""
        self.results.clear()
        self.job(self.rng.randrange(2), 0, 0, list(range(min(self.lanes, self.features))))
        await self.wait_until(lambda: self.results.received, 100, label)
        got = self.results.received[0]
        assert (got["used"], got["found"]) == (0, 0), f"{label}: {got}"


@cocotb.test()
async def random_trees_match_model(dut):
    tb = PassEngineTestbench(dut)
    await tb.begin()
    for case in range(tb.settings.get("random_cases", 4)):
        codes, labels, weights, banks, n_roots = await tb.load(total_below=1 << tb.count_bits)
        await tb.grow((codes, labels, weights, banks), n_roots, f"case {case}", tb.settings.get("nodes", 12))
        await tb.empty_pass(f"case {case} empty pass")


@cocotb.test()
async def reset_in_the_middle_then_again(dut):
    """A reset during a pass; the memories keep what was loaded, the next case reloads."""
    tb = PassEngineTestbench(dut)
    await tb.begin()
    for case in range(3):
        codes, labels, weights, banks, n_roots = await tb.load(total_below=1 << tb.count_bits)
        tb.job(0, 0, n_roots, list(range(min(tb.lanes, tb.features))))
        await ClockCycles(dut.clk, tb.rng.randint(1, n_roots + 12))
        await tb.reset()
        codes, labels, weights, banks, n_roots = await tb.load(total_below=1 << tb.count_bits)
        await tb.grow((codes, labels, weights, banks), n_roots, f"after reset {case}", nodes=4)


@cocotb.test()
async def pass_cycles_without_stalls(dut):
    """Without stalls, a pass over n rows whose lanes' histograms have at most c non-zero
    cells takes n + c + ``pass_overhead_cycles(splits)`` cycles from the job to its result,
    at most and within 4 cycles (the out-of-core cost model prices passes with it)."""
    tb = PassEngineTestbench(dut)
    tb.without_stalls()
    await tb.begin()
    codes, labels, weights, banks, n_roots = await tb.load(total_below=1 << tb.count_bits)
    rows = banks[0][:n_roots]
    bins = 1 << tb.code_bits
    for case in range(tb.settings.get("timed_passes", 6)):
        features = [tb.rng.randrange(tb.features) for _ in range(tb.rng.randint(1, tb.lanes))]
        counts = [class_histogram(codes[rows, f], labels[rows], weights[rows], bins, tb.classes)
                  for f in features]
        cells = max(np.count_nonzero(histogram[0]) for histogram in counts)
        splits = sum(np.count_nonzero(histogram[1]) > 1 for histogram in counts)
        tb.results.clear()
        started = get_sim_time("ns")
        tb.job(0, 0, n_roots, features, needed=tb.lanes, totals=np.bincount(
            labels[rows], weights=weights[rows], minlength=tb.classes))
        await tb.wait_until(lambda: tb.results.received, 60 * n_roots + 400, f"timed pass {case}")
        cycles = int((get_sim_time("ns") - started) // CLOCK_PERIOD_NS)
        overhead = cycles - n_roots - cells
        dut._log.info("a pass of %d rows, %d lanes, %d splits, at most %d cells: %d cycles (%d over)",
                      n_roots, len(features), splits, cells, cycles, overhead)
        bound = pass_overhead_cycles(splits)
        assert bound - 4 <= overhead <= bound, f"timed pass {case}: {overhead} cycles over, bound {bound}"
