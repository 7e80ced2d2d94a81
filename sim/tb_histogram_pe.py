"""cocotb testbench of ``hw.histogram_pe.HistogramPE`` against the golden model's trees
grown from histograms (``sw.methods.forest.histogram.train_tree_from_histograms`` with
the build's lanes, itself held equal to ``train_tree`` by the model's tests).

A case loads a random dataset and starts a tree with random parameters (rows in use,
draws of its bootstrap or none, features in use, features a split, depth limit,
``min_samples_split``) and a random stream (forest seed, tree index): the PE draws the
bootstrap and the features from its own generator. Every node record is checked against the model's tree, node by
node, and the tree must end where the model's does. A tree with more nodes than the
build holds must stop with ``overflow`` after the nodes before the split that overflows.

Real datasets (``datasets``: names for ``sw.data.datasets``, rank-quantised as the
estimator does; ``arrays``: codes and labels in ``.npz`` files; ``dataset_trees`` trees
each) grow forest-mode trees (a full bootstrap,
``sqrt(F)`` features a split, the build's depth limit, which the model's unlimited tree
must not reach) without stalls; each tree's cycles from its start to its last node go
to the ``report`` with its one-pass bound (issue #25) and the cycles it spent in each of
the controller's states (``histogram_pe_state``'s value -> cycles; the names are
``HistogramPE.controller_states``) and, with the codes in memory, the words it read.

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
from sw.methods.forest.model import TrainingParameters


class HistogramPETestbench(DatasetLoader):
    def __init__(self, dut):
        super().__init__(dut, "count_bits", tree_loads=False)
        d = self.design
        self.count_bits, self.max_nodes, self.max_depth = d["count_bits"], d["max_nodes"], d["max_depth"]
        depth_bits, node_bits = bits(self.max_depth), bits(self.max_nodes - 1)
        self.tree_index_bits = d.get("tree_index_bits", 16)
        self.start = self.source("start", start_layout(self.count_bits, self.row_bits, self.feature_bits,
                                                       depth_bits, self.tree_index_bits))
        self.nodes = self.sink("nodes", node_record_layout(node_bits, self.feature_bits, self.code_bits,
                                                           self.classes, self.count_bits, self.row_bits,
                                                           depth_bits))

    def random_parameters(self, n_rows):
        rng = self.rng
        n_features = rng.choice([self.features, rng.randint(1, self.features)])
        heaviest = (1 << self.count_bits) - 1       # a root's weights sum below 2**count_bits
        params = TrainingParameters(
            n_classes=self.classes, bootstrap=rng.random() < 0.85 or n_rows > heaviest,
            max_samples=min(heaviest, rng.choice([n_rows, n_rows, 1, rng.randint(1, 2 * n_rows)])),
            features_per_split=rng.choice([1, n_features, rng.randint(1, n_features)]),
            max_depth=rng.choice([self.max_depth, rng.randint(1, self.max_depth)]),
            min_samples_split=rng.choice([2, 2, 3, 5]))
        return n_features, params

    async def check_tree(self, label):
        seed, tree_index = self.rng.getrandbits(32), self.rng.getrandbits(self.tree_index_bits)
        codes, labels = self.random_rows()
        await self.load_rows(codes, labels)
        n_features, params = self.random_parameters(len(labels))
        return (await self.grow(codes[:, :n_features], labels, params, seed, tree_index, label))[0]

    async def load_rows(self, codes, labels):
        self.send_rows(codes, labels)
        await self.wait_until(lambda: self.dataset.idle, 20 * len(labels) + 100, "the dataset's load")

    async def grow(self, codes, labels, params, seed, tree_index, label):
        """Starts the tree (its dataset loaded) and checks its nodes; returns its nodes,
        its cycles (the bootstrap's included) and the model's work."""
        n_rows, n_features = codes.shape
        expected, work = train_tree_from_histograms(codes, labels, params, seed, tree_index, self.code_bits,
                                                    self.lanes)
        self.nodes.clear()
        started = get_sim_time("ns")
        self.start.send({"n_rows": n_rows, "max_samples": params.max_samples, "bootstrap": int(params.bootstrap),
                         "n_features": n_features, "features_per_split": params.features_per_split,
                         "max_depth": params.max_depth, "min_samples_split": params.min_samples_split,
                         "seed": seed, "tree_index": tree_index})
        overflows = [node for node in range(expected.n_nodes)
                     if expected.left_child[node] >= 0 and expected.left_child[node] + 2 > self.max_nodes]
        count = overflows[0] if overflows else expected.n_nodes
        budget = 200 * n_rows * max(1, n_features) + 40 * params.max_samples + 4 * self.max_rows + 2000
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
    good = {"n_rows": 1, "max_samples": 1, "bootstrap": 1, "n_features": 1, "features_per_split": 1,
            "max_depth": 1, "min_samples_split": 2, "seed": 0, "tree_index": 0}
    heaviest = 1 << tb.count_bits
    cases = [{"n_features": 0}, {"n_features": tb.features + 1}, {"features_per_split": 0},
             {"max_depth": 0}, {"max_depth": tb.max_depth + 1}, {"n_rows": 0}, {"n_rows": tb.max_rows + 1},
             {"max_samples": 0}, {"min_samples_split": 1},
             # every row once: their weights sum past the counts' width
             {"bootstrap": 0, "n_rows": heaviest} if heaviest <= tb.max_rows else {}]
    for case in cases:
        if not case or any(value >= 1 << Shape.cast(tb.start.layout.members[field]).width
                           for field, value in case.items()):
            continue                        # (not expressible in the field)
        tb.nodes.clear()
        tb.start.send({**good, **case})
        await ClockCycles(dut.clk, 30)
        assert int(dut.bad_start.value) == 1, f"{case}: bad_start low"
        assert not tb.nodes.received, f"{case}: a node record"
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
        await tb.load_rows(codes, labels)           # (the trees of a dataset share its load)
        for tree_index in range(tb.settings.get("dataset_trees", 1)):
            states.clear()
            sampling[0] = True
            reads = tb.memory_model.accepted_reads if tb.in_memory else 0
            nodes, cycles, work = await tb.grow(codes, labels, params, 7, tree_index, f"{name} tree {tree_index}")
            sampling[0] = False
            reads = tb.memory_model.accepted_reads - reads if tb.in_memory else 0
            unlimited, _ = train_tree_from_histograms(codes, labels, dataclasses.replace(params, max_depth=None),
                                                      7, tree_index, tb.code_bits, tb.lanes)
            assert unlimited.n_nodes == nodes, f"{name} tree {tree_index}: the build's depth limit cut the tree"
            dut._log.info("%s tree %d: %d nodes, %d cycles (one-pass bound %d)", name, tree_index, nodes,
                          cycles, work.searched_rows)
            tb.cycle_log.append({"dataset": name, "seed": 7, "tree": tree_index, "nodes": nodes,
                                 "cycles": cycles, "one_pass_bound": work.searched_rows, "lanes": tb.lanes,
                                 "words_read": reads, "states": dict(states)})
    tb.write_report()
