"""The random hidden layer of an extreme learning machine (seed 002, ch. 3 section 3.2.1).

``RandomHiddenLayer(n_hidden, random_state)`` draws, once, the input weights ``A`` (d x L)
and the biases ``b`` (L) of L sigmoid neurons and maps inputs to the hidden-layer matrix
``H = G(X A + b)`` with ``G(z) = 1 / (1 + exp(-z))`` (the seed's sigmoid, L688).

Distribution of the weights: every weight and bias is uniform on [-1, 1]. Chapter 3 does
not say which distribution its ELMs draw from (a gap of the text); chapter 4 of the same
thesis, on the same ELM, draws ``a, b ~ U[-1, 1]`` with the inputs scaled to [-1, 1]
(L1324, L1453), so this layer takes that choice, and the estimators scale every input
feature to [-1, 1] by its training minimum and maximum before the layer (see
:class:`MinMaxInputs`). With many inputs the pre-activations grow like sqrt(d) and the
sigmoids saturate; that is the seed's choice and is kept, not tuned.

The neurons are drawn in order from one ``numpy.random.Generator``: the first L columns
of a layer of L_max neurons are the layer of L neurons with the same seed, which is what
model selection over L needs (the seed's L.1063 "randomly generate L_max neurons and
validate all the intermediate ELM models they produce").
"""

import numpy as np

__all__ = ["RandomHiddenLayer", "MinMaxInputs", "sigmoid", "WEIGHT_RANGE"]

#: Every input weight and bias is drawn uniformly from [-WEIGHT_RANGE, WEIGHT_RANGE].
WEIGHT_RANGE = 1.0


def sigmoid(z):
    """``1 / (1 + exp(-z))`` without overflow warnings for large negative ``z``."""
    out = np.empty_like(z)
    positive = z >= 0
    out[positive] = 1.0 / (1.0 + np.exp(-z[positive]))
    ez = np.exp(z[~positive])
    out[~positive] = ez / (1.0 + ez)
    return out


class RandomHiddenLayer:
    """L sigmoid neurons with weights and biases uniform on [-1, 1].

    Parameters
    ----------
    n_features : int
        Input dimension d.
    n_hidden : int
        Number of neurons L.
    seed : int or numpy.random.Generator
        Seed of the generator the neurons are drawn from (weights first, row by row of
        ``(L, d)``, then the biases; drawn as one ``(L, d + 1)`` block so that the first
        L' neurons of a layer are the layer of L' neurons).

    Attributes
    ----------
    weights : array (d, L)
    biases : array (L,)
    """

    def __init__(self, n_features, n_hidden, seed):
        if n_features < 1 or n_hidden < 1:
            raise ValueError(f"a hidden layer needs n_features >= 1 and n_hidden >= 1, not "
                             f"{n_features} and {n_hidden}")
        rng = np.random.default_rng(seed)
        block = rng.uniform(-WEIGHT_RANGE, WEIGHT_RANGE, size=(n_hidden, n_features + 1))
        self.weights = np.ascontiguousarray(block[:, :n_features].T)
        self.biases = block[:, n_features].copy()

    @property
    def n_hidden(self):
        return self.biases.shape[0]

    def truncated(self, n_hidden):
        """The layer of the first ``n_hidden`` neurons (a copy)."""
        if not 1 <= n_hidden <= self.n_hidden:
            raise ValueError(f"n_hidden must be in [1, {self.n_hidden}], not {n_hidden}")
        layer = object.__new__(RandomHiddenLayer)
        layer.weights = self.weights[:, :n_hidden].copy()
        layer.biases = self.biases[:n_hidden].copy()
        return layer

    def transform(self, X):
        """The hidden-layer matrix H (n_samples x L), float64."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.weights.shape[0]:
            raise ValueError(f"X must have shape (n_samples, {self.weights.shape[0]}), "
                             f"not {X.shape}")
        return sigmoid(X @ self.weights + self.biases)


class MinMaxInputs:
    """Scales every feature to [-1, 1] by its training minimum and maximum (a constant
    feature maps to 0); test inputs outside the training range map outside [-1, 1]."""

    def fit(self, X):
        self.low = X.min(axis=0)
        spread = X.max(axis=0) - self.low
        self.scale = np.where(spread > 0, 2.0 / np.where(spread > 0, spread, 1.0), 0.0)
        return self

    def transform(self, X):
        return (X - self.low) * self.scale - np.where(self.scale > 0, 1.0, 0.0)
