"""Golden model, per-tree data and random draws: presorted order, bootstrap weights,
in-bag lists and the features examined at each node (reference of ``hw/sorter.py`` and
``hw/inbag.py``). Re-exported by :mod:`sw.methods.forest.model`."""

import numpy as np

from sw.methods.forest.rng import TreeRandom

__all__ = ["presorted_order", "bootstrap_weights", "inbag_row_count", "inbag_lists",
           "NodeFeatureDrawer", "draw_node_features"]


# ----------------------------------------------------------------------------------------
# Per-tree data: presorted order, bootstrap, in-bag lists
# ----------------------------------------------------------------------------------------

def presorted_order(codes):
    """Row indices of each feature in ascending code order (ties: ascending row index).

    Parameters
    ----------
    codes : integer array, shape (n_rows, n_features)

    Returns
    -------
    order : int64 array, shape (n_features, n_rows)
        ``order[f]`` lists every row once; computed once per dataset.
    """
    codes = np.asarray(codes)
    return np.argsort(codes.T, axis=1, kind="stable").astype(np.int64)


def bootstrap_weights(random, n_rows, max_samples, bootstrap=True):
    """Integer multiplicity of every row in a tree's bootstrap sample.

    Draws ``max_samples`` integers uniform in [0, n_rows) from ``random`` (a
    :class:`sw.methods.forest.rng.TreeRandom`) in one batch; with ``bootstrap=False`` draws nothing and
    returns all ones.

    Returns
    -------
    weights : int64 array, shape (n_rows,)
    """
    if not bootstrap:
        return np.ones(n_rows, dtype=np.int64)
    drawn_rows = random.integers(n_rows, max_samples)
    return np.bincount(drawn_rows, minlength=n_rows).astype(np.int64)


def inbag_row_count(n_rows, params, seed, tree_index):
    """Distinct rows in the bag of tree ``tree_index`` of forest ``seed`` (all ``n_rows``
    without bootstrap): the length of its in-bag lists, which a PE's ``max_inbag_rows``
    must hold. Draws the same bootstrap as :func:`train_tree`, nothing else."""
    weights = bootstrap_weights(TreeRandom(seed, tree_index), n_rows, params.max_samples,
                                params.bootstrap)
    return int(np.count_nonzero(weights))


def inbag_lists(order, weights):
    """The tree's in-bag list per feature: the presorted order filtered to weight > 0.

    Parameters
    ----------
    order : int array, shape (n_features, n_rows)
        From :func:`presorted_order`.
    weights : int array, shape (n_rows,)
        From :func:`bootstrap_weights`.

    Returns
    -------
    rows : int64 array, shape (n_features, n_inbag)
        In-bag row indices of each feature in ascending code order.
    row_weights : int64 array, shape (n_features, n_inbag)
        ``weights[rows]``, the multiplicity carried with each entry.
    """
    order = np.asarray(order, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.int64)
    keep = weights[order] > 0
    n_inbag = int(np.count_nonzero(weights > 0))
    rows = order[keep].reshape(order.shape[0], n_inbag)
    return rows, weights[rows]


# ----------------------------------------------------------------------------------------
# Feature draws
# ----------------------------------------------------------------------------------------

class NodeFeatureDrawer:
    """Bounded draws from a tree's stream after the bootstrap, one at a time.

    Produces exactly the numbers of ``TreeRandom.integer`` (same rejection rule on the
    same raw words) but reads raw words in blocks, because the model makes thousands of
    scalar draws per tree.
    """

    _BLOCK = 256

    def __init__(self, random):
        self.random = random
        self._words = []
        self._next = 0
        self._block_start = random.position

    @property
    def position(self):
        """Stream position after the last draw (what the gateware's counter would hold)."""
        return self._block_start + self._next

    def rewind(self, position):
        """Continue the stream at ``position`` (a :attr:`position` seen before): the
        gateware's generator is counter-based, so this is loading its counter."""
        if position < 0:
            raise ValueError(f"a stream position is at least 0, not {position}")
        self._words, self._next, self._block_start = [], 0, position

    def integer(self, bound):
        """One integer uniform in [0, bound) by rejection, as ``TreeRandom.integer``."""
        mask = (1 << (bound - 1).bit_length()) - 1  # sw.methods.forest.rng.bound_mask, inlined for speed
        while True:
            if self._next == len(self._words):
                self._block_start += self._next
                self._words = self.random.raw_at(np.arange(
                    self._block_start, self._block_start + self._BLOCK,
                    dtype=np.uint64)).tolist()
                self._next = 0
            candidate = self._words[self._next] & mask
            self._next += 1
            if candidate < bound:
                return candidate


def draw_node_features(drawer, is_constant, features_per_split):
    """Features examined at one node, in visit order (partial Fisher-Yates).

    Draw i (i = 0, 1, ...) picks j = ``drawer.integer(n_features - i) + i`` and swaps
    positions i and j of the permutation 0..n_features-1; the feature now at position i
    is visited. Constant features (in this node) are skipped and do not count. Drawing
    stops when ``features_per_split`` non-constant features were visited or every non-constant
    feature was visited; a node whose features are all constant makes no draw.

    Parameters
    ----------
    drawer : NodeFeatureDrawer (or anything with ``integer(bound)``)
    is_constant : sequence of bool, length n_features
        True where all in-bag codes of the node are equal for that feature.
    features_per_split : int

    Returns
    -------
    features : list of int
        Non-constant features in visit order.
    """
    is_constant = [bool(flag) for flag in is_constant]
    n_features = len(is_constant)
    wanted = min(features_per_split, n_features - sum(is_constant))
    swapped = {}  # sparse Fisher-Yates permutation: position -> feature
    visited = []
    position = 0
    draw = drawer.integer
    while len(visited) < wanted:
        chosen = draw(n_features - position) + position
        feature = swapped.get(chosen, chosen)
        swapped[chosen] = swapped.get(position, position)
        if not is_constant[feature]:
            visited.append(feature)
        position += 1
    return visited
