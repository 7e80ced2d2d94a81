"""IncrementalELMRegressor: each variant against an independent brute-force fit, the K = 1
identities, scikit-learn conventions and bad input."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import check_estimator

from sw.methods.elm.incremental import VARIANTS, IncrementalELMRegressor


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(150, 4))
    y = 0.5 + 0.3 * np.sin(3 * X[:, 0]) * X[:, 1] + 0.05 * rng.normal(size=150)
    return X, y


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def _brute_force(X, y, variant, n_candidates, n_neurons, seed):
    """The variant written out from the seed's equations, one neuron at a time: each
    candidate's weight by ``np.linalg.lstsq`` on a one-column system (I-ELM: residual on
    g, eq. 4.2; convex: residual on e - (y - g), eq. 4.3), its residual norm computed
    explicitly from the new residual, the smallest kept; the convex variants rescale the
    older weights (eq. 4.5). Candidates drawn as the estimator documents: per step the
    (K, d) input weights, then the K biases, uniform in [-1, 1]."""
    convex = variant in ("ci-elm", "eci-elm")
    rng = np.random.RandomState(seed)
    residual, weights, chosen = y.copy(), [], []
    for _ in range(n_neurons):
        A = rng.uniform(-1, 1, size=(n_candidates, X.shape[1]))
        b = rng.uniform(-1, 1, size=n_candidates)
        best = None
        for k in range(n_candidates):
            g = _sigmoid(X @ A[k] + b[k])
            direction = residual - (y - g) if convex else g
            w = np.linalg.lstsq(direction[:, None], residual, rcond=None)[0][0]
            new = (1 - w) * residual + w * (y - g) if convex else residual - w * g
            if best is None or new @ new < best[0]:
                best = (new @ new, k, w, new)
        _, k, w, residual = best
        if convex:
            weights = [(1 - w) * old for old in weights]
        weights.append(w)
        chosen.append((A[k], b[k]))
    inputs, biases = np.array([a for a, _ in chosen]), np.array([c for _, c in chosen])
    return np.array(weights), inputs, biases, residual


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_each_variant_equals_the_brute_force_fit(data, variant):
    X, y = data
    K = 4 if variant.startswith("e") else 1
    model = IncrementalELMRegressor(variant, n_candidates=K, max_neurons=25,
                                    random_state=3).fit(X, y)
    weights, inputs, biases, residual = _brute_force(X, y, variant, K, 25, 3)
    assert np.array_equal(model.input_weights_, inputs)
    assert np.array_equal(model.biases_, biases)
    np.testing.assert_allclose(model.output_weights_, weights, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(y - model.predict(X), residual, rtol=1e-9, atol=1e-12)
    assert model.train_rmse_[-1] == pytest.approx(np.sqrt(np.mean(residual ** 2)), rel=1e-9)
    np.testing.assert_allclose(model.staged_predict(X)[-1], model.predict(X), atol=1e-12)


@pytest.mark.parametrize("plain,enhanced", [("i-elm", "ei-elm"), ("ci-elm", "eci-elm")])
def test_enhanced_with_one_candidate_is_the_plain_variant(data, plain, enhanced):
    X, y = data
    a = IncrementalELMRegressor(plain, max_neurons=60, random_state=7).fit(X, y)
    b = IncrementalELMRegressor(enhanced, n_candidates=1, max_neurons=60, random_state=7).fit(X, y)
    for name in ("input_weights_", "biases_", "output_weights_", "step_weights_", "train_rmse_"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    c = IncrementalELMRegressor(enhanced, n_candidates=3, max_neurons=60, random_state=7).fit(X, y)
    assert not np.array_equal(a.biases_, c.biases_)


def test_new_weight_is_the_one_dimensional_least_squares_fit(data):
    """I-ELM: the residual after each step is orthogonal to the neuron just added."""
    X, y = data
    model = IncrementalELMRegressor("i-elm", max_neurons=20, random_state=0).fit(X, y)
    hidden = _sigmoid(X @ model.input_weights_.T + model.biases_)
    staged = model.staged_predict(X)
    for i in range(20):
        assert abs((y - staged[i + 1]) @ hidden[:, i]) < 1e-10 * np.linalg.norm(y)


def test_training_error_never_rises_and_enhanced_helps(data):
    X, y = data
    rmse = {v: IncrementalELMRegressor(v, max_neurons=80, random_state=1).fit(X, y).train_rmse_
            for v in VARIANTS}
    for curve in rmse.values():
        assert np.all(np.diff(curve) <= 1e-12) and len(curve) == 81
    assert rmse["ei-elm"][-1] < rmse["i-elm"][-1] and rmse["eci-elm"][-1] < rmse["ci-elm"][-1]


def test_target_error_stops_the_growth(data):
    X, y = data
    full = IncrementalELMRegressor("eci-elm", max_neurons=200, random_state=2).fit(X, y)
    target = full.train_rmse_[30]
    model = IncrementalELMRegressor("eci-elm", max_neurons=200, target_error=target,
                                    random_state=2).fit(X, y)
    assert model.n_neurons_ == 30 and model.train_rmse_[-1] <= target
    assert np.array_equal(model.biases_, full.biases_[:30])


def test_scikit_learn_estimator_checks():
    check_estimator(IncrementalELMRegressor(max_neurons=60, random_state=0))
    check_estimator(IncrementalELMRegressor("i-elm", max_neurons=60, random_state=0))


@pytest.mark.parametrize("params,message", [
    ({"variant": "elm"}, "variant='elm'"),
    ({"variant": "i-elm", "n_candidates": 5}, "n_candidates=5 must be 1"),
    ({"n_candidates": 0}, "n_candidates=0 must be an integer >= 1"),
    ({"max_neurons": 0}, "max_neurons=0 must be an integer >= 1"),
    ({"target_error": -1.0}, "target_error=-1.0"),
    ({"weight_range": 0.0}, "weight_range=0.0 must be a finite number > 0"),
    ({"parallel": "mpi"}, "parallel='mpi'"),
    ({"scheduler": 5},
     "scheduler=5 must be None, a scheduler address (str) or a distributed.Client"),
    ({"n_workers": 0}, "n_workers=0"),
    ({"n_workers": 2}, "n_workers=2 is used only with parallel='dask'"),
    ({"scheduler": "tcp://127.0.0.1:1"}, "scheduler='tcp://127.0.0.1:1' is used only with"),
    ({"max_neurons": True}, "max_neurons=True"),
])
def test_bad_parameters_are_named_with_their_limit(data, params, message):
    X, y = data
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        IncrementalELMRegressor(**params).fit(X, y)


def test_bad_data(data):
    X, y = data
    model = IncrementalELMRegressor(max_neurons=5)
    for bad in (np.nan, np.inf):
        X_bad = X.copy()
        X_bad[3, 1] = bad
        with pytest.raises(ValueError, match="NaN|infinity"):
            model.fit(X_bad, y)
        y_bad = y.copy()
        y_bad[2] = bad
        with pytest.raises(ValueError, match="NaN|infinity"):
            model.fit(X, y_bad)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        model.fit(X, y[:-1])
    with pytest.raises(ValueError, match="1d array"):
        model.fit(X, np.column_stack([y, y]))
    with pytest.raises(ValueError, match="at least 2 samples"):
        model.fit(X[:1], y[:1])
    fitted = model.fit(X, y)
    with pytest.raises(ValueError, match="4 features"):
        fitted.predict(X[:, :3])
