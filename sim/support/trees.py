"""What every testbench that receives trained trees shares: capacities, configuration, node decoding.

The PE, the forest trainer and the whole system all emit nodes in the layout of
``hw.pe.node_layout``; :func:`tree_from_nodes` turns a tree's node beats back into a
``sw.methods.forest.model.Tree`` (checking indices, ``last`` and the counts of absent classes), and
:func:`assert_trees_equal` compares it with the golden model field by field.
"""

import dataclasses

import numpy as np

from hw.checks import bits
from hw.pe import node_layout
from sw.methods.forest.model import TrainingParameters, Tree, inbag_row_count, leaf_decision, train_tree
from sim.support.streams import unpack

__all__ = ["bits", "random_forest_case", "PECapacity", "tree_budget", "depth_overflow_expected", "inbag_overflow_expected",
           "tree_inputs",
           "configure_tree_inputs", "tree_from_nodes", "assert_trees_equal", "quantised_dataset",
           "dataset_beats"]


class PECapacity:
    """The derived sizes of a PE built with the design parameters ``design`` (a dict)."""

    def __init__(self, design):
        self.max_rows, self.max_samples = design["max_rows"], design["max_samples"]
        self.max_inbag_rows = design.get("max_inbag_rows") or self.max_rows
        self.feature_capacity, self.classes = design["feature_capacity"], design["classes"]
        self.code_bits, self.max_depth = design["code_bits"], design["max_depth"]
        self.feature_lanes = design["feature_lanes"]
        self.max_nodes = design.get("max_nodes") or min(2 * self.max_inbag_rows - 1,
                                                        (1 << (self.max_depth + 1)) - 1)
        self.row_bits = (self.max_rows - 1).bit_length()
        self.label_bits = max(1, (self.classes - 1).bit_length())
        self.feature_bits = max(1, (self.feature_capacity - 1).bit_length())
        self.slots = -(-self.feature_capacity // self.feature_lanes)
        self.slot_bits = max(1, (self.slots - 1).bit_length())
        self.count_bits = bits(max(self.max_samples, self.max_inbag_rows))
        self.node_layout = node_layout(
            node_bits=max(1, (self.max_nodes - 1).bit_length()), feature_bits=self.feature_bits,
            code_bits=self.code_bits, classes=self.classes, count_bits=self.count_bits,
            position_bits=bits(self.max_inbag_rows), depth_bits=bits(self.max_depth))


def tree_budget(n_rows, n_features, depth, lists, feature_lanes):
    """Generous cycles for one tree of this size in a PE (a hang shows as running past it)."""
    return 4000 + 8 * lists * n_rows + 60 * n_rows * (depth + 2) * (
        -(-n_features // max(1, feature_lanes)) + 3)


def depth_overflow_expected(codes, labels, params, seed, tree_index, max_depth):
    """Whether the tree, unlimited by ``params``, would need a node deeper than ``max_depth``
    (the PE's capacity): then the PE raises ``depth_overflow`` instead of finishing it."""
    if params.max_depth is not None:
        return False
    limited = train_tree(codes, labels, dataclasses.replace(params, max_depth=max_depth), seed, tree_index)
    deepest = limited.depth == max_depth
    if not deepest.any():
        return False
    would_search = ~leaf_decision(limited.class_counts[deepest], limited.n_rows[deepest],
                                  limited.depth[deepest], None, params.min_samples_split,
                                  params.min_samples_leaf)
    return bool(would_search.any())


def inbag_overflow_expected(n_rows, params, seed, tree_index, max_inbag_rows):
    """Whether the tree's bootstrap draws more distinct rows than the PE's lists hold
    (``max_inbag_rows``): then the PE raises ``inbag_overflow`` instead of training it."""
    return inbag_row_count(n_rows, params, seed, tree_index) > max_inbag_rows


def tree_inputs(params):
    """The per-tree configuration inputs (PE and forest trainer) for ``TrainingParameters``."""
    return {
        "n_samples": params.max_samples if params.bootstrap else 1,
        "bootstrap": int(params.bootstrap),
        "features_per_split": params.features_per_split,
        "thesis_mode": int(params.thesis_mode),
        "depth_limited": int(params.max_depth is not None),
        "depth_limit": params.max_depth or 0,
        "min_samples_split": params.min_samples_split,
        "min_samples_leaf": params.min_samples_leaf,
    }


def configure_tree_inputs(dut, params):
    """Drive the per-tree configuration inputs of a PE or forest trainer (saturated to the port)."""
    for name, value in tree_inputs(params).items():
        port = getattr(dut, name)
        port.value = min(int(value), (1 << len(port)) - 1)


def tree_from_nodes(beats, capacity, n_classes, label="tree"):
    """A ``sw.methods.forest.model.Tree`` from one tree's node beats (dicts, or packed integers)."""
    mask = (1 << capacity.count_bits) - 1
    nodes = [unpack(capacity.node_layout, beat) if isinstance(beat, int) else beat for beat in beats]
    columns = {name: [] for name in ("feature", "threshold_code", "left_child", "right_child",
                                     "majority_class", "n_samples", "n_rows", "depth")}
    counts = []
    for index, node in enumerate(nodes):
        assert node["index"] == index, f"{label}: node {index} came out as index {node['index']}"
        assert node["last"] == int(index == len(nodes) - 1), f"{label}: 'last' wrong at node {index}"
        leaf = node["leaf"]
        columns["feature"].append(-1 if leaf else node["feature"])
        columns["threshold_code"].append(-1 if leaf else node["threshold"])
        columns["left_child"].append(-1 if leaf else node["left_child"])
        columns["right_child"].append(-1 if leaf else node["right_child"])
        columns["majority_class"].append(node["majority"])
        for name in ("n_samples", "n_rows", "depth"):
            columns[name].append(node[name])
        all_counts = [(node["class_counts"] >> (c * capacity.count_bits)) & mask
                      for c in range(capacity.classes)]
        assert not any(all_counts[n_classes:]), f"{label}: node {index} counts absent classes"
        counts.append(all_counts[:n_classes])
    arrays = {name: np.array(values, dtype=np.int64) for name, values in columns.items()}
    return Tree(class_counts=np.array(counts, dtype=np.int64).reshape(len(nodes), n_classes), **arrays)


def assert_trees_equal(got, expected, label):
    """Field by field, naming the first node that differs."""
    assert got.n_nodes == expected.n_nodes, f"{label}: {got.n_nodes} nodes, model {expected.n_nodes}"
    for field in dataclasses.fields(Tree):
        a, b = getattr(got, field.name), getattr(expected, field.name)
        if not np.array_equal(a, b):
            first = int(np.flatnonzero((a != b).reshape(len(a), -1).any(axis=1))[0])
            raise AssertionError(f"{label}: {field.name} differs first at node {first}: got "
                                 f"{a[max(0, first - 2):first + 3].tolist()}, model "
                                 f"{b[max(0, first - 2):first + 3].tolist()}")


def quantised_dataset(name, code_bits):
    """A thesis dataset as the estimator sees it: rank-quantised codes, labels, classes."""
    from sw.data.datasets import load
    from sw.methods.forest.quantize import RankQuantizer
    data = load(name)
    codes = RankQuantizer(code_bits=code_bits).fit_transform(data.X).astype(np.int64)
    labels = data.y.astype(np.int64)
    return codes, labels, int(labels.max()) + 1


def dataset_beats(codes, labels, lanes):
    """The ``dataset`` stream of the forest trainer: row by row, one beat per slot of
    ``lanes`` features (``codes[lane]`` = feature ``slot * lanes + lane``; lanes past the
    last feature carry 0)."""
    n_rows, n_features = codes.shape
    slots = -(-n_features // lanes)
    for row in range(n_rows):
        for slot in range(slots):
            features = range(slot * lanes, slot * lanes + lanes)
            yield {"codes": [int(codes[row, f]) if f < n_features else 0 for f in features],
                   "label": int(labels[row]), "last": int(row == n_rows - 1 and slot == slots - 1)}


def random_forest_case(rng, capacity, max_trees):
    """A random training job within ``capacity`` (:class:`PECapacity`) for a system's
    testbench: (codes, labels, params, seed, n_trees), ``rng`` a ``random.Random``."""
    n_rows = rng.randint(2, capacity.max_rows)
    n_features = rng.randint(1, capacity.feature_capacity)
    n_classes = rng.randint(2, capacity.classes)
    codes = np.array([[rng.randint(0, rng.choice([3, 30, (1 << capacity.code_bits) - 1]))
                       for _ in range(n_features)] for _ in range(n_rows)])
    labels = np.array([rng.randrange(n_classes) for _ in range(n_rows)])
    thesis = rng.random() < 0.3
    params = TrainingParameters(
        n_classes=n_classes, max_depth=(min(4, capacity.max_depth) if thesis else
                                        rng.choice([None, min(2, capacity.max_depth), capacity.max_depth])),
        max_samples=min(16 if thesis else n_rows, capacity.max_samples),
        features_per_split=max(1, int(n_features ** 0.5)), thesis_mode=thesis)
    return codes, labels, params, rng.getrandbits(32), rng.randint(1, min(5, max_trees))
