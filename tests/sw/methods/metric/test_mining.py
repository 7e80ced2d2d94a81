"""Triplet miners select exactly the triplets their definitions (thesis 3.1-3.5) say."""

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import chisquare

from sw.methods.metric.mining import (MINERS, canonical_miner_name, mine_triplets,
                              negative_sampling_weights, pairwise_distance_density)

# One-dimensional data, so every distance is |a - b| and can be checked by eye.
# Class 0 sits at 0, 1, 3, 6; class 1 at 2, 4, 10.
POSITIONS = np.array([0.0, 1.0, 3.0, 6.0, 2.0, 4.0, 10.0])
LABELS = np.array([0, 0, 0, 0, 1, 1, 1])
ANCHOR = 0  # the point at 0: positives at distance 1, 3, 6; negatives at 2, 4, 10


def _mine_for_anchor(mining, k=2, anchor=ANCHOR, **kwargs):
    pairs, triplets = mine_triplets(POSITIONS[:, None], LABELS, mining, k, **kwargs)
    anchor_pairs = {POSITIONS[j] for i, j in pairs if i == anchor}
    anchor_triplets = {(POSITIONS[j], POSITIONS[l]) for i, j, l in triplets if i == anchor}
    return anchor_pairs, anchor_triplets, pairs, triplets


def _product(positives, negatives):
    return {(p, n) for p in positives for n in negatives}


# Expected (positives, {positive: negatives}) for the anchor at 0 with k = 2, worked out
# by hand from each definition.
EXPECTED = {
    # k nearest positives {1, 3} x all negatives {2, 4, 10}
    "batch_all": ({1, 3}, _product({1, 3}, {2, 4, 10})),
    # k farthest positives {6, 3} x k nearest negatives {2, 4}
    "batch_hard": ({6, 3}, _product({6, 3}, {2, 4})),
    # k nearest positives; per positive the 2 nearest negatives farther than it:
    # positive 1 -> {2, 4}; positive 3 -> {4, 10}
    "batch_semi_hard": ({1, 3}, {(1, 2), (1, 4), (3, 4), (3, 10)}),
    # k farthest positives {6, 3} x k farthest negatives {10, 4}
    "hpen": ({6, 3}, _product({6, 3}, {10, 4})),
    # k nearest positives {1, 3} x k farthest negatives {10, 4}
    "epen": ({1, 3}, _product({1, 3}, {10, 4})),
    # k nearest positives {1, 3} x k nearest negatives {2, 4}
    "ephn": ({1, 3}, _product({1, 3}, {2, 4})),
}


@pytest.mark.parametrize("mining", sorted(EXPECTED))
def test_miner_selects_its_definition_for_one_anchor(mining):
    positives, triplets = EXPECTED[mining]
    anchor_pairs, anchor_triplets, _, _ = _mine_for_anchor(mining)
    assert anchor_pairs == positives
    assert anchor_triplets == triplets


def test_semi_hard_takes_fewer_negatives_when_fewer_are_farther():
    # Anchor at 10 (class 1): its k=2 nearest positives are 4 (d 6) and 2 (d 8); the
    # negatives are 6 (d 4), 3 (d 7), 1 (d 9), 0 (d 10).  Farther than positive 4: 3, 1, 0
    # -> nearest two {3, 1}; farther than positive 2: 1, 0 -> {1, 0}.
    _, triplets, _, _ = _mine_for_anchor("batch_semi_hard", anchor=6)
    assert triplets == {(4, 3), (4, 1), (2, 1), (2, 0)}
    # Class 0 at 0, 1, 3, 6 and class 1 at 2, 4, 10, 12; anchor 0, k = 3: positive 6
    # (distance 6) has only two negatives farther away, 10 and 12.
    X = np.array([0.0, 1.0, 3.0, 6.0, 2.0, 4.0, 10.0, 12.0])[:, None]
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    _, triplets = mine_triplets(X, y, "batch_semi_hard", 3)
    chosen = {(X[j, 0], X[l, 0]) for i, j, l in triplets if i == 0}
    assert chosen == {(1, 2), (1, 4), (1, 10), (3, 4), (3, 10), (3, 12), (6, 10), (6, 12)}


@pytest.mark.parametrize("mining", MINERS)
def test_every_triplet_has_a_positive_and_a_negative(mining):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(24, 3))
    y = np.repeat([0, 1, 2], 8)
    pairs, triplets = mine_triplets(X, y, mining, 3, random_state=0)
    assert len(pairs) == 24 * 3                      # k pulled positives per anchor
    assert np.all(y[pairs[:, 0]] == y[pairs[:, 1]])
    assert np.all(pairs[:, 0] != pairs[:, 1])
    assert np.all(y[triplets[:, 0]] == y[triplets[:, 1]])
    assert np.all(y[triplets[:, 0]] != y[triplets[:, 2]])
    # every triplet's (anchor, positive) is one of the pulled pairs
    pulled = {tuple(p) for p in pairs}
    assert {(i, j) for i, j, _ in triplets} <= pulled
    expected = {"batch_all": 24 * 3 * 16}.get(mining, 24 * 3 * 3)
    if mining != "batch_semi_hard":
        assert len(triplets) == expected


