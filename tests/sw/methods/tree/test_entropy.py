"""EntropyTreeClassifier (seed 001, Algorithm 3.1): entropy and gain by hand, the line
search, the stopping rules, the root split against scikit-learn, conventions, bad input."""

import math

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import check_estimator

from sw.methods.tree.entropy import (EntropyTreeClassifier, entropy, information_gain,
                                     line_search)


def _bits(*counts):
    """Entropy by hand: -sum p log2 p with Python floats."""
    total = sum(counts)
    return -sum(c / total * math.log2(c / total) for c in counts if c)


# --- entropy and information gain ---------------------------------------------------
@pytest.mark.parametrize("counts,expected", [
    ([2, 2], 1.0), ([1, 1, 1, 1], 2.0), ([5, 0], 0.0), ([0, 0, 7], 0.0), ([0, 0], 0.0),
    ([1, 3], -(0.25 * math.log2(0.25) + 0.75 * math.log2(0.75))),
    ([1, 2, 5], -(1 / 8 * math.log2(1 / 8) + 2 / 8 * math.log2(2 / 8) + 5 / 8 * math.log2(5 / 8))),
])
def test_entropy_hand_cases(counts, expected):
    assert entropy(counts) == pytest.approx(expected, abs=1e-15)


def test_entropy_of_rows():
    rows = np.array([[2, 2], [1, 3], [4, 0]])
    assert np.allclose(entropy(rows), [1.0, _bits(1, 3), 0.0])


@pytest.mark.parametrize("parent,left,expected", [
    ([2, 2], [2, 0], 1.0),                                   # a perfect split: all of H
    ([4, 2], [2, 1], 0.0),                                   # same fractions: no gain
    ([3, 1], [1, 0], _bits(3, 1) - 3 / 4 * _bits(2, 1)),     # 0.811278 - 0.688722
    ([5, 3, 2], [4, 0, 1], _bits(5, 3, 2) - 0.5 * _bits(4, 1) - 0.5 * _bits(1, 3, 1)),
])
def test_information_gain_hand_cases(parent, left, expected):
    assert information_gain(parent, left) == pytest.approx(expected, abs=1e-15)


def test_information_gain_between_zero_and_parent_entropy():
    rng = np.random.default_rng(0)
    for _ in range(200):
        parent = rng.integers(0, 20, size=4)
        parent[0] += 1
        left = rng.integers(0, parent + 1)
        gain = information_gain(parent, left)
        assert -1e-12 <= gain <= _bits(*parent) + 1e-12


def test_gain_rejects_impossible_counts():
    with pytest.raises(ValueError, match="between 0 and the parent"):
        information_gain([2, 2], [3, 0])
    with pytest.raises(ValueError, match=">= 0"):
        entropy([1, -1])


# --- line search --------------------------------------------------------------------
@pytest.mark.parametrize("slopes", [(1, 1), (1, 3), (5, 1)])
def test_line_search_finds_the_peak_of_unimodal_curves(slopes):
    """On a single-peaked gain curve (the seed's premise, Fig. 3.2) the search reaches the
    peak, at about 2 log2(n) evaluations instead of n - 1."""
    rising, falling = slopes
    for n in range(2, 130):
        for peak in range(1, n):
            called = []

            def gain(position):
                called.append(position)
                return -rising * (peak - position) if position <= peak else \
                    -falling * (position - peak)
            position, value, evaluations = line_search(gain, n)
            assert (position, value) == (peak, 0)
            assert evaluations == len(called) == len(set(called))
            assert evaluations <= 1 + 2 * math.ceil(math.log2(n))
            assert all(1 <= p <= n - 1 for p in called)


def test_line_search_starts_in_the_middle_and_probes_quarters():
    called = []
    line_search(lambda p: called.append(p) or 0.0, 100)
    assert called[:3] == [50, 25, 75]      # equal gains: it stays, halving the distance
    assert called[3:5] == [37, 63]


def test_line_search_can_miss_a_second_peak():
    """It is a heuristic: a narrow peak away from the middle path is not found."""
    position, value, _ = line_search(lambda p: 1.0 if p == 3 else 0.5 - abs(p - 50) / 100, 100)
    assert position == 50 and value == 0.5


# --- the tree: stopping rules and structure -----------------------------------------
def _paths(tree):
    """Every root-to-leaf path as a list of internal nodes."""
    stack, paths = [(0, [])], []
    while stack:
        node, path = stack.pop()
        if tree.feature[node] < 0:
            paths.append(path)
        else:
            stack += [(tree.children_left[node], path + [node]),
                      (tree.children_right[node], path + [node])]
    return paths


def _random_data(seed, n=300, features=5, classes=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, features)).astype(np.float32).astype(np.float64)
    y = (X[:, 0] + 0.7 * X[:, 1] - 0.5 * X[:, 2] + 0.8 * rng.normal(size=n) > 0).astype(int)
    y += (classes > 2) * (X[:, 3] + 0.3 * rng.normal(size=n) > 0.8).astype(int)
    return X, y


