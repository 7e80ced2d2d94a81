"""cocotb testbench of ``hw.inference.InferenceEngine`` against the golden model's inference.

Forests are trained with ``sw.methods.forest.model.train_forest`` (random synthetic data and iris,
quantised with ``sw.methods.forest.quantize``), loaded through the ``nodes`` stream in a random order,
and test rows are streamed through; every prediction (class, votes, class-count sums,
flags) and the accuracy counters are compared with ``predict_tree``/``forest_votes``
(+ argmax, ties to the lowest class)/``forest_class_counts``.

Settings (from the runner): ``scenarios`` (list of dicts: ``data`` "random" or "iris",
``mode`` "forest" or "thesis", ``trees``, ``seed``, ``rows``, and for random data
``features``, ``classes``, ``train_rows``; ``max_depth`` for forest mode),
``random_trees`` (random-shaped forests of the corner-case test), ``idle_probability``,
``stall_probability``.
"""

import math

import cocotb
import numpy as np
from amaranth.hdl import Shape
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

from hw.inference import STEP_CYCLES, InferenceGeometry
from sim.coverage import coverage_for
from sim.support.testbench import CLOCK_PERIOD_NS, StreamTestbench
from sw.methods.forest.model import Tree, TrainingParameters, forest_class_counts, forest_votes, predict_tree, train_forest
from sw.methods.forest.quantize import make_quantizer

FLAGS = ("bad_node", "bad_row", "bad_feature", "depth_exceeded")

DEFAULT_SCENARIOS = [
    {"data": "iris", "mode": "thesis", "trees": 16, "seed": 7, "rows": 30},
    {"data": "random", "mode": "forest", "trees": 8, "seed": 8, "rows": 30, "features": 6,
     "classes": 4, "train_rows": 60, "max_depth": 4},
]


def make_tree(feature, threshold, left, class_counts):
    """A Tree from per-node lists (leaves: feature -1); depth and right children derived."""
    n = len(feature)
    left = np.array(left, dtype=np.int64)
    right = np.where(left >= 0, left + 1, -1)
    depth = np.zeros(n, dtype=np.int64)
    for node in range(n):
        if left[node] >= 0:
            depth[left[node]] = depth[right[node]] = depth[node] + 1
    counts = np.array(class_counts, dtype=np.int64).reshape(n, -1)
    return Tree(feature=np.array(feature, dtype=np.int64), threshold_code=np.array(threshold, dtype=np.int64),
                left_child=left, right_child=right, class_counts=counts,
                majority_class=np.argmax(counts, axis=1).astype(np.int64),
                n_samples=counts.sum(axis=1), n_rows=counts.sum(axis=1), depth=depth)


def random_tree(rng, g, n_features, n_classes, max_depth):
    """A random breadth-first tree within the engine's capacity (any shape, random splits)."""
    feature, threshold, left, counts = [], [], [], []
    level = [0]
    feature.append(-1), threshold.append(-1), left.append(-1)
    depth = 0
    n_nodes = 1
    while level and depth < max_depth:
        next_level = []
        for node in level:
            if n_nodes + 2 > g.max_nodes_per_tree or rng.random() < 0.3:
                continue
            feature[node] = rng.randrange(n_features)
            threshold[node] = rng.randrange(1 << g.code_bits)
            left[node] = n_nodes
            for _ in range(2):
                feature.append(-1), threshold.append(-1), left.append(-1)
                next_level.append(n_nodes)
                n_nodes += 1
        level = next_level
        depth += 1
    limit = 1 << g.count_bits
    for _ in range(n_nodes):
        counts.append([rng.randrange(limit) for _ in range(n_classes)])
    return make_tree(feature, threshold, left, counts)


def leaf_tree(majority, n_classes, count=3):
    """A single-node tree (the root is a leaf) voting for ``majority``."""
    counts = [0] * n_classes
    counts[majority] = count
    return make_tree([-1], [-1], [-1], [counts])


def chain_tree(depth, n_classes, threshold):
    """Every row goes left down a chain of ``depth`` splits (right children are leaves)."""
    feature, thresholds, left = [], [], []
    for level in range(depth):
        feature += [0] if level == 0 else [0, -1]
        thresholds += [threshold] if level == 0 else [threshold, -1]
        left += [2 * level + 1] if level == 0 else [2 * level + 1, -1]
    feature += [-1] if depth == 0 else [-1, -1]
    thresholds += [-1] if depth == 0 else [-1, -1]
    left += [-1] if depth == 0 else [-1, -1]
    counts = [[1 + (node % n_classes == c) for c in range(n_classes)] for node in range(len(feature))]
    return make_tree(feature, thresholds, left, counts)


