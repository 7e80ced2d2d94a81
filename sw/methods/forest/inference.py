"""Golden model, inference: the leaf each row reaches and the forest's votes and class
counts (reference of ``hw/inference.py``). Re-exported by :mod:`sw.methods.forest.model`."""

import numpy as np

__all__ = ["predict_tree", "forest_votes", "forest_class_counts"]


def predict_tree(tree, codes):
    """Leaf reached by every row (``code[feature] <= threshold_code`` goes left).

    Parameters
    ----------
    tree : Tree
    codes : integer array, shape (n, n_features)

    Returns
    -------
    leaves : int64 array, shape (n,)
        Node index of the leaf; ``tree.majority_class[leaves]`` are the predictions.
    """
    codes = np.asarray(codes)
    row = np.arange(codes.shape[0])
    node = np.zeros(codes.shape[0], dtype=np.int64)
    for _ in range(int(tree.depth.max())):
        feature = tree.feature[node]
        internal = feature >= 0
        if not internal.any():
            break
        goes_left = codes[row, np.maximum(feature, 0)] <= tree.threshold_code[node]
        node = np.where(internal, np.where(goes_left, tree.left_child[node],
                                           tree.right_child[node]), node)
    return node


def forest_votes(trees, codes, n_classes):
    """Votes per class: how many trees' leaves have that majority class, shape (n, C)."""
    votes = np.zeros((np.asarray(codes).shape[0], n_classes), dtype=np.int64)
    rows = np.arange(votes.shape[0])
    for tree in trees:
        np.add.at(votes, (rows, tree.majority_class[predict_tree(tree, codes)]), 1)
    return votes


def forest_class_counts(trees, codes, n_classes):
    """Sum over trees of the reached leaves' weighted class counts, shape (n, C)."""
    total = np.zeros((np.asarray(codes).shape[0], n_classes), dtype=np.int64)
    for tree in trees:
        total += tree.class_counts[predict_tree(tree, codes)]
    return total
