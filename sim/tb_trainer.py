"""cocotb testbench of ``hw.trainer.ForestTrainer`` against ``sw.methods.forest.model.train_forest``.

Whole forests are trained in the simulated trainer (dataset streamed in, presorted by the
hardware sorter, trees dispatched to the PEs) and compared tree by tree, node by node,
with the golden model. Settings: ``random_forests``, ``datasets``, ``trees``,
``idle_probability``, ``stall_probability``, ``report`` (JSON file for cycle counts).
"""

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

from hw.trainer import dataset_layout, forest_node_layout
from sim.coverage import bins as coverage_bins, coverage_for
from sim.runner import testbench_parameters
from sim.support.testbench import StreamTestbench
from sim.support.trees import (PECapacity, assert_trees_equal, bits, configure_tree_inputs, dataset_beats,
                       depth_overflow_expected, inbag_overflow_expected, quantised_dataset, tree_budget,
                       tree_from_nodes, tree_inputs)
from sw.methods.forest.model import TrainingParameters, train_forest

class ForestTestbench(StreamTestbench):
    def __init__(self, dut):
        super().__init__(dut)
        self.capacity = capacity = PECapacity(self.design)
        for name in ("max_rows", "max_samples", "max_inbag_rows", "feature_capacity", "classes",
                     "code_bits", "max_depth", "label_bits"):
            setattr(self, name, getattr(capacity, name))
        self.max_trees = self.design["max_trees"]
        self.lanes = self.design["feature_lanes"]
        self.dataset = self.source("dataset", dataset_layout(self.code_bits, self.label_bits, self.lanes))
        self.nodes = self.sink("nodes", forest_node_layout(bits(self.max_trees - 1), capacity.node_layout))
        self.cycle_log = []
        self.coverage = coverage_for(self)

    async def load(self, codes, labels):
        """Stream the dataset in, row by row, and wait until it is taken."""
        self.dut.n_features.value = codes.shape[1]
        for beat in dataset_beats(codes, labels, self.lanes):
            self.dataset.send(beat)
        while not self.dataset.idle:
            await RisingEdge(self.dut.clk)
        await ClockCycles(self.dut.clk, 2)

    def configure(self, n_rows, n_features, n_trees, params, seed):
        dut = self.dut
        dut.seed.value = seed
        dut.n_rows.value = n_rows
        dut.n_features.value = n_features
        dut.n_trees.value = n_trees
        configure_tree_inputs(dut, params)

    async def pulse_start(self):
        await RisingEdge(self.dut.clk)
        self.dut.start.value = 1
        await RisingEdge(self.dut.clk)
        self.dut.start.value = 0

    async def wait_until_finished(self, budget, label):
        waited = 0
        while waited < budget:
            await ClockCycles(self.dut.clk, 32)
            waited += 32
            await ReadOnly()
            # Finished: idle again (a forest stopped on tree_error first sends the tree going out).
            if not int(self.dut.busy.value) and (int(self.dut.done.value) or int(self.dut.tree_error.value)
                                                 or int(self.dut.bad_config.value)):
                await RisingEdge(self.dut.clk)
                return
        raise AssertionError(f"{label}: the forest did not finish within {budget} cycles")

    def trees_from_nodes(self, n_classes):
        """Group the output by tree (each tree's nodes must come together) into Trees."""
        groups, current = {}, None
        for beat in self.nodes.received:
            tree = beat["tree"]
            if tree != current:
                assert tree not in groups, f"tree {tree}'s nodes are not together"
                groups[tree], current = [], tree
            groups[tree].append(beat["node"])
        return {tree: tree_from_nodes(nodes, self.capacity, n_classes, f"tree {tree}")
                for tree, nodes in groups.items()}

    def overflowing_trees(self, codes, labels, params, seed, n_trees):
        """The trees of the forest the PEs cannot hold: a bootstrap with more distinct rows
        than a list, or a node deeper than the PEs hold (unlimited depth)."""
        return [tree for tree in range(n_trees)
                if inbag_overflow_expected(len(codes), params, seed, tree, self.max_inbag_rows)
                or depth_overflow_expected(codes, labels, params, seed, tree, self.max_depth)]

    async def check_forest(self, codes, labels, params, seed, n_trees, label):
        """Train a forest and compare it with the model. A forest with a tree the PEs cannot
        hold (too deep, or too many distinct in-bag rows) must stop on ``tree_error``; the
        trees that came out before must still be right.
        Returns the cycle count, or None for a forest stopped on ``tree_error``."""
        codes = np.asarray(codes, dtype=np.int64)
        labels = np.asarray(labels, dtype=np.int64)
        n_rows, n_features = codes.shape
        self.nodes.clear()
        await self.load(codes, labels)
        self.configure(n_rows, n_features, n_trees, params, seed)
        expected = train_forest(codes, labels, params, seed, n_trees)
        overflowing = self.overflowing_trees(codes, labels, params, seed, n_trees)
        self.coverage.record(coverage_bins.forest_case, n_trees, self.design["pe_count"], overflowing, params.thesis_mode)
        depth = self.max_depth if overflowing else max(int(tree.depth.max()) for tree in expected)
        lists = 1 if params.thesis_mode else n_features
        per_tree = tree_budget(n_rows, n_features, depth, lists, self.design["feature_lanes"])
        budget = 20 * n_features * n_rows + 5000 + per_tree * n_trees
        await self.pulse_start()
        # The trainer holds the configuration from start on: the inputs may change now.
        for name in ("seed", *tree_inputs(params)):
            signal = getattr(self.dut, name)
            signal.value = self.rng.getrandbits(len(signal))
        await self.wait_until_finished(budget, label)
        await ReadOnly()
        flags = {name: int(getattr(self.dut, name).value)
                 for name in ("done", "bad_config", "dataset_error", "tree_error", "start_while_busy")}
        cycles, sort_cycles = int(self.dut.cycles.value), int(self.dut.sort_cycles.value)
        await RisingEdge(self.dut.clk)
        trees = self.trees_from_nodes(params.n_classes)
        if overflowing:
            assert flags == {"done": 0, "bad_config": 0, "dataset_error": 0, "tree_error": 1,
                             "start_while_busy": 0}, \
                f"{label}: the PEs cannot hold trees {overflowing}, but the flags are {flags}"
            assert not set(trees) & set(overflowing), f"{label}: trees {overflowing} came out"
        else:
            assert flags == {"done": 1, "bad_config": 0, "dataset_error": 0, "tree_error": 0,
                             "start_while_busy": 0}, f"{label}: flags {flags}"
            assert sorted(trees) == list(range(n_trees)), f"{label}: trees {sorted(trees)} came out"
        for index, tree in trees.items():
            assert index < n_trees, f"{label}: tree {index} of {n_trees} came out"
            assert_trees_equal(tree, expected[index], f"{label}: tree {index}")
        if overflowing:
            return None
        self.cycle_log.append({"label": label, "cycles": cycles, "sort_cycles": sort_cycles,
                               "n_trees": n_trees, "pe_count": self.design["pe_count"],
                               "n_rows": n_rows, "n_features": n_features})
        return cycles

    def random_forest(self):
        rng = self.rng
        n_rows = rng.randint(2, self.max_rows)
        n_features = rng.randint(1, self.feature_capacity)
        n_classes = rng.randint(2, self.classes)
        top = rng.choice([3, 15, (1 << self.code_bits) - 1])
        codes = np.array([[rng.randint(0, top) for _ in range(n_features)] for _ in range(n_rows)])
        labels = np.array([rng.randrange(n_classes) for _ in range(n_rows)])
        thesis = rng.random() < 0.3
        # Thesis mode's 16 draws take the sparse fill, refused unless they fit a list; a
        # forest-mode bootstrap may overflow the lists (the forest then stops on tree_error).
        max_samples = (min(16, self.max_samples, self.max_inbag_rows) if thesis
                       else min(n_rows, self.max_samples))
        params = TrainingParameters(
            n_classes=n_classes, max_depth=4 if thesis else rng.choice([None, 3, self.max_depth]),
            max_samples=max_samples, features_per_split=max(1, int(n_features ** 0.5)),
            thesis_mode=thesis,
            min_samples_split=rng.choice([2, 3]), min_samples_leaf=rng.choice([1, 2]))
        return codes, labels, params, rng.getrandbits(32), rng.randint(1, min(6, self.max_trees))


