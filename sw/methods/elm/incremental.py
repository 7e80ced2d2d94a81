"""Incremental extreme learning machines (seed 002, Kokkinos 2016, chapter 4).

A single-hidden-layer network of sigmoid neurons ``g_i(x) = 1 / (1 + exp(-(a_i . x + b_i)))``
grown one neuron at a time; only the output weights are learnt (eq. 4.1). Four variants:

``"i-elm"`` (Huang, Chen and Siew 2006)
    the new neuron's weight is the 1-D least-squares fit of the residual,
    ``w_L = <e, g> / <g, g>`` (eq. 4.2); the older weights are frozen.
``"ci-elm"`` (convex I-ELM, Huang and Chen 2007)
    with ``d = e - (y - g)``, ``w_L = <e, d> / <d, d>`` (eq. 4.3), the residual becomes
    ``(1 - w_L) e + w_L (y - g)`` (eq. 4.4) and every older weight is scaled by
    ``1 - w_L`` (eq. 4.5): the model is the convex combination
    ``f_L = (1 - w_L) f_{L-1} + w_L g_L``.
``"ei-elm"`` (enhanced I-ELM, Huang and Chen 2008)
    K candidate neurons per step, each fitted as in I-ELM; the one leaving the smallest
    residual norm is kept.
``"eci-elm"`` (the seed's enhanced convex I-ELM)
    K candidates per step fitted as in CI-ELM, the best kept, then eq. 4.5.

Both fits are one projection of the residual on a direction ``d`` (``g`` for I-ELM, ``e - y
+ g`` for CI-ELM): ``w = <e, d> / <d, d>`` and the new residual is ``e - w d`` with
``||e - w d||^2 = ||e||^2 - <e, d>^2 / <d, d>``. Every step therefore needs, per candidate,
the two sums ``<e, d_k>`` and ``<d_k, d_k>`` plus ``<e, e>`` once, which is what
:class:`Shard` returns for its rows; the data-parallel fit (:mod:`sw.methods.elm.distributed`)
adds these partial sums over shards of rows, the serial fit is one shard of all rows. The
candidate with the largest ``<e, d_k>^2 / <d_k, d_k>`` (the first on a tie) is kept.

Random stream: the generator from ``random_state`` draws, per step, the candidates' input
weights ``uniform(-r, r, (K, d))`` and then their biases ``uniform(-r, r, K)`` (r =
``weight_range``). With K = 1 these are the I-ELM and CI-ELM draws, so EI-ELM with K = 1
equals I-ELM and ECI-ELM with K = 1 equals CI-ELM neuron for neuron.
"""

import time

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from sw.methods.params import Instance, Integer, Options, Real, validate_parameters

__all__ = ["IncrementalELMRegressor", "VARIANTS", "Shard", "SerialShards", "activations",
           "grow"]

#: Variant name -> (convex update, enhanced: K candidates per step).
VARIANTS = {"i-elm": (False, False), "ci-elm": (True, False),
            "ei-elm": (False, True), "eci-elm": (True, True)}
#: Candidates per step of the enhanced variants when ``n_candidates`` is None; the seed
#: gives "10 to 20" (L1335) and does not say which K its tables used.
DEFAULT_CANDIDATES = 10


def activations(X, input_weights, biases):
    """Sigmoid activations of the neurons (rows of ``input_weights``) on the rows of X,
    an (n_samples, n_neurons) array."""
    return expit(X @ input_weights.T + biases)


class Shard:
    """The rows a worker holds (all rows in the serial fit): inputs, targets, residuals.

    :meth:`step` first applies the previous step's choice to the residuals (the master's
    broadcast of k* and w_L, eq. 4.2/4.4 as ``e <- e - w d_k*``), then returns the partial
    sums of the new candidates: ``[<e, e>, <e, d_1> .. <e, d_K>, <d_1, d_1> .. <d_K, d_K>]``.
    ``busy()`` is the CPU time its calls took (thread time, for the scaling study).
    """

    def __init__(self, X, y):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.residual = self.y.copy()
        self._directions = None
        self._seconds = 0.0

    def step(self, chosen, input_weights, biases, convex):
        """``chosen``: None or (k*, w) of the previous step; the candidates' input weights
        (K, d) and biases (K,); ``convex``: CI-ELM directions. Returns 1 + 2K sums."""
        start = time.thread_time()
        self.apply(chosen)
        directions = activations(self.X, input_weights, biases)
        if convex:
            directions += (self.residual - self.y)[:, None]
        self._directions = directions
        sums = np.concatenate([[self.residual @ self.residual], self.residual @ directions,
                               np.einsum("ij,ij->j", directions, directions)])
        self._seconds += time.thread_time() - start
        return sums

    def apply(self, chosen):
        """Update the residuals with (k*, w) of the last step (None: nothing to do)."""
        if chosen is not None:
            index, weight = chosen
            self.residual -= weight * self._directions[:, index]
            self._directions = None

    def residual_norm2(self):
        return float(self.residual @ self.residual)

    def busy(self):
        return self._seconds


