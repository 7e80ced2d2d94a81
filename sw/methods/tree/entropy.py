"""Seed 001's information-gain decision tree (ECE 759 report, Orazymbetov and Casale 2018).

The seed's Algorithm 3.1 (``trainDecisionTree``, seed lines 130-181) and 3.2
(``testDecisionTree``, lines 191-227), as a scikit-learn classifier:

* **Stopping rules, in the seed's order.** A node is a leaf holding the mode of its labels
  (the smallest class on a tie, as MATLAB's ``mode``) when (a) no feature is left to split
  on, (b) it holds fewer than ``min_leaf`` samples (strict ``<``, line 148), (c) its
  entropy is 0 (one class, line 151), or (d) no searched feature gives a positive
  information gain (line 170).
* **Split search.** For each searched feature the node is sorted along it; a split at
  position ``s`` (1 <= s < n) puts the ``s`` smallest values left. Its threshold is the
  midpoint of the sorted values ``s - 1`` and ``s`` (line 168); training and prediction
  both send ``x < threshold`` left and the rest right (lines 213-221). The gain of a
  position is that of the partition its threshold makes (on tied values a position
  inside a run of equal values is the split before the run). ``search="line"`` is the
  seed's line search (line 247, :func:`line_search`); ``search="exhaustive"`` scores
  every position between distinct values. The first searched feature with the largest
  gain wins (strict ``>``, line 164).
* **A feature is used once per path** (line 124): a child searches the features its
  parent has not split on, so the depth is at most the number of features
  (``reuse_features=True`` lifts this, as scikit-learn).
* **Feature-search configurations** of the seed's Table 4.2: all remaining features
  (configuration 1, ``first_features=None``), only the first remaining one
  (configuration 2, ``first_features=1``), the first five (configuration 3,
  ``first_features=5``).

Entropy is in bits (eq. 3.1); the information gain is eq. 3.2. Gains below
:data:`GAIN_TOLERANCE` (rounding noise of a split whose class fractions equal the
parent's) count as no gain.
"""

import dataclasses

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from sw.methods.params import (Boolean, Integer, Options,
                              classification_data, validate_parameters)

__all__ = ["EntropyTreeClassifier", "EntropyTree", "entropy", "information_gain",
           "line_search", "SEARCHES", "GAIN_TOLERANCE"]

SEARCHES = ("line", "exhaustive")
#: Gains at or below this (bits) are no gain: rounding noise, not information.
GAIN_TOLERANCE = 1e-12
#: ``feature`` of a leaf node.
LEAF = -1


def entropy(counts):
    """Entropy in bits, H = -sum_i p_i log2 p_i, of class counts (the last axis; a 2-D
    array gives one entropy per row); 0 for an empty set."""
    counts = np.asarray(counts, dtype=np.float64)
    if np.any(counts < 0):
        raise ValueError(f"class counts must be >= 0, got {counts.min()}")
    totals = counts.sum(axis=-1, keepdims=True)
    fractions = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
    logs = np.log2(fractions, out=np.zeros_like(fractions), where=fractions > 0)
    return 0.0 - np.sum(fractions * logs, axis=-1)


def information_gain(parent_counts, left_counts):
    """Eq. 3.2: H(parent) - |L|/|X| H(L) - |R|/|X| H(R), the right counts being parent
    minus left (``left_counts`` may be 2-D: one candidate split per row)."""
    parent = np.asarray(parent_counts, dtype=np.float64)
    left = np.asarray(left_counts, dtype=np.float64)
    right = parent - left
    if np.any(left < 0) or np.any(right < 0):
        raise ValueError("left counts must lie between 0 and the parent's counts")
    total = parent.sum()
    if total <= 0:
        raise ValueError("the parent set is empty")
    return (entropy(parent) - left.sum(axis=-1) / total * entropy(left)
            - right.sum(axis=-1) / total * entropy(right))


