"""The random hidden layer: seeded, nested in L, the seed's sigmoid, uniform [-1, 1] draws."""

import numpy as np
import pytest
from scipy import stats

from sw.methods.elm.hidden import MinMaxInputs, RandomHiddenLayer, sigmoid


def test_same_seed_same_layer_other_seed_other_layer():
    a, b, c = (RandomHiddenLayer(5, 12, seed) for seed in (3, 3, 4))
    assert np.array_equal(a.weights, b.weights) and np.array_equal(a.biases, b.biases)
    assert not np.array_equal(a.weights, c.weights)


def test_first_neurons_of_a_larger_layer_are_the_smaller_layer():
    big, small = RandomHiddenLayer(4, 50, 7), RandomHiddenLayer(4, 20, 7)
    assert np.array_equal(big.weights[:, :20], small.weights)
    assert np.array_equal(big.biases[:20], small.biases)
    cut = big.truncated(20)
    X = np.random.default_rng(0).normal(size=(30, 4))
    assert np.array_equal(cut.transform(X), small.transform(X))
    assert np.array_equal(big.transform(X)[:, :20], small.transform(X))


def test_weights_and_biases_are_uniform_on_minus_one_one():
    layer = RandomHiddenLayer(20, 500, 11)
    draws = np.concatenate([layer.weights.ravel(), layer.biases])
    assert draws.min() >= -1.0 and draws.max() <= 1.0
    # Kolmogorov-Smirnov against U[-1, 1] on 10,500 draws (fixed seed: deterministic).
    assert stats.kstest(draws, stats.uniform(loc=-1, scale=2).cdf).pvalue > 1e-3
    assert stats.kstest(draws, stats.norm(scale=0.6).cdf).pvalue < 1e-6


def test_transform_is_the_seeds_sigmoid_of_a_dot_x_plus_b():
    layer = RandomHiddenLayer(3, 6, 1)
    X = np.random.default_rng(2).uniform(-1, 1, size=(10, 3))
    expected = np.empty((10, 6))
    for n in range(10):
        for j in range(6):
            z = sum(layer.weights[k, j] * X[n, k] for k in range(3)) + layer.biases[j]
            expected[n, j] = 1.0 / (1.0 + np.exp(-z))
    assert np.allclose(layer.transform(X), expected, rtol=1e-14, atol=0)


def test_transform_equals_hpelms_sigm_neurons_with_negated_weights():
    """hpelm's "sigm" is 1 / (1 + exp(X W + B)): the same neurons with W = -A, B = -b."""
    hpelm = pytest.importorskip("hpelm")
    layer = RandomHiddenLayer(4, 9, 5)
    X = np.random.default_rng(3).uniform(-1, 1, size=(25, 4))
    elm = hpelm.ELM(4, 1)
    elm.add_neurons(9, "sigm", W=-layer.weights, B=-layer.biases)
    assert np.allclose(elm.nnet._project(X), layer.transform(X), rtol=1e-14, atol=1e-16)


def test_sigmoid_of_extreme_values_is_exact_and_silent():
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        out = sigmoid(np.array([-1000.0, -40.0, 0.0, 40.0, 1000.0]))
    assert out[0] == 0.0 and out[2] == 0.5 and out[4] == 1.0
    assert np.isclose(out[1], np.exp(-40.0), rtol=1e-12)


def test_min_max_inputs_map_the_training_range_to_minus_one_one():
    X = np.array([[0.0, 5.0, 2.0], [10.0, 5.0, 4.0], [5.0, 5.0, 3.0]])
    scaler = MinMaxInputs().fit(X)
    Z = scaler.transform(X)
    assert np.array_equal(Z[:, 0], [-1.0, 1.0, 0.0])
    assert np.array_equal(Z[:, 1], [0.0, 0.0, 0.0])      # constant feature
    assert np.array_equal(Z[:, 2], [-1.0, 1.0, 0.0])
    assert np.array_equal(scaler.transform(np.array([[20.0, 7.0, 2.0]])), [[3.0, 0.0, -1.0]])


@pytest.mark.parametrize("shape", [(5,), (5, 4), (2, 3, 3)])
def test_wrong_input_shape_is_refused(shape):
    layer = RandomHiddenLayer(3, 4, 0)
    with pytest.raises(ValueError, match=r"shape \(n_samples, 3\)"):
        layer.transform(np.zeros(shape))


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="n_hidden >= 1"):
        RandomHiddenLayer(3, 0, 0)
    with pytest.raises(ValueError, match=r"n_hidden must be in \[1, 4\], not 5"):
        RandomHiddenLayer(3, 4, 0).truncated(5)
