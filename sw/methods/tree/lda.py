"""Seed 001's LDA feature generation (section 3.2.1, steps 1-7, seed lines 278-284).

With N training samples, N_i of class i, class means mu_i and overall mean mu:

1. within-class scatter Sigma_W = sum_i sum_{x in D_i} (x - mu_i)(x - mu_i)^T (the seed
   writes it as sum_i (N_i - 1) Sigma_i with Sigma_i the unbiased class covariance);
2. average within-class covariance Sigma = Sigma_W / N;
3. between-class scatter Sigma_B = sum_i (N_i / N)(mu_i - mu)(mu_i - mu)^T;
4-6. the eigenvectors of Sigma^{-1} Sigma_B with the c - 1 largest eigenvalues;
7. the features are the projections x^T w of each sample on them.

**Regularisation the seed leaves open.** On raw MNIST pixels Sigma is singular (pixels
that are 0 in every training image), so Sigma^{-1} does not exist; the seed does not say
how its MATLAB code coped. Here Sigma is shrunk towards a multiple of the identity
before step 4, Sigma_a = (1 - a) Sigma + a (trace(Sigma) / d) I with a = ``shrinkage``
(default 1e-3, chosen before any MNIST run as a small value that makes Sigma_a
invertible; ``shrinkage=0`` is the seed's formula exactly). Step 4 is solved as the
equivalent symmetric-definite generalised problem Sigma_B w = lambda Sigma_a w.

Each direction w is scaled to unit Euclidean length (MATLAB's ``eig`` convention) and
signed so that its largest-magnitude entry is positive; a tree is unaffected by either
choice up to the order of equal values. The projection is not centred (step 7).
"""

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from sw.methods.params import Integer, Options, Real, classification_data, validate_parameters

__all__ = ["LDAFeatures", "scatter_matrices"]


def scatter_matrices(X, labels, n_classes):
    """(Sigma, Sigma_B) of steps 2 and 3 for class indices ``labels`` in 0 .. n_classes-1."""
    n, _ = X.shape
    counts = np.bincount(labels, minlength=n_classes)
    means = np.zeros((n_classes, X.shape[1]))
    np.add.at(means, labels, X)
    means /= counts[:, None]
    centred = X - means[labels]
    within = centred.T @ centred / n
    offsets = means - X.mean(axis=0)
    between = (offsets * (counts / n)[:, None]).T @ offsets
    return within, between


class LDAFeatures(TransformerMixin, BaseEstimator):
    """Seed 001's LDA features: the projections on the leading eigenvectors of
    Sigma^{-1} Sigma_B (see the module docstring for the formulas and the shrinkage).

    Parameters
    ----------
    n_components : int or None, default None
        Directions kept; None: c - 1 (9 for MNIST's 10 classes, the seed's choice). At
        most min(c - 1, n_features).
    shrinkage : float in [0, 1], default 1e-3
        a in Sigma_a = (1 - a) Sigma + a (trace(Sigma) / d) I; 0 is the seed's Sigma.

    Attributes
    ----------
    classes_ : array
    scalings_ : array (n_features, n_components_)
        The directions w, unit length, as columns; ``transform(X) = X @ scalings_``.
    eigenvalues_ : array (n_components_,)
        Their eigenvalues (between- over within-class variance), descending.
    n_components_, n_features_in_ : int
    """

    _parameter_constraints = {
        "n_components": [Integer(1), Options(None)],
        "shrinkage": [Real(0, 1)],
    }

    def __init__(self, n_components=None, *, shrinkage=1e-3):
        self.n_components = n_components
        self.shrinkage = shrinkage

    def fit(self, X, y):
        """Compute the directions from ``X`` and labels ``y``; returns self."""
        validate_parameters(self)
        X, labels = classification_data(self, X, y, learner="LDA")
        n_classes, n_features = len(self.classes_), X.shape[1]
        limit = min(n_classes - 1, n_features)
        if self.n_components is not None and self.n_components > limit:
            raise ValueError(f"n_components={self.n_components} is more than min(n_classes "
                             f"- 1, n_features) = {limit}")
        n_components = limit if self.n_components is None else self.n_components
        within, between = scatter_matrices(X, labels, n_classes)
        spread = np.trace(within) / n_features
        within = (1 - self.shrinkage) * within + self.shrinkage * spread * np.eye(n_features)
        try:
            values, vectors = scipy.linalg.eigh(between, within)
        except np.linalg.LinAlgError:
            raise ValueError(
                f"the within-class covariance is singular (shrinkage={self.shrinkage}, mean "
                f"within-class variance {spread:.3g}): set shrinkage > 0, or remove constant "
                f"and duplicated features") from None
        keep = np.argsort(-values, kind="stable")[:n_components]
        vectors = vectors[:, keep] / np.linalg.norm(vectors[:, keep], axis=0)
        largest = np.argmax(np.abs(vectors), axis=0)
        vectors *= np.sign(vectors[largest, np.arange(n_components)])
        self.scalings_, self.eigenvalues_ = vectors, values[keep]
        self.n_components_ = n_components
        return self

    def transform(self, X):
        """The projections ``X @ scalings_`` (n_samples, n_components_)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64, ensure_all_finite=True)
        return X @ self.scalings_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags
