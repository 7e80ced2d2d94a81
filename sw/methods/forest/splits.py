"""Golden model, split search: the score of thesis eq. 4.2 with its exact comparison and
the best split of a segment or node with its tie-breaks (reference of ``hw/gini.py``).
Re-exported by :mod:`sw.methods.forest.model`; :func:`sw.methods.forest.model.train_tree`
runs the same :func:`_search_segments` over a whole level."""

import dataclasses

import numpy as np

__all__ = ["SplitCandidate", "split_score", "compare_split_scores", "best_split_of_segment",
           "best_split_of_node", "midpoint_code"]

#: Relative width of the float pre-screen band; candidates inside it are compared exactly.
#: The float score has a relative error below 1e-15, so the exact best is always inside.
_NEAR_TIE_TOLERANCE = 1e-12


# ----------------------------------------------------------------------------------------
# Split score (thesis eq. 4.2) and exact comparison
# ----------------------------------------------------------------------------------------

def split_score(left_class_counts, right_class_counts):
    """Eq. 4.2 as an exact fraction: ``(numerator, denominator)`` as Python ints.

    S = A / nL + B / nR with A = sum_j nL_j^2, B = sum_j nR_j^2, hence
    numerator = A * nR + B * nL and denominator = nL * nR.
    """
    left = [int(count) for count in left_class_counts]
    right = [int(count) for count in right_class_counts]
    n_left, n_right = sum(left), sum(right)
    if n_left <= 0 or n_right <= 0:
        raise ValueError(f"both sides of a split need samples, not {n_left} and {n_right}")
    squares_left = sum(count * count for count in left)
    squares_right = sum(count * count for count in right)
    return squares_left * n_right + squares_right * n_left, n_left * n_right


def compare_split_scores(numerator_a, denominator_a, numerator_b, denominator_b):
    """Sign of S_a - S_b (1, 0 or -1) by cross-multiplication in exact integers."""
    difference = int(numerator_a) * int(denominator_b) - int(numerator_b) * int(denominator_a)
    return (difference > 0) - (difference < 0)


@dataclasses.dataclass(frozen=True)
class SplitCandidate:
    """Best split of a segment or node.

    Attributes
    ----------
    valid : bool
        False when no boundary satisfies the rules (all other fields are then -1 / None).
    feature : int
        Feature of the split (-1 for a single segment searched without a feature).
    threshold_code : int
        Code of the last row going left: ``code <= threshold_code`` goes left.
    n_rows_left : int
        Distinct in-bag rows going left (the segment position of the boundary).
    score_numerator, score_denominator : int
        Eq. 4.2 as an exact fraction (see :func:`split_score`).
    left_class_counts, right_class_counts : int64 arrays, shape (n_classes,)
    """
    valid: bool
    feature: int = -1
    threshold_code: int = -1
    n_rows_left: int = -1
    score_numerator: int = -1
    score_denominator: int = -1
    left_class_counts: np.ndarray = None
    right_class_counts: np.ndarray = None


def _search_segments(codes, labels, weights, segment_starts, segment_group, n_groups,
                     n_classes, min_samples_leaf):
    """Best split of every group of sorted segments, vectorised over all of them.

    The segments are concatenated in ``codes``, ``labels``, ``weights`` (each segment
    sorted by code); ``segment_starts`` gives their offsets and ``segment_group`` (non-
    decreasing) the group (node) of each. Candidate boundaries lie between consecutive
    entries of a segment with different codes and leave at least ``min_samples_leaf``
    entries on each side. Within a group the best candidate has the highest score; on
    equal scores the earlier one (earlier segment, then lower position) wins.

    Returns a list with, per group, None (no valid candidate) or a tuple
    (element index of the last left entry, segment index, numerator, denominator,
    left class counts).
    """
    n_elements = len(codes)
    results = [None] * n_groups
    if n_elements == 0:
        return results
    segment_starts = np.asarray(segment_starts, dtype=np.int64)
    segment_ends = np.append(segment_starts[1:], n_elements)
    segment_lengths = segment_ends - segment_starts
    segment_of = np.repeat(np.arange(len(segment_starts)), segment_lengths)

    weighted_onehot = np.zeros((n_elements + 1, n_classes), dtype=np.int64)
    weighted_onehot[np.arange(1, n_elements + 1), labels] = weights
    prefix = np.cumsum(weighted_onehot, axis=0)  # prefix[i] = counts of entries < i
    segment_base = prefix[segment_starts]
    segment_total = prefix[segment_ends] - segment_base

    is_candidate = np.zeros(n_elements, dtype=bool)
    is_candidate[:-1] = codes[:-1] != codes[1:]
    is_candidate[segment_ends - 1] = False
    rows_left = np.arange(1, n_elements + 1) - segment_starts[segment_of]
    rows_right = segment_lengths[segment_of] - rows_left
    is_candidate &= (rows_left >= min_samples_leaf) & (rows_right >= min_samples_leaf)
    candidates = np.flatnonzero(is_candidate)
    if len(candidates) == 0:
        return results

    candidate_segment = segment_of[candidates]
    left = prefix[candidates + 1] - segment_base[candidate_segment]
    right = segment_total[candidate_segment] - left
    n_left = left.sum(axis=1)
    n_right = right.sum(axis=1)
    squares_left = np.einsum("ij,ij->i", left, left)
    squares_right = np.einsum("ij,ij->i", right, right)
    approximate = squares_left / n_left + squares_right / n_right

    group = np.asarray(segment_group, dtype=np.int64)[candidate_segment]
    groups, group_first = np.unique(group, return_index=True)
    group_best = np.maximum.reduceat(approximate, group_first)
    group_slot = np.searchsorted(groups, group)
    near = approximate >= group_best[group_slot] * (1.0 - _NEAR_TIE_TOLERANCE)
    near_count = np.add.reduceat(near.astype(np.int64), group_first)
    near_index = np.flatnonzero(near)
    _, first_near = np.unique(group[near_index], return_index=True)
    for slot, group_id in enumerate(groups.tolist()):
        if near_count[slot] == 1:
            best = int(near_index[first_near[slot]])
            numerator = int(squares_left[best]) * int(n_right[best]) \
                + int(squares_right[best]) * int(n_left[best])
            denominator = int(n_left[best]) * int(n_right[best])
        else:
            # Exact resolution of near-ties: Python integers never overflow.
            first = first_near[slot]
            best, numerator, denominator = None, 0, 1
            for index in near_index[first:first + near_count[slot]].tolist():
                candidate_numerator = int(squares_left[index]) * int(n_right[index]) \
                    + int(squares_right[index]) * int(n_left[index])
                candidate_denominator = int(n_left[index]) * int(n_right[index])
                if best is None or candidate_numerator * denominator > \
                        numerator * candidate_denominator:
                    best, numerator, denominator = \
                        index, candidate_numerator, candidate_denominator
        results[group_id] = (int(candidates[best]), int(candidate_segment[best]),
                             numerator, denominator, left[best])
    return results