@cocotb.test()
async def random_forests_match_model(dut):
    tb = ForestTestbench(dut)
    await tb.begin()
    for case in range(tb.settings.get("random_forests", 4)):
        codes, labels, params, seed, n_trees = tb.random_forest()
        await tb.check_forest(codes, labels, params, seed, n_trees, f"forest {case} {codes.shape} {params}")
    tb.write_report()


def _no_tree_can_fail():
    """Whether the build (the settings' design) leaves no tree to stop on: no bootstrap can
    draw more distinct rows than the lists hold, and no tree can be deeper than the PE
    (a node that would still split at depth d keeps at least 2 of the at most n - d rows
    left on its path, so depth max_depth needs max_depth <= in-bag rows - 2)."""
    design = testbench_parameters().get("design")
    if not design:
        return False
    capacity = PECapacity(design)
    return (capacity.max_inbag_rows >= min(capacity.max_rows, capacity.max_samples)
            and capacity.max_depth >= capacity.max_inbag_rows - 1)


@cocotb.skipif(_no_tree_can_fail(), reason="the build holds every tree its rows allow: no tree error to test with")
@cocotb.test()
async def forests_after_a_tree_error(dut):
    """A forest stopped on tree_error leaves other trees running or queued in the PEs (and
    lists half served); the next forests, with fewer trees than PEs too, must not see them."""
    tb = ForestTestbench(dut)
    await tb.begin()
    pe_count = tb.design["pe_count"]
    rounds = 0
    for attempt in range(200):
        n_rows = tb.max_rows
        n_features = tb.rng.randint(1, tb.feature_capacity)
        codes = np.array([[tb.rng.randrange(1 << tb.code_bits) for _ in range(n_features)]
                          for _ in range(n_rows)])
        labels = np.array([tb.rng.randrange(tb.classes) for _ in range(n_rows)])
        params = TrainingParameters(n_classes=tb.classes, max_depth=None, max_samples=n_rows,
                                    features_per_split=max(1, int(n_features ** 0.5)))
        seed, n_trees = tb.rng.getrandbits(32), min(tb.max_trees, 2 * pe_count + 2)
        overflowing = tb.overflowing_trees(codes, labels, params, seed, n_trees)
        # Wanted: a tree too deep, with trees after it still to start (some of them queued
        # behind every PE), or, when the build holds no more trees than PEs, still running.
        last = n_trees - pe_count if n_trees > pe_count else n_trees - 1
        if not overflowing or overflowing[0] >= last:
            continue
        assert await tb.check_forest(codes, labels, params, seed, n_trees, f"stopped forest {rounds}") is None
        for after in range(2):
            codes, labels, params, seed, n_trees = tb.random_forest()
            while tb.overflowing_trees(codes, labels, params, seed, 1):
                codes, labels, params, seed, n_trees = tb.random_forest()
            await tb.check_forest(codes, labels, params, seed, 1 if after == 0 else n_trees,
                                  f"forest {after} after stopped forest {rounds}")
        rounds += 1
        if rounds == tb.settings.get("stopped_forests", 2):
            break
    assert rounds > 0, "no forest with a too deep tree was found to test with"


