"""k-fold cross-validation model selection: the seed's Algorithms 1, 3 and 7 (seed 002
ch. 3, sections 3.3.1, 3.4.1, 3.6.2) and the naive per-fold refit that is their reference.

Same signature as :mod:`sw.methods.elm.selection_hat`: ``algorithm(H, Y, Ls, Cs, folds,
consume)`` with ``folds`` a list of row-index arrays (the validation rows of each fold);
``consume(j, cidx, rows, residuals)`` receives the validation residuals
``y_f - H_f beta_(-f)`` of fold rows ``rows`` for hidden size ``Ls[j]`` and the
regularisation values ``Cs[cidx]``, shape ``(len(cidx), len(rows), m)``.
"""

import numpy as np
import scipy.linalg as sla

from sw.methods.elm.selection_hat import _filter, _gram, _times

__all__ = ["cv_cholesky", "cv_svd", "cv_evd", "naive_cv", "weights_cholesky"]


def _complement(folds, N):
    """The training rows of each fold."""
    rows = np.arange(N)
    out = []
    for fold in folds:
        mask = np.ones(N, dtype=bool)
        mask[fold] = False
        out.append(rows[mask])
    return out


def _fold_residuals(Hf, Yf, betas):
    """y_f - H_f beta for stacked betas (nC, L, m) -> (nC, n_f, m)."""
    return Yf[None] - _times(Hf, betas)


def cv_cholesky(H, Y, Ls, Cs, folds, consume):
    """Algorithm 1, efficient k-fold CV (loops L -> fold -> C): H^T H and H^T y once; per L
    and fold the fold's H_f^T H_f is subtracted from the leading block (no Gram of the
    N - N/k training rows); per C a Cholesky factorisation and solve."""
    gram, hy = _gram(H, Y)
    parts = [(H[fold], Y[fold], fold) for fold in folds]
    for j, L in enumerate(Ls):
        eye = np.eye(L)
        for Hf_full, Yf, fold in parts:
            Hf = Hf_full[:, :L]
            gram_rest = gram[:L, :L] - Hf.T @ Hf
            hy_rest = hy[:L] - Hf.T @ Yf
            for i, C in enumerate(Cs):
                beta = sla.cho_solve(sla.cho_factor(gram_rest + eye / C, lower=False), hy_rest)
                consume(j, [i], fold, _fold_residuals(Hf, Yf, beta[None]))


def weights_cholesky(H, Y, L, C):
    gram, hy = _gram(H[:, :L], Y)
    return sla.cho_solve(sla.cho_factor(gram + np.eye(L) / C, lower=False), hy)


def cv_svd(H, Y, Ls, Cs, folds, consume):
    """Algorithm 3 (loops L -> fold -> C): per L and fold the training block H_(-f) is
    built and decomposed H_(-f) = U S V^T; for all C beta = V diag(s / (s^2 + 1/C)) U^T y_(-f)
    (eq. 3.14)."""
    Cs = np.asarray(Cs, dtype=np.float64)
    train = _complement(folds, H.shape[0])
    for j, L in enumerate(Ls):
        for fold, rest in zip(folds, train):
            U, s, Vt = sla.svd(H[rest, :L], full_matrices=False, lapack_driver="gesdd")
            uty = U.T @ Y[rest]
            shrink = s[None, :] / (s[None, :] ** 2 + 1.0 / Cs[:, None])
            betas = _filter(Vt.T, shrink, uty)
            consume(j, slice(None), fold, _fold_residuals(H[fold, :L], Y[fold], betas))


def cv_evd(H, Y, Ls, Cs, folds, consume):
    """Algorithm 7, scalable k-fold CV (loops fold -> L -> C): H^T H and H^T y once; per fold
    H_(-f)^T H_(-f) = H^T H - H_f^T H_f once at L_max; per L the eigendecomposition of its
    leading L x L block and Q^T H_(-f)^T y_(-f); for all C
    beta = Q diag(1/(lambda + 1/C)) [Q^T H_(-f)^T y_(-f)] (L^2 per C, no L^2 N term per L)."""
    Cs = np.asarray(Cs, dtype=np.float64)
    gram, hy = _gram(H, Y)
    for fold in folds:
        Hf_full, Yf = H[fold], Y[fold]
        gram_rest = gram - Hf_full.T @ Hf_full
        hy_rest = hy - Hf_full.T @ Yf
        for j, L in enumerate(Ls):
            lam, Q = sla.eigh(gram_rest[:L, :L])
            o = Q.T @ hy_rest[:L]
            inv = 1.0 / (lam[None, :] + 1.0 / Cs[:, None])
            betas = _filter(Q, inv, o)
            consume(j, slice(None), fold, _fold_residuals(Hf_full[:, :L], Yf, betas))


def naive_cv(H, Y, Ls, Cs, folds, consume):
    """The reference, naive k-fold CV (loops L -> C -> fold, the seed's "naive" order): every
    fold's model refitted from its own training rows by a direct solve of
    (H_(-f)^T H_(-f) + I/C) beta = H_(-f)^T y_(-f)."""
    train = _complement(folds, H.shape[0])
    for j, L in enumerate(Ls):
        for i, C in enumerate(Cs):
            for fold, rest in zip(folds, train):
                Hr = H[rest, :L]
                beta = np.linalg.solve(Hr.T @ Hr + np.eye(L) / C, Hr.T @ Y[rest])
                consume(j, [i], fold, _fold_residuals(H[fold, :L], Y[fold], beta[None]))
