"""cocotb testbench of ``hw.histogram_pe.HistogramPE`` against the golden model's trees
grown from histograms (``sw.methods.forest.histogram.train_tree_from_histograms`` with
the build's lanes, itself held equal to ``train_tree`` by the model's tests).

A case loads a random dataset with one tree's bootstrap weights (the model's, from a
random forest seed and tree index) and its root rows, and starts the tree with random
parameters (features in use, features a split, depth limit, ``min_samples_split``), its
stream and the stream position after the bootstrap: the PE draws from its own generator.
Every node record is checked against the model's tree, node by
node, and the tree must end where the model's does. A tree with more nodes than the
build holds must stop with ``overflow`` after the nodes before the split that overflows.

Real datasets (``datasets``: names for ``sw.data.datasets``, rank-quantised as the
estimator does; ``arrays``: codes and labels in ``.npz`` files; ``dataset_trees`` trees
each) grow forest-mode trees (a full bootstrap,
``sqrt(F)`` features a split, the build's depth limit, which the model's unlimited tree
must not reach) without stalls; each tree's cycles from its start to its last node go
to the ``report`` with its one-pass bound (issue #25) and the cycles it spent in each of
the controller's states (``histogram_pe_state``'s value -> cycles; the names are
``HistogramPE.controller_states``).

Settings (from the runner): ``random_cases``, ``datasets``, ``arrays``, ``dataset_trees``, ``report``,
``idle_probability``, ``stall_probability``.
"""

import collections
import dataclasses

import cocotb
import numpy as np
from amaranth.hdl import Shape
from amaranth.lib import data
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotb.utils import get_sim_time

from hw.checks import bits
from hw.histogram_pe import node_record_layout, start_layout
from sim.runner import testbench_parameters
from sim.support.testbench import CLOCK_PERIOD_NS
from sim.support.trees import quantised_dataset
from sim.tb_row_gather import DatasetLoader
from sw.methods.forest.histogram import train_tree_from_histograms
from sw.methods.forest.model import TrainingParameters, TreeRandom, bootstrap_weights


