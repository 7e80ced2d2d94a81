"""Triplet mining for large-margin metric learning (thesis sections 2.2.3 and 3.1-3.5).

A miner looks at every anchor ``i`` of a labelled data set and chooses

* the *positives* ``j`` (same class as ``i``) whose distance to the anchor is pulled in,
  the pairs ``(i, j)`` with ``eta_ij = 1`` (or ``gamma+_ij = 1``) in eqs. 3.1-3.7, and
* for each chosen positive, the *negatives* ``l`` (other classes) that must stay at least
  a unit margin farther from the anchor than ``j``: the triplets ``(i, j, l)`` whose
  hinge loss (slack ``xi_ijl``) enters the objective.

Distances are Euclidean in the space the miner is given (the input space, or the current
projected space in the hierarchical approach).  Ties in distance are broken by the lower
sample index (stable sort), so every miner except negative sampling is deterministic.

"nearest" / "farthest" always means the k smallest / largest distances to the anchor.
The miners, by their thesis names:

===================  =========  =====================  =====================================
name                 thesis     positives per anchor   negatives per (anchor, positive)
===================  =========  =====================  =====================================
batch_all            k-BA       k nearest              all negatives                (eq 3.1)
batch_hard           k-BH       k farthest             k nearest                    (eq 3.2)
batch_semi_hard      k-BSH      k nearest              k nearest of those farther
                                                       from the anchor than the
                                                       positive                     (eq 3.3)
hpen                 k-HPEN     k farthest             k farthest                   (eq 3.6)
epen                 k-EPEN     k nearest              k farthest                   (eq 3.4)
ephn                 k-EPHN     k nearest              k nearest                    (eq 3.5)
negative_sampling    k-NS       k nearest              k drawn without replacement
                                                       with probability
                                                       ``min(lambda, 1/q(D))``      (eq 3.7)
===================  =========  =====================  =====================================

k-HPHN (hard positive, hard negative) is the same miner as k-BH and is accepted as an
alias.
"""

import numpy as np
from scipy.special import gammaln

__all__ = ["MINERS", "MINER_ALIASES", "THESIS_NAMES", "canonical_miner_name",
           "mine_triplets", "negative_sampling_weights", "pairwise_distance_density"]

MINERS = ("batch_all", "batch_hard", "batch_semi_hard", "hpen", "epen", "ephn",
          "negative_sampling")

# Short names used in the thesis's Table 3.1, for display.
THESIS_NAMES = {
    "batch_all": "k-BA", "batch_hard": "k-BH", "batch_semi_hard": "k-BSH",
    "hpen": "k-HPEN", "epen": "k-EPEN", "ephn": "k-EPHN", "negative_sampling": "k-NS",
}

MINER_ALIASES = {
    **{name: name for name in MINERS},
    **{short.lower(): name for name, short in THESIS_NAMES.items()},
    "k-hphn": "batch_hard", "hphn": "batch_hard",
    "ba": "batch_all", "bh": "batch_hard", "bsh": "batch_semi_hard", "ns": "negative_sampling",
    "k-batch-all": "batch_all", "k-batch-hard": "batch_hard",
    "k-batch-semi-hard": "batch_semi_hard", "k-negative-sampling": "negative_sampling",
}


def canonical_miner_name(mining):
    """Return the canonical miner name for ``mining`` (a name from MINERS or an alias).

    Raises
    ------
    ValueError
        If ``mining`` is not a known miner name or alias.
    """
    key = str(mining).strip().lower().replace(" ", "_")
    if key in MINER_ALIASES:
        return MINER_ALIASES[key]
    key = key.replace("_", "-")
    if key in MINER_ALIASES:
        return MINER_ALIASES[key]
    raise ValueError(f"mining={mining!r} is not a known triplet miner; choose one of "
                     f"{list(MINERS)} or a thesis name {sorted(set(THESIS_NAMES.values()))}")