@cocotb.test()
async def largest_forest_finishes(dut):
    """A forest of ``max_trees`` trees (the most the build accepts) on a four-row dataset:
    every tree comes out, equal to the model's, and ``done`` rises (a tree counter narrower
    than ``n_trees`` would never reach it). Depth 1 keeps each tree to three nodes."""
    tb = ForestTestbench(dut)
    await tb.begin()
    codes = np.array([[0], [1], [2], [3]])
    labels = np.array([0, 1, 0, 1])
    params = TrainingParameters(n_classes=2, max_depth=1, max_samples=4, features_per_split=1)
    cycles = await tb.check_forest(codes, labels, params, 0x5EED, tb.max_trees,
                                   f"a forest of max_trees = {tb.max_trees} trees")
    assert int(dut.trees_done.value) == tb.max_trees, \
        f"trees_done reads {int(dut.trees_done.value)}, not {tb.max_trees}"
    tb.cycle_log.append({"label": "largest forest", "cycles": cycles})
    tb.write_report()


@cocotb.test()
async def dataset_forests_match_model(dut):
    tb = ForestTestbench(dut)
    await tb.begin()
    for name in tb.settings.get("datasets", []):
        codes, labels, n_classes = quantised_dataset(name, tb.code_bits)
        for thesis in (False, True):
            params = (TrainingParameters(n_classes=n_classes, max_depth=4, max_samples=16, thesis_mode=True)
                      if thesis else
                      TrainingParameters(n_classes=n_classes, max_depth=tb.settings.get("depth"),
                                         max_samples=codes.shape[0],
                                         features_per_split=max(1, int(codes.shape[1] ** 0.5))))
            await tb.check_forest(codes, labels, params, 99, tb.settings.get("trees", 4),
                                  f"{name} ({'thesis' if thesis else 'forest'} mode)")
    tb.write_report()


