"""HardwareForestClassifier: scikit-learn conventions, determinism, export, bad input."""

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.base import clone
from sklearn.utils.estimator_checks import check_estimator

from sw.methods.forest.estimator import HardwareForestClassifier
from sw.methods.forest.model import TrainingParameters, train_forest, trees_equal
from sw.methods.forest.quantize import RankQuantizer


@pytest.fixture(scope="module")
def wine():
    return load_wine(return_X_y=True)


def _random_inputs(X, count, seed):
    rng = np.random.default_rng(seed)
    spread = X.max(axis=0) - X.min(axis=0)
    return X.min(axis=0) - 0.2 * spread + rng.uniform(size=(count, X.shape[1])) * 1.4 * spread


def test_same_seed_same_forest(wine):
    X, y = wine
    first = HardwareForestClassifier(20, random_state=5).fit(X, y)
    second = HardwareForestClassifier(20, random_state=5).fit(X, y)
    other = HardwareForestClassifier(20, random_state=6).fit(X, y)
    assert all(trees_equal(a, b) for a, b in zip(first.trees_, second.trees_))
    assert not all(trees_equal(a, b) for a, b in zip(first.trees_, other.trees_))


def test_tree_order_and_parallelism_do_not_matter(wine):
    X, y = wine
    codes = RankQuantizer(16).fit_transform(X)
    params = TrainingParameters(n_classes=3, max_samples=len(y), features_per_split=3)
    in_order = train_forest(codes, y, params, seed=9, n_estimators=8)
    backwards = train_forest(codes, y, params, seed=9, n_estimators=8,
                             tree_indices=range(7, -1, -1))[::-1]
    parallel = train_forest(codes, y, params, seed=9, n_estimators=8, n_jobs=2)
    assert all(trees_equal(a, b) for a, b in zip(in_order, backwards))
    assert all(trees_equal(a, b) for a, b in zip(in_order, parallel))


@pytest.mark.parametrize("mode", ["forest", "thesis"])
def test_to_sklearn_predicts_like_the_model(wine, mode):
    X, y = wine
    labels = np.array(["a", "b", "c"])[y]
    model = HardwareForestClassifier(30, mode=mode, random_state=1).fit(X, labels)
    exported = model.to_sklearn()
    assert isinstance(exported, RandomForestClassifier)
    for inputs in (X, _random_inputs(X, 3000, 2)):
        assert np.array_equal(exported.predict(inputs), model.predict(inputs))
        assert np.array_equal(exported.predict_proba(inputs), model.predict_proba(inputs))


def test_thesis_preset():
    X, y = load_iris(return_X_y=True)
    model = HardwareForestClassifier(mode="thesis", random_state=0).fit(X, y)
    params = model.training_parameters_
    assert len(model.trees_) == 250
    assert (params.max_samples, params.max_depth, params.thesis_mode) == (16, 4, True)
    assert model.quantizer_.kind == "fixed"
    for tree in model.trees_:
        assert tree.depth.max() <= 4 and tree.n_samples[0] == 16
        assert len(set(tree.feature[tree.feature >= 0].tolist())) <= 1
    kept = HardwareForestClassifier(40, mode="thesis", random_state=0).fit(X, y)
    assert len(kept.trees_) == 40  # a parameter set away from its default is kept


def test_explicit_parameters_win_over_the_thesis_preset():
    """Values equal to the forest defaults, passed explicitly, are not replaced by the
    preset: 100 trees of unlimited depth with the rank quantiser, one feature per tree."""
    X, y = load_iris(return_X_y=True)
    estimator = HardwareForestClassifier(mode="thesis", n_estimators=100, max_depth=None,
                                         quantizer="rank", random_state=0)
    model = estimator.fit(X, y)
    assert len(model.trees_) == 100
    assert model.training_parameters_.max_depth is None
    assert model.training_parameters_.thesis_mode
    assert model.quantizer_.kind == "rank"
    assert max(int(tree.depth.max()) for tree in model.trees_) > 4   # 16 draws, unlimited
    for tree in model.trees_:
        assert len(set(tree.feature[tree.feature >= 0].tolist())) <= 1
    params = model.get_params()
    assert (params["n_estimators"], params["max_depth"], params["quantizer"]) == (100, None, "rank")
    # A grid over max_depth in thesis mode fits different models under different labels.
    shallow = clone(estimator).set_params(max_depth=2).fit(X, y)
    assert max(int(tree.depth.max()) for tree in shallow.trees_) == 2


def test_auto_takes_the_forest_defaults_in_forest_mode():
    X, y = load_iris(return_X_y=True)
    model = HardwareForestClassifier(random_state=0).fit(X, y)
    assert len(model.trees_) == 100 and model.quantizer_.kind == "rank"
    assert model.training_parameters_.max_samples == len(y)
    assert model.training_parameters_.max_depth is None
    assert model.effective_params_["n_estimators"] == 100


