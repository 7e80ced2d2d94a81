"""The golden model: bit-exact NumPy specification of forest training and inference.

The hardware must produce exactly the trees this module produces (same node list, same
features, threshold codes, class counts), and every comparison uses it as the reference.
The algorithm is written out in ``docs/algorithm.md``; this module is its executable form.

Two layers:

* **Reference functions per hardware block**, called by the RTL testbenches on integer
  arrays: :func:`presorted_order`, :func:`bootstrap_weights`, :func:`inbag_lists`,
  :func:`draw_node_features` (defined in :mod:`sw.methods.forest.sampling`),
  :func:`best_split_of_segment`, :func:`best_split_of_node`, :func:`compare_split_scores`
  (:mod:`sw.methods.forest.splits`), :func:`stable_partition`, :func:`leaf_decision`,
  :func:`majority_class` (here), :func:`predict_tree`, :func:`forest_votes`
  (:mod:`sw.methods.forest.inference`). All of them are importable from this module.
* **Whole-forest training** (:func:`train_tree`, :func:`train_forest`), level-wise as in
  the hardware and vectorised over all nodes of a level and all their candidate features.
  Its split search is the same code as :func:`best_split_of_segment` (one segment is the
  special case of many), so the two cannot drift apart.

All inputs here are already quantised: ``codes`` is an (n_rows x n_features) array of
unsigned integer codes and ``labels`` are integers 0..n_classes-1.
"""

import dataclasses

import numpy as np

from sw.methods.forest.inference import forest_class_counts, forest_votes, predict_tree
from sw.methods.forest.rng import TreeRandom
from sw.methods.forest.sampling import (
    NodeFeatureDrawer, bootstrap_weights, draw_node_features, inbag_lists, inbag_row_count,
    presorted_order)
from sw.methods.forest.splits import (
    SplitCandidate, _search_segments, best_split_of_node, best_split_of_segment,
    compare_split_scores, midpoint_code, split_score)
from sw.methods.params import check_integer

__all__ = [
    "TrainingParameters", "Tree", "SplitCandidate",
    "presorted_order", "bootstrap_weights", "inbag_row_count", "inbag_lists", "NodeFeatureDrawer",
    "draw_node_features", "split_score", "compare_split_scores", "best_split_of_segment",
    "best_split_of_node", "midpoint_code", "stable_partition", "leaf_decision", "majority_class",
    "train_tree", "train_forest", "predict_tree", "forest_votes", "forest_class_counts",
    "trees_equal",
]


@dataclasses.dataclass(frozen=True)
class TrainingParameters:
    """Resolved hyper-parameters of the training algorithm (all plain integers).

    Parameters
    ----------
    n_classes : int
        Number of classes C >= 2; labels are 0..C-1.
    max_depth : int or None
        Nodes at this depth (root = 0) are leaves; None for no limit.
    max_samples : int
        Bootstrap draws per tree (ignored when ``bootstrap`` is False).
    bootstrap : bool
        Draw rows with replacement (integer weights) or use every row once.
    features_per_split : int
        Non-constant features examined per split (forest mode; scikit-learn's resolved
        ``max_features``).
    thesis_mode : bool
        False (forest mode): a fresh random subset of features at every node, as
        scikit-learn; True (thesis mode): one feature drawn per tree and used at every
        node, as the thesis's hardware.
    min_samples_split : int
        A node with fewer distinct in-bag rows is a leaf.
    min_samples_leaf : int
        Each child of a split must hold at least this many distinct in-bag rows.
    """
    n_classes: int
    max_depth: int = None
    max_samples: int = 1
    bootstrap: bool = True
    features_per_split: int = 1
    thesis_mode: bool = False
    min_samples_split: int = 2
    min_samples_leaf: int = 1

    def __post_init__(self):
        check_integer("n_classes", self.n_classes, 2)
        check_integer("max_depth", self.max_depth, 0, allow_none=True)
        check_integer("max_samples", self.max_samples, 1)
        check_integer("features_per_split", self.features_per_split, 1)
        check_integer("min_samples_split", self.min_samples_split, 2)
        check_integer("min_samples_leaf", self.min_samples_leaf, 1)
        if not isinstance(self.bootstrap, (bool, np.bool_)):
            raise TypeError(f"bootstrap must be True or False, not {self.bootstrap!r}")
        if not isinstance(self.thesis_mode, (bool, np.bool_)):
            raise TypeError(f"thesis_mode must be True or False, not {self.thesis_mode!r}")