def test_negative_sampling_draws_k_distinct_negatives_reproducibly():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 5))
    y = np.repeat([0, 1], 15)
    pairs, triplets = mine_triplets(X, y, "negative_sampling", 4, random_state=7)
    again = mine_triplets(X, y, "negative_sampling", 4, random_state=7)[1]
    assert np.array_equal(triplets, again)
    for i, j in pairs:
        negatives = triplets[(triplets[:, 0] == i) & (triplets[:, 1] == j), 2]
        assert len(negatives) == 4 == len(set(negatives))
        assert np.all(y[negatives] != y[i])
    # the positives are the k nearest, as in eq. 3.7 (eta_ij)
    ephn_pairs, _ = mine_triplets(X, y, "ephn", 4)
    assert {tuple(p) for p in pairs} == {tuple(p) for p in ephn_pairs}


def test_distance_density_is_the_known_sphere_law():
    # On the 2-sphere in R^3 the distance between two uniform points has density D/2.
    for distance in (0.3, 1.0, 1.7):
        assert pairwise_distance_density(distance, 3) == pytest.approx(distance / 2)
    for dimension in (2, 5, 30):
        total, _ = quad(lambda D: float(pairwise_distance_density(D, dimension)), 0, 2)
        assert total == pytest.approx(1.0, abs=1e-6)


def test_negative_sampling_weight_is_capped_inverse_density():
    # d = 3: q(D) = D/2, so 1/q(0.5) = 4 (capped at 1.4) and 1/q(1.9) = 1/0.95.
    weights = negative_sampling_weights(np.array([0.5, 1.9]), 3, 1.4)
    assert weights == pytest.approx([1.4, 1 / 0.95])


def test_k_hphn_is_batch_hard_and_thesis_names_are_accepted():
    assert canonical_miner_name("k-HPHN") == "batch_hard"
    assert canonical_miner_name("k-BSH") == "batch_semi_hard"
    assert canonical_miner_name("k-NS") == "negative_sampling"
    with pytest.raises(ValueError, match="not a known triplet miner"):
        canonical_miner_name("hardest")


def test_k_larger_than_a_class_is_refused():
    with pytest.raises(ValueError, match=r"k=3 is larger than a class allows.*has 3 samples"):
        mine_triplets(POSITIONS[:, None], LABELS, "ephn", 3)


def test_equal_distances_go_to_the_lower_index_for_nearest_and_farthest():
    # Anchor 0 at 0 (class 0).  Positives: index 1 at 2 and index 2 at -2 (tied farthest),
    # index 3 at 1 (nearest).  Negatives: index 4 at 3 and 5 at -3 (tied farthest),
    # index 6 at 0.5 and 7 at -0.5 (tied nearest).  With k = 1 the lower index must win.
    X = np.array([0.0, 2.0, -2.0, 1.0, 3.0, -3.0, 0.5, -0.5])[:, None]
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    expected = {"batch_hard": (1, 6), "hpen": (1, 4), "epen": (3, 4), "ephn": (3, 6)}
    for mining, (positive, negative) in expected.items():
        pairs, triplets = mine_triplets(X, y, mining, 1)
        assert [tuple(p) for p in pairs if p[0] == 0] == [(0, positive)], mining
        assert [tuple(t) for t in triplets if t[0] == 0] == [(0, positive, negative)], mining


