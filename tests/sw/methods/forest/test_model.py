"""The per-block reference functions against brute-force Python and hand-checkable cases."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from sw.methods.forest.model import (
    NodeFeatureDrawer, best_split_of_node, best_split_of_segment, bootstrap_weights,
    compare_split_scores, draw_node_features, inbag_lists, leaf_decision, majority_class,
    presorted_order, split_score, stable_partition)
from sw.methods.forest.rng import TreeRandom


def _fraction_score(left, right):
    """Eq. 4.2 as a Fraction, straight from the formula."""
    return (Fraction(sum(c * c for c in left), sum(left))
            + Fraction(sum(c * c for c in right), sum(right)))


def _brute_force_segment(codes, labels, weights, n_classes, min_samples_leaf):
    """Try every boundary between distinct codes, keep the first best (lowest threshold on
    ties); the threshold is midway between the two codes, rounded down."""
    best = None
    distinct = sorted(set(codes))
    for below, above in zip(distinct, distinct[1:]):
        threshold = (below + above) // 2
        left_rows = [i for i, code in enumerate(codes) if code <= below]
        if len(left_rows) < min_samples_leaf or len(codes) - len(left_rows) < min_samples_leaf:
            continue
        left = [0] * n_classes
        right = [0] * n_classes
        for i, (label, weight) in enumerate(zip(labels, weights)):
            (left if i in left_rows else right)[label] += weight
        score = _fraction_score(left, right)
        if best is None or score > best[0]:
            best = (score, threshold, len(left_rows), left)
    return best


def test_node_feature_drawer_reproduces_tree_random():
    reference = TreeRandom(11, 5)
    drawer = NodeFeatureDrawer(TreeRandom(11, 5))
    bounds = [1, 2, 3, 7, 8, 9, 1000, 2**20 + 3] * 60
    assert [drawer.integer(b) for b in bounds] == [reference.integer(b) for b in bounds]
    assert drawer.position == reference.position


def test_draw_node_features_is_fisher_yates_skipping_constants():
    is_constant = [False, True, False, False, True, False, False]
    drawer = NodeFeatureDrawer(TreeRandom(2, 9))
    visited = draw_node_features(drawer, is_constant, features_per_split=3)
    # Reference: explicit Fisher-Yates on a full list with TreeRandom.integer.
    reference = TreeRandom(2, 9)
    permutation = list(range(7))
    expected = []
    i = 0
    while len(expected) < 3:
        j = reference.integer(7 - i) + i
        permutation[i], permutation[j] = permutation[j], permutation[i]
        if not is_constant[permutation[i]]:
            expected.append(permutation[i])
        i += 1
    assert visited == expected
    assert drawer.position == reference.position


def test_draw_node_features_stops_when_all_non_constant_visited():
    drawer = NodeFeatureDrawer(TreeRandom(0, 0))
    assert sorted(draw_node_features(drawer, [True, False, True, False], 10)) == [1, 3]
    drawer = NodeFeatureDrawer(TreeRandom(0, 0))
    assert draw_node_features(drawer, [True, True], 2) == []
    assert drawer.position == 0  # no draw at all


def test_presorted_order_is_stable():
    codes = np.array([[3, 0], [1, 0], [3, 2], [0, 1]])
    assert presorted_order(codes).tolist() == [[3, 1, 0, 2], [0, 1, 3, 2]]


def test_bootstrap_and_inbag_lists():
    random = TreeRandom(4, 1)
    weights = bootstrap_weights(random, 10, 25)
    drawn = TreeRandom(4, 1).integers(10, 25)
    assert weights.tolist() == np.bincount(drawn, minlength=10).tolist()
    assert weights.sum() == 25
    assert bootstrap_weights(TreeRandom(4, 1), 5, 25, bootstrap=False).tolist() == [1] * 5
    order = np.array([[2, 0, 1, 3], [3, 2, 1, 0]])
    rows, row_weights = inbag_lists(order, np.array([1, 0, 3, 2]))
    assert rows.tolist() == [[2, 0, 3], [3, 2, 0]]
    assert row_weights.tolist() == [[3, 1, 2], [2, 3, 1]]


def test_split_score_hand_checked():
    # Left [3, 1], right [0, 2]: A = 10, nL = 4, B = 4, nR = 2 -> 10/4 + 4/2 = 4.5.
    numerator, denominator = split_score([3, 1], [0, 2])
    assert Fraction(numerator, denominator) == Fraction(9, 2)


def test_exact_compare_ranks_like_gini_decrease():
    """Property: the integer comparison orders splits as the Gini decrease does.

    Reference: the weighted Gini decrease of scikit-learn, computed once exactly with
    Fractions and once in floating point; random count vectors over 2..4 classes, with
    ties made on purpose (mirrored sides, permuted classes, scaled counts).
    """
    rng = np.random.default_rng(1)

    def gini_decrease(left, right, exact):
        number = Fraction if exact else float
        parent = [l + r for l, r in zip(left, right)]
        def impurity(counts):
            total = sum(counts)
            return 1 - sum(number(c) / total * number(c) / total for c in counts)
        n, n_left, n_right = sum(parent), sum(left), sum(right)
        return (impurity(parent) - number(n_left) / n * impurity(left)
                - number(n_right) / n * impurity(right))

    disagreements_with_float = 0
    for _ in range(1500):
        n_classes = int(rng.integers(2, 5))
        parent = rng.integers(0, 12, size=n_classes)
        parent[rng.integers(n_classes)] += 2
        def random_split():
            while True:
                left = [int(rng.integers(0, c + 1)) for c in parent]
                right = [int(c) - l for c, l in zip(parent, left)]
                if sum(left) > 0 and sum(right) > 0:
                    return left, right
        a = random_split()
        kind = rng.integers(3)
        b = (a[1], a[0]) if kind == 0 else random_split()  # mirrored: an exact tie
        sign = compare_split_scores(*split_score(*a), *split_score(*b))
        exact = gini_decrease(*a, exact=True) - gini_decrease(*b, exact=True)
        assert sign == (exact > 0) - (exact < 0)
        approximate = gini_decrease(*a, exact=False) - gini_decrease(*b, exact=False)
        if exact != 0:
            assert (approximate > 0) == (exact > 0)
        elif approximate != 0:
            disagreements_with_float += 1  # float rounding breaks an exact tie
    # Class permutations and common scaling give equal scores too.
    assert compare_split_scores(*split_score([3, 1, 2], [0, 4, 1]),
                                *split_score([1, 2, 3], [4, 1, 0])) == 0


@pytest.mark.parametrize("case", range(60))
def test_best_split_of_segment_matches_brute_force(case):
    rng = np.random.default_rng(case)
    n = int(rng.integers(1, 25))
    n_classes = int(rng.integers(2, 4))
    codes = np.sort(rng.integers(0, 6, size=n))
    labels = rng.integers(0, n_classes, size=n)
    weights = rng.integers(1, 4, size=n)
    min_samples_leaf = int(rng.integers(1, 4))
    found = best_split_of_segment(codes, labels, weights, n_classes, min_samples_leaf)
    expected = _brute_force_segment(codes.tolist(), labels.tolist(), weights.tolist(),
                                    n_classes, min_samples_leaf)
    assert found.valid == (expected is not None)
    if expected is not None:
        assert Fraction(found.score_numerator, found.score_denominator) == expected[0]
        assert (found.threshold_code, found.n_rows_left) == expected[1:3]
        assert found.left_class_counts.tolist() == expected[3]


def test_best_split_of_segment_tie_takes_lowest_threshold():
    # Codes 0 0 1 1 2 2, labels a a b b a a: thresholds 0 and 1 tie exactly.
    found = best_split_of_segment([0, 0, 1, 1, 2, 2], [0, 0, 1, 1, 0, 0], [1] * 6, 2)
    assert found.threshold_code == 0 and found.n_rows_left == 2


def test_threshold_is_midway_between_the_boundary_codes():
    # Codes 2 2 9 9 (labels a a b b): the rows split after code 2, and the gap 3..8 is
    # shared: 3..5 go left with 2, 6..8 go right with 9. An odd gap rounds down.
    found = best_split_of_segment([2, 2, 9, 9], [0, 0, 1, 1], [1] * 4, 2)
    assert (found.threshold_code, found.n_rows_left) == (5, 2)
    found = best_split_of_segment([2, 2, 10, 10], [0, 0, 1, 1], [1] * 4, 2)
    assert found.threshold_code == 6


def test_best_split_of_node_ties_take_first_visited_feature():
    labels = [0, 0, 1, 1]
    segment = ([0, 1, 2, 3], labels, [1, 1, 1, 1])
    found = best_split_of_node([segment[0]] * 3, [labels] * 3, [segment[2]] * 3,
                               features=[5, 2, 7], n_classes=2)
    assert (found.feature, found.threshold_code) == (5, 1)


@pytest.mark.parametrize("case", range(30))
def test_best_split_of_node_matches_brute_force(case):
    rng = np.random.default_rng(100 + case)
    n, n_features = int(rng.integers(2, 15)), int(rng.integers(1, 4))
    labels = rng.integers(0, 2, size=n)
    weights = rng.integers(1, 3, size=n)
    codes = rng.integers(0, 4, size=(n, n_features))
    features = list(rng.permutation(n_features))
    segments = [np.argsort(codes[:, f], kind="stable") for f in features]
    found = best_split_of_node([codes[s, f] for s, f in zip(segments, features)],
                               [labels[s] for s in segments], [weights[s] for s in segments],
                               features, 2)
    best = None
    for f, s in zip(features, segments):
        candidate = _brute_force_segment(codes[s, f].tolist(), labels[s].tolist(),
                                         weights[s].tolist(), 2, 1)
        if candidate is not None and (best is None or candidate[0] > best[0]):
            best = (candidate[0], f, candidate[1])
    assert found.valid == (best is not None)
    if best is not None:
        assert (Fraction(found.score_numerator, found.score_denominator), found.feature,
                found.threshold_code) == best


def test_stable_partition_keeps_order():
    goes_left = np.array([True, False, True, False, True, False])
    assert stable_partition([5, 0, 3, 2, 1, 4], goes_left).tolist() == [0, 2, 4, 5, 3, 1]


def test_leaf_decision_rules():
    counts = np.array([[3, 0], [2, 2], [1, 1], [5, 5], [5, 5]])
    leaf = leaf_decision(counts, np.array([3, 4, 2, 10, 10]), 2, max_depth=None,
                         min_samples_split=3, min_samples_leaf=1)
    assert leaf.tolist() == [True, False, True, False, False]  # pure, ok, too few, ok, ok
    assert leaf_decision([5, 5], 10, 3, max_depth=3, min_samples_split=2, min_samples_leaf=1)
    assert leaf_decision([5, 5], 10, 0, max_depth=None, min_samples_split=2,
                         min_samples_leaf=6)


def test_majority_class_ties_lowest():
    assert majority_class(np.array([[1, 3, 3], [2, 2, 0], [0, 0, 1]])).tolist() == [1, 0, 2]


def test_all_small_integer_cases_compare_like_fractions():
    """Exhaustive over small 2-class splits: the exact compare equals Fraction order."""
    splits = [((a, b), (c, d)) for a, b, c, d in itertools.product(range(4), repeat=4)
              if a + b > 0 and c + d > 0]
    scores = [(split_score(*s), _fraction_score(*s)) for s in splits]
    for (fraction_a, exact_a), (fraction_b, exact_b) in itertools.product(scores[::3], scores):
        assert compare_split_scores(*fraction_a, *fraction_b) == \
            (exact_a > exact_b) - (exact_a < exact_b)
