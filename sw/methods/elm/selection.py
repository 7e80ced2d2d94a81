"""Model selection of the hidden size L and the regularisation C of a regularised ELM
(seed 002, Kokkinos 2016, ch. 3): the grid, the fold split, and the seed's seven
algorithms plus the naive refits, chosen by name (:data:`ALGORITHMS`).

The grid is the seed's (L.1063, L1186): L from L_max / n_steps to L_max = a sqrt(N) in
``n_steps`` = 40 equal steps (rounded to integers, duplicates dropped; a = 2 by default,
the smallest of the seed's experiments, Fig 3.6), and C = 2^-14, ..., 2^15 (30 values,
L623). All L share the first columns of one hidden layer of L_max neurons.

The score of a pair (L, C) is the mean squared validation residual over the N rows and
the m outputs: for the HAT algorithms the PRESS mean (1/(N m)) sum e_n^2 / (1 - hat_nn)^2
(the seed's E(C, L), Algorithms 2, 4-6), for the cross-validation algorithms
(1/(N m)) sum_f ||y_f - H_f beta_(-f)||^2 (the seed's sum of e_f^T e_f, Algorithms 1, 3, 7,
divided by N m so that both families are on the scale of a mean squared error). The
chosen pair is the first minimum in (L ascending, then C ascending) order.

Algorithms (seed number, Table 3.1 name):

==============  ====  ============================================================
name            seed  what
==============  ====  ============================================================
cv_cholesky     1     efficient 10-fold CV, fold Gram subtracted, Cholesky per C
hat_cholesky    2     PRESS, Cholesky per C at L_max, nested inverse factors
cv_svd          3     10-fold CV, SVD of every training block
hat_svd         4     PRESS, SVD of H per L
hat_qr_svd      5     PRESS, one QR of H, SVD of the leading R per L
hat_evd         6     PRESS, eigendecomposition of the leading H^T H block per L
cv_evd          7     scalable 10-fold CV (fold outermost), fold Gram subtracted
                      once, eigendecomposition per fold and L
naive_cv        --    reference: every fold refitted by a direct solve
naive_loo       --    reference: every left-out row refitted by a direct solve
==============  ====  ============================================================
"""

import math
from dataclasses import dataclass

import numpy as np

from sw.methods.elm import selection_cv, selection_hat

__all__ = ["ALGORITHMS", "HAT_ALGORITHMS", "CV_ALGORITHMS", "SEED_NUMBER", "C_GRID",
           "DEFAULT_L_MAX_FACTOR", "DEFAULT_L_STEPS", "DEFAULT_FOLDS", "Selection",
           "l_grid", "make_folds", "select", "validation_residuals", "output_weights"]

#: Leave-one-out (PRESS) algorithms, the naive refit last.
HAT_ALGORITHMS = ("hat_cholesky", "hat_svd", "hat_qr_svd", "hat_evd", "naive_loo")
#: k-fold cross-validation algorithms, the naive refit last.
CV_ALGORITHMS = ("cv_cholesky", "cv_svd", "cv_evd", "naive_cv")
#: Every algorithm name the ``selection`` parameter accepts.
ALGORITHMS = CV_ALGORITHMS + HAT_ALGORITHMS
#: The seed's algorithm number of each name (None: the naive reference).
SEED_NUMBER = {"cv_cholesky": 1, "hat_cholesky": 2, "cv_svd": 3, "hat_svd": 4,
               "hat_qr_svd": 5, "hat_evd": 6, "cv_evd": 7, "naive_cv": None, "naive_loo": None}
#: The seed's minimum C grid, 2^-14 .. 2^15 (L623).
C_GRID = 2.0 ** np.arange(-14, 16)
#: a in L_max = a sqrt(N) (the seed's experiments use 2, 4 and 6).
DEFAULT_L_MAX_FACTOR = 2.0
#: Number of L values, L_max / delta L (L1186).
DEFAULT_L_STEPS = 40
#: k of the k-fold cross-validation algorithms (the seed's 10).
DEFAULT_FOLDS = 10

_FUNCTIONS = {name: getattr(selection_hat if name in HAT_ALGORITHMS else selection_cv, name)
              for name in ALGORITHMS}
_WEIGHTS = {"cv_cholesky": selection_cv.weights_cholesky,
            "hat_cholesky": selection_hat.weights_hat_cholesky,
            "cv_svd": selection_hat.weights_svd, "hat_svd": selection_hat.weights_svd,
            "hat_qr_svd": selection_hat.weights_qr_svd,
            "hat_evd": selection_hat.weights_evd, "cv_evd": selection_hat.weights_evd,
            "naive_cv": None, "naive_loo": None}


@dataclass
class Selection:
    """The outcome of a model selection: the grid, the score of every (L, C) pair
    (``scores[j, i]`` for ``l_values[j]``, ``c_values[i]``) and the chosen pair."""
    algorithm: str
    l_values: np.ndarray
    c_values: np.ndarray
    scores: np.ndarray
    n_hidden: int
    C: float