@dataclasses.dataclass
class Tree:
    """One trained tree as a compact node list in breadth-first creation order.

    All arrays have one entry per node (root = 0; children appended left then right, in
    the order of their parents). Leaves have ``feature``, ``threshold_code``,
    ``left_child`` and ``right_child`` equal to -1.

    Attributes
    ----------
    feature, threshold_code, left_child, right_child : int64 arrays
        Split: rows with ``code[feature] <= threshold_code`` go to ``left_child``.
    class_counts : int64 array, shape (n_nodes, n_classes)
        Bootstrap-weighted class counts of the node's in-bag rows.
    majority_class : int64 array
        argmax of ``class_counts`` (ties: lowest class).
    n_samples : int64 array
        Weighted sample count (sum of ``class_counts``).
    n_rows : int64 array
        Distinct in-bag rows in the node.
    depth : int64 array
        Depth of the node (root = 0).
    """
    feature: np.ndarray
    threshold_code: np.ndarray
    left_child: np.ndarray
    right_child: np.ndarray
    class_counts: np.ndarray
    majority_class: np.ndarray
    n_samples: np.ndarray
    n_rows: np.ndarray
    depth: np.ndarray

    @property
    def n_nodes(self):
        return len(self.feature)

    @property
    def is_leaf(self):
        return self.left_child < 0


def trees_equal(tree_a, tree_b):
    """True when two trees have identical node arrays (the hardware comparison)."""
    return all(np.array_equal(getattr(tree_a, field.name), getattr(tree_b, field.name))
               for field in dataclasses.fields(Tree))


# ----------------------------------------------------------------------------------------
# Partition, leaves
# ----------------------------------------------------------------------------------------

def stable_partition(segment_rows, goes_left):
    """Stable partition of one segment of a feature list: left rows first, order kept.

    Parameters
    ----------
    segment_rows : integer array, shape (n,)
        Row indices of the segment, in list order.
    goes_left : bool array indexed by row index (length >= max(segment_rows) + 1)

    Returns
    -------
    int64 array, shape (n,)
        The rows going left in their original order, then the rows going right.
    """
    segment_rows = np.asarray(segment_rows, dtype=np.int64)
    left = np.asarray(goes_left, dtype=bool)[segment_rows]
    return np.concatenate([segment_rows[left], segment_rows[~left]])


def leaf_decision(class_counts, n_rows, depth, max_depth, min_samples_split,
                  min_samples_leaf):
    """Whether nodes become leaves before any split search (and before any draw).

    A node is a leaf when its depth reached ``max_depth``, it holds fewer than
    ``min_samples_split`` or fewer than ``2 * min_samples_leaf`` distinct in-bag rows, or
    it is pure (at most one class with a non-zero count). A node that passes may still
    become a leaf when no valid split exists.

    Parameters
    ----------
    class_counts : int array, shape (n_nodes, n_classes) or (n_classes,)
    n_rows : int array, shape (n_nodes,) or int
    depth : int array or int
    max_depth : int or None

    Returns
    -------
    bool array, shape (n_nodes,) (or a bool for one node)
    """
    class_counts = np.asarray(class_counts)
    single = class_counts.ndim == 1
    class_counts = np.atleast_2d(class_counts)
    n_rows = np.asarray(n_rows)
    depth = np.asarray(depth)
    leaf = (n_rows < min_samples_split) | (n_rows < 2 * min_samples_leaf)
    leaf = leaf | (np.count_nonzero(class_counts, axis=1) <= 1)
    if max_depth is not None:
        leaf = leaf | (depth >= max_depth)
    return bool(leaf[0]) if single else leaf


def majority_class(class_counts):
    """Class with the highest count per node (ties: the lowest class index)."""
    return np.argmax(np.asarray(class_counts), axis=-1).astype(np.int64)


# ----------------------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------------------

