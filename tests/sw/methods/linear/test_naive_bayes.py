"""GaussianNaiveBayesClassifier (seed 004): equal to scikit-learn's GaussianNB with the
matching var_smoothing, to a brute-force product of normal densities, scikit-learn
conventions, bad input."""

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.datasets import load_digits, load_iris
from sklearn.naive_bayes import GaussianNB
from sklearn.utils.estimator_checks import check_estimator

from sw.methods.linear.naive_bayes import (GaussianNaiveBayesClassifier,
                                           matching_var_smoothing)


def _mixed_data(seed=0):
    """Four classes of different sizes, a constant feature and a feature constant within
    one class (the cases the variance offset exists for)."""
    rng = np.random.default_rng(seed)
    counts = (40, 25, 60, 15)
    X = np.vstack([rng.normal(k, 1.0 + 0.3 * k, size=(n, 5)) for k, n in enumerate(counts)])
    X[:, 3] = 2.5
    X[:40, 4] = -1.0
    y = np.repeat(np.array(["w", "x", "y", "z"]), counts)
    return X, y


def _datasets():
    digits = load_digits(return_X_y=True)
    return {"mixed": _mixed_data(), "iris": load_iris(return_X_y=True),
            "digits/16": (digits[0] / 16.0, digits[1])}


@pytest.mark.parametrize("name", ["mixed", "iris", "digits/16"])
@pytest.mark.parametrize("offset", [0.01, 0.3])
def test_equals_gaussian_nb_with_matching_var_smoothing(name, offset):
    X, y = _datasets()[name]
    ours = GaussianNaiveBayesClassifier(var_offset=offset).fit(X, y)
    theirs = GaussianNB(var_smoothing=matching_var_smoothing(X, offset)).fit(X, y)
    assert np.array_equal(ours.classes_, theirs.classes_)
    assert np.allclose(ours.theta_, theirs.theta_, rtol=1e-12, atol=1e-12)
    assert np.allclose(ours.var_, theirs.var_, rtol=1e-12, atol=1e-14)
    assert np.allclose(ours.class_prior_, theirs.class_prior_, rtol=1e-14)
    rng = np.random.default_rng(1)
    probes = np.vstack([X, X[rng.integers(0, len(X), 50)] + rng.normal(0, 0.5, (50, X.shape[1]))])
    assert np.allclose(ours.predict_log_proba(probes), theirs.predict_log_proba(probes),
                       rtol=1e-9, atol=1e-9)
    assert np.allclose(ours.predict_proba(probes), theirs.predict_proba(probes),
                       rtol=1e-9, atol=1e-12)
    assert np.array_equal(ours.predict(probes), theirs.predict(probes))
    assert np.allclose(ours.predict_joint_log_proba(probes),
                       theirs.predict_joint_log_proba(probes), rtol=1e-10)


def test_equals_brute_force_product_of_normal_densities():
    """The seed's rule written out: prior times the product over features of the normal
    density with the class's mean and population variance + 0.01, per row and class."""
    X, y = _mixed_data(3)
    probes = X[::7] + 0.1
    model = GaussianNaiveBayesClassifier().fit(X, y)
    expected = np.empty((len(probes), 4))
    for k, label in enumerate(np.unique(y)):
        rows = X[y == label]
        prior = len(rows) / len(X)
        for r, x in enumerate(probes):
            log_density = 0.0
            for i in range(X.shape[1]):
                mean = sum(rows[:, i]) / len(rows)
                variance = sum((v - mean) ** 2 for v in rows[:, i]) / len(rows) + 0.01
                log_density += norm.logpdf(x[i], loc=mean, scale=np.sqrt(variance))
            expected[r, k] = np.log(prior) + log_density
    assert np.allclose(model.predict_joint_log_proba(probes), expected, rtol=1e-10)
    assert np.array_equal(model.predict(probes), np.unique(y)[np.argmax(expected, axis=1)])
    proba = model.predict_proba(probes)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert np.allclose(proba, np.exp(expected) / np.exp(expected).sum(axis=1, keepdims=True))


def test_offset_floors_constant_features():
    X, y = _mixed_data()
    model = GaussianNaiveBayesClassifier(var_offset=0.25).fit(X, y)
    assert np.all(model.var_[:, 3] == 0.25)          # constant everywhere
    assert model.var_[0, 4] == 0.25 and np.all(model.var_[1:, 4] > 0.25)


def test_matching_var_smoothing_refuses_constant_data():
    with pytest.raises(ValueError, match="every feature of X is constant"):
        matching_var_smoothing(np.ones((4, 3)))


def test_scikit_learn_estimator_checks():
    results = check_estimator(GaussianNaiveBayesClassifier(), on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert failed == []


@pytest.mark.parametrize("X,y,message", [
    ([[0.0, np.nan], [1.0, 2.0]], [0, 1], "NaN"),
    ([[0.0, np.inf], [1.0, 2.0]], [0, 1], "infinity"),
    ([0.0, 1.0, 2.0], [0, 1, 0], "2D array"),
    ([[0.0], [1.0], [2.0]], [0, 1], "inconsistent numbers of samples"),
    ([[0.0], [1.0]], [3, 3], r"y has 1 class \(3\)"),
    ([[0.0], [1.0]], [0.5, 1.5], "Unknown label type"),
    (np.zeros((0, 2)), [], "0 sample"),
])
def test_bad_input_raises_clear_errors(X, y, message):
    with pytest.raises(ValueError, match=message):
        GaussianNaiveBayesClassifier().fit(X, y)


@pytest.mark.parametrize("offset", [0, -0.01, np.inf, np.nan, True, "0.01", None])
def test_bad_var_offset(offset):
    with pytest.raises(ValueError, match=r"var_offset=.* must be a finite number > 0"):
        GaussianNaiveBayesClassifier(var_offset=offset).fit([[0.0], [1.0]], [0, 1])


def test_predict_checks_feature_count_and_finiteness():
    X, y = load_iris(return_X_y=True)
    model = GaussianNaiveBayesClassifier().fit(X, y)
    with pytest.raises(ValueError, match="4 features"):
        model.predict(X[:, :3])
    with pytest.raises(ValueError, match="NaN"):
        model.predict_proba(np.where(X == X[0, 0], np.nan, X))
