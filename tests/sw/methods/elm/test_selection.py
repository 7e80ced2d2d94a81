"""Model selection of (L, C): every algorithm against brute-force refits computed here,
against each other, and the PRESS against hpelm's on the same hidden layer."""

import numpy as np
import pytest

from sw.methods.elm import selection as sel
from sw.methods.elm.hidden import RandomHiddenLayer

HAT = [name for name in sel.HAT_ALGORITHMS if name != "naive_loo"]
CV = [name for name in sel.CV_ALGORITHMS if name != "naive_cv"]
#: (L, C) pairs checked one by one: small and full L, the grid's ends and middle of C.
PAIRS = [(3, 2.0 ** -14), (11, 1.0), (24, 2.0 ** -3), (24, 2.0 ** 15)]


def _problem(n=48, d=3, outputs=1, seed=0, L=24):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    Y = np.column_stack([np.sin(3 * X[:, 0] + k) + X[:, 1] ** 2 for k in range(outputs)])
    Y += 0.1 * rng.normal(size=Y.shape)
    return RandomHiddenLayer(d, L, seed + 1).transform(X), Y


def _ridge(H, Y, C):
    return np.linalg.solve(H.T @ H + np.eye(H.shape[1]) / C, H.T @ Y)


def _brute_loo(H, Y, L, C):
    """Leave row n out, refit, predict row n: N separate ridge solves."""
    out = np.empty(Y.shape)
    for n in range(len(Y)):
        keep = np.arange(len(Y)) != n
        out[n] = Y[n] - H[n, :L] @ _ridge(H[keep, :L], Y[keep], C)
    return out


def _brute_cv(H, Y, L, C, folds):
    out = np.empty(Y.shape)
    for fold in folds:
        keep = np.ones(len(Y), dtype=bool)
        keep[fold] = False
        out[fold] = Y[fold] - H[fold, :L] @ _ridge(H[keep, :L], Y[keep], C)
    return out


def _rel(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


@pytest.mark.parametrize("outputs", [1, 3])
@pytest.mark.parametrize("algorithm", HAT + ["naive_loo"])
def test_press_residuals_equal_brute_force_leave_one_out(algorithm, outputs):
    H, Y = _problem(outputs=outputs)
    for L, C in PAIRS:
        ours = sel.validation_residuals(H, Y, L, C, algorithm)
        assert _rel(ours, _brute_loo(H, Y, L, C)) < 1e-8, (algorithm, L, C)


@pytest.mark.parametrize("outputs", [1, 3])
@pytest.mark.parametrize("algorithm", CV + ["naive_cv"])
def test_cross_validation_residuals_equal_per_fold_refits(algorithm, outputs):
    H, Y = _problem(outputs=outputs)
    folds = sel.make_folds(len(Y), 10, seed=4)
    for L, C in PAIRS:
        ours = sel.validation_residuals(H, Y, L, C, algorithm, folds)
        assert _rel(ours, _brute_cv(H, Y, L, C, folds)) < 1e-8, (algorithm, L, C)


def test_scores_are_mean_squared_validation_residuals_over_the_grid():
    H, Y = _problem(n=30, outputs=2)
    folds = sel.make_folds(30, 10, seed=1)
    Ls, Cs = [2, 9, 24], 2.0 ** np.array([-14, -2, 4, 15])
    loo = sel.select(H, Y, Ls, Cs, "hat_evd")
    cv = sel.select(H, Y, Ls, Cs, "cv_evd", folds)
    for j, L in enumerate(Ls):
        for i, C in enumerate(Cs):
            assert np.isclose(loo.scores[j, i], np.mean(_brute_loo(H, Y, L, C) ** 2), rtol=1e-8)
            assert np.isclose(cv.scores[j, i], np.mean(_brute_cv(H, Y, L, C, folds) ** 2),
                              rtol=1e-8)


@pytest.mark.parametrize("family", [sel.HAT_ALGORITHMS, sel.CV_ALGORITHMS])
def test_algorithms_of_a_family_agree_on_scores_and_choice(family):
    H, Y = _problem(n=60, outputs=2, L=31)
    folds = sel.make_folds(60, 10, seed=2)
    Ls, Cs = sel.l_grid(60, factor=4.0, steps=8), sel.C_GRID[::3]
    results = [sel.select(H, Y, Ls, Cs, name, folds) for name in family]
    reference = results[-1]               # the naive refit
    for result in results[:-1]:
        assert np.allclose(result.scores, reference.scores, rtol=1e-8, atol=0), result.algorithm
        assert (result.n_hidden, result.C) == (reference.n_hidden, reference.C)
    j = list(Ls).index(reference.n_hidden)
    i = list(Cs).index(reference.C)
    assert reference.scores[j, i] == reference.scores.min()


@pytest.mark.parametrize("algorithm", sel.ALGORITHMS)
def test_output_weights_at_the_chosen_pair_equal_a_direct_solve(algorithm):
    H, Y = _problem(n=48, outputs=2)
    choice = sel.select(H, Y, [4, 12, 24], sel.C_GRID[::4], algorithm,
                        sel.make_folds(48, 10, seed=0))
    for L, C in [(choice.n_hidden, choice.C), (24, 2.0 ** 15), (5, 2.0 ** -14)]:
        direct = _ridge(H[:, :L], Y, C)
        assert _rel(sel.output_weights(H, Y, L, C, algorithm), direct) < 1e-7, (L, C)


@pytest.mark.parametrize("outputs", [1, 4])
def test_press_equals_hpelms_loo_on_the_same_hidden_layer(outputs):
    """hpelm's LOO (hpelm/mss_loo.py) scores mean(((Y - H B) / (1 - diag(H P H^T)))^2)
    with P = (H^T H + norm I)^-1 (its Gram starts from norm on the diagonal,
    hpelm/nnets/slfn.py add_batch): norm = 1/C. Its first error is at the full L, before
    its search over pruned neuron subsets."""
    hpelm = pytest.importorskip("hpelm")
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(120, 4))
    Y = np.column_stack([np.cos(2 * X[:, 0] * (k + 1)) + X[:, 2] for k in range(outputs)])
    layer = RandomHiddenLayer(4, 25, 9)
    H = layer.transform(X)
    for C in (2.0 ** -6, 1.0, 2.0 ** 10):
        elm = hpelm.ELM(4, outputs, norm=1.0 / C)
        elm.add_neurons(25, "sigm", W=-layer.weights, B=-layer.biases)
        errors = []
        original = elm._error

        def record(T, Yhat, R=None, original=original, errors=errors):
            errors.append(original(T, Yhat, R))
            return errors[-1]

        elm._error = record
        np.random.seed(0)           # hpelm ranks neurons with the global generator
        elm.train(X, Y, "LOO")
        for name in HAT:
            ours = sel.select(H, Y, [25], [C], name).scores[0, 0]
            assert np.isclose(ours, errors[0], rtol=1e-9, atol=0), (name, C)


