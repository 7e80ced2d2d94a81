"""RegularizedELMClassifier / RegularizedELMRegressor: scikit-learn conventions, the
selected model against a direct solve, agreement of the selection algorithms, bad input."""

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine
from sklearn.utils.estimator_checks import check_estimator

from sw.methods.elm import selection as sel
from sw.methods.elm.regularized import RegularizedELMClassifier, RegularizedELMRegressor

ESTIMATORS = [RegularizedELMClassifier, RegularizedELMRegressor]
#: check_estimator's checks that skip here, with scikit-learn's reason.
SKIPPED = {"check_array_api_input": "SCIPY_ARRAY_API is not set",
           "check_classifier_data_not_an_array": "pandas is not installed",
           "check_regressor_data_not_an_array": "pandas is not installed"}


def _regression(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 3, size=(n, 3))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.05 * rng.normal(size=n)
    return X, y


def _hidden_by_hand(model, X):
    """H of the fitted model from its weights, with the [-1, 1] scaling written out."""
    low = model.input_scaler_.low
    Z = np.empty_like(X)
    for k in range(X.shape[1]):
        column = X[:, k]
        spread = model.train_max_[k] - low[k]
        Z[:, k] = 2 * (column - low[k]) / spread - 1 if spread > 0 else 0.0
    return 1.0 / (1.0 + np.exp(-(Z @ model.hidden_.weights + model.hidden_.biases)))


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_check_estimator(estimator):
    results = check_estimator(estimator(random_state=0), on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results
              if r["status"] == "failed"]
    skipped = {r["check_name"] for r in results if r["status"] == "skipped"}
    assert not failed
    assert skipped <= set(SKIPPED), skipped - set(SKIPPED)


@pytest.mark.parametrize("selection", ["cv_evd", "hat_qr_svd", "naive_cv"])
def test_selected_weights_equal_a_direct_solve_at_the_chosen_pair(selection):
    X, y = _regression()
    model = RegularizedELMRegressor(selection=selection, random_state=3).fit(X, y)
    model.train_max_ = X.max(axis=0)
    H = _hidden_by_hand(model, X)
    assert H.shape[1] == model.n_hidden_
    L, C = model.n_hidden_, model.C_
    direct = np.linalg.solve(H.T @ H + np.eye(L) / C, H.T @ y)
    assert np.allclose(model.coef_[:, 0], direct, rtol=1e-7, atol=1e-9 * np.abs(direct).max())
    # beta can be large with cancelling terms: the tolerance scales with sum_k |h_k beta_k|.
    scale = (np.abs(H) @ np.abs(direct)).max()
    assert np.allclose(model.predict(X), H @ direct, rtol=0, atol=1e-8 * scale)
    # The chosen pair is the minimum of the scores over the seed's grid.
    assert np.array_equal(model.l_grid_, sel.l_grid(len(y)))
    assert np.array_equal(model.c_grid_, sel.C_GRID)
    j, i = np.unravel_index(np.argmin(model.selection_scores_), model.selection_scores_.shape)
    assert (model.l_grid_[j], model.c_grid_[i]) == (L, C)


@pytest.mark.parametrize("family", [sel.CV_ALGORITHMS, sel.HAT_ALGORITHMS[:-1]])
def test_every_algorithm_of_a_family_selects_the_same_model(family):
    X, y = load_wine(return_X_y=True)
    models = [RegularizedELMClassifier(selection=name, n_l_steps=10, random_state=1).fit(X, y)
              for name in family]
    for model in models[1:]:
        assert (model.n_hidden_, model.C_) == (models[0].n_hidden_, models[0].C_)
        assert np.allclose(model.selection_scores_, models[0].selection_scores_,
                           rtol=1e-8, atol=0)
        assert np.allclose(model.coef_, models[0].coef_, rtol=1e-6, atol=1e-9)


def test_given_size_and_c_are_used_without_selection():
    X, y = _regression()
    model = RegularizedELMRegressor(n_hidden=17, C=0.5, random_state=2).fit(X, y)
    assert (model.n_hidden_, model.C_, model.selection_scores_) == (17, 0.5, None)
    only_c = RegularizedELMRegressor(n_hidden=17, random_state=2).fit(X, y)
    assert only_c.selection_scores_.shape == (1, 30) and only_c.n_hidden_ == 17
    only_l = RegularizedELMRegressor(C=0.5, random_state=2).fit(X, y)
    assert only_l.selection_scores_.shape == (len(sel.l_grid(120)), 1) and only_l.C_ == 0.5