def pairwise_distance_density(distance, dimension):
    """Density ``q(D)`` of distances between points uniform on the unit sphere (eq. 2.11).

    ``q(D) ∝ D^(d-2) (1 - D^2/4)^((d-3)/2)`` on ``0 < D < 2``, normalised here so that it
    integrates to one (the exact constant, from the Beta function), because eq. 2.12
    compares ``1/q`` against the fixed cap ``lambda``.

    Parameters
    ----------
    distance : array_like
        Euclidean distances between unit vectors, in ``[0, 2]``.
    dimension : int
        Dimension ``d >= 2`` of the space.

    Returns
    -------
    ndarray
        ``q(distance)``; zero outside ``(0, 2)`` where the density vanishes.
    """
    d = float(dimension)
    distance = np.asarray(distance, dtype=float)
    # With u = D^2/4 the density of u is Beta((d-1)/2, (d-1)/2); change variables to D.
    a = (d - 1.0) / 2.0
    log_norm = (-gammaln(a) * 2 + gammaln(2 * a)) - (d - 2.0) * np.log(2.0)
    inside = (distance > 0) & (distance < 2)
    clipped = np.where(inside, distance, 1.0)
    log_q = (log_norm + (d - 2.0) * np.log(clipped)
             + (d - 3.0) / 2.0 * np.log1p(-clipped ** 2 / 4.0))
    return np.where(inside, np.exp(log_q), 0.0)


def negative_sampling_weights(distance, dimension, cap):
    """Unnormalised probabilities ``min(lambda, 1/q(D))`` of drawing negatives (eq. 2.12).

    Where ``q`` vanishes (``D`` at 0 or 2) the weight is the cap ``lambda``.
    """
    q = pairwise_distance_density(distance, dimension)
    with np.errstate(divide="ignore"):
        inverse = np.where(q > 0, 1.0 / np.where(q > 0, q, 1.0), np.inf)
    return np.minimum(cap, inverse)


def _check_class_sizes(y, k):
    classes, counts = np.unique(y, return_counts=True)
    if classes.size < 2:
        raise ValueError(f"metric learning needs at least 2 classes; y has {classes.size} "
                         f"class ({classes.tolist()})")
    smallest = int(np.argmin(counts))
    label, size = classes[smallest].item(), int(counts[smallest])
    if size < 2:
        raise ValueError(f"class {label!r} has {size} sample; every class needs at least 2 "
                         f"(an anchor and a positive), so no k >= 1 works")
    if size < k + 1:
        raise ValueError(f"k={k} is larger than a class allows: class {label!r} "
                         f"has {size} samples, so at most k={size - 1} "
                         f"positives per anchor exist (k must be <= smallest class size - 1)")


