"""The golden model's trees grown from class histograms: the plan of an out-of-core PE.

Today's processing element reads every feature's presorted in-bag list at every level.
It needs the lists for the constant checks and for the partition. On wide data that alone
is slower than one CPU core, and on the data folder's isolet and MNIST one PE's lists
exceed the chip (``docs/out_of_core.md``). The plan instead keeps, per node, only the set
of its in-bag row ids. For each drawn feature it gathers that feature's codes of those
rows into a class histogram of ``2**code_bits`` bins (weighted class counts and distinct
rows per bin) and scans the bins in code order.

This module grows trees that way and proves it changes nothing: the tests hold
:func:`train_tree_from_histograms` equal to :func:`sw.methods.forest.model.train_tree`,
node for node. Two facts carry the equivalence:

* **A histogram scan is the sorted scan.** A histogram scanned in code order visits the
  boundaries of the sorted segment: one between every two consecutive occupied bins, with
  the same left counts, distinct rows and score, the same midpoint threshold, and ties
  going to the lower code (:func:`best_split_of_histogram`).
* **The feature draw can be lazy.** The model's draw (``draw_node_features``) stops after
  ``min(features_per_split, non-constant features)`` non-constant features, so it needs
  the node's count of constant features. Reading every feature of every node to get that
  count is the cost to avoid. Here a drawn feature is found constant from its own
  histogram (one occupied bin). When the features run out before ``features_per_split``
  non-constant ones were found, the stream is rewound to just after the last
  non-constant feature's draw. So it is when a PE's lanes, drawing a pass of features at
  once, draw past the last one needed (``lanes``). The generator is counter-based, so
  hardware rewinds the same way: it reloads its counter. A tree never draws fewer words
  than the model does.

:class:`HistogramWork` counts what a PE built this way would read and scan. It feeds the
cost model of ``sw/experiments/out_of_core.py``.
"""

import dataclasses

import numpy as np

from sw.methods.forest.model import (
    NodeFeatureDrawer, SplitCandidate, Tree, TreeRandom, bootstrap_weights, leaf_decision,
    majority_class)

__all__ = ["class_histogram", "histogram_cells", "best_split_of_histogram", "HistogramWork",
           "train_tree_from_histograms"]

#: Relative width of the float pre-screen band, as in the sorted scan
#: (``sw.methods.forest.splits``): candidates inside it are compared exactly.
_NEAR_TIE_TOLERANCE = 1e-12


def class_histogram(codes, labels, weights, n_bins, n_classes):
    """``(class_counts, rows)`` of a node's entries: per code, the weighted class counts
    (shape ``(n_bins, n_classes)``) and the number of entries (distinct in-bag rows)."""
    codes = np.asarray(codes, dtype=np.int64)
    labels = np.asarray(labels, dtype=np.int64)
    if len(codes) and (codes.min() < 0 or codes.max() >= n_bins):
        raise ValueError(f"codes must lie in 0..{n_bins - 1}, not {codes.min()}..{codes.max()}")
    counts = np.bincount(codes * n_classes + labels, weights=weights,
                         minlength=n_bins * n_classes).astype(np.int64)
    return counts.reshape(n_bins, n_classes), np.bincount(codes, minlength=n_bins)


def histogram_cells(class_counts, rows):
    """The non-zero (bin, class) cells of a histogram in scan order, as the histogram unit
    (``hw/histogram.py``) hands them to a Gini scan: bins in code order, the classes of a
    bin in class order. Each cell is ``(code, label, weight, rows)``: its weighted count,
    and the bin's distinct rows on the bin's first cell (0 on the others), so that the
    rows summed over the cells before a boundary are the rows left of it."""
    class_counts = np.asarray(class_counts, dtype=np.int64)
    cells = []
    for code in np.flatnonzero(np.asarray(rows)).tolist():
        labels = np.flatnonzero(class_counts[code]).tolist()
        cells += [(code, label, int(class_counts[code, label]), int(rows[code]) if k == 0 else 0)
                  for k, label in enumerate(labels)]
    return cells