def test_feature_importances_are_scikit_learns_on_the_export(wine):
    X, y = wine
    model = HardwareForestClassifier(10, random_state=0).fit(X, y)
    importances = model.feature_importances_
    assert importances.shape == (X.shape[1],)
    assert np.isclose(importances.sum(), 1.0)
    assert np.array_equal(importances, model.to_sklearn().feature_importances_)


def test_proba_rows_sum_to_one_and_predict_is_argmax(wine):
    X, y = wine
    model = HardwareForestClassifier(15, random_state=3).fit(X, y)
    proba = model.predict_proba(X)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(model.predict(X), model.classes_[np.argmax(proba, axis=1)])
    counts = model.predict_class_counts(X[:5])
    assert counts.shape == (5, 3) and counts.dtype == np.int64


def test_cross_val_score_and_pipeline(wine):
    X, y = wine
    scores = cross_val_score(HardwareForestClassifier(25, random_state=0), X, y, cv=3)
    assert scores.mean() > 0.85
    pipeline = make_pipeline(StandardScaler(), HardwareForestClassifier(10, random_state=0))
    assert pipeline.fit(X, y).score(X, y) > 0.9


def test_accuracy_close_to_random_forest_quick():
    X, y = load_iris(return_X_y=True)
    ours = cross_val_score(HardwareForestClassifier(50, random_state=0), X, y, cv=5).mean()
    theirs = cross_val_score(RandomForestClassifier(50, random_state=0), X, y, cv=5).mean()
    assert abs(ours - theirs) <= 0.03


def test_scikit_learn_estimator_checks():
    results = check_estimator(HardwareForestClassifier(n_estimators=5, random_state=0),
                              on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert failed == []


@pytest.mark.parametrize("X,y,message", [
    ([[0.0, np.nan], [1.0, 2.0]], [0, 1], "NaN"),
    ([[0.0, np.inf], [1.0, 2.0]], [0, 1], "infinity"),
    ([[0.0, 1e39], [1.0, 2.0]], [0, 1], r"1e\+39.*float32"),
    (np.array([["a", "b"], ["c", "d"]], dtype=object), [0, 1], "could not convert"),
    ([0.0, 1.0, 2.0], [0, 1, 0], "2D array"),
    ([[0.0], [1.0], [2.0]], [0, 1], "inconsistent numbers of samples"),
    ([[0.0], [1.0]], [3, 3], "1 class"),
    (np.zeros((0, 2)), [], "0 sample"),
])
def test_bad_input_raises_clear_errors(X, y, message):
    with pytest.raises(ValueError, match=message):
        HardwareForestClassifier(3).fit(X, y)


@pytest.mark.parametrize("params,message", [
    ({"max_classes": 2}, "3 classes, more than max_classes = 2"),
    ({"max_features_supported": 1}, "2 features, more than max_features_supported = 1"),
    ({"max_rows_supported": 4}, "6 rows, more than max_rows_supported = 4"),
    ({"code_bits": 33}, r"code_bits=33 must be an integer in \[1, 32\]"),
    ({"mode": "fast"}, "mode='fast' must be 'forest' or 'thesis'"),
    ({"backend": "fpga"}, "backend='fpga' must be 'model' or 'sim'"),
    ({"max_features": 5}, r"max_features=5 is more than the 2 features of X: give at most 2"),
    ({"max_features": True}, r"max_features=True must be 'sqrt', 'log2', None, an integer "
                             r">= 1 or a number in \(0, 1\]"),
    ({"max_features": 1.5}, r"max_features=1.5 must be"),
    ({"max_samples": 7}, r"max_samples=7 is more than the 6 training rows: give at most 6"),
    ({"max_samples": False}, r"max_samples=False must be an integer >= 1"),
    ({"bootstrap": 1}, r"bootstrap=1 must be True or False"),
    ({"max_depth": "deep"}, r"max_depth='deep' must be an integer >= 0, None or 'auto'"),
    ({"random_state": 2**32}, r"random_state=4294967296 must be an integer in \[0, 4294967295\]"),
    ({"n_estimators": 0}, "n_estimators=0 must be an integer >= 1 or 'auto'"),
    ({"n_estimators": 2.0}, "n_estimators=2.0 must be an integer >= 1 or 'auto'"),
])
def test_bad_parameters_and_capacity_limits(params, message):
    X = np.arange(12, dtype=float).reshape(6, 2)
    y = [0, 1, 2, 0, 1, 2]
    with pytest.raises(ValueError, match=message):
        HardwareForestClassifier(**{"n_estimators": 3, **params}).fit(X, y)


def test_predict_checks_feature_count(wine):
    X, y = wine
    model = HardwareForestClassifier(3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="13 features"):
        model.predict(X[:, :5])