def l_grid(n_samples, factor=DEFAULT_L_MAX_FACTOR, steps=DEFAULT_L_STEPS):
    """The seed's hidden sizes: round(j L_max / steps) for j = 1..steps, L_max = factor
    sqrt(n_samples), at least 1, duplicates dropped (ascending int array)."""
    l_max = factor * math.sqrt(n_samples)
    values = np.maximum(1, np.rint(np.arange(1, steps + 1) * l_max / steps)).astype(int)
    return np.unique(values)


def make_folds(n_samples, n_folds=DEFAULT_FOLDS, seed=0):
    """``n_folds`` disjoint validation-row arrays of sizes differing by at most one, from a
    permutation drawn with ``seed`` (each array sorted)."""
    if not 2 <= n_folds <= n_samples:
        raise ValueError(f"{n_folds}-fold cross-validation needs 2 <= n_folds <= n_samples; "
                         f"X has {n_samples} sample{'' if n_samples == 1 else 's'}")
    order = np.random.default_rng(seed).permutation(n_samples)
    return [np.sort(part) for part in np.array_split(order, n_folds)]


def _check(H, Y, Ls, Cs, algorithm):
    if algorithm not in _FUNCTIONS:
        raise ValueError(f"selection must be one of {', '.join(ALGORITHMS)}; not {algorithm!r}")
    H = np.asarray(H, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    Y = Y[:, None] if Y.ndim == 1 else Y
    Ls = np.asarray(Ls, dtype=int)
    Cs = np.asarray(Cs, dtype=np.float64)
    if H.ndim != 2 or Y.ndim != 2 or Y.shape[0] != H.shape[0]:
        raise ValueError(f"H (N x L) and Y (N x m) must have the same rows, not {H.shape} "
                         f"and {Y.shape}")
    if Ls.ndim != 1 or len(Ls) == 0 or np.any(np.diff(Ls) <= 0) or Ls[0] < 1 \
            or Ls[-1] > H.shape[1]:
        raise ValueError(f"the hidden sizes must ascend within [1, {H.shape[1]}], not {Ls}")
    if Cs.ndim != 1 or len(Cs) == 0 or not np.all(np.isfinite(Cs)) or np.any(Cs <= 0):
        raise ValueError(f"the C values must be finite and > 0, not {Cs}")
    return H[:, :Ls[-1]], Y, Ls, Cs


def _run(H, Y, Ls, Cs, algorithm, folds, consume):
    if algorithm in CV_ALGORITHMS and folds is None:
        folds = make_folds(H.shape[0])
    if algorithm in HAT_ALGORITHMS and H.shape[0] < 2:
        raise ValueError("leave-one-out needs at least 2 samples; X has 1 sample")
    _FUNCTIONS[algorithm](H, Y, Ls, Cs, folds, consume)


def select(H, Y, Ls, Cs, algorithm="cv_evd", folds=None):
    """Score every (L, C) of the grid ``Ls`` x ``Cs`` with ``algorithm`` on the hidden-layer
    matrix ``H`` (N x >= max(Ls)) and targets ``Y`` (N or N x m); ``folds`` (validation
    rows, :func:`make_folds` by default) for the cross-validation algorithms. Returns a
    :class:`Selection`."""
    H, Y, Ls, Cs = _check(H, Y, Ls, Cs, algorithm)
    sums = np.zeros((len(Ls), len(Cs)))

    def consume(j, cidx, rows, residuals):
        sums[j, cidx] += np.einsum("crm,crm->c", residuals, residuals)

    _run(H, Y, Ls, Cs, algorithm, folds, consume)
    scores = sums / Y.size
    if not np.all(np.isfinite(scores)):
        raise FloatingPointError(f"{algorithm}: a score is not finite (leverage 1 or an "
                                 f"overflow); the hidden layer is degenerate")
    j, i = np.unravel_index(np.argmin(scores), scores.shape)
    return Selection(algorithm, Ls, Cs, scores, int(Ls[j]), float(Cs[i]))


def validation_residuals(H, Y, L, C, algorithm, folds=None):
    """The N x m validation residuals of one pair (L, C): leave-one-out residuals
    e_(-n) for the HAT algorithms, out-of-fold residuals for the cross-validation ones,
    computed by ``algorithm``'s own code path (the one :func:`select` scores)."""
    H, Y, Ls, Cs = _check(H, Y, [L], [C], algorithm)
    out = np.full(Y.shape, np.nan)

    def consume(j, cidx, rows, residuals):
        out[rows] = residuals[0]

    _run(H, Y, Ls, Cs, algorithm, folds, consume)
    return out


def output_weights(H, Y, L, C, algorithm="cv_evd"):
    """The output weights beta = (H_L^T H_L + I/C)^-1 H_L^T Y (L x m) of the first ``L``
    columns of ``H`` on all rows, through ``algorithm``'s decomposition (a direct solve
    for the naive references)."""
    H, Y, _, _ = _check(H, Y, [L], [C], algorithm)
    solver = _WEIGHTS[algorithm]
    if solver is None:
        H_L = H[:, :L]
        return np.linalg.solve(H_L.T @ H_L + np.eye(L) / C, H_L.T @ Y)
    return solver(H, Y, L, C)