@cocotb.test()
async def bad_configurations_are_flagged(dut):
    tb = ForestTestbench(dut)
    await tb.begin()
    codes = np.arange(24).reshape(8, 3) % 5
    labels = np.arange(8) % 2
    params = TrainingParameters(n_classes=2, max_depth=3, max_samples=8, features_per_split=1)
    await tb.load(codes, labels)
    cases = [("no trees", dict(n_trees=0)), ("rows not loaded", dict(n_rows=9)),
             ("features not loaded", dict(n_features=2))]
    if tb.max_trees + 1 < 1 << len(dut.n_trees):
        cases.append(("too many trees", dict(n_trees=tb.max_trees + 1)))
    for label, overrides in cases:
        tb.configure(8, 3, 2, params, 5)
        for name, value in overrides.items():
            getattr(dut, name).value = value
        await tb.pulse_start()
        await ClockCycles(dut.clk, 20)
        await ReadOnly()
        assert int(dut.bad_config.value) == 1 and int(dut.busy.value) == 0, f"{label}: not refused"
        tb.coverage.hit("refusal", label)
        await RisingEdge(dut.clk)
    # A row cut short raises dataset_error, and start is then refused: a row of lanes + 1
    # features takes two beats, and the first already says last.
    assert tb.lanes + 1 <= tb.feature_capacity, "the build cannot hold a row of two beats"
    tb.dut.n_features.value = tb.lanes + 1
    tb.dataset.send({"codes": [1] * tb.lanes, "label": 0, "last": 1})
    while not tb.dataset.idle:
        await RisingEdge(dut.clk)
    await ClockCycles(dut.clk, 2)
    await ReadOnly()
    assert int(dut.dataset_error.value) == 1, "a row cut short was not flagged"
    tb.coverage.hit("refusal", "dataset error")
    await RisingEdge(dut.clk)
    # Start while busy is flagged and ignored: the forest still equals the model.
    await tb.load(codes, labels)
    tb.configure(8, 3, 3, params, 5)
    expected = train_forest(codes, labels, params, 5, 3)
    tb.nodes.clear()
    await tb.pulse_start()
    await ClockCycles(dut.clk, 30)
    await tb.pulse_start()
    await tb.wait_until_finished(200000, "start while busy")
    await ReadOnly()
    assert int(dut.start_while_busy.value) == 1, "start while busy not flagged"
    tb.coverage.hit("refusal", "start while busy")
    await RisingEdge(dut.clk)
    trees = tb.trees_from_nodes(2)
    assert sorted(trees) == [0, 1, 2], "the forest was disturbed by a start while busy"
    for index, tree in enumerate(expected):
        assert_trees_equal(trees[index], tree, f"start while busy: tree {index}")


@cocotb.test()
async def reset_in_the_middle_then_again(dut):
    tb = ForestTestbench(dut)
    await tb.begin()
    for case in range(2):
        codes, labels, params, seed, n_trees = tb.random_forest()
        await tb.load(codes, labels)
        tb.configure(codes.shape[0], codes.shape[1], n_trees, params, seed)
        await tb.pulse_start()
        await ClockCycles(dut.clk, tb.rng.randint(1, 3000))
        await tb.reset()
        codes, labels, params, seed, n_trees = tb.random_forest()
        await tb.check_forest(codes, labels, params, seed, n_trees, f"after reset {case}")
        tb.coverage.hit("reset", "while busy")