def test_separable_data_one_split_two_pure_leaves():
    model = EntropyTreeClassifier().fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])
    tree = model.tree_
    assert tree.n_nodes == 3 and tree.feature[0] == 0 and tree.threshold[0] == 1.5
    assert model.predict([[1.4999], [1.5], [-5], [9]]).tolist() == [0, 1, 0, 1]  # x < t: left


def test_min_leaf_is_a_strict_lower_bound_on_split_nodes():
    X, y = [[0.0], [1.0], [2.0]], [0, 0, 1]
    assert EntropyTreeClassifier(min_leaf=4).fit(X, y).tree_.n_nodes == 1   # 3 < 4: a leaf
    assert EntropyTreeClassifier(min_leaf=3).fit(X, y).tree_.n_nodes == 3   # 3 >= 3: split
    assert EntropyTreeClassifier(min_leaf=4).fit(X, y).predict([[2.0]]) == [0]  # the mode
    X, y = _random_data(1)
    for min_leaf in (5, 20, 60):
        tree = EntropyTreeClassifier(min_leaf).fit(X, y).tree_
        assert np.all(tree.class_counts[~tree.is_leaf].sum(axis=1) >= min_leaf)
    one = EntropyTreeClassifier(1).fit(X, y).tree_
    two = EntropyTreeClassifier(2).fit(X, y).tree_
    assert np.array_equal(one.feature, two.feature)       # a one-sample node is pure
    assert np.array_equal(one.threshold, two.threshold)


def test_no_features_left_gives_the_mode():
    X, y = [[0.0], [1.0], [2.0], [3.0]], [0, 1, 1, 0]
    model = EntropyTreeClassifier(search="exhaustive").fit(X, y)
    tree = model.tree_
    # left [0] | right [1, 1, 0]: gain 1 - 3/4 H(2/3), the first of the two best positions
    assert tree.n_nodes == 3 and tree.threshold[0] == 0.5
    assert tree.class_counts[2].tolist() == [1, 2] and model.predict([[3.0]]) == [1]
    reused = EntropyTreeClassifier(search="exhaustive", reuse_features=True).fit(X, y)
    assert reused.tree_.n_nodes > 3 and reused.score(X, y) == 1.0


def test_no_gain_gives_a_leaf_with_the_smallest_mode():
    X, y = [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]], [1, 0, 0, 1]   # XOR
    for search in ("line", "exhaustive"):
        model = EntropyTreeClassifier(search=search).fit(X, y)
        assert model.tree_.n_nodes == 1 and model.predict([[0.0, 0.0]]) == [0]


@pytest.mark.parametrize("search", ["line", "exhaustive"])
def test_a_feature_is_used_once_per_path(search):
    X, y = _random_data(2, features=4)
    model = EntropyTreeClassifier(search=search).fit(X, y)
    tree = model.tree_
    for path in _paths(tree):
        features = tree.feature[path].tolist()
        assert len(features) == len(set(features))
    assert model.get_depth() <= X.shape[1]
    free = EntropyTreeClassifier(search=search, reuse_features=True).fit(X, y)
    assert free.get_depth() > X.shape[1] and free.score(X, y) == 1.0


def test_first_features_searches_the_first_remaining_ones():
    X, y = _random_data(3, features=6)
    tree = EntropyTreeClassifier(first_features=1).fit(X, y).tree_
    for path in _paths(tree):                             # configuration 2: 0, 1, 2, ...
        assert tree.feature[path].tolist() == list(range(len(path)))
    tree = EntropyTreeClassifier(first_features=2, search="exhaustive").fit(X, y).tree_
    for path in _paths(tree):
        used = []
        for node in path:
            assert tree.feature[node] in [f for f in range(6) if f not in used][:2]
            used.append(tree.feature[node])


@pytest.mark.parametrize("search", ["line", "exhaustive"])
def test_thresholds_are_midpoints_and_leaves_count_their_samples(search):
    X, y = _random_data(4)
    model = EntropyTreeClassifier(search=search).fit(X, y)
    tree, leaves = model.tree_, model.apply(X)
    for node in np.flatnonzero(~tree.is_leaf):
        below = [i for i in range(len(X)) if _reaches(tree, X[i], node)]   # by hand
        values = np.sort(X[below, tree.feature[node]])
        threshold = tree.threshold[node]
        low, high = values[values < threshold].max(), values[values >= threshold].min()
        assert threshold == low / 2 + high / 2
    for leaf in np.flatnonzero(tree.is_leaf):
        assert np.bincount(y[leaves == leaf], minlength=3).tolist() == \
            tree.class_counts[leaf].tolist()


def _reaches(tree, row, target):
    node = 0
    while node != target and tree.feature[node] >= 0:
        left = row[tree.feature[node]] < tree.threshold[node]
        node = tree.children_left[node] if left else tree.children_right[node]
    return node == target