def best_split_of_histogram(class_counts, rows, min_samples_leaf=1):
    """Best split of a node's histogram of one feature, as the sorted scan finds it.

    A boundary lies after every occupied bin that has an occupied bin above it. It keeps
    at least ``min_samples_leaf`` distinct rows on each side. Its threshold is midway
    between the two occupied codes, rounded down. The highest score wins; on equal scores
    the lower code wins. Returns a :class:`SplitCandidate` with ``feature = -1``, equal
    field for field to ``best_split_of_segment`` of the sorted entries.
    """
    class_counts = np.asarray(class_counts, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    occupied = np.flatnonzero(rows)
    if len(occupied) < 2:
        return SplitCandidate(False)
    left = np.cumsum(class_counts[occupied], axis=0)[:-1]
    total = left[-1] + class_counts[occupied[-1]]
    rows_left = np.cumsum(rows[occupied])[:-1]
    rows_total = int(rows[occupied].sum())
    keep = (rows_left >= min_samples_leaf) & (rows_total - rows_left >= min_samples_leaf)
    candidates = np.flatnonzero(keep)
    if len(candidates) == 0:
        return SplitCandidate(False)
    left = left[candidates]
    right = total - left
    n_left, n_right = left.sum(axis=1), right.sum(axis=1)
    squares_left = np.einsum("ij,ij->i", left, left)
    squares_right = np.einsum("ij,ij->i", right, right)
    approximate = squares_left / n_left + squares_right / n_right
    near = np.flatnonzero(approximate >= approximate.max() * (1.0 - _NEAR_TIE_TOLERANCE))
    best, numerator, denominator = None, 0, 1
    for index in near.tolist():             # ascending: a later candidate must be better
        candidate = (int(squares_left[index]) * int(n_right[index])
                     + int(squares_right[index]) * int(n_left[index]))
        candidate_denominator = int(n_left[index]) * int(n_right[index])
        if best is None or candidate * denominator > numerator * candidate_denominator:
            best, numerator, denominator = index, candidate, candidate_denominator
    boundary = int(candidates[best])
    threshold = (int(occupied[boundary]) + int(occupied[boundary + 1])) >> 1
    return SplitCandidate(True, -1, threshold, int(rows_left[boundary]), numerator,
                          denominator, left[best].copy(), right[best].copy())


@dataclasses.dataclass
class HistogramWork:
    """What growing one tree from histograms reads and scans.

    Attributes
    ----------
    nodes : list of (row ids, drawn, scanned, cells) tuples
        Per searched node: its in-bag row ids (ascending), the features drawn there
        (constant ones included), the histograms scanned there (its non-constant drawn
        features) and the most non-zero (bin, class) cells among them (what a scan that
        feeds today's Gini scanner one cell per cycle steps through), so that a cost model
        can group the draws into passes of a PE's lanes and count the memory blocks the
        rows lie in. The totals below are sums over it.
    partitioned_rows : int
        Rows whose go-left bit is computed: the rows of the nodes split into searched
        children.
    rewinds : int
        Nodes whose draw rewound the stream: the features ran out, or a pass of lanes
        overdrew.
    """
    nodes: list = dataclasses.field(default_factory=list)
    partitioned_rows: int = 0
    rewinds: int = 0

    @property
    def searched_rows(self):
        """Distinct in-bag rows summed over the searched nodes: one pass over the node's row
        ids per node and level, the one-pass bound's work."""
        return sum(len(rows) for rows, _, _, _ in self.nodes)

    @property
    def gathered_codes(self):
        """Codes gathered into histograms: rows times drawn features, summed."""
        return sum(len(rows) * drawn for rows, drawn, _, _ in self.nodes)

    @property
    def drawn_features(self):
        return sum(drawn for _, drawn, _, _ in self.nodes)

    @property
    def full_scans(self):
        """Histograms scanned: the non-constant drawn features, summed."""
        return sum(scanned for _, _, scanned, _ in self.nodes)

    @property
    def constant_draws(self):
        return self.drawn_features - self.full_scans


def _draw_lazily(drawer, histogram_of, n_features, features_per_split, work, lanes=1):
    """``draw_node_features`` with the constant checks made as the features are drawn.

    ``histogram_of(feature)`` is the node's ``(class_counts, rows)`` of that feature.
    Features are drawn ``lanes`` at a time, as a PE's lanes would gather them in one pass,
    and their histograms checked in draw order. When the last non-constant feature needed
    is found at a lane before the pass's last, the lanes after it were drawn beyond the
    model's stop (overdrawn): their histograms are gathered but not used. Whenever the
    stream stands past the last non-constant feature's draw (overdrawn, or the features
    ran out), it is rewound to just after that draw. Returns the non-constant features in
    visit order with their histograms, and leaves the drawer where the model's draw
    leaves it."""
    swapped, visited = {}, []
    after_last = drawer.position            # the stream after the last non-constant draw
    position = 0
    while position < n_features and len(visited) < features_per_split:
        drawn = []                          # (feature, the stream after its draw)
        for _ in range(min(lanes, n_features - position)):
            chosen = drawer.integer(n_features - position) + position
            drawn.append((swapped.get(chosen, chosen), drawer.position))
            swapped[chosen] = swapped.get(position, position)
            position += 1
        histograms = [histogram_of(feature) for feature, _ in drawn]
        for (feature, after), histogram in zip(drawn, histograms):
            if np.count_nonzero(histogram[1]) > 1 and len(visited) < features_per_split:
                visited.append((feature, histogram))
                after_last = after
    if drawer.position != after_last:
        drawer.rewind(after_last)
        work.rewinds += 1
    return visited


def _best_of_node(visited, min_samples_leaf):
    """The node's best split over its visited features (earlier feature wins a tie), and
    the most non-zero (bin, class) cells of their histograms."""
    best, most_cells = SplitCandidate(False), 0
    for feature, (counts, rows) in visited:
        most_cells = max(most_cells, int(np.count_nonzero(counts)))
        found = best_split_of_histogram(counts, rows, min_samples_leaf)
        if found.valid and (not best.valid or found.score_numerator * best.score_denominator
                            > best.score_numerator * found.score_denominator):
            best = dataclasses.replace(found, feature=feature)
    return best, most_cells


def train_tree_from_histograms(codes, labels, params, seed, tree_index, code_bits, lanes=1):
    """Tree ``tree_index`` of forest ``seed``, grown level by level from histograms.

    The same inputs as :func:`sw.methods.forest.model.train_tree` plus ``code_bits`` (the
    histograms' ``2**code_bits`` bins; every code must be below it) and ``lanes`` (features
    drawn and gathered at a time, as a PE's lanes would: the work counts the overdrawn
    ones). Returns ``(tree, work)``: the model's :class:`Tree` and the
    :class:`HistogramWork` it took.
    """
    codes = np.asarray(codes, dtype=np.int64)
    labels = np.asarray(labels, dtype=np.int64)
    n_rows, n_features = codes.shape
    n_classes, n_bins = params.n_classes, 1 << code_bits
    random = TreeRandom(seed, tree_index)
    weights = bootstrap_weights(random, n_rows, params.max_samples, params.bootstrap)
    drawer = NodeFeatureDrawer(random)
    tree_feature = drawer.integer(n_features) if params.thesis_mode else None
    work = HistogramWork()

    feature, threshold, left_child, right_child = [-1], [-1], [-1], [-1]
    counts = [np.bincount(labels, weights=weights, minlength=n_classes).astype(np.int64)]
    members = {0: np.flatnonzero(weights > 0)}          # node -> its in-bag row ids
    node_depth = [0]
    level = [0]
    while level:
        leaf = leaf_decision(np.array([counts[node] for node in level]),
                             np.array([len(members[node]) for node in level]),
                             node_depth[level[0]], params.max_depth,
                             params.min_samples_split, params.min_samples_leaf)
        searched = [node for node, is_leaf in zip(level, leaf.tolist()) if not is_leaf]
        if not searched:
            break
        splits, any_drawn = {}, False
        for node in searched:
            node_rows, drawn = members[node], []

            def histogram_of(f, node_rows=node_rows, drawn=drawn):
                drawn.append(f)
                return class_histogram(codes[node_rows, f], labels[node_rows],
                                       weights[node_rows], n_bins, n_classes)

            if tree_feature is not None:
                histogram = histogram_of(tree_feature)
                visited = [(tree_feature, histogram)] if np.count_nonzero(histogram[1]) > 1 else []
            else:
                visited = _draw_lazily(drawer, histogram_of, n_features,
                                       params.features_per_split, work, lanes)
            any_drawn |= bool(visited)
            splits[node], cells = _best_of_node(visited, params.min_samples_leaf)
            work.nodes.append((node_rows, len(drawn), len(visited), cells))
        if not any_drawn:
            break
        level = _grow_children(level, searched, splits, params, codes, labels, weights,
                               members, counts, node_depth,
                               (feature, threshold, left_child, right_child), work)

    counts = np.array(counts, dtype=np.int64).reshape(len(feature), n_classes)
    n_rows_per_node = np.array([len(members[node]) for node in range(len(feature))], dtype=np.int64)
    tree = Tree(feature=np.array(feature, dtype=np.int64),
                threshold_code=np.array(threshold, dtype=np.int64),
                left_child=np.array(left_child, dtype=np.int64),
                right_child=np.array(right_child, dtype=np.int64),
                class_counts=counts, majority_class=majority_class(counts),
                n_samples=counts.sum(axis=1), n_rows=n_rows_per_node,
                depth=np.array(node_depth, dtype=np.int64))
    return tree, work


def _grow_children(level, searched, splits, params, codes, labels, weights, members,
                   counts, node_depth, nodes, work):
    """Record the level's splits and create the children (left then right, in node
    order), as the model does. Returns the next level."""
    feature, threshold, left_child, right_child = nodes
    next_level = []
    deeper_is_leaf = params.max_depth is not None and node_depth[level[0]] + 1 >= params.max_depth
    smallest_searched = max(params.min_samples_split, 2 * params.min_samples_leaf)
    for node in searched:
        split = splits[node]
        if not split.valid:
            continue
        feature[node], threshold[node] = split.feature, split.threshold_code
        node_rows = members[node]
        goes_left = codes[node_rows, split.feature] <= split.threshold_code
        children = []
        for child_rows, child_counts in ((node_rows[goes_left], split.left_class_counts),
                                         (node_rows[~goes_left], split.right_class_counts)):
            child = len(feature)
            for column in nodes:
                column.append(-1)
            counts.append(np.asarray(child_counts, dtype=np.int64))
            members[child] = child_rows
            node_depth.append(node_depth[node] + 1)
            children.append(child)
        left_child[node], right_child[node] = children
        next_level.extend(children)
        searched_children = not deeper_is_leaf and any(
            len(members[child]) >= smallest_searched and np.count_nonzero(counts[child]) > 1
            for child in children)
        if searched_children:
            work.partitioned_rows += len(node_rows)
    return next_level
