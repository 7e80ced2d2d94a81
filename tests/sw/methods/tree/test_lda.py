"""LDAFeatures (seed 001, section 3.2.1) against the seed's steps computed independently
(a general eigensolver on Sigma^{-1} Sigma_B) and against scikit-learn's LDA subspace."""

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_wine
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from sw.methods.tree.lda import LDAFeatures


def _seed_steps(X, y, shrinkage=0.0):
    """Steps 1-6 of the seed literally: unbiased class covariances, Sigma_W, Sigma,
    Sigma_B, the eigenvectors of inv(Sigma) Sigma_B by a general (non-symmetric) solver,
    sorted by eigenvalue magnitude; the c - 1 leading ones, unit length."""
    classes = np.unique(y)
    n, d = X.shape
    mean = X.mean(axis=0)
    sigma_w = np.zeros((d, d))
    sigma_b = np.zeros((d, d))
    for c in classes:
        members = X[y == c]
        sigma_w += (len(members) - 1) * np.cov(members, rowvar=False, ddof=1)
        offset = (members.mean(axis=0) - mean)[:, None]
        sigma_b += len(members) / n * offset @ offset.T
    sigma = sigma_w / n
    sigma = (1 - shrinkage) * sigma + shrinkage * np.trace(sigma) / d * np.eye(d)
    values, vectors = np.linalg.eig(np.linalg.inv(sigma) @ sigma_b)
    order = np.argsort(-np.abs(values))[:len(classes) - 1]
    vectors = np.real(vectors[:, order])
    return np.real(values[order]), vectors / np.linalg.norm(vectors, axis=0)


def _same_directions(a, b, tolerance):
    """Columns of a and b are the same lines (equal up to sign)."""
    a = a / np.linalg.norm(a, axis=0)
    b = b / np.linalg.norm(b, axis=0)
    return np.allclose(np.abs(np.sum(a * b, axis=0)), 1.0, atol=tolerance)


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def test_matches_the_seeds_steps_on_full_rank_data(wine):
    X, y = wine
    features = LDAFeatures(shrinkage=0.0).fit(X, y)
    values, vectors = _seed_steps(X, y)
    assert features.n_components_ == 2                    # c - 1
    assert np.allclose(features.eigenvalues_, values, rtol=1e-9)
    assert _same_directions(features.scalings_, vectors, 1e-9)
    assert np.allclose(np.linalg.norm(features.scalings_, axis=0), 1.0)
    assert np.allclose(features.transform(X), X @ features.scalings_)


def test_matches_scikit_learns_lda_subspace(wine):
    """scikit-learn's eigen solver uses the prior-weighted class covariances (Sigma_W / N)
    and the same between-class matrix; its leading c - 1 scalings are our directions."""
    X, y = wine
    ours = LDAFeatures(shrinkage=0.0).fit(X, y)
    theirs = LinearDiscriminantAnalysis(solver="eigen").fit(X, y)
    assert _same_directions(ours.scalings_, theirs.scalings_[:, :2], 1e-9)
    assert np.allclose(ours.eigenvalues_ / theirs.explained_variance_ratio_[:2],
                       np.sum(ours.eigenvalues_) / np.sum(theirs.explained_variance_ratio_[:2]))
    svd = LinearDiscriminantAnalysis(solver="svd").fit(X, y)   # another algorithm: same plane
    projector = lambda basis: basis @ np.linalg.pinv(basis)
    ours_basis, svd_basis = X @ ours.scalings_, X @ svd.scalings_[:, :2]
    assert np.allclose(projector(ours_basis), projector(svd_basis), atol=1e-8)


@pytest.mark.parametrize("shrinkage", [1e-3, 0.1, 1.0])
def test_shrinkage_on_singular_pixels(shrinkage):
    """Digits have always-zero pixels, so Sigma is singular: the seed's inverse needs the
    shrinkage, and with it the result is the seed's steps on the shrunk Sigma."""
    X, y = load_digits(return_X_y=True)
    X, y = X[:600], y[:600]
    with pytest.raises(ValueError, match="singular.*shrinkage > 0"):
        LDAFeatures(shrinkage=0.0).fit(X, y)
    features = LDAFeatures(shrinkage=shrinkage).fit(X, y)
    values, vectors = _seed_steps(X, y, shrinkage)
    assert features.scalings_.shape == (64, 9)
    assert np.allclose(features.eigenvalues_, values, rtol=1e-7)
    assert _same_directions(features.scalings_, vectors, 1e-6)


def test_n_components_and_signs(wine):
    X, y = wine
    one = LDAFeatures(1, shrinkage=0.0).fit(X, y)
    two = LDAFeatures(shrinkage=0.0).fit(X, y)
    assert np.array_equal(one.scalings_[:, 0], two.scalings_[:, 0])
    largest = two.scalings_[np.argmax(np.abs(two.scalings_), axis=0), [0, 1]]
    assert np.all(largest > 0)
    assert two.eigenvalues_[0] >= two.eigenvalues_[1] > 0


def test_scikit_learn_estimator_checks():
    results = check_estimator(LDAFeatures(), on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert failed == []


@pytest.mark.parametrize("params,X,y,message", [
    ({}, [[0.0, np.nan], [1.0, 2.0]], [0, 1], "NaN"),
    ({}, [[0.0, np.inf], [1.0, 2.0]], [0, 1], "infinity"),
    ({}, [[0.0, 1.0], [1.0, 2.0]], [1, 1], "1 class"),
    ({}, [[0.0], [1.0], [2.0]], [0, 1], "inconsistent numbers of samples"),
    ({"n_components": 3}, [[0.0, 1], [1, 2], [2, 0], [3, 3]], [0, 1, 2, 0],
     r"n_components=3 is more than min\(n_classes - 1, n_features\) = 2"),
    ({"n_components": 0}, [[0.0], [1.0]], [0, 1], "n_components=0 must be an integer >= 1"),
    ({"shrinkage": 1.5}, [[0.0], [1.0]], [0, 1], r"shrinkage=1.5 must be a number in \[0, 1\]"),
    ({"shrinkage": -0.1}, [[0.0], [1.0]], [0, 1], r"shrinkage=-0.1 must be a number in \[0, 1\]"),
])
def test_bad_input(params, X, y, message):
    with pytest.raises(ValueError, match=message):
        LDAFeatures(**params).fit(X, y)


def test_transform_checks_the_feature_count(wine):
    X, y = wine
    features = LDAFeatures().fit(X, y)
    with pytest.raises(ValueError, match="12 features, but LDAFeatures is expecting 13"):
        features.transform(X[:, :12])