def train_tree(codes, labels, params, seed, tree_index, order=None, codes_by_feature=None):
    """Train tree ``tree_index`` of forest ``seed`` level by level.

    Parameters
    ----------
    codes : integer array, shape (n_rows, n_features)
    labels : integer array, shape (n_rows,), values in 0..params.n_classes-1
    params : TrainingParameters
    seed, tree_index : int
        Key of the tree's :class:`sw.methods.forest.rng.TreeRandom` stream.
    order : int64 array, shape (n_features, n_rows), optional
        :func:`presorted_order` of ``codes`` (computed here when not given).
    codes_by_feature : int64 array, shape (n_features, n_rows), optional
        ``codes.T`` as a contiguous array (computed here when not given).

    Returns
    -------
    Tree
    """
    labels = np.asarray(labels, dtype=np.int64)
    if codes_by_feature is None:
        codes_by_feature = np.ascontiguousarray(np.asarray(codes).T, dtype=np.int64)
    if order is None:
        order = presorted_order(codes_by_feature.T)
    n_features, n_rows = codes_by_feature.shape
    n_classes = params.n_classes
    flat_codes = codes_by_feature.ravel()

    random = TreeRandom(seed, tree_index)
    weights = bootstrap_weights(random, n_rows, params.max_samples, params.bootstrap)
    drawer = NodeFeatureDrawer(random)
    tree_feature = drawer.integer(n_features) if params.thesis_mode else None
    rows, _ = inbag_lists(order, weights)
    n_inbag = rows.shape[1]

    feature, threshold, left_child, right_child = [-1], [-1], [-1], [-1]
    counts = [np.bincount(labels, weights=weights, minlength=n_classes).astype(np.int64)]
    node_rows, node_depth = [n_inbag], [0]
    segment_start = {0: 0}
    level = [0]
    feature_range = np.arange(n_features)[:, None]

    while level:
        level_counts = np.array([counts[node] for node in level])
        level_rows = np.array([node_rows[node] for node in level])
        leaf = leaf_decision(level_counts, level_rows, node_depth[level[0]],
                             params.max_depth, params.min_samples_split,
                             params.min_samples_leaf)
        searched = [node for node, is_leaf in zip(level, leaf.tolist()) if not is_leaf]
        if not searched:
            break
        starts = np.array([segment_start[node] for node in searched], dtype=np.int64)
        lengths = np.array([node_rows[node] for node in searched], dtype=np.int64)
        first_codes = flat_codes[feature_range * n_rows + rows[:, starts]]
        last_codes = flat_codes[feature_range * n_rows + rows[:, starts + lengths - 1]]
        constant = (first_codes == last_codes).T.tolist()  # (node, feature)

        # Candidate (node, feature) segments, nodes in index order, features in visit order.
        pair_slot, pair_feature = [], []
        for slot, node in enumerate(searched):
            if tree_feature is not None:
                chosen = [] if constant[slot][tree_feature] else [tree_feature]
            else:
                chosen = draw_node_features(drawer, constant[slot], params.features_per_split)
            pair_slot.extend([slot] * len(chosen))
            pair_feature.extend(chosen)
        if not pair_slot:
            break
        pair_slot = np.array(pair_slot, dtype=np.int64)
        pair_feature = np.array(pair_feature, dtype=np.int64)
        pair_length = lengths[pair_slot]
        pair_offset = np.concatenate([[0], np.cumsum(pair_length)[:-1]])
        element_pair = np.repeat(np.arange(len(pair_slot)), pair_length)
        element_flat = (pair_feature * n_inbag + starts[pair_slot])[element_pair] \
            + np.arange(int(pair_length.sum())) - pair_offset[element_pair]
        element_rows = rows.ravel()[element_flat]
        element_codes = flat_codes[pair_feature[element_pair] * n_rows + element_rows]
        found = _search_segments(element_codes, labels[element_rows], weights[element_rows],
                                 pair_offset, pair_slot, len(searched), n_classes,
                                 params.min_samples_leaf)

        # Record splits, create children (left then right, in node order).
        next_level = []
        deeper_is_leaf = params.max_depth is not None and \
            node_depth[level[0]] + 1 >= params.max_depth
        smallest_searched = max(params.min_samples_split, 2 * params.min_samples_leaf)
        split_slots, split_feature, split_threshold, split_left_rows = [], [], [], []
        for slot, node in enumerate(searched):
            if found[slot] is None:
                continue
            last_left, pair, _, _, left_counts = found[slot]
            chosen_feature = int(pair_feature[pair])
            left_rows = last_left - int(pair_offset[pair]) + 1
            feature[node] = chosen_feature
            threshold[node] = midpoint_code(element_codes, last_left)
            for child_counts, child_rows, child_start in (
                    (left_counts, left_rows, segment_start[node]),
                    (counts[node] - left_counts, node_rows[node] - left_rows,
                     segment_start[node] + left_rows)):
                child = len(feature)
                feature.append(-1)
                threshold.append(-1)
                left_child.append(-1)
                right_child.append(-1)
                counts.append(child_counts)
                node_rows.append(child_rows)
                node_depth.append(node_depth[node] + 1)
                segment_start[child] = child_start
                next_level.append(child)
            left_child[node], right_child[node] = next_level[-2], next_level[-1]
            # Only children that will be searched need their segments separated
            # (the scalar form of leaf_decision, inlined: it runs once per split).
            child_leaf = deeper_is_leaf or all(
                node_rows[child] < smallest_searched
                or np.count_nonzero(counts[child]) <= 1 for child in next_level[-2:])
            if not child_leaf:
                split_slots.append(slot)
                split_feature.append(chosen_feature)
                split_threshold.append(threshold[node])
                split_left_rows.append(left_rows)
        if split_slots:
            _partition_level(rows, flat_codes, n_rows, starts[split_slots],
                             lengths[split_slots], np.array(split_feature),
                             np.array(split_threshold), np.array(split_left_rows))
        level = next_level

    counts = np.array(counts, dtype=np.int64).reshape(len(feature), n_classes)
    return Tree(
        feature=np.array(feature, dtype=np.int64),
        threshold_code=np.array(threshold, dtype=np.int64),
        left_child=np.array(left_child, dtype=np.int64),
        right_child=np.array(right_child, dtype=np.int64),
        class_counts=counts, majority_class=majority_class(counts),
        n_samples=counts.sum(axis=1), n_rows=np.array(node_rows, dtype=np.int64),
        depth=np.array(node_depth, dtype=np.int64))