def test_l_grid_is_the_seeds_forty_steps_to_a_sqrt_n():
    assert np.array_equal(sel.l_grid(10000), np.arange(5, 201, 5))           # a = 2
    assert np.array_equal(sel.l_grid(10000, factor=6.0), np.arange(15, 601, 15))
    small = sel.l_grid(20)                 # L_max = 8.9: rounded, duplicates dropped
    assert small[0] == 1 and small[-1] == 9 and np.all(np.diff(small) > 0)
    assert np.array_equal(sel.C_GRID, [2.0 ** k for k in range(-14, 16)])


def test_folds_partition_the_rows_in_nearly_equal_parts():
    folds = sel.make_folds(103, 10, seed=3)
    assert sorted(np.concatenate(folds).tolist()) == list(range(103))
    assert {len(fold) for fold in folds} == {10, 11}
    again = sel.make_folds(103, 10, seed=3)
    assert all(np.array_equal(a, b) for a, b in zip(folds, again))


def test_bad_arguments_are_refused_with_the_value_and_the_limit():
    H, Y = _problem(n=20, L=10)
    with pytest.raises(ValueError, match="selection must be one of .*'fast'"):
        sel.select(H, Y, [5], [1.0], "fast")
    with pytest.raises(ValueError, match=r"ascend within \[1, 10\]"):
        sel.select(H, Y, [5, 12], [1.0], "hat_evd")
    with pytest.raises(ValueError, match=r"ascend within"):
        sel.select(H, Y, [6, 5], [1.0], "hat_evd")
    with pytest.raises(ValueError, match="finite and > 0"):
        sel.select(H, Y, [5], [0.0], "hat_evd")
    with pytest.raises(ValueError, match="same rows"):
        sel.select(H, Y[:5], [5], [1.0], "hat_evd")
    with pytest.raises(ValueError, match="n_folds <= n_samples; X has 5 samples"):
        sel.make_folds(5, 10)
    with pytest.raises(ValueError, match="X has 1 sample"):
        sel.select(H[:1], Y[:1], [5], [1.0], "hat_svd")