class SerialShards:
    """The serial fit: one shard of every row, in this process."""

    def __init__(self, X, y):
        self.shard = Shard(X, y)

    def step(self, chosen, input_weights, biases, convex):
        return self.shard.step(chosen, input_weights, biases, convex)

    def finish(self, chosen):
        self.shard.apply(chosen)
        return self.shard.residual_norm2()

    def close(self):
        pass


def grow(shards, n_features, *, convex, n_candidates, max_neurons, target_norm2, rng,
         weight_range=1.0):
    """The incremental fit (master side), on ``shards`` (an object with ``step`` returning
    the reduced sums of :meth:`Shard.step` and ``finish``).

    Returns (input_weights (L, d), biases (L,), output_weights (L,), step_weights (L,),
    residual sums of squares (L + 1,)): ``step_weights[i]`` is w of step i as fitted,
    ``output_weights`` the final weights after the convex rescalings (eq. 4.5)."""
    history = []
    inputs, biases, steps = [], [], []
    chosen = None
    for _ in range(max_neurons):
        candidates = rng.uniform(-weight_range, weight_range, size=(n_candidates, n_features))
        offsets = rng.uniform(-weight_range, weight_range, size=n_candidates)
        sums = shards.step(chosen, candidates, offsets, convex)
        history.append(sums[0])
        if sums[0] <= target_norm2:
            chosen = None
            break
        projected, squares = sums[1:1 + n_candidates], sums[1 + n_candidates:]
        with np.errstate(divide="ignore", invalid="ignore"):
            gains = np.where(squares > 0, projected ** 2 / squares, 0.0)
        best = int(np.argmax(gains))
        weight = projected[best] / squares[best] if squares[best] > 0 else 0.0
        chosen = (best, weight)
        inputs.append(candidates[best])
        biases.append(offsets[best])
        steps.append(weight)
    final = shards.finish(chosen)
    if chosen is not None:
        history.append(final)
    steps = np.array(steps, dtype=np.float64)
    return (np.array(inputs, dtype=np.float64).reshape(len(steps), n_features),
            np.array(biases, dtype=np.float64), _final_weights(steps, convex), steps,
            np.array(history, dtype=np.float64))


def _final_weights(steps, convex):
    """Output weights after every later step's rescaling by (1 - w_j) (eq. 4.5)."""
    if not convex or len(steps) == 0:
        return steps.copy()
    later = np.concatenate([np.cumprod((1.0 - steps)[::-1])[::-1][1:], [1.0]])
    return steps * later


class _DaskClient:
    """Constraint: a ``distributed.Client`` (checked by name, so that validating the
    parameters does not import dask)."""

    def accepts(self, value):
        kind = type(value)
        return kind.__name__ == "Client" and kind.__module__.startswith("distributed")

    def __str__(self):
        return "a distributed.Client"


