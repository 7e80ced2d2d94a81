"""The "perceptron" of seed 004 (``shared/seeds/004_dd4b449b4f4cd8f1.txt`` L93-152): K
sigmoid units for K classes, Y = sigmoid(X W), trained on one-hot targets T by full-batch
steps

    W <- W + alpha * X^T (T - Y)                      (the seed's code, L137-152)

until mean |T - Y| < maxerr (L146-148) or ``maxiter`` steps (1,000 in its results table,
L165-166); the class is the unit of largest activation (L99). X^T (Y - T) is the gradient of the
summed cross-entropy of K independent logistic regressions, so the "perceptron" is
one-vs-rest logistic regression by full-batch gradient descent on the *summed* (not mean)
loss (:func:`cross_entropy`, :func:`cross_entropy_gradient`). The displayed equation (L131)
has the opposite sign, Y - T; the code's sign, used here, is the one that descends.

What the post leaves open, and the choices made here (parameters, so each can be changed):
the learning rate ``alpha`` (0.1), the stopping error ``maxerr`` (0.01), the initial
weights (zero), a bias input (a column of ones) -- these four as in ArrayFire's own
``examples/machine_learning/perceptron.cpp``, recorded in
``shared/notes/seeds_001_003_004_digest.md`` section 3.5, not in the post -- and the target
coding (one-hot, as "K perceptrons" with outputs in [0, 1] imply).
"""

import numpy as np
from scipy.special import expit, log_expit, logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from sw.methods.params import (Boolean, Integer, Options, Real,
                              classification_data, validate_parameters)

__all__ = ["GradientLogisticClassifier", "cross_entropy", "cross_entropy_gradient",
           "GRADIENTS"]

#: How the step is scaled: "sum" over the training rows (the seed's X^T (T - Y)) or
#: "mean" (divided by the number of rows, the usual gradient of the mean loss).
GRADIENTS = ("sum", "mean")


def cross_entropy(weights, inputs, targets):
    """Summed cross-entropy of the K sigmoid units, -sum[T log Y + (1 - T) log(1 - Y)]
    with Y = sigmoid(inputs @ weights): ``weights`` (n_inputs, K), ``inputs``
    (n_samples, n_inputs), ``targets`` (n_samples, K) in [0, 1]. Computed without
    overflow for any activation."""
    z = inputs @ weights
    return float(-np.sum(targets * log_expit(z) + (1.0 - targets) * log_expit(-z)))


def cross_entropy_gradient(weights, inputs, targets):
    """Gradient of :func:`cross_entropy` with respect to ``weights``: X^T (Y - T)."""
    return inputs.T @ (expit(inputs @ weights) - targets)


class GradientLogisticClassifier(ClassifierMixin, BaseEstimator):
    """One-vs-rest logistic regression by full-batch gradient descent: seed 004's
    "perceptron".

    Parameters
    ----------
    learning_rate : float, default 0.1
        The step ``alpha`` (not given in the post; ArrayFire's example uses 0.1).
    max_iter : int, default 1000
        Largest number of weight updates (the seed's "1000 iter").
    tol : float, default 0.01
        Training stops before an update when the mean absolute error mean |T - Y| over
        the rows and units is below ``tol`` (the seed's ``maxerr``; not given in the post,
        ArrayFire's example uses 0.01); 0 runs all ``max_iter`` updates.
    gradient : {"sum", "mean"}, default "sum"
        "sum": the step is ``learning_rate * X^T (T - Y)`` as in the seed, so its size
        grows with the number of training rows; "mean": divided by the number of rows.
    fit_intercept : bool, default True
        Prepend a constant input of 1 (a bias per unit), as ArrayFire's example does.

    Attributes
    ----------
    classes_ : array of shape (n_classes,)
    coef_ : array of shape (n_classes, n_features)
        The weights of unit k (class ``classes_[k]``) in row k; two classes give two
        units, as the seed's one unit per class.
    intercept_ : array of shape (n_classes,)
        The bias weights (zeros when ``fit_intercept`` is False).
    n_iter_ : int
        Weight updates made.
    errors_ : array
        mean |T - Y| on the training rows before each update, and the value that
        stopped training if ``tol`` did.
    n_features_in_ : int

    Not supported: ``sample_weight``, ``warm_start`` and regularisation (the seed has
    none).
    """

    _parameter_constraints = {
        "learning_rate": [Real(0, np.inf, low_open=True)],
        "max_iter": [Integer(1)],
        "tol": [Real(0, np.inf)],
        "gradient": [Options(*GRADIENTS)],
        "fit_intercept": [Boolean()],
    }

    def __init__(self, learning_rate=0.1, *, max_iter=1000, tol=0.01, gradient="sum",
                 fit_intercept=True):
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.tol = tol
        self.gradient = gradient
        self.fit_intercept = fit_intercept

    def _inputs(self, X):
        """X with a leading column of ones when there is an intercept."""
        if not self.fit_intercept:
            return X
        return np.hstack([np.ones((X.shape[0], 1)), X])

    def fit(self, X, y):
        """Train the K units by the seed's loop; returns self."""
        validate_parameters(self)
        X, labels = classification_data(self, X, y)
        inputs = self._inputs(X)
        targets = np.zeros((X.shape[0], len(self.classes_)))
        targets[np.arange(X.shape[0]), labels] = 1.0
        step = self.learning_rate / (X.shape[0] if self.gradient == "mean" else 1.0)
        weights = np.zeros((inputs.shape[1], len(self.classes_)))
        errors = []
        for _ in range(self.max_iter):
            error = targets - expit(inputs @ weights)
            errors.append(float(np.mean(np.abs(error))))
            if errors[-1] < self.tol:
                break
            weights += step * (inputs.T @ error)
        self.n_iter_ = len(errors) - (errors[-1] < self.tol)
        self.errors_ = np.array(errors)
        self.coef_ = weights[int(self.fit_intercept):].T.copy()
        self.intercept_ = weights[0].copy() if self.fit_intercept else np.zeros(len(self.classes_))
        return self

    def decision_values(self, X):
        """The units' weighted inputs z = x w_k + b_k, shape (n_samples, n_classes)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64, ensure_all_finite=True)
        return X @ self.coef_.T + self.intercept_

    def predict_activations(self, X):
        """The seed's ``predict``: sigmoid(z) of every unit, each in [0, 1]."""
        return expit(self.decision_values(X))

    def predict_proba(self, X):
        """The activations normalised to sum to 1 over the classes (as scikit-learn's
        one-vs-rest scheme), computed in the log domain so that saturated units do not
        divide by zero."""
        log_activation = log_expit(self.decision_values(X))
        return np.exp(log_activation - logsumexp(log_activation, axis=1, keepdims=True))

    def predict(self, X):
        """The class of the unit with the largest activation (largest z: the sigmoid is
        increasing, and z does not saturate as sigmoid(z) does in floating point)."""
        z = self.decision_values(X)
        return self.classes_[np.argmax(z, axis=1)]