class HistogramPETestbench(DatasetLoader):
    def __init__(self, dut):
        super().__init__(dut, "count_bits")
        d = self.design
        self.count_bits, self.max_nodes, self.max_depth = d["count_bits"], d["max_nodes"], d["max_depth"]
        depth_bits, node_bits = bits(self.max_depth), bits(self.max_nodes - 1)
        self.tree_index_bits = d.get("tree_index_bits", 16)
        self.start = self.source("start", start_layout(self.classes, self.count_bits, self.row_bits,
                                                       self.feature_bits, depth_bits, self.tree_index_bits))
        self.nodes = self.sink("nodes", node_record_layout(node_bits, self.feature_bits, self.code_bits,
                                                           self.classes, self.count_bits, self.row_bits,
                                                           depth_bits))

    def random_parameters(self, n_rows):
        rng = self.rng
        n_features = rng.choice([self.features, rng.randint(1, self.features)])
        params = TrainingParameters(
            n_classes=self.classes, max_samples=n_rows, bootstrap=True,
            features_per_split=rng.choice([1, n_features, rng.randint(1, n_features)]),
            max_depth=rng.choice([self.max_depth, rng.randint(1, self.max_depth)]),
            min_samples_split=rng.choice([2, 2, 3, 5]))
        return n_features, params

    async def check_tree(self, label):
        seed, tree_index = self.rng.getrandbits(32), self.rng.getrandbits(self.tree_index_bits)
        random = TreeRandom(seed, tree_index)
        codes, labels, weights, _, n_roots = await self.load(
            weighting=lambda n_rows: bootstrap_weights(random, n_rows, n_rows, True))
        n_features, params = self.random_parameters(len(labels))
        return (await self.grow(codes[:, :n_features], labels, weights, n_roots, params, seed, tree_index,
                                random, label))[0]

    async def grow(self, codes, labels, weights, n_roots, params, seed, tree_index, random, label):
        """Starts the tree (the dataset and weights loaded, the stream ``random`` past the
        bootstrap) and checks its nodes; returns its nodes and its cycles."""
        n_rows, n_features = codes.shape
        expected, work = train_tree_from_histograms(codes, labels, params, seed, tree_index, self.code_bits,
                                                    self.lanes)
        self.nodes.clear()
        totals = np.bincount(labels, weights=weights, minlength=self.classes)
        started = get_sim_time("ns")
        self.start.send({"class_counts": [int(t) for t in totals], "rows": n_roots, "n_features": n_features,
                         "features_per_split": params.features_per_split, "max_depth": params.max_depth,
                         "min_samples_split": params.min_samples_split, "seed": seed, "tree_index": tree_index,
                         "position": random.position})
        overflows = [node for node in range(expected.n_nodes)
                     if expected.left_child[node] >= 0 and expected.left_child[node] + 2 > self.max_nodes]
        count = overflows[0] if overflows else expected.n_nodes
        budget = 200 * n_rows * max(1, n_features) + 2000
        await self.wait_until(lambda: len(self.nodes.received) >= count and
                              (not overflows or self.dut.overflow.value), budget, f"{label} tree")
        cycles = int((get_sim_time("ns") - started) // CLOCK_PERIOD_NS)
        for node, got in enumerate(self.nodes.received):
            self.check_node(expected, node, got, count, f"{label} node {node}")
        assert len(self.nodes.received) == count, f"{label}: {len(self.nodes.received)} nodes, expected {count}"
        assert int(self.dut.overflow.value) == bool(overflows), f"{label}: overflow {self.dut.overflow.value}"
        return expected.n_nodes, cycles, work

    def check_node(self, expected, node, got, count, label):
        mask = (1 << self.count_bits) - 1
        split = expected.left_child[node] >= 0
        observed = {"node": got["node"], "split": got["split"], "rows": got["rows"], "depth": got["depth"],
                    "class_counts": [(got["class_counts"] >> (c * self.count_bits)) & mask
                                     for c in range(self.classes)],
                    "last": got["last"]}
        wanted = {"node": node, "split": int(split), "rows": int(expected.n_rows[node]),
                  "depth": int(expected.depth[node]),
                  "class_counts": [int(c) for c in expected.class_counts[node]] +
                                  [0] * (self.classes - expected.class_counts.shape[1]),
                  "last": int(node == count - 1 and count == expected.n_nodes)}
        if split:
            observed.update(feature=got["feature"], threshold=got["threshold"], left=got["left"])
            wanted.update(feature=int(expected.feature[node]), threshold=int(expected.threshold_code[node]),
                          left=int(expected.left_child[node]))
        assert observed == wanted, f"{label}: {observed}, model {wanted}"


@cocotb.test()
async def random_trees_match_model(dut):
    tb = HistogramPETestbench(dut)
    await tb.begin()
    nodes = [await tb.check_tree(f"tree {case}") for case in range(tb.settings.get("random_cases", 6))]
    dut._log.info("trees of %s nodes", nodes)


@cocotb.test()
async def bad_starts_are_refused(dut):
    """A start the build cannot serve raises bad_start and grows no tree; a good one after
    it clears the flag and grows its tree."""
    tb = HistogramPETestbench(dut)
    await tb.begin()
    good = {"class_counts": [1] + [0] * (tb.classes - 1), "rows": 1, "n_features": 1, "features_per_split": 1,
            "max_depth": 1, "min_samples_split": 2, "seed": 0, "tree_index": 0, "position": 0}
    for field, value in (("n_features", 0), ("n_features", tb.features + 1), ("features_per_split", 0),
                         ("max_depth", 0), ("max_depth", tb.max_depth + 1), ("rows", tb.max_rows + 1),
                         ("min_samples_split", 1)):
        if value >= 1 << Shape.cast(tb.start.layout.members[field]).width:
            continue                        # (not expressible in the field)
        tb.nodes.clear()
        tb.start.send({**good, field: value})
        await ClockCycles(dut.clk, 30)
        assert int(dut.bad_start.value) == 1, f"{field} = {value}: bad_start low"
        assert not tb.nodes.received, f"{field} = {value}: a node record"
    await tb.check_tree("after the bad starts")
    assert int(dut.bad_start.value) == 0


@cocotb.test()
async def reset_in_the_middle_then_again(dut):
    """A reset during a tree; the next tree grows as the model's."""
    tb = HistogramPETestbench(dut)
    await tb.begin()
    for case in range(2):
        task = cocotb.start_soon(tb.check_tree(f"interrupted {case}"))
        await ClockCycles(dut.clk, tb.rng.randint(50, 800))
        task.cancel()
        await tb.reset()
        await tb.check_tree(f"after reset {case}")


def _datasets(tb):
    """(name, codes, labels, classes) of the settings' ``datasets`` (rank-quantised to the
    build's code width) and ``arrays`` (``{name: .npz path}``, codes and labels as given)."""
    for name in tb.settings.get("datasets", []):
        yield (name, *quantised_dataset(name, tb.code_bits))
    for name, path in tb.settings.get("arrays", {}).items():
        with np.load(path) as arrays:
            codes, labels = arrays["codes"].astype(np.int64), arrays["labels"].astype(np.int64)
        yield name, codes, labels, int(labels.max()) + 1


@cocotb.skipif(not (testbench_parameters().get("datasets") or testbench_parameters().get("arrays")),
               reason="no datasets in the settings")
@cocotb.test()
async def datasets_match_model(dut):
    """Forest-mode trees on real datasets, without stalls: checked node by node, timed."""
    tb = HistogramPETestbench(dut)
    tb.without_stalls()
    tb.cycle_log = []
    await tb.begin()
    states, sampling = collections.Counter(), [False]

    async def sample():
        # The controller's state at every clock edge of a tree (``histogram_pe_state``).
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            if sampling[0]:
                states[int(dut.histogram_pe_state.value)] += 1

    cocotb.start_soon(sample())
    for name, codes, labels, n_classes in _datasets(tb):
        n_rows, n_features = codes.shape
        params = TrainingParameters(n_classes=n_classes, max_depth=tb.max_depth, max_samples=n_rows,
                                    features_per_split=max(1, int(n_features ** 0.5)))
        for tree_index in range(tb.settings.get("dataset_trees", 1)):
            random = TreeRandom(7, tree_index)
            weights = bootstrap_weights(random, n_rows, n_rows, True)
            _, n_roots = await tb.send_dataset(codes, labels, weights)
            states.clear()
            sampling[0] = True
            nodes, cycles, work = await tb.grow(codes, labels, weights, n_roots, params, 7, tree_index, random,
                                                f"{name} tree {tree_index}")
            sampling[0] = False
            unlimited, _ = train_tree_from_histograms(codes, labels, dataclasses.replace(params, max_depth=None),
                                                      7, tree_index, tb.code_bits, tb.lanes)
            assert unlimited.n_nodes == nodes, f"{name} tree {tree_index}: the build's depth limit cut the tree"
            dut._log.info("%s tree %d: %d nodes, %d cycles (one-pass bound %d)", name, tree_index, nodes,
                          cycles, work.searched_rows)
            tb.cycle_log.append({"dataset": name, "seed": 7, "tree": tree_index, "nodes": nodes,
                                 "cycles": cycles, "one_pass_bound": work.searched_rows, "lanes": tb.lanes,
                                 "states": dict(states)})
    tb.write_report()