class IncrementalELMRegressor(RegressorMixin, BaseEstimator):
    """Incremental ELM regressor: I-ELM, convex I-ELM, enhanced I-ELM or the seed's
    enhanced convex I-ELM (Kokkinos 2016, ch. 4), serial or data-parallel on Dask.

    Parameters
    ----------
    variant : {"i-elm", "ci-elm", "ei-elm", "eci-elm"}, default "eci-elm"
        The update (frozen weights or convex) and whether K candidates are tried per step.
    n_candidates : int or None, default None
        K, candidate neurons per step. None: 1 for "i-elm"/"ci-elm", 10 for the enhanced
        variants. The plain variants accept only 1.
    max_neurons : int, default 1000
        L_max, hidden neurons at most (the seed's tables use 1000).
    target_error : float or None, default None
        Stop adding neurons when the training RMSE is at most this (the seed's epsilon,
        as a root mean square); None: grow to ``max_neurons``.
    weight_range : float, default 1.0
        Input weights and biases are drawn uniformly from [-weight_range, weight_range]
        (the seed: [-1, 1]; it scales inputs to [-1, 1] and targets to [0, 1]).
    parallel : {None, "dask"}, default None
        None: serial fit in this process. "dask": rows sharded over the workers of a Dask
        cluster, one map of partial sums and one reduce per neuron
        (:mod:`sw.methods.elm.distributed`); same model to floating-point summation order.
    scheduler : str, distributed.Client or None, default None
        ``parallel="dask"`` only: a scheduler address (e.g. "tcp://host:8786") or a
        client of an existing cluster; None: the ``DASK_SCHEDULER_ADDRESS`` environment
        variable if set, else a LocalCluster of one single-threaded worker process per
        core, started for the fit and closed after it.
    n_workers : int or None, default None
        ``parallel="dask"`` only: shards (one per worker); None: every worker of the
        cluster. At most the cluster's workers.
    random_state : int, RandomState or None, default None
        Seeds the candidate neurons (see the module docstring for the stream's order).

    Attributes
    ----------
    input_weights_ : array (n_neurons_, n_features_in_)
    biases_ : array (n_neurons_,)
    output_weights_ : array (n_neurons_,)
        Final output weights, ``predict(X) = sigmoid(X A^T + b) @ output_weights_``.
    step_weights_ : array (n_neurons_,)
        Each neuron's weight as fitted at its step (before later convex rescalings).
    train_rmse_ : array (n_neurons_ + 1,)
        Training RMSE before the first neuron and after each neuron.
    n_neurons_, n_features_in_ : int
    """

    _parameter_constraints = {
        "variant": [Options(*VARIANTS)],
        "n_candidates": [Integer(1), Options(None)],
        "max_neurons": [Integer(1)],
        "target_error": [Real(0, np.inf), Options(None)],
        "weight_range": [Real(0, np.inf, low_open=True)],
        "parallel": [Options(None, "dask")],
        "scheduler": [Options(None), Instance(str, "a scheduler address (str)"),
                      _DaskClient()],
        "n_workers": [Integer(1), Options(None)],
        "random_state": [Integer(0, (1 << 32) - 1), Options(None),
                         Instance(np.random.RandomState, "a numpy RandomState")],
    }

    def __init__(self, variant="eci-elm", *, n_candidates=None, max_neurons=1000,
                 target_error=None, weight_range=1.0, parallel=None, scheduler=None,
                 n_workers=None, random_state=None):
        self.variant = variant
        self.n_candidates = n_candidates
        self.max_neurons = max_neurons
        self.target_error = target_error
        self.weight_range = weight_range
        self.parallel = parallel
        self.scheduler = scheduler
        self.n_workers = n_workers
        self.random_state = random_state

    def _candidates(self):
        convex, enhanced = VARIANTS[self.variant]
        if self.n_candidates is None:
            return DEFAULT_CANDIDATES if enhanced else 1
        if not enhanced and self.n_candidates != 1:
            raise ValueError(f"IncrementalELMRegressor: variant={self.variant!r} tries one "
                             f"neuron per step, n_candidates={self.n_candidates} must be 1 or"
                             f" None (use 'ei-elm' or 'eci-elm' for K candidates)")
        return self.n_candidates

    def fit(self, X, y):
        """Grow the network on (X, y); returns self."""
        validate_parameters(self)
        n_candidates = self._candidates()
        for name in ("scheduler", "n_workers"):
            if self.parallel is None and getattr(self, name) is not None:
                raise ValueError(f"IncrementalELMRegressor: {name}={getattr(self, name)!r} is "
                                 f"used only with parallel='dask', not parallel=None")
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite=True,
                             y_numeric=True)
        n_rows = X.shape[0]
        if n_rows < 2:
            raise ValueError(f"IncrementalELMRegressor needs at least 2 samples, got "
                             f"n_samples = {n_rows}")
        if self.parallel == "dask":
            from sw.methods.elm.distributed import DaskShards   # dask is slow to import
            shards = DaskShards(X, y, scheduler=self.scheduler, n_workers=self.n_workers)
        else:
            shards = SerialShards(X, y)
        target = -1.0 if self.target_error is None else n_rows * self.target_error ** 2
        try:
            result = grow(shards, X.shape[1], convex=VARIANTS[self.variant][0],
                          n_candidates=n_candidates, max_neurons=self.max_neurons,
                          target_norm2=target, rng=check_random_state(self.random_state),
                          weight_range=self.weight_range)
        finally:
            shards.close()
        (self.input_weights_, self.biases_, self.output_weights_, self.step_weights_,
         norms) = result
        self.train_rmse_ = np.sqrt(np.maximum(norms, 0.0) / n_rows)
        self.n_neurons_ = len(self.biases_)
        return self

    def predict(self, X):
        """Network output sum_i w_i g_i(x) for each row of X."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64, ensure_all_finite=True)
        return activations(X, self.input_weights_, self.biases_) @ self.output_weights_

    def staged_predict(self, X):
        """The output after 0, 1, .., n_neurons_ neurons: an array (n_neurons_ + 1,
        n_samples), by the recursion of each variant (I-ELM: f_L = f_{L-1} + w_L g_L;
        CI-ELM: f_L = (1 - w_L) f_{L-1} + w_L g_L) from ``step_weights_``."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64, ensure_all_finite=True)
        hidden = activations(X, self.input_weights_, self.biases_)
        convex = VARIANTS[self.variant][0]
        out = np.zeros((self.n_neurons_ + 1, X.shape[0]))
        for i, weight in enumerate(self.step_weights_):
            keep = 1.0 - weight if convex else 1.0
            out[i + 1] = keep * out[i] + weight * hidden[:, i]
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.single_output = True
        tags.target_tags.multi_output = False
        return tags
