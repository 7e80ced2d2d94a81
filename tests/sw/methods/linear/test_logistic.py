"""GradientLogisticClassifier (seed 004's "perceptron"): the gradient against finite
differences, the training loop against a plain per-row loop, a converged fit against
scikit-learn's unpenalised one-vs-rest LogisticRegression, conventions, bad input."""

import math

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from sw.methods.linear.logistic import (GradientLogisticClassifier, cross_entropy,
                                        cross_entropy_gradient)


def _overlapping_blobs(seed=0, n=240, classes=3, features=3):
    """Classes that overlap (no separating hyperplane, so the unpenalised fit exists)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    centres = rng.normal(0, 1.0, size=(classes, features))
    return centres[y] + rng.normal(0, 1.5, size=(n, features)), y


def test_gradient_equals_finite_differences():
    rng = np.random.default_rng(0)
    inputs = np.hstack([np.ones((30, 1)), rng.normal(size=(30, 4))])
    targets = np.eye(3)[rng.integers(0, 3, 30)]
    weights = rng.normal(0, 0.7, size=(5, 3))
    step = 1e-6
    numeric = np.empty_like(weights)
    for index in np.ndindex(*weights.shape):
        up, down = weights.copy(), weights.copy()
        up[index] += step
        down[index] -= step
        numeric[index] = (cross_entropy(up, inputs, targets)
                          - cross_entropy(down, inputs, targets)) / (2 * step)
    assert np.allclose(cross_entropy_gradient(weights, inputs, targets), numeric,
                       rtol=1e-6, atol=1e-6)


def test_cross_entropy_is_finite_for_saturated_units():
    inputs = np.array([[1.0, 800.0], [1.0, -800.0]])
    targets = np.array([[0.0, 1.0], [1.0, 0.0]])
    weights = np.array([[0.0, 0.0], [1.0, 1.0]])
    # unit 0: z = +800 with target 0 (loss 800), z = -800 with target 1 (loss 800)
    expected = 1600.0 + 2 * math.log1p(math.exp(-800.0))
    assert cross_entropy(weights, inputs, targets) == pytest.approx(expected)


def _plain_loop(X, y, classes, alpha, iterations, mean, intercept):
    """The seed's training loop, one row and one unit at a time in plain Python."""
    rows = [([1.0] if intercept else []) + list(row) for row in X]
    targets = [[1.0 if label == c else 0.0 for c in classes] for label in y]
    weights = [[0.0] * len(classes) for _ in rows[0]]
    for _ in range(iterations):
        errors = [[t - 1.0 / (1.0 + math.exp(-sum(x * w[k] for x, w in zip(row, weights))))
                   for k, t in enumerate(target)] for row, target in zip(rows, targets)]
        scale = alpha / len(rows) if mean else alpha
        weights = [[w[k] + scale * sum(row[i] * error[k] for row, error in zip(rows, errors))
                    for k in range(len(classes))] for i, w in enumerate(weights)]
    return np.array(weights)


@pytest.mark.parametrize("gradient,intercept", [("sum", True), ("mean", True), ("sum", False)])
def test_training_equals_the_plain_loop(gradient, intercept):
    X, y = _overlapping_blobs(1, n=25, classes=3, features=2)
    weights = _plain_loop(X, y, [0, 1, 2], 0.05, 4, gradient == "mean", intercept)
    model = GradientLogisticClassifier(0.05, max_iter=4, tol=0.0, gradient=gradient,
                                       fit_intercept=intercept).fit(X, y)
    assert model.n_iter_ == 4 and len(model.errors_) == 4
    expected_coef = weights[1:].T if intercept else weights.T
    assert np.allclose(model.coef_, expected_coef, rtol=1e-12, atol=1e-12)
    assert np.allclose(model.intercept_, weights[0] if intercept else 0.0, rtol=1e-12)


def test_first_step_is_minus_the_gradient():
    X, y = _overlapping_blobs(2, n=40)
    model = GradientLogisticClassifier(0.01, max_iter=1, tol=0.0).fit(X, y)
    inputs = np.hstack([np.ones((40, 1)), X])
    step = -0.01 * cross_entropy_gradient(np.zeros((4, 3)), inputs, np.eye(3)[y])
    assert np.allclose(np.vstack([model.intercept_, model.coef_.T]), step, rtol=1e-13)
    assert model.errors_[0] == pytest.approx(0.5)      # sigmoid(0) against one-hot targets