def test_negative_sampling_draws_negatives_with_the_capped_inverse_density():
    # Twelve unit vectors in a plane of R^10, symmetric about the origin (so centring and
    # normalising leave them unchanged).  The anchor (angle 0) has negatives at known
    # angles, hence known chord lengths D = 2 sin(angle / 2); eq. 2.12 says each is drawn
    # with probability proportional to min(1.4, 1/q(D)), q the density of eq. 2.11
    # normalised here by numerical integration (not by the code under test).
    d = 10
    negative_angles = np.array([20, 75, 100, 150, 200, 255, 280, 330])
    angles = np.radians(np.concatenate([[0, 180, 90, 270], negative_angles]))
    X = np.zeros((12, d))
    X[:, 0], X[:, 1] = np.cos(angles), np.sin(angles)
    y = np.array([0] * 4 + [1] * 8)

    def unnormalised(D):
        return D ** (d - 2) * (1 - D * D / 4) ** ((d - 3) / 2)
    normaliser, _ = quad(unnormalised, 0, 2)
    separation = np.minimum(negative_angles, 360 - negative_angles)
    chord = 2 * np.sin(np.radians(separation) / 2)
    weights = np.minimum(1.4, normaliser / unnormalised(chord))
    expected = weights / weights.sum()

    rng = np.random.default_rng(0)
    counts = np.zeros(8)
    for _ in range(1500):
        pairs, triplets = mine_triplets(X, y, "negative_sampling", 1, random_state=rng)
        chosen = triplets[triplets[:, 0] == 0]
        assert chosen.shape == (1, 3) and chosen[0, 1] == 2   # nearest positive, angle 90
        counts[chosen[0, 2] - 4] += 1
    assert chisquare(counts, expected * counts.sum()).pvalue > 1e-3
    # the test has power: uniform sampling of the negatives is clearly rejected
    assert chisquare(counts).pvalue < 1e-6


def test_a_class_with_one_sample_is_refused_by_name():
    X = np.arange(6.0)[:, None]
    y = np.array([0, 0, 0, 1, 1, 2])
    with pytest.raises(ValueError, match=r"class 2 has 1 sample.*at least 2"):
        mine_triplets(X, y, "ephn", 1)


def _mine_one_anchor_at_a_time(X, y, mining, k, random_state=None, cap=1.4):
    """The miners' definitions written out literally, one anchor and positive at a time.

    Deliberately naive (a loop per anchor, a sort per subset): ``mine_triplets`` is
    vectorised over anchors and must return exactly these pairs and triplets, in this
    order (and, for negative sampling, draw the same negatives from the same seed).
    """
    miner = canonical_miner_name(mining)
    rng = np.random.default_rng(random_state)
    squared = np.sum(X ** 2, axis=1)
    distance = np.sqrt(np.maximum(squared[:, None] + squared[None, :] - 2 * X @ X.T, 0.0))
    centred = X - X.mean(axis=0)
    norms = np.linalg.norm(centred, axis=1, keepdims=True)
    unit = centred / np.where(norms > 0, norms, 1.0)
    unit_distance = np.sqrt(np.clip(2.0 - 2.0 * unit @ unit.T, 0.0, 4.0))
    pairs, triplets = [], []
    index = np.arange(len(y))
    for anchor in index:
        positives = index[(y == y[anchor]) & (index != anchor)]
        negatives = index[y != y[anchor]]
        near_positives = sorted(positives, key=lambda j: (distance[anchor, j], j))
        far_positives = sorted(positives, key=lambda j: (-distance[anchor, j], j))
        near_negatives = sorted(negatives, key=lambda l: (distance[anchor, l], l))
        far_negatives = sorted(negatives, key=lambda l: (-distance[anchor, l], l))
        chosen = (far_positives if miner in ("batch_hard", "hpen") else near_positives)[:k]
        for positive in chosen:
            pairs.append((anchor, positive))
            if miner == "batch_all":
                picked = near_negatives
            elif miner in ("batch_hard", "ephn"):
                picked = near_negatives[:k]
            elif miner in ("hpen", "epen"):
                picked = far_negatives[:k]
            elif miner == "batch_semi_hard":
                picked = [l for l in near_negatives
                          if distance[anchor, l] > distance[anchor, positive]][:k]
            else:
                weights = negative_sampling_weights(unit_distance[anchor, negatives],
                                                    max(X.shape[1], 2), cap)
                picked = rng.choice(negatives, size=min(k, negatives.size), replace=False,
                                    p=weights / weights.sum())
            triplets += [(anchor, positive, l) for l in picked]
    return (np.asarray(pairs, dtype=np.intp).reshape(-1, 2),
            np.asarray(triplets, dtype=np.intp).reshape(-1, 3))


@pytest.mark.parametrize("mining", MINERS)
@pytest.mark.parametrize("k", [1, 2, 4])
def test_vectorised_miner_returns_the_literal_definition_in_order(mining, k):
    rng = np.random.default_rng(k)
    # Coarse integer grid: many equal distances (and duplicate points), three unequal
    # classes, so ties, short negative lists and the semi-hard "fewer qualify" case occur.
    X = rng.integers(0, 4, size=(23, 2)).astype(float)
    y = np.repeat([0, 1, 2], [10, 8, 5])
    rng.shuffle(y)
    expected_pairs, expected_triplets = _mine_one_anchor_at_a_time(X, y, mining, k,
                                                                   random_state=7)
    pairs, triplets = mine_triplets(X, y, mining, k, random_state=7)
    np.testing.assert_array_equal(pairs, expected_pairs)
    np.testing.assert_array_equal(triplets, expected_triplets)
    assert len(triplets) > 0