def best_split_of_segment(codes, labels, weights, n_classes, min_samples_leaf=1):
    """Best split of one node's segment of one feature list (the Gini calculator).

    Parameters
    ----------
    codes : integer array, shape (n,)
        Codes of the segment's entries, ascending.
    labels : integer array, shape (n,)
        Class of each entry, in 0..n_classes-1.
    weights : integer array, shape (n,)
        Bootstrap multiplicity of each entry (>= 1).
    n_classes : int
    min_samples_leaf : int
        Minimum number of entries (distinct rows) on each side.

    Returns
    -------
    SplitCandidate
        With ``feature = -1``. Among equal scores the lowest threshold code wins.
    """
    codes = np.asarray(codes, dtype=np.int64)
    if np.any(codes[1:] < codes[:-1]):
        raise ValueError("codes of a segment must be in ascending order")
    return _segment_result(_search_segments(
        codes, np.asarray(labels, dtype=np.int64), np.asarray(weights, dtype=np.int64),
        [0], [0], 1, n_classes, min_samples_leaf)[0], codes, [-1], labels, weights, n_classes)


def best_split_of_node(codes_per_feature, labels_per_feature, weights_per_feature,
                       features, n_classes, min_samples_leaf=1):
    """Best split of one node over its candidate features (segments in visit order).

    ``codes_per_feature[k]`` etc. are the node's segment of the in-bag list of
    ``features[k]`` (ascending codes). Ties: highest score, then the feature visited
    first, then the lowest threshold code.
    """
    lengths = [len(segment) for segment in codes_per_feature]
    codes = np.concatenate([np.asarray(c, dtype=np.int64) for c in codes_per_feature])
    labels = np.concatenate([np.asarray(c, dtype=np.int64) for c in labels_per_feature])
    weights = np.concatenate([np.asarray(c, dtype=np.int64) for c in weights_per_feature])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    found = _search_segments(codes, labels, weights, starts, np.zeros(len(lengths)), 1,
                             n_classes, min_samples_leaf)[0]
    if found is not None:
        found = (found[0] - int(starts[found[1]]),) + found[1:]
        segment = found[1]
        return _segment_result(found, codes_per_feature[segment], features,
                               labels_per_feature[segment], weights_per_feature[segment],
                               n_classes)
    return SplitCandidate(False)


def midpoint_code(codes, last_left):
    """Threshold code of a boundary after sorted entry ``last_left``: midway between its
    code and the next entry's (different) code, rounded down. The segment splits as at the
    left code; codes in the gap (other rows, unseen values) are shared between the sides,
    as scikit-learn's midpoint threshold does in value space."""
    return (int(codes[last_left]) + int(codes[last_left + 1])) >> 1


def _segment_result(found, codes, features, labels, weights, n_classes):
    if found is None:
        return SplitCandidate(False)
    last_left, segment, numerator, denominator, left = found
    total = np.bincount(np.asarray(labels, dtype=np.int64),
                        weights=np.asarray(weights, dtype=np.int64),
                        minlength=n_classes).astype(np.int64)
    return SplitCandidate(True, int(features[segment]), midpoint_code(codes, last_left),
                          last_left + 1,
                          numerator, denominator, left.copy(), total - left)