def test_converged_fit_equals_unpenalised_one_vs_rest_logistic_regression():
    """Gradient descent on the mean loss (step below 1 / Lipschitz constant) to the optimum,
    against lbfgs on each class-vs-rest problem without penalty (C = inf)."""
    X, y = _overlapping_blobs(3, n=300, classes=3, features=3)
    X = StandardScaler().fit_transform(X)
    ours = GradientLogisticClassifier(3.0, max_iter=4000, tol=0.0, gradient="mean").fit(X, y)
    theirs = OneVsRestClassifier(LogisticRegression(C=np.inf, tol=1e-12, max_iter=10000)).fit(X, y)
    coef = np.vstack([unit.coef_ for unit in theirs.estimators_])
    intercept = np.concatenate([unit.intercept_ for unit in theirs.estimators_])
    assert np.allclose(ours.coef_, coef, rtol=1e-6, atol=1e-6)
    assert np.allclose(ours.intercept_, intercept, rtol=1e-6, atol=1e-6)
    assert np.allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-7)
    assert np.array_equal(ours.predict(X), theirs.predict(X))


def test_tol_stops_before_the_update():
    X, y = _overlapping_blobs(4, n=60)
    untouched = GradientLogisticClassifier(tol=0.6).fit(X, y)     # mean |T - 1/2| = 1/2 < 0.6
    assert untouched.n_iter_ == 0 and not untouched.coef_.any() and len(untouched.errors_) == 1
    model = GradientLogisticClassifier(0.01, tol=0.3, max_iter=500).fit(X, y)
    assert 0 < model.n_iter_ < 500 and len(model.errors_) == model.n_iter_ + 1
    assert model.errors_[-1] < 0.3 and np.all(model.errors_[:-1] >= 0.3)
    again = GradientLogisticClassifier(0.01, tol=0.0, max_iter=model.n_iter_).fit(X, y)
    assert np.array_equal(again.coef_, model.coef_)


def test_saturated_units_predict_and_give_probabilities():
    """The seed's summed steps drive |z| into the hundreds; predictions stay the argmax of z
    and the probabilities stay finite."""
    X, y = load_iris(return_X_y=True)
    model = GradientLogisticClassifier(max_iter=300, tol=0.0).fit(X * 100, y)
    z = model.decision_values(X * 100)
    assert np.abs(z).max() > 700
    proba = model.predict_proba(X * 100)
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(model.predict(X * 100), model.classes_[np.argmax(z, axis=1)])
    activations = model.predict_activations(X * 100)
    assert np.all((activations >= 0) & (activations <= 1))


def test_two_classes_give_two_units():
    X, y = _overlapping_blobs(5, n=50, classes=2)
    model = GradientLogisticClassifier(max_iter=20).fit(X, np.array(["no", "yes"])[y])
    assert model.coef_.shape == (2, 3) and model.intercept_.shape == (2,)
    assert set(model.predict(X)) <= {"no", "yes"}


def test_scikit_learn_estimator_checks():
    results = check_estimator(GradientLogisticClassifier(), on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert failed == []


@pytest.mark.parametrize("X,y,message", [
    ([[0.0, np.nan], [1.0, 2.0]], [0, 1], "NaN"),
    ([[0.0, -np.inf], [1.0, 2.0]], [0, 1], "infinity"),
    ([0.0, 1.0, 2.0], [0, 1, 0], "2D array"),
    ([[0.0], [1.0], [2.0]], [0, 1], "inconsistent numbers of samples"),
    ([[0.0], [1.0]], ["a", "a"], r"y has 1 class \('a'\)"),
    ([[0.0], [1.0]], [0.5, 1.5], "Unknown label type"),
    (np.zeros((0, 2)), [], "0 sample"),
])
def test_bad_input_raises_clear_errors(X, y, message):
    with pytest.raises(ValueError, match=message):
        GradientLogisticClassifier(max_iter=3).fit(X, y)


@pytest.mark.parametrize("params,message", [
    ({"learning_rate": 0}, r"learning_rate=0 must be a finite number > 0"),
    ({"learning_rate": np.inf}, r"learning_rate=inf must be a finite number > 0"),
    ({"max_iter": 0}, r"max_iter=0 must be an integer >= 1"),
    ({"max_iter": 10.0}, r"max_iter=10.0 must be an integer >= 1"),
    ({"tol": -0.1}, r"tol=-0.1 must be a finite number >= 0"),
    ({"gradient": "median"}, r"gradient='median' must be 'sum' or 'mean'"),
    ({"fit_intercept": 1}, r"fit_intercept=1 must be True or False"),
])
def test_bad_parameters(params, message):
    with pytest.raises(ValueError, match=message):
        GradientLogisticClassifier(**params).fit([[0.0], [1.0]], [0, 1])


def test_predict_checks_feature_count():
    X, y = load_iris(return_X_y=True)
    model = GradientLogisticClassifier(max_iter=5).fit(X, y)
    with pytest.raises(ValueError, match="4 features"):
        model.predict(X[:, :2])
