"""Leave-one-out (PRESS) model selection through the HAT matrix: the seed's Algorithms 2,
4, 5 and 6 (seed 002 ch. 3, sections 3.3.2, 3.4.2, 3.5.1, 3.6.1) and the brute-force
refit that is their reference.

Every function has the signature ``algorithm(H, Y, Ls, Cs, folds, consume)``: ``H`` is the
hidden-layer matrix of the largest L (N x L_max), ``Y`` the targets (N x m), ``Ls`` the
hidden sizes (ascending), ``Cs`` the regularisation values, ``folds`` is ignored (it is
the cross-validation algorithms' row split) and ``consume(j, cidx, rows, residuals)``
receives, for hidden size ``Ls[j]`` and the regularisation values ``Cs[cidx]``, the
leave-one-out residuals ``e_(-n) = (y_n - h_n beta) / (1 - hat_nn)`` (eq. 3.6) of the
rows ``rows`` as an array ``(len(cidx), len(rows), m)``. The loop orders and the reused
factors are the seed's (its ``Operations`` columns); the loops over C are written as one
array operation over all C where the seed's step is a loop of the same operations.

``weights_*(H, Y, L, C)`` give the output weights beta = (H^T H + I/C)^-1 H^T Y of the first
L columns through the same decomposition.
"""

import numpy as np
import scipy.linalg as sla

__all__ = ["hat_cholesky", "hat_svd", "hat_qr_svd", "hat_evd", "naive_loo",
           "weights_hat_cholesky", "weights_svd", "weights_qr_svd", "weights_evd"]

_ALL = slice(None)


def _gram(H, Y):
    """H^T H (the upper triangle computed, as the seed's guideline) and H^T Y."""
    gram = sla.blas.dsyrk(1.0, H, trans=1)
    gram = np.triu(gram) + np.triu(gram, 1).T
    return gram, H.T @ Y


def _filter(M, weights, V):
    """M diag(weights[c]) V for every row c of ``weights``: (nC, rows(M), cols(V)) by BLAS
    (M: a x k, weights: nC x k, V: k x m)."""
    return M @ (weights[:, :, None] * V[None])


def _times(H, stacked):
    """H @ stacked[c] for every c (stacked: nC x L x m) as one matrix product."""
    n_c, L, m = stacked.shape
    flat = H @ stacked.transpose(1, 0, 2).reshape(L, n_c * m)
    return flat.reshape(H.shape[0], n_c, m).transpose(1, 0, 2)


def _press(Y, fitted, one_minus_hat):
    """(y - f) / (1 - hat) for stacked C: fitted (nC, N, m), one_minus_hat (nC, N)."""
    return (Y[None] - fitted) / one_minus_hat[:, :, None]


def hat_cholesky(H, Y, Ls, Cs, folds, consume):
    """Algorithm 2: per C one Cholesky factor R of G = H^T H + I/C at L_max and its inverse
    S = R^-1; the leading L x L block of S is the inverse factor of the leading block of G,
    so (G^L)^-1 = S_L S_L^T; hat_nn = ||h_n S_L||^2 (L^2 N per L and C)."""
    gram, hy = _gram(H, Y)
    eye = np.eye(gram.shape[0])
    for i, C in enumerate(Cs):
        R = sla.cholesky(gram + eye / C, lower=False)
        S = sla.solve_triangular(R, eye, lower=False)
        for j, L in enumerate(Ls):
            S_L = S[:L, :L]
            beta = S_L @ (S_L.T @ hy[:L])
            HS = H[:, :L] @ S_L
            hat = np.einsum("nk,nk->n", HS, HS)
            fitted = H[:, :L] @ beta
            consume(j, [i], _ALL, _press(Y, fitted[None], (1.0 - hat)[None]))


def weights_hat_cholesky(H, Y, L, C):
    gram, hy = _gram(H[:, :L], Y)
    R = sla.cholesky(gram + np.eye(L) / C, lower=False)
    S = sla.solve_triangular(R, np.eye(L), lower=False)
    return S @ (S.T @ hy)


def hat_svd(H, Y, Ls, Cs, folds, consume):
    """Algorithm 4: per L the thin SVD H = U S V^T; for all C
    beta = V diag(s / (s^2 + 1/C)) U^T y (eq. 3.14) and hat_nn = sum_k u_nk^2 s_k^2 /
    (s_k^2 + 1/C) (eq. 3.15)."""
    Cs = np.asarray(Cs, dtype=np.float64)
    for j, L in enumerate(Ls):
        U, s, Vt = sla.svd(H[:, :L], full_matrices=False, lapack_driver="gesdd")
        uty = U.T @ Y
        shrink = s[None, :] / (s[None, :] ** 2 + 1.0 / Cs[:, None])        # (nC, L)
        betas = _filter(Vt.T, shrink, uty)
        fitted = _times(H[:, :L], betas)
        hat = (U * U) @ (shrink * s[None, :]).T                            # (N, nC)
        consume(j, _ALL, _ALL, _press(Y, fitted, 1.0 - hat.T))