def line_search(gain, n):
    """The seed's line search (line 247) over split positions 1 .. n-1 of a sorted set.

    Start at the middle position, probe the positions a quarter of the set to either
    side, move to the better probe when it beats the middle (strict ``>``, the left probe
    on a tie), then halve the distance and probe again around the (new) middle, down to a
    distance of one. The seed leaves open what happens when the middle wins (here: the
    distance is halved around it), the rounding (here: the middle is ``n // 2`` and
    the distance starts at ceil(n / 4) and is halved rounding up, so both ends are
    reachable) and the stop (distance one). ``gain(s)`` is called once per distinct
    position. Returns ``(position, gain, evaluations)``.
    """
    if n < 2:
        raise ValueError(f"a line search needs at least 2 samples, got {n}")
    cache = {}

    def evaluate(position):
        if position not in cache:
            cache[position] = float(gain(position))
        return cache[position]

    middle = n // 2
    best = evaluate(middle)
    step = -(-n // 4)
    while True:
        probes = [p for p in (middle - step, middle + step) if 1 <= p <= n - 1]
        if probes:
            winner = max(probes, key=evaluate)      # max keeps the first on a tie
            if evaluate(winner) > best:
                middle, best = winner, evaluate(winner)
        if step == 1:
            return middle, best, len(cache)
        step = -(-step // 2)


def _entropy_bits(counts, total):
    """:func:`entropy` of one count vector with a known positive total, fast for the
    line search's single evaluations."""
    fractions = counts[counts > 0] / total
    return -float(fractions @ np.log2(fractions))


def _midpoint(low, high):
    """A threshold t with low < t <= high, the midpoint where it is representable (as
    scikit-learn computes it: low / 2 + high / 2); ``high`` for equal values."""
    middle = low / 2.0 + high / 2.0
    return high if middle <= low else middle


def _search_feature(values, labels, n_classes, parent, search):
    """The best split of one feature: (gain, threshold, gain evaluations); gain 0 and
    threshold None when no split gains."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    n = len(ordered)
    if ordered[0] == ordered[-1]:
        return 0.0, None, 0
    prefix = np.cumsum(np.eye(n_classes, dtype=np.int64)[labels[order]], axis=0)
    if search == "exhaustive":
        positions = np.flatnonzero(ordered[:-1] < ordered[1:]) + 1
        gains = information_gain(parent, prefix[positions - 1])
        best = int(np.argmax(gains))
        gain, position, evaluations = float(gains[best]), int(positions[best]), len(positions)
    else:
        parent_entropy, total = _entropy_bits(parent, n), float(n)

        def gain_at(position):
            below = position
            if ordered[position - 1] == ordered[position]:      # inside a run of ties
                below = int(np.searchsorted(ordered, ordered[position], side="left"))
                if below == 0:
                    return 0.0
            left = prefix[below - 1]
            return (parent_entropy - below / total * _entropy_bits(left, below)
                    - (n - below) / total * _entropy_bits(parent - left, n - below))
        position, gain, evaluations = line_search(gain_at, n)
    if gain <= GAIN_TOLERANCE:
        return 0.0, None, evaluations
    return gain, _midpoint(ordered[position - 1], ordered[position]), evaluations


@dataclasses.dataclass
class EntropyTree:
    """A trained tree as node arrays (node 0 is the root).

    ``feature`` is the split feature (:data:`LEAF` at a leaf), ``threshold`` the split
    value (``x < threshold`` goes to ``children_left``), ``class_counts`` the training
    samples of each class at the node, ``depth`` the node's depth (root 0)."""
    feature: np.ndarray
    threshold: np.ndarray
    children_left: np.ndarray
    children_right: np.ndarray
    class_counts: np.ndarray
    depth: np.ndarray

    @property
    def n_nodes(self):
        return len(self.feature)

    @property
    def is_leaf(self):
        return self.feature == LEAF

    @property
    def leaf_class(self):
        """The class index a sample reaching the node is given (the mode of the node's
        labels, the smallest class on a tie)."""
        return np.argmax(self.class_counts, axis=1)


def grow_tree(X, y, n_classes, *, min_leaf=1, search="line", first_features=None,
              reuse_features=False):
    """Algorithm 3.1 on float features ``X`` and class indices ``y`` (0 .. n_classes-1):
    (:class:`EntropyTree`, total gain evaluations)."""
    nodes = {"feature": [], "threshold": [], "left": [], "right": [], "counts": [], "depth": []}

    def new_node(rows, depth):
        nodes["counts"].append(np.bincount(y[rows], minlength=n_classes))
        nodes["depth"].append(depth)
        for key, value in (("feature", LEAF), ("threshold", 0.0), ("left", LEAF),
                           ("right", LEAF)):
            nodes[key].append(value)
        return len(nodes["depth"]) - 1

    evaluations = 0
    stack = [(new_node(np.arange(len(y)), 0), np.arange(len(y)), tuple(range(X.shape[1])))]
    while stack:
        node, rows, available = stack.pop()
        counts = nodes["counts"][node]
        if (not available or len(rows) < min_leaf or np.count_nonzero(counts) == 1):
            continue                                    # rules (a), (b), (c): a leaf
        searched = available if first_features is None else available[:first_features]
        best_gain, best_feature, best_threshold = 0.0, None, None
        for feature in searched:
            gain, threshold, count = _search_feature(X[rows, feature], y[rows], n_classes,
                                                     counts, search)
            evaluations += count
            if gain > best_gain:
                best_gain, best_feature, best_threshold = gain, feature, threshold
        if best_feature is None:
            continue                                    # rule (d): no gain, a leaf
        goes_left = X[rows, best_feature] < best_threshold
        remaining = available if reuse_features else tuple(
            f for f in available if f != best_feature)
        depth = nodes["depth"][node] + 1
        left, right = rows[goes_left], rows[~goes_left]
        nodes["feature"][node], nodes["threshold"][node] = best_feature, best_threshold
        nodes["left"][node] = left_node = new_node(left, depth)
        nodes["right"][node] = right_node = new_node(right, depth)
        stack.append((right_node, right, remaining))
        stack.append((left_node, left, remaining))
    tree = EntropyTree(np.array(nodes["feature"], dtype=np.intp),
                       np.array(nodes["threshold"], dtype=np.float64),
                       np.array(nodes["left"], dtype=np.intp),
                       np.array(nodes["right"], dtype=np.intp),
                       np.array(nodes["counts"], dtype=np.int64),
                       np.array(nodes["depth"], dtype=np.intp))
    return tree, evaluations


def apply_tree(tree, X):
    """Algorithm 3.2: the leaf each row of ``X`` reaches (``x < threshold``: left)."""
    node = np.zeros(X.shape[0], dtype=np.intp)
    active = np.arange(X.shape[0])
    while active.size:
        features = tree.feature[node[active]]
        inner = features != LEAF
        active, features = active[inner], features[inner]
        current = node[active]
        goes_left = X[active, features] < tree.threshold[current]
        node[active] = np.where(goes_left, tree.children_left[current],
                                tree.children_right[current])
    return node


class EntropyTreeClassifier(ClassifierMixin, BaseEstimator):
    """Seed 001's information-gain decision tree (Algorithms 3.1 and 3.2).

    Parameters
    ----------
    min_leaf : int, default 1
        The seed's ``minLeaf``: a node with fewer samples is a leaf (1 and 2 give the
        same tree, since a one-sample node is pure).
    search : {"line", "exhaustive"}, default "line"
        "line": the seed's line search over split positions (about 2 log2(n) gain
        evaluations per feature and node, an approximation of the best split);
        "exhaustive": every position between distinct values (the best split, as
        scikit-learn's ``DecisionTreeClassifier``).
    first_features : int or None, default None
        None searches every feature left at a node (the seed's configurations 1 and 4);
        k searches only the first k of them (configuration 2: 1, configuration 3: 5).
    reuse_features : bool, default False
        False: a feature split on is not searched again below that node (the seed's
        rule); True: every feature stays available (as scikit-learn).

    Attributes
    ----------
    classes_ : array
    n_classes_, n_features_in_ : int
    tree_ : EntropyTree
        The node arrays.
    n_gain_evaluations_ : int
        Information gains computed while training (the search's cost).

    Not supported: ``sample_weight``.
    """

    _parameter_constraints = {
        "min_leaf": [Integer(1)],
        "search": [Options(*SEARCHES)],
        "first_features": [Integer(1), Options(None)],
        "reuse_features": [Boolean()],
    }

    def __init__(self, min_leaf=1, *, search="line", first_features=None,
                 reuse_features=False):
        self.min_leaf = min_leaf
        self.search = search
        self.first_features = first_features
        self.reuse_features = reuse_features

    def fit(self, X, y):
        """Grow the tree on ``X`` (n_samples, n_features) and labels ``y``; returns self."""
        validate_parameters(self)
        X, labels = classification_data(self, X, y)
        self.n_classes_ = len(self.classes_)
        self.tree_, self.n_gain_evaluations_ = grow_tree(
            X, labels, self.n_classes_, min_leaf=self.min_leaf, search=self.search,
            first_features=self.first_features, reuse_features=self.reuse_features)
        return self

    def apply(self, X):
        """Index of the leaf each sample reaches."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64, ensure_all_finite=True)
        return apply_tree(self.tree_, X)

    def predict(self, X):
        """The class of the reached leaf (its training mode)."""
        leaves = self.apply(X)
        return self.classes_[self.tree_.leaf_class[leaves]]

    def predict_proba(self, X):
        """The class fractions of the reached leaf's training samples."""
        leaves = self.apply(X)
        counts = self.tree_.class_counts[leaves]
        return counts / counts.sum(axis=1, keepdims=True)

    def get_depth(self):
        """Depth of the deepest leaf (root 0)."""
        check_is_fitted(self)
        return int(self.tree_.depth.max())

    def get_n_leaves(self):
        """Number of leaves."""
        check_is_fitted(self)
        return int(np.count_nonzero(self.tree_.is_leaf))