def test_regressor_learns_a_smooth_function_and_multi_output_is_per_output_fits():
    X, y = _regression(n=300)
    Xt, yt = _regression(n=200, seed=9)
    model = RegularizedELMRegressor(random_state=0).fit(X, y)
    assert model.score(Xt, yt) > 0.95     # a linear least-squares fit scores 0.51 here
    Y = np.column_stack([y, -2 * y + 1])
    both = RegularizedELMRegressor(n_hidden=20, C=4.0, random_state=0).fit(X, Y)
    second = RegularizedELMRegressor(n_hidden=20, C=4.0, random_state=0).fit(X, Y[:, 1])
    assert both.predict(Xt).shape == (200, 2)
    assert np.allclose(both.predict(Xt)[:, 1], second.predict(Xt), rtol=1e-9, atol=1e-9)


def test_classifier_predicts_the_largest_one_hot_output():
    X, y = load_iris(return_X_y=True)
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    model = RegularizedELMClassifier(random_state=0).fit(X, labels)
    outputs = model.decision_function(X)
    assert outputs.shape == (150, 3)
    assert np.array_equal(model.predict(X), model.classes_[np.argmax(outputs, axis=1)])
    assert model.score(X, labels) > 0.9
    binary = RegularizedELMClassifier(random_state=0).fit(X[50:], labels[50:])
    decision = binary.decision_function(X[50:])
    assert decision.shape == (100,)
    assert np.array_equal(binary.predict(X[50:]), binary.classes_[(decision > 0).astype(int)])


def test_same_seed_same_model():
    X, y = _regression()
    a, b = (RegularizedELMRegressor(random_state=4).fit(X, y) for _ in range(2))
    c = RegularizedELMRegressor(random_state=5).fit(X, y)
    assert np.array_equal(a.predict(X), b.predict(X))
    assert not np.array_equal(a.hidden_.weights[:, 0], c.hidden_.weights[:, 0])
    assert not np.array_equal(a.predict(X), c.predict(X))


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_is_refused(estimator, bad):
    X, y = _regression(n=30)
    y = (y > y.mean()).astype(int)
    X[3, 1] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        estimator(random_state=0).fit(X, y)
    model = estimator(random_state=0).fit(np.nan_to_num(X, posinf=0, neginf=0), y)
    with pytest.raises(ValueError, match="NaN|infinity"):
        model.predict(X)


def test_one_class_and_wrong_shapes_are_refused():
    X, y = _regression(n=30)
    with pytest.raises(ValueError, match="y has 1 class .* at least 2 classes"):
        RegularizedELMClassifier().fit(X, np.zeros(30))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        RegularizedELMRegressor().fit(X, y[:20])
    model = RegularizedELMRegressor(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="3 features"):
        model.predict(X[:, :2])
    with pytest.raises(ValueError, match="10-fold cross-validation .* X has 6 samples"):
        RegularizedELMRegressor().fit(X[:6], y[:6])
    with pytest.raises(ValueError, match="X has 1 sample"):
        RegularizedELMRegressor(selection="hat_evd").fit(X[:1], y[:1])


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("name, value, expected", [
    ("n_hidden", 0, "an integer >= 1"), ("n_hidden", 2.5, "an integer >= 1"),
    ("C", 0.0, r"a finite number > 0"), ("C", -1.0, "a finite number > 0"),
    ("C", np.inf, "a finite number > 0"), ("selection", "fast", "'cv_evd'"),
    ("l_max_factor", 0, "a finite number > 0"), ("n_l_steps", 0, "an integer >= 1"),
    ("n_folds", 1, "an integer >= 2"), ("random_state", -1, r"\[0, 4294967295\]")])
def test_parameters_out_of_range_are_refused_naming_value_and_limit(estimator, name, value,
                                                                    expected):
    X, y = _regression(n=30)
    y = (y > y.mean()).astype(int)
    with pytest.raises(ValueError, match=rf"{name}={value!r} must be .*{expected}"):
        estimator(**{name: value}).fit(X, y)