class InferenceTestbench(StreamTestbench):
    def __init__(self, dut):
        super().__init__(dut)
        self.g = InferenceGeometry(**self.design)
        self.np_rng = np.random.default_rng(self.rng.randrange(1 << 32))
        self.nodes = self.source("nodes", self.g.node_layout)
        self.rows = self.source("rows", self.g.row_layout)
        self.predictions = self.sink("predictions", self.g.prediction_layout)
        dut.n_trees.value = 1
        dut.clear.value = 0
        self.counters = [0, 0, 0]               # expected rows seen, labelled, correct
        self.coverage = coverage_for(self)

    async def reset(self, cycles=2):
        await super().reset(cycles)
        self.counters = [0, 0, 0]

    async def clear(self):
        self.dut.clear.value = 1
        await RisingEdge(self.dut.clk)
        self.dut.clear.value = 0
        self.counters = [0, 0, 0]

    async def flags(self):
        await ReadOnly()
        values = {name: int(getattr(self.dut, name).value) for name in FLAGS + ("bad_config",)}
        await RisingEdge(self.dut.clk)
        return values

    # ---- Loading -------------------------------------------------------------------
    def pack_array(self, values, bits):
        assert all(0 <= int(v) < (1 << bits) for v in values), (list(values), bits)
        return sum(int(v) << (i * bits) for i, v in enumerate(values))

    def node_fields(self, tree_index, tree, node):
        g = self.g
        leaf = tree.left_child[node] < 0
        fields = {"tree": tree_index, "node": node, "leaf": int(leaf),
                  "majority_class": int(tree.majority_class[node])}
        if leaf:                                # unused fields: random, must be ignored
            fields.update(feature=self.rng.randrange(g.feature_capacity),
                          threshold=self.rng.randrange(1 << g.code_bits),
                          left_child=self.rng.randrange(max(1, g.max_nodes_per_tree - 1)))
        else:
            assert tree.right_child[node] == tree.left_child[node] + 1
            fields.update(feature=int(tree.feature[node]), threshold=int(tree.threshold_code[node]),
                          left_child=int(tree.left_child[node]))
        if g.class_count_sums:
            counts = np.zeros(g.classes, dtype=np.int64)
            counts[:tree.class_counts.shape[1]] = tree.class_counts[node]
            fields["class_counts"] = self.pack_array(counts, g.count_bits)
        return fields

    def check_fits(self, trees, n_features, label):
        """Guard on the testbench's own cases (not a check of the design): a trained forest
        the build cannot hold would test nothing, so one that outgrows the build fails.
        (Tree counts are checked where they are chosen.)"""
        g = self.g
        assert n_features <= g.feature_capacity, f"{label}: {n_features} features"
        for tree in trees:
            assert tree.n_nodes <= g.max_nodes_per_tree, f"{label}: a tree of {tree.n_nodes} nodes"
            assert tree.depth.max() <= g.max_depth, f"{label}: a tree of depth {tree.depth.max()}"
            assert tree.class_counts.shape[1] <= g.classes
            assert tree.class_counts.max() < (1 << g.count_bits), f"{label}: class counts too wide"

    async def load(self, trees, label, n_trees=None):
        """Write every node of every tree, in a random order; set n_trees."""
        writes = [(t, node) for t, tree in enumerate(trees) for node in range(tree.n_nodes)]
        self.rng.shuffle(writes)
        for t, node in writes:
            self.nodes.send(self.node_fields(t, trees[t], node))
        await self.wait_until(lambda: self.nodes.idle, 10 * len(writes) + 100, f"{label} loading")
        await ClockCycles(self.dut.clk, 2)       # the write is registered once
        self.dut.n_trees.value = len(trees) if n_trees is None else n_trees

    # ---- Rows ------------------------------------------------------------------------
    def send_row(self, codes, label=None):
        for i, code in enumerate(codes):
            last = i == len(codes) - 1
            self.rows.send({"code": int(code), "last": int(last),
                            "label": int(label) if (last and label is not None) else 0,
                            "has_label": int(last and label is not None)})

    def unpack_prediction(self, fields):
        g = self.g
        mask_votes, mask_sums = (1 << g.vote_bits) - 1, (1 << g.sum_bits) - 1
        result = dict(fields)
        result["votes"] = [(fields["votes"] >> (c * g.vote_bits)) & mask_votes for c in range(g.classes)]
        if g.class_count_sums:
            result["class_count_sums"] = [(fields["class_count_sums"] >> (c * g.sum_bits)) & mask_sums
                                          for c in range(g.classes)]
        return result

    async def run_rows(self, rows, labels, label, budget_per_row=None):
        """Stream rows (labels: a list with None for unlabelled rows); return the predictions."""
        self.predictions.clear()
        for codes, row_label in zip(rows, labels):
            self.send_row(codes, row_label)
        if budget_per_row is None:
            budget_per_row = 20 * (self.g.max_trees * (self.g.max_depth + 2) + self.g.feature_capacity) + 100
        await self.wait_until(lambda: len(self.predictions.received) >= len(rows),
                            budget_per_row * len(rows) + 200, f"{label} predictions")
        await ClockCycles(self.dut.clk, STEP_CYCLES * self.g.traversal_stages + 10)   # nothing more may come
        assert len(self.predictions.received) == len(rows), \
            f"{label}: {len(self.predictions.received)} predictions for {len(rows)} rows"
        return [self.unpack_prediction(p) for p in self.predictions.received]

    async def check_forest(self, trees, rows, labels, n_classes, label):
        """Stream rows through the loaded forest and compare everything with the model."""
        g = self.g
        got = await self.run_rows(rows, labels, label)
        codes = np.array(rows, dtype=np.int64)
        votes = np.zeros((len(rows), g.classes), dtype=np.int64)
        votes[:, :n_classes] = forest_votes(trees, codes, n_classes)
        sums = np.zeros((len(rows), g.classes), dtype=np.int64)
        sums[:, :n_classes] = forest_class_counts(trees, codes, n_classes)
        predicted = np.argmax(votes, axis=1)
        for i, prediction in enumerate(got):
            where = f"{label}, row {i}"
            assert prediction["error"] == 0, f"{where}: error set"
            assert prediction["predicted_class"] == predicted[i], \
                f"{where}: class {prediction['predicted_class']}, model {predicted[i]} (votes {list(votes[i])})"
            assert prediction["votes"] == list(votes[i]), f"{where}: votes {prediction['votes']}, model {list(votes[i])}"
            if g.class_count_sums:
                assert prediction["class_count_sums"] == list(sums[i]), \
                    f"{where}: sums {prediction['class_count_sums']}, model {list(sums[i])}"
            has_label = labels[i] is not None
            correct = has_label and labels[i] == predicted[i]
            assert (prediction["has_label"], prediction["correct"]) == (int(has_label), int(correct)), where
            self.counters[0] += 1
            self.counters[1] += int(has_label)
            self.counters[2] += int(correct)
        await self.check_counters(label)
        flags = await self.flags()
        assert not any(flags.values()), f"{label}: flags raised {flags}"
        return predicted

    async def check_counters(self, label):
        await ReadOnly()
        got = [int(self.dut.rows_seen.value), int(self.dut.rows_labelled.value), int(self.dut.rows_correct.value)]
        await RisingEdge(self.dut.clk)
        assert got == self.counters, f"{label}: accuracy counters {got}, expected {self.counters}"

    # ---- Scenarios: trained forests ---------------------------------------------------
    def scenario(self, spec):
        """Train the scenario's forest; return (trees, test rows, labels, n_classes)."""
        g = self.g
        if not 1 <= spec["trees"] <= g.max_trees:
            raise ValueError(f"scenario {spec}: trees={spec['trees']} outside 1 .. max_trees={g.max_trees}")
        data_rng = np.random.default_rng(spec["seed"])
        if spec["data"] == "iris":
            from sklearn.datasets import load_iris
            X, y = load_iris(return_X_y=True)
            n_classes = 3
        else:
            n, f, n_classes = spec["train_rows"] + spec["rows"], spec["features"], spec["classes"]
            X = data_rng.normal(size=(n, f))
            weights = data_rng.normal(size=(f, n_classes))
            y = np.argmax(X @ weights + 0.7 * data_rng.normal(size=(n, n_classes)), axis=1)
        order = data_rng.permutation(len(y))
        n_train = spec.get("train_rows", 2 * len(y) // 3)
        train, test = order[:n_train], order[n_train:]
        thesis = spec["mode"] == "thesis"
        quantizer = make_quantizer("fixed" if thesis else "rank", g.code_bits)
        codes_train = quantizer.fit_transform(X[train]).astype(np.int64)
        labels_train = y[train]
        n_features = X.shape[1]
        if thesis:
            params = TrainingParameters(n_classes=n_classes, max_depth=4, max_samples=16,
                                        features_per_split=1, thesis_mode=True)
        else:
            params = TrainingParameters(n_classes=n_classes, max_depth=spec.get("max_depth"),
                                        max_samples=n_train, features_per_split=max(1, int(math.sqrt(n_features))))
        trees = train_forest(codes_train, labels_train, params, spec["seed"], spec["trees"])
        # Test rows: held-out rows, then rows of random codes (the full code range).
        held_out = quantizer.transform(X[test]).astype(np.int64)
        random_rows = data_rng.integers(0, 1 << g.code_bits, size=(len(test), n_features))
        rows = np.concatenate([held_out, random_rows])[:spec["rows"]]
        test_labels = np.concatenate([y[test], data_rng.integers(0, n_classes, len(test))])[:spec["rows"]]
        labels = [int(v) if self.rng.random() < 0.8 else None for v in test_labels]
        self.check_fits(trees, n_features, spec["data"])
        return trees, [list(r) for r in rows], labels, n_classes


def scenario_label(spec):
    return f"{spec['data']}/{spec['mode']}/{spec['trees']} trees/seed {spec['seed']}"


@cocotb.test()
async def trained_forests_match_model(dut):
    """Forests trained by the golden model on iris and random data, random stalls everywhere."""
    tb = InferenceTestbench(dut)
    await tb.begin()
    compared = 0
    for spec in tb.settings.get("scenarios", DEFAULT_SCENARIOS):
        label = scenario_label(spec)
        trees, rows, labels, n_classes = tb.scenario(spec)
        assert max(int(t.depth.max()) for t in trees) >= 2, f"{label}: trees too shallow to test anything"
        await tb.load(trees, label)
        predicted = await tb.check_forest(trees, rows, labels, n_classes, label)
        assert len(set(predicted.tolist())) >= 2, f"{label}: every row predicts one class"
        depths = [int(t.depth[predict_tree(t, np.array(rows))].max()) for t in trees]
        dut._log.info("%s: %d rows x %d trees (deepest leaf reached %d, %d nodes at most) match",
                      label, len(rows), len(trees), max(depths), max(t.n_nodes for t in trees))
        compared += len(rows)
    assert compared > 0


@cocotb.test()
async def corner_cases_match_model(dut):
    """Root-leaf trees, one tree, max_trees trees, vote ties, full-depth chains, random shapes."""
    tb = InferenceTestbench(dut)
    await tb.begin()
    g = tb.g
    n_features = g.feature_capacity
    classes = g.classes

    def random_rows(n):
        return [[tb.rng.randrange(1 << g.code_bits) for _ in range(n_features)] for _ in range(n)]

    def some_labels(n):
        return [tb.rng.randrange(classes) if tb.rng.random() < 0.7 else None for _ in range(n)]

    tie_winner = 1 if classes >= 3 else 0          # not class 0 when there is a choice
    cases = {
        "one root-leaf tree": [leaf_tree(classes - 1, classes)],
        "tie of two trees goes to the lower class": [leaf_tree(1, classes), leaf_tree(0, classes)],
        "tie of four trees": [leaf_tree(classes - 1, classes), leaf_tree(tie_winner, classes),
                              leaf_tree(classes - 1, classes), leaf_tree(tie_winner, classes)],
        # As deep as max_depth allows, or as max_nodes_per_tree holds (2 nodes a level).
        "one full-depth chain": [chain_tree(min(g.max_depth, (g.max_nodes_per_tree - 1) // 2), classes,
                                            (1 << g.code_bits) - 1)],
        f"max_trees = {g.max_trees} random trees": [
            random_tree(tb.rng, g, n_features, classes, g.max_depth) for _ in range(g.max_trees)],
    }
    # A build of fewer trees (a limit case) has no room for the ties.
    for label, trees in list(cases.items()):
        if len(trees) > g.max_trees:
            del cases[label]
    for case in range(tb.settings.get("random_trees", 4)):
        count = min(g.max_trees, tb.rng.choice([1, 2, 3, tb.rng.randint(1, g.max_trees)]))
        cases[f"random forest {case}"] = [random_tree(tb.rng, g, n_features, classes, g.max_depth)
                                          for _ in range(count)]
    for label, trees in cases.items():
        rows = random_rows(tb.rng.choice([1, 5, 12]))
        tb.check_fits(trees, n_features, label)
        await tb.load(trees, label)
        await tb.check_forest(trees, rows, some_labels(len(rows)), classes, label)
    # Ties must really have happened.
    if "tie of four trees" not in cases:
        return
    tie_votes = forest_votes(cases["tie of four trees"], np.zeros((1, n_features)), classes)[0]
    assert sorted(tie_votes.tolist())[-2:] == [2, 2] and np.argmax(tie_votes) == tie_winner


@cocotb.test()
async def bad_configurations_are_flagged(dut):
    """Each bad configuration raises its flag and gives error predictions without hanging."""
    tb = InferenceTestbench(dut)
    await tb.begin()
    g = tb.g
    classes = g.classes
    full_row = [tb.rng.randrange(1 << g.code_bits) for _ in range(g.feature_capacity)]
    good = [random_tree(tb.rng, g, g.feature_capacity, classes, g.max_depth) for _ in range(2)]

    async def expect_errors(rows, flag, label):
        got = await tb.run_rows(rows, [1 % classes] * len(rows), label)
        assert all(p["error"] == 1 and p["correct"] == 0 for p in got), f"{label}: {got}"
        flags = await tb.flags()
        assert flags[flag] == 1, f"{label}: {flag} not raised ({flags})"
        await tb.clear()
        flags = await tb.flags()
        if flag != "bad_config":
            assert not any(flags.values()), f"{label}: flags after clear {flags}"

    async def still_good(label):
        await tb.load(good, label)
        await tb.check_forest(good, [full_row] * 3, [0, None, 1], classes, label)

    # n_trees out of range.
    await tb.load(good, "good forest")
    for n_trees in (0, g.max_trees + 1):
        if n_trees >= 1 << len(dut.n_trees):
            continue                                   # not representable on the port
        dut.n_trees.value = n_trees
        await expect_errors([full_row] * 2, "bad_config", f"n_trees = {n_trees}")
        await still_good(f"after n_trees = {n_trees}")

    # A row with more features than feature_capacity.
    await expect_errors([full_row + [0]], "bad_row", "row too long")
    await still_good("after a row too long")

    # A split on a feature the row does not have.
    if g.feature_capacity >= 2:
        trees = [chain_tree(1, classes, 0)]
        trees[0].feature[0] = g.feature_capacity - 1
        await tb.load(trees, "feature out of range")
        await expect_errors([full_row[:g.feature_capacity - 1]], "bad_feature", "feature out of range")
        await still_good("after a feature out of range")

    # A traversal deeper than max_depth.
    if 2 * g.max_depth + 3 <= g.max_nodes_per_tree:
        await tb.load([chain_tree(g.max_depth + 1, classes, (1 << g.code_bits) - 1)], "too deep")
        await expect_errors([full_row] * 2, "depth_exceeded", "too deep")
        await still_good("after a traversal too deep")

    # Refused node writes: nothing is written (the good forest still predicts), flag raised.
    await tb.load(good, "before refused writes")
    refused = []
    base = tb.node_fields(0, good[0], 0)
    for field, value in [("tree", g.max_trees), ("node", g.max_nodes_per_tree),
                         ("majority_class", classes), ("feature", g.feature_capacity),
                         ("left_child", g.max_nodes_per_tree - 1)]:
        fields = {**base, "leaf": 0, "tree": 0, "node": 0, "feature": 0, "left_child": 0, field: value}
        width = Shape.cast(dict(g.node_layout)[field].shape).width
        if value < 1 << width:
            refused.append((field, fields))
    for field, fields in refused:
        tb.nodes.send(fields)
        await tb.wait_until(lambda: tb.nodes.idle, 200, f"refused {field}")
        await ClockCycles(dut.clk, 2)
        flags = await tb.flags()
        assert flags["bad_node"] == 1, f"a node with {field} = {fields[field]} was not refused"
        await tb.clear()
    await tb.check_forest(good, [full_row] * 4, [None] * 4, classes, "after refused writes")
    dut._log.info("refused node writes checked: %s", [field for field, _ in refused])


@cocotb.test()
async def reset_in_the_middle_then_again(dut):
    """Reset while nodes load (even cases) or while rows are traversed (odd cases).

    The node memory is not cleared by a reset: after a reset during rows the same forest
    predicts again without reloading; after a reset during loading it is loaded again.
    """
    tb = InferenceTestbench(dut)
    await tb.begin()
    g = tb.g
    for case in range(6):
        trees = [random_tree(tb.rng, g, g.feature_capacity, g.classes, g.max_depth)
                 for _ in range(tb.rng.randint(1, g.max_trees))]
        rows = [[tb.rng.randrange(1 << g.code_bits) for _ in range(g.feature_capacity)] for _ in range(6)]
        during_rows = case % 2 == 1
        if during_rows:
            await tb.load(trees, f"before reset {case}")
            for row in rows:
                tb.send_row(row, tb.rng.randrange(g.classes))
            await ClockCycles(dut.clk, tb.rng.randint(g.feature_capacity + 2, 2 * g.feature_capacity + 3 * len(trees) + 6))
        else:
            for tree_index, tree in enumerate(trees):
                for node in range(tree.n_nodes):
                    tb.nodes.send(tb.node_fields(tree_index, tree, node))
            # Fewer cycles than nodes (the nodes port takes one per cycle): some still queued.
            wait = tb.rng.randint(0, sum(t.n_nodes for t in trees) - 1)
            if wait:
                await ClockCycles(dut.clk, wait)
        await ReadOnly()
        busy = not tb.nodes.idle if not during_rows else int(dut.idle.value) == 0
        assert busy, f"case {case}: nothing was in flight at the reset"
        await RisingEdge(dut.clk)
        await tb.reset()
        await ClockCycles(dut.clk, 1)
        await ReadOnly()
        assert int(dut.idle.value) == 1 and int(dut.predictions__valid.value) == 0
        await RisingEdge(dut.clk)
        if not during_rows:
            await tb.load(trees, f"after reset {case}")
        await tb.check_forest(trees, rows, [None, 0, 1 % g.classes, None, 0, 0], g.classes,
                              f"after reset {case}")


@cocotb.test()
async def cycles_without_stalls(dut):
    """Rows x trees throughput and one row's latency, without stalls, against the seam model."""
    tb = InferenceTestbench(dut)
    for driver in tb.sources:
        driver.idle_probability = 0.0
    tb.predictions.stall_probability = 0.0
    await tb.begin()
    g = tb.g
    n_trees = g.max_trees
    trees = [random_tree(tb.rng, g, g.feature_capacity, g.classes, g.max_depth) for _ in range(n_trees)]
    await tb.load(trees, "timed forest")
    n_rows = 12
    rows = [[tb.rng.randrange(1 << g.code_bits) for _ in range(g.feature_capacity)] for _ in range(n_rows)]
    codes = np.array(rows)
    # Each (row, tree) pair passes the seam once per round of traversal_stages steps.
    rounds = sum(int(np.sum(np.ceil((t.depth[predict_tree(t, codes)] + 1) / g.traversal_stages)))
                 for t in trees)

    async def timed(rows_to_send):
        tb.predictions.clear()
        start = cocotb.utils.get_sim_time("ns")
        for row in rows_to_send:
            tb.send_row(row)
        await tb.wait_until(lambda: len(tb.predictions.received) == len(rows_to_send),
                          100 * (rounds + 100), "timed rows")
        return int((cocotb.utils.get_sim_time("ns") - start) // CLOCK_PERIOD_NS)

    latency = await timed(rows[:1])
    total = await timed(rows)
    per_pair = total / (n_rows * n_trees)
    dut._log.info("latency of one row through %d trees: %d cycles; %d rows x %d trees in %d cycles "
                  "= %.2f cycles per row per tree (seam rounds %d, %.2f per pair)", n_trees, latency,
                  n_rows, n_trees, total, per_pair, rounds, rounds / (n_rows * n_trees))
    first = sum(int(np.ceil((t.depth[predict_tree(t, codes[:1])][0] + 1) / g.traversal_stages))
                for t in trees)
    # Latency: features in, pairs issued at one seam round each, the pipeline, retire and emit.
    assert latency <= g.feature_capacity + first + STEP_CYCLES * g.traversal_stages * (g.max_depth + 1) + 8, latency
    # Throughput: the seam is busy nearly every cycle once the rows are loaded.
    assert total <= rounds + g.feature_capacity + STEP_CYCLES * g.traversal_stages * (g.max_depth + 1) \
        + n_rows * (STEP_CYCLES * g.traversal_stages + g.feature_capacity + 8), total
