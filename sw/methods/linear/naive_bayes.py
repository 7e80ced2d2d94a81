"""Gaussian naive Bayes as seed 004 gives it (``shared/seeds/004_dd4b449b4f4cd8f1.txt``
L38-91): per class and feature the mean and the population variance of the training rows,
a constant added to every variance ("+ 0.01 ... to avoid dividing by zero", L72), the class
prior as the class's share of the rows, and the class of largest

    log prior_k + sum_i [ -(x_i - mu_ki)^2 / (2 var_ki) - log sqrt(2 pi var_ki) ]

(the log domain "for numerical stability", L60, L82-85).

scikit-learn's ``GaussianNB`` adds ``var_smoothing * max_i var(X[:, i])`` (the largest
variance of a feature over all training rows) to every variance instead of a constant;
``GaussianNB(var_smoothing=var_offset / np.var(X, axis=0).max())`` is this model
(:func:`matching_var_smoothing`).
"""

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from sw.methods.params import Real, classification_data, validate_parameters

__all__ = ["GaussianNaiveBayesClassifier", "matching_var_smoothing", "SEED_VAR_OFFSET"]

#: The seed's variance offset (seed 004, L72: ``sig2 + 0.01``).
SEED_VAR_OFFSET = 0.01


def matching_var_smoothing(X, var_offset=SEED_VAR_OFFSET):
    """The ``var_smoothing`` of scikit-learn's ``GaussianNB`` that adds ``var_offset`` to
    every variance when fitted on ``X``: ``var_offset / max_i var(X[:, i])``."""
    largest = float(np.var(np.asarray(X, dtype=np.float64), axis=0).max())
    if largest <= 0.0:
        raise ValueError("every feature of X is constant: no var_smoothing of GaussianNB "
                         "adds a nonzero constant to the variances")
    return var_offset / largest


class GaussianNaiveBayesClassifier(ClassifierMixin, BaseEstimator):
    """Gaussian naive Bayes with a constant added to every per-class variance (seed 004).

    Parameters
    ----------
    var_offset : float, default 0.01
        Added to each class's population variance of each feature before use: the seed's
        "+ 0.01" (a floor that keeps constant features, e.g. MNIST's border pixels, from
        dividing by zero). It is in the units of the squared features, so it depends on
        their scale (the seed's pixels are in [0, 1]). Must be > 0.

    Attributes
    ----------
    classes_ : array of shape (n_classes,)
    class_count_ : array of shape (n_classes,)
        Training rows per class.
    class_prior_ : array of shape (n_classes,)
        ``class_count_ / n_samples`` (the seed's ``priors``).
    theta_ : array of shape (n_classes, n_features)
        Per-class feature means (the seed's ``mu``).
    var_ : array of shape (n_classes, n_features)
        Per-class population variances plus ``var_offset`` (the seed's ``Sig2``), as
        scikit-learn's ``GaussianNB.var_`` holds its smoothed variances.
    n_features_in_ : int

    Not supported: ``sample_weight``, ``partial_fit`` and given priors (the seed has none).
    """

    _parameter_constraints = {"var_offset": [Real(0, np.inf, low_open=True)]}

    def __init__(self, var_offset=SEED_VAR_OFFSET):
        self.var_offset = var_offset

    def fit(self, X, y):
        """Class means, variances (+ ``var_offset``) and priors; returns self."""
        validate_parameters(self)
        X, labels = classification_data(self, X, y)
        n_classes = len(self.classes_)
        self.class_count_ = np.bincount(labels, minlength=n_classes).astype(np.float64)
        self.class_prior_ = self.class_count_ / X.shape[0]
        self.theta_ = np.empty((n_classes, X.shape[1]))
        self.var_ = np.empty((n_classes, X.shape[1]))
        for k in range(n_classes):
            rows = X[labels == k]
            self.theta_[k] = rows.mean(axis=0)
            self.var_[k] = rows.var(axis=0) + self.var_offset   # population variance (ddof 0)
        return self

    def _joint_log_likelihood(self, X):
        """log prior_k + sum_i log N(x_i; mu_ki, var_ki), shape (n_samples, n_classes)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64, ensure_all_finite=True)
        # One class at a time (the seed's loop): no (n, classes, features) temporary and
        # no cancellation from expanding the square.
        quadratic = np.column_stack([np.sum((X - mean) ** 2 / var, axis=1)
                                     for mean, var in zip(self.theta_, self.var_)])
        normaliser = 0.5 * np.sum(np.log(2.0 * np.pi * self.var_), axis=1)
        return np.log(self.class_prior_) - normaliser - 0.5 * quadratic

    def predict_joint_log_proba(self, X):
        """The seed's ``log_probs``: log p(x, class), shape (n_samples, n_classes)."""
        return self._joint_log_likelihood(X)

    def predict_log_proba(self, X):
        """log p(class | x), normalised over the classes."""
        joint = self._joint_log_likelihood(X)
        return joint - logsumexp(joint, axis=1, keepdims=True)

    def predict_proba(self, X):
        """p(class | x); rows sum to 1."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """The class of largest log p(x, class) (ties: the first class)."""
        joint = self._joint_log_likelihood(X)
        return self.classes_[np.argmax(joint, axis=1)]