# --- against scikit-learn and against a brute-force search --------------------------
def _brute_force_root(X, y):
    """Every (gain, feature, threshold) of the root by hand, best first."""
    candidates = []
    for feature in range(X.shape[1]):
        order = np.argsort(X[:, feature])
        values, labels = X[order, feature], y[order]
        for s in range(1, len(y)):
            left = [int(np.sum(labels[:s] == c)) for c in range(3)]
            right = [int(np.sum(labels[s:] == c)) for c in range(3)]
            gain = (_bits(*(a + b for a, b in zip(left, right)))
                    - s / len(y) * _bits(*left) - (len(y) - s) / len(y) * _bits(*right))
            candidates.append((gain, feature, values[s - 1] / 2 + values[s] / 2))
    return sorted(candidates, key=lambda c: -c[0])


@pytest.mark.parametrize("seed", range(4))
def test_exhaustive_root_split_is_scikit_learns(seed):
    X, y = _random_data(10 + seed, n=150)
    assert all(len(np.unique(X[:, f])) == len(X) for f in range(X.shape[1]))   # tie-free
    best, second = _brute_force_root(X, y)[:2]
    assert best[0] - second[0] > 1e-9                    # one best split, no tied gains
    ours = EntropyTreeClassifier(search="exhaustive").fit(X, y).tree_
    theirs = DecisionTreeClassifier(criterion="entropy", random_state=seed).fit(X, y).tree_
    assert (ours.feature[0], ours.threshold[0]) == (theirs.feature[0], theirs.threshold[0])
    assert (ours.feature[0], ours.threshold[0]) == (best[1], best[2])
    line = EntropyTreeClassifier().fit(X, y)
    root = line.tree_
    left = np.bincount(y[X[:, root.feature[0]] < root.threshold[0]], minlength=3)
    assert information_gain(np.bincount(y), left) <= best[0] + 1e-12


def test_line_search_costs_fewer_gain_evaluations():
    X, y = _random_data(5, n=2000)
    # min_leaf 2000: only the root is searched (its children hold fewer samples)
    line = EntropyTreeClassifier(2000).fit(X, y)
    exhaustive = EntropyTreeClassifier(2000, search="exhaustive").fit(X, y)
    assert line.tree_.n_nodes == exhaustive.tree_.n_nodes == 3
    assert line.n_gain_evaluations_ <= 5 * (1 + 2 * math.ceil(math.log2(2000)))   # 115
    assert exhaustive.n_gain_evaluations_ == 5 * 1999                            # tie-free
    grown = [EntropyTreeClassifier(search=s).fit(X, y).n_gain_evaluations_
             for s in ("line", "exhaustive")]
    assert grown[0] < grown[1] / 10


# --- scikit-learn conventions and bad input -----------------------------------------
@pytest.mark.parametrize("estimator", [
    EntropyTreeClassifier(), EntropyTreeClassifier(search="exhaustive"),
    EntropyTreeClassifier(3, first_features=1, reuse_features=True)])
def test_scikit_learn_estimator_checks(estimator):
    results = check_estimator(estimator, on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert failed == []


def test_string_labels_and_probabilities():
    X, y = _random_data(6)
    labels = np.array(["a", "b", "c"])[y]
    model = EntropyTreeClassifier(min_leaf=10).fit(X, labels)
    proba = model.predict_proba(X)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(model.predict(X), model.classes_[np.argmax(proba, axis=1)])


@pytest.mark.parametrize("X,y,message", [
    ([[0.0, np.nan], [1.0, 2.0]], [0, 1], "NaN"),
    ([[0.0, np.inf], [1.0, 2.0]], [0, 1], "infinity"),
    ([[0.0, 1.0], [1.0, 2.0]], [1, 1], "1 class"),
    ([0.0, 1.0, 2.0], [0, 1, 0], "2D array"),
    ([[0.0], [1.0], [2.0]], [0, 1], "inconsistent numbers of samples"),
    ([[0.0], [1.0]], [0.5, 1.5], "Unknown label type"),
])
def test_bad_training_input(X, y, message):
    with pytest.raises(ValueError, match=message):
        EntropyTreeClassifier().fit(X, y)


def test_bad_prediction_input():
    model = EntropyTreeClassifier().fit([[0.0, 1.0], [1.0, 0.0]], [0, 1])
    with pytest.raises(ValueError, match="3 features, but EntropyTreeClassifier is expecting 2"):
        model.predict([[0.0, 1.0, 2.0]])
    with pytest.raises(ValueError, match="NaN"):
        model.predict([[np.nan, 1.0]])


@pytest.mark.parametrize("params,message", [
    ({"min_leaf": 0}, r"min_leaf=0 must be an integer >= 1"),
    ({"min_leaf": 2.5}, r"min_leaf=2.5 must be an integer >= 1"),
    ({"min_leaf": True}, r"min_leaf=True must be an integer >= 1"),
    ({"search": "binary"}, r"search='binary' must be 'line' or 'exhaustive'"),
    ({"first_features": 0}, r"first_features=0 must be an integer >= 1 or None"),
    ({"reuse_features": 1}, r"reuse_features=1 must be True or False"),
])
def test_parameters_out_of_range(params, message):
    with pytest.raises(ValueError, match=message):
        EntropyTreeClassifier(**params).fit([[0.0], [1.0]], [0, 1])