def _partition_level(rows, flat_codes, n_rows, starts, lengths, features, thresholds,
                     left_rows):
    """Stable partition, in place, of every feature list inside every split segment."""
    n_features = rows.shape[0]
    segment_offset = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    element_segment = np.repeat(np.arange(len(starts)), lengths)
    local = np.arange(int(lengths.sum())) - segment_offset[element_segment]
    positions = starts[element_segment] + local
    # The go-left bit of each row, from the split feature's codes.
    node_rows = rows[0, positions]
    goes_left = np.zeros(n_rows, dtype=bool)
    goes_left[node_rows] = flat_codes[features[element_segment] * n_rows + node_rows] \
        <= thresholds[element_segment]
    segment_rows = rows[:, positions]
    left = goes_left[segment_rows]
    left_before = np.cumsum(left, axis=1, dtype=np.int32) - left  # lefts before, in the level
    left_before -= left_before[:, segment_offset][:, element_segment]
    destination = np.where(left, left_before,
                           left_rows[element_segment] + local - left_before)
    destination += segment_offset[element_segment]
    partitioned = np.empty_like(segment_rows)
    partitioned[np.arange(n_features)[:, None], destination] = segment_rows
    rows[:, positions] = partitioned


def train_forest(codes, labels, params, seed, n_estimators, n_jobs=None, tree_indices=None):
    """Train trees 0..n_estimators-1 (or ``tree_indices``) of forest ``seed``.

    Each tree depends only on (data, params, seed, tree index), so the trees may be
    trained in any order or in parallel (``n_jobs`` > 1 uses joblib processes) with
    identical results.

    Returns
    -------
    list of Tree, in the order of ``tree_indices``.
    """
    codes_by_feature = np.ascontiguousarray(np.asarray(codes).T, dtype=np.int64)
    order = presorted_order(codes_by_feature.T)
    labels = np.asarray(labels, dtype=np.int64)
    if tree_indices is None:
        tree_indices = range(n_estimators)
    tree_indices = [int(index) for index in tree_indices]
    if n_jobs is None or n_jobs == 1:
        return [train_tree(None, labels, params, seed, index, order, codes_by_feature)
                for index in tree_indices]
    from joblib import Parallel, delayed  # only for parallel training (n_jobs > 1)
    return Parallel(n_jobs=n_jobs)(
        delayed(train_tree)(None, labels, params, seed, index, order, codes_by_feature)
        for index in tree_indices)