def mine_triplets(X, y, mining, k, random_state=None, negative_sampling_cap=1.4):
    """Choose the pull pairs and triplets of one miner.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Data in the space where neighbours are defined.
    y : ndarray of shape (n_samples,)
        Class labels.
    mining : str
        Miner name or alias (see the module docstring).
    k : int
        Number of positives per anchor and (except for batch_all) of negatives per
        anchor-positive pair.  Must be at most the smallest class size minus one.
    random_state : None, int or numpy.random.Generator
        Source of randomness for negative sampling.
    negative_sampling_cap : float
        The cap ``lambda`` of eq. 2.12.

    Returns
    -------
    pairs : ndarray of shape (n_pairs, 2)
        The pulled anchor-positive pairs ``(i, j)``.
    triplets : ndarray of shape (n_triplets, 3)
        The triplets ``(i, j, l)``: anchor, positive, negative.  A miner may choose fewer
        than k negatives for a pair when fewer qualify (semi-hard) or exist.
    """
    miner = canonical_miner_name(mining)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    k = int(k)
    if k < 1:
        raise ValueError(f"k={k} must be at least 1")
    _check_class_sizes(y, k)
    rng = np.random.default_rng(random_state)

    squared = np.sum(X ** 2, axis=1)
    distance = np.sqrt(np.maximum(squared[:, None] + squared[None, :] - 2 * X @ X.T, 0.0))
    # Vectorised over anchors.  Each row is sorted once, nearest first and farthest first,
    # both stable: filtering a stable order of all points to the positives (or negatives)
    # of an anchor gives the stable order of that subset, so equal distances still go to
    # the lower sample index.  The output (pairs and triplets, in the same order) is the
    # one of the literal per-anchor definition; a test compares them.
    n = len(y)
    index = np.arange(n)
    # Each ordering is computed at most once (a full row sort is the costly step on
    # MNIST-sized problems): k-HPEN needs only the farthest-first one.
    nearest = (None if miner == "hpen"
               else np.argsort(distance, axis=1, kind="stable"))
    farthest = (np.argsort(-distance, axis=1, kind="stable")
                if miner in ("batch_hard", "hpen", "epen") else None)
    if miner in ("batch_hard", "hpen"):
        positive_far = (y[farthest] == y[:, None]) & (farthest != index[:, None])
        chosen_positives = _first_k(farthest, positive_far, k)
    else:
        positive_near = (y[nearest] == y[:, None]) & (nearest != index[:, None])
        chosen_positives = _first_k(nearest, positive_near, k)
    # Every class has at least k + 1 points and there are at least two classes, so every
    # anchor has k positives and more than k negatives.
    pairs = np.stack([np.repeat(index, k), chosen_positives.ravel()], axis=1).astype(np.intp)
    pair_anchor, pair_positive = pairs[:, 0], pairs[:, 1]

    if miner in ("batch_hard", "ephn", "hpen", "epen"):
        if miner in ("batch_hard", "ephn"):
            negatives = _first_k(nearest, y[nearest] != y[:, None], k)
        else:
            negatives = _first_k(farthest, y[farthest] != y[:, None], k)
        # Per anchor: every chosen positive with the same k negatives.
        counts = np.full(len(pairs), k)
        negative_of_pair = np.repeat(negatives, k, axis=0)         # (n_pairs, k)
        chosen = negative_of_pair.ravel()
    elif miner == "negative_sampling":
        # Eq. 2.11 assumes points on the unit sphere: centre, then normalise each point.
        centred = X - X.mean(axis=0)
        norms = np.linalg.norm(centred, axis=1, keepdims=True)
        unit = centred / np.where(norms > 0, norms, 1.0)
        unit_distance = np.sqrt(np.clip(2.0 - 2.0 * unit @ unit.T, 0.0, 4.0))
        dimension = max(X.shape[1], 2)
        # The draws stay one rng.choice per (anchor, positive), in order, so a seed gives
        # the same negatives as before; only the weights are computed once per anchor.
        blocks = []
        for anchor in range(n):
            negatives = index[y != y[anchor]]
            weights = negative_sampling_weights(unit_distance[anchor, negatives], dimension,
                                                negative_sampling_cap)
            probabilities = weights / weights.sum()
            count = min(k, negatives.size)
            for _ in range(k):
                blocks.append(rng.choice(negatives, size=count, replace=False,
                                         p=probabilities))
        counts = np.array([b.size for b in blocks], dtype=np.intp)
        chosen = np.concatenate(blocks) if blocks else np.empty(0, dtype=np.intp)
    else:
        # The negatives of each anchor in nearest-first order, left-aligned in a padded
        # matrix (padding: index -1, distance +inf).
        negative_near = y[nearest] != y[:, None]
        n_negatives = negative_near.sum(axis=1)
        rank = np.cumsum(negative_near, axis=1) - 1
        rows, columns = np.nonzero(negative_near)
        negative_index = np.full((n, int(n_negatives.max())), -1, dtype=np.intp)
        negative_index[rows, rank[rows, columns]] = nearest[rows, columns]
        if miner == "batch_all":
            counts = n_negatives[pair_anchor]
            start = np.zeros(len(pairs), dtype=np.intp)
        else:  # batch_semi_hard: the k nearest negatives farther than the positive
            negative_distance = np.full(negative_index.shape, np.inf)
            negative_distance[rows, rank[rows, columns]] = distance[rows, nearest[rows, columns]]
            positive_distance = distance[pair_anchor, pair_positive]
            # Negatives are sorted by distance, so those farther than the positive are a
            # suffix of the list; it starts after those at most as far.
            start = np.empty(len(pairs), dtype=np.intp)
            for first in range(0, len(pairs), 512):     # bounded memory on big problems
                part = slice(first, first + 512)
                start[part] = np.sum(negative_distance[pair_anchor[part]]
                                     <= positive_distance[part, None], axis=1)
            counts = np.minimum(k, n_negatives[pair_anchor] - start)
        segment = np.repeat(np.arange(len(pairs)), counts)
        offsets = np.cumsum(counts) - counts
        within = np.arange(segment.size) - offsets[segment]
        chosen = negative_index[pair_anchor[segment], start[segment] + within]

    triplets = np.empty((int(np.sum(counts)), 3), dtype=np.intp)
    triplets[:, 0] = np.repeat(pair_anchor, counts)
    triplets[:, 1] = np.repeat(pair_positive, counts)
    triplets[:, 2] = chosen
    return pairs, triplets


def _first_k(order, mask, k):
    """Per row, the first ``k`` entries of ``order`` where ``mask`` holds, shape (rows, k).

    Every row must have at least ``k`` such entries.
    """
    taken = mask & (np.cumsum(mask, axis=1) <= k)
    return order[taken].reshape(len(order), k)