def weights_svd(H, Y, L, C):
    U, s, Vt = sla.svd(H[:, :L], full_matrices=False, lapack_driver="gesdd")
    return Vt.T @ ((s / (s ** 2 + 1.0 / C))[:, None] * (U.T @ Y))


def hat_qr_svd(H, Y, Ls, Cs, folds, consume):
    """Algorithm 5: one QR of H at L_max (the leading L x L block of R is the R of the
    first L columns); per L the SVD R_L = U S V^T and the cached [HV], [V^T H^T y]; for all
    C e = y - [HV] diag(1/(s^2 + 1/C)) [V^T H^T y] (eq. 3.22), (I - HAT)_nn =
    1 - sum_k [HV]_nk^2 / (s_k^2 + 1/C) (eq. 3.20), beta = C H^T e (eq. 3.23)."""
    Cs = np.asarray(Cs, dtype=np.float64)
    R = sla.qr(H, mode="r")[0]
    for j, L in enumerate(Ls):
        _, s, Vt = sla.svd(R[:L, :L], lapack_driver="gesdd")
        HV = H[:, :L] @ Vt.T
        vhy = HV.T @ Y
        inv = 1.0 / (s[None, :] ** 2 + 1.0 / Cs[:, None])                  # (nC, L)
        residual = Y[None] - _times(HV, inv[:, :, None] * vhy[None])
        one_minus_hat = 1.0 - ((HV * HV) @ inv.T).T
        consume(j, _ALL, _ALL, residual / one_minus_hat[:, :, None])


def weights_qr_svd(H, Y, L, C):
    """beta = C H^T e with e = (I - HAT) y from the QR and SVD factors (eq. 3.23)."""
    R = sla.qr(H[:, :L], mode="r")[0]
    _, s, Vt = sla.svd(R, lapack_driver="gesdd")
    HV = H[:, :L] @ Vt.T
    residual = Y - HV @ ((HV.T @ Y) / (s ** 2 + 1.0 / C)[:, None])
    return C * (H[:, :L].T @ residual)


def hat_evd(H, Y, Ls, Cs, folds, consume):
    """Algorithm 6: one H^T H at L_max; per L the eigendecomposition of its leading block
    Q diag(lambda) Q^T, the cached [HQ] and [Q^T H^T y]; for all C
    beta = Q diag(1/(lambda + 1/C)) Q^T H^T y and hat_nn = sum_k [HQ]_nk^2 / (lambda_k + 1/C)
    (eq. 3.26)."""
    Cs = np.asarray(Cs, dtype=np.float64)
    gram, hy = _gram(H, Y)
    for j, L in enumerate(Ls):
        lam, Q = sla.eigh(gram[:L, :L])
        HQ = H[:, :L] @ Q
        qhy = Q.T @ hy[:L]
        inv = 1.0 / (lam[None, :] + 1.0 / Cs[:, None])
        betas = _filter(Q, inv, qhy)
        fitted = _times(H[:, :L], betas)
        one_minus_hat = 1.0 - ((HQ * HQ) @ inv.T).T
        consume(j, _ALL, _ALL, _press(Y, fitted, one_minus_hat))


def weights_evd(H, Y, L, C):
    gram, hy = _gram(H[:, :L], Y)
    lam, Q = sla.eigh(gram)
    return Q @ ((Q.T @ hy) / (lam + 1.0 / C)[:, None])


def naive_loo(H, Y, Ls, Cs, folds, consume):
    """The reference: for every L, C and row n, refit on the other N - 1 rows by a direct
    solve and predict row n (N L^2 (N + L) per pair; small problems only)."""
    N = H.shape[0]
    keep = ~np.eye(N, dtype=bool)
    for j, L in enumerate(Ls):
        for i, C in enumerate(Cs):
            residuals = np.empty((1, N, Y.shape[1]))
            for n in range(N):
                Hn, Yn = H[keep[n], :L], Y[keep[n]]
                beta = np.linalg.solve(Hn.T @ Hn + np.eye(L) / C, Hn.T @ Yn)
                residuals[0, n] = Y[n] - H[n, :L] @ beta
            consume(j, [i], _ALL, residuals)
