"""Datasets prepared as in thesis section 3.7.1, and the kNN accuracy every method is
scored by."""

import dataclasses

import numpy as np
from sklearn.decomposition import PCA
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier

from sw.data import datasets
from sw.experiments.metric_table.thesis import DATASETS

__all__ = ["Split", "prepare"]


@dataclasses.dataclass
class Split:
    """Train / validation / test arrays of one prepared dataset."""
    name: str
    X_train: np.ndarray
    y_train: np.ndarray
    X_validation: np.ndarray
    y_validation: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    projection: object = None   # fitted PCA (eigenfaces) when the data were projected
    image_shape: tuple = None


def _three_way(X, y, seed):
    """Stratified 70 / 15 / 15 split."""
    X_train, X_rest, y_train, y_rest = train_test_split(
        X, y, train_size=0.70, stratify=y, random_state=seed)
    X_validation, X_test, y_validation, y_test = train_test_split(
        X_rest, y_rest, test_size=0.5, stratify=y_rest, random_state=seed)
    return X_train, y_train, X_validation, y_validation, X_test, y_test


def prepare(name, seed=0, loader=None):
    """Load and preprocess one dataset as in thesis section 3.7.1.

    * Iris: stratified 70/15/15 split, raw features.
    * ORL faces: images 1-6 of every subject train, 7-8 validation, 9-10 test; projected
      on the 15 leading eigenfaces (PCA fitted on the training faces).  The thesis only
      says "the rest split validation/test": for ``seed != 0`` each subject's images 7-10
      are shuffled (by ``seed``) before two go to validation and two to test.
    * MNIST 3000: stratified 70/15/15 split, projected on 30 principal components
      (PCA fitted on the training split).
    """
    if loader is None:
        loader = datasets.load
    data = loader(name)
    X, y = np.asarray(data.X, dtype=float), np.asarray(data.y)
    if name == "iris":
        return Split(name, *_three_way(X, y, seed))
    if name == "mnist_3000":
        X_train, y_train, X_validation, y_validation, X_test, y_test = _three_way(X, y, seed)
        pca = PCA(n_components=30, random_state=seed).fit(X_train)
        return Split(name, pca.transform(X_train), y_train, pca.transform(X_validation),
                     y_validation, pca.transform(X_test), y_test, pca, (28, 28))
    if name == "orl_faces":
        # File order: row r is subject r // 10 + 1, image r % 10 + 1.
        image = np.arange(len(y)) % 10 + 1
        if seed != 0:
            shuffle = np.random.default_rng(seed)
            for start in range(0, len(y), 10):
                image[start + 6:start + 10] = shuffle.permutation(image[start + 6:start + 10])
        train, validation, test = image <= 6, (image == 7) | (image == 8), image >= 9
        pca = PCA(n_components=15, random_state=seed).fit(X[train])
        return Split(name, pca.transform(X[train]), y[train], pca.transform(X[validation]),
                     y[validation], pca.transform(X[test]), y[test], pca, (112, 92))
    raise ValueError(f"dataset {name!r} is not part of Table 3.1; choose from {DATASETS}")


def _knn_accuracy(train_features, y_train, features, y, n_neighbors):
    classifier = KNeighborsClassifier(n_neighbors=n_neighbors).fit(train_features, y_train)
    return float(classifier.score(features, y))
