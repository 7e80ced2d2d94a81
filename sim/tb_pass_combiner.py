"""cocotb testbench of ``hw.pass_combiner.PassCombiner`` against the model's lazy draw in
passes of lanes and its best split of a node (``sw.methods.forest.histogram``).

A case is a random node: rows, features (some constant), a random number of features to
draw. The model draws them from a tree's stream ``lanes`` at a time
(``_draw_lazily(..., lanes)``); the testbench cuts its draws into the passes the lanes
make and sends, per pass, the header and each lane's split of its feature's histogram
(``best_split_of_histogram``, ``min_samples_leaf = 1``, as a histogram lane finds it).
Each pass's result is checked: the lanes used (the model's visited features in that
pass), the last of them, and the node's best so far, against ``_best_of_node`` of the
features visited up to that pass.

Settings (from the runner): ``random_cases``, ``idle_probability``, ``stall_probability``.
"""

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles

from hw.histogram_lane import lane_split_layout
from hw.pass_combiner import pass_layout, pass_result_layout
from sim.support.testbench import StreamTestbench
from sw.methods.forest.histogram import (
    HistogramWork, _best_of_node, _draw_lazily, best_split_of_histogram, class_histogram)
from sw.methods.forest.model import NodeFeatureDrawer, TreeRandom


class PassCombinerTestbench(StreamTestbench):
    def __init__(self, dut):
        super().__init__(dut)
        d = self.design
        self.lanes, self.pass_bits = d["lanes"], d["pass_bits"]
        self.classes, self.code_bits, self.count_bits = d["classes"], d["code_bits"], d["count_bits"]
        split = lane_split_layout(self.classes, self.code_bits, self.count_bits)
        self.passes = self.source("passes", pass_layout(self.lanes))
        self.splits = [self.source(f"splits__{j}", split) for j in range(self.lanes)]
        self.results = self.sink("results", pass_result_layout(self.lanes, self.pass_bits, self.classes,
                                                               self.code_bits, self.count_bits))

    def random_node(self):
        """(drawn features in order, visited features, histograms, needed) of one node."""
        rng = np.random.default_rng(self.rng.randrange(1 << 30))
        n_features = int(rng.integers(1, min(20, self.lanes << self.pass_bits) + 1))
        n = int(rng.integers(2, 40))
        bins = 1 << self.code_bits
        codes = rng.integers(0, bins, size=(n, n_features))
        for column in range(n_features):
            if rng.random() < 0.4:
                codes[:, column] = rng.integers(0, bins)                # constant
        labels = rng.integers(0, self.classes, size=n)
        weights = rng.integers(1, max(2, min(4, ((1 << self.count_bits) - 1) // n)), size=n)
        histograms = {f: class_histogram(codes[:, f], labels, weights, bins, self.classes)
                      for f in range(n_features)}
        drawn = []

        def histogram_of(feature):
            drawn.append(feature)
            return histograms[feature]

        needed = int(rng.integers(1, n_features + 1))
        drawer = NodeFeatureDrawer(TreeRandom(int(rng.integers(1 << 16)), int(rng.integers(100))))
        visited = _draw_lazily(drawer, histogram_of, n_features, needed, HistogramWork(), self.lanes)
        return drawn, visited, histograms, needed

    def split_payload(self, split):
        if not split.valid:
            return {"found": 0, "threshold": 0, "numerator": 0, "denominator": 0, "left_counts": 0}
        return {"found": 1, "threshold": split.threshold_code, "numerator": split.score_numerator,
                "denominator": split.score_denominator,
                "left_counts": [int(count) for count in split.left_class_counts]}

    def observed_split(self, split):
        mask = (1 << self.count_bits) - 1
        return {"found": split["found"], "threshold": split["threshold"], "numerator": split["numerator"],
                "denominator": split["denominator"],
                "left_counts": [(split["left_counts"] >> (c * self.count_bits)) & mask
                                for c in range(self.classes)]}

    async def check_node(self, label):
        drawn, visited, histograms, needed = self.random_node()
        used_before = 0
        for index, start in enumerate(range(0, len(drawn), self.lanes)):
            features = drawn[start:start + self.lanes]
            self.passes.send({"drawn": (1 << len(features)) - 1,
                              "needed": min(needed - used_before, self.lanes), "first": int(index == 0)})
            for lane, feature in enumerate(features):
                self.splits[lane].send(split_payload(best_split_of_histogram(*histograms[feature], 1)))
            self.results.clear()
            await self.wait_until(lambda: self.results.received, 400, f"{label} pass {index}")
            used_before = check_pass_result(self.results.received[0], f"{label} pass {index}", index,
                                            drawn, visited, used_before, self.lanes, self.count_bits)
        assert used_before == len(visited), f"{label}: {used_before} used, model {len(visited)}"


def split_payload(split):
    """A split of the model as a lane reports it."""
    if not split.valid:
        return {"found": 0, "threshold": 0, "numerator": 0, "denominator": 0, "left_counts": 0}
    return {"found": 1, "threshold": split.threshold_code, "numerator": split.score_numerator,
            "denominator": split.score_denominator,
            "left_counts": [int(count) for count in split.left_class_counts]}


def observed_split(split, classes, count_bits):
    """A received split with its left counts unpacked, to compare with :func:`split_payload`."""
    mask = (1 << count_bits) - 1
    return {"found": split["found"], "threshold": split["threshold"], "numerator": split["numerator"],
            "denominator": split["denominator"],
            "left_counts": [(split["left_counts"] >> (c * count_bits)) & mask for c in range(classes)]}


def check_pass_result(got, label, index, drawn, visited, used_before, lanes, count_bits):
    """Checks pass ``index``'s result against the model's lazy draw: the lanes used (the
    visited features among the pass's draws), the last of them, and the node's best over
    the features visited up to it. Returns the features used up to it."""
    features = drawn[index * lanes:(index + 1) * lanes]
    visited_features = [feature for feature, _ in visited]
    lanes_used = [lane for lane, feature in enumerate(features) if feature in visited_features]
    assert got["used"] == len(lanes_used), f"{label}: {got['used']} used, {lanes_used}"
    if lanes_used:
        assert got["last_used"] == lanes_used[-1], f"{label}: last {got['last_used']}"
    used_before += len(lanes_used)
    best, _ = _best_of_node(visited[:used_before], 1)
    assert got["found"] == int(best.valid), f"{label}: found {got['found']}"
    if best.valid:
        feature = drawn[got["pass_index"] * lanes + got["lane"]]
        assert feature == best.feature, f"{label}: feature {feature}, model {best.feature}"
        classes = len(best.left_class_counts)
        assert observed_split(got["split"], classes, count_bits) == split_payload(best), label
    return used_before


@cocotb.test()
async def random_nodes_match_model(dut):
    tb = PassCombinerTestbench(dut)
    await tb.begin()
    for case in range(tb.settings.get("random_cases", 60)):
        await tb.check_node(f"node {case}")


@cocotb.test()
async def reset_in_the_middle_then_again(dut):
    tb = PassCombinerTestbench(dut)
    await tb.begin()
    for case in range(5):
        tb.passes.send({"drawn": (1 << tb.lanes) - 1, "needed": 1, "first": 1})
        await ClockCycles(dut.clk, tb.rng.randint(1, 12))
        await tb.reset()
        await tb.check_node(f"after reset {case}")
