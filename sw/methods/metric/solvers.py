"""Solvers for the large-margin metric learning problem (thesis eq. 2.9 / 3.1-3.7).

Given pulled pairs ``(i, j)`` and triplets ``(i, j, l)`` the problem is ::

    minimise    sum_(i,j) d_M(i, j) + c * sum_(i,j,l) xi_ijl
    subject to  d_M(i, l) - d_M(i, j) >= 1 - xi_ijl,   xi_ijl >= 0,   M PSD,

with ``d_M(a, b) = (x_a - x_b)^T M (x_a - x_b)``.  Eliminating the slacks gives the
equivalent unconstrained form ``f(M) = sum d_M(i,j) + c sum [1 + d_M(i,j) - d_M(i,l)]_+``
over the PSD cone, which :func:`objective` evaluates.

Two solvers:

* :func:`solve_sdp` states the SDP exactly as written (matrix variable, slack variables,
  linear margin constraints, PSD constraint) in cvxpy and solves it with an interior-point
  conic solver (Clarabel).  Accurate, but its size grows with the number of triplets, so
  it is meant for small problems (see ``SDP_MAX_TRIPLETS``).
* :func:`solve_sdp_clarabel` states the same SDP directly in Clarabel's conic form (the
  matrix variable as its scaled upper triangle, one slack per triplet), skipping cvxpy's
  problem compilation, whose fixed cost per problem dominates the dozens of tiny sphere
  problems of the hierarchical approach (docs/metric_learning.md).  Same problem, same interior-point solver, same default settings.
* :func:`solve_projected_gradient` minimises the same objective by accelerated projected
  gradient descent (FISTA with backtracking) on a Huber-smoothed hinge, shrinking the
  smoothing width towards zero in stages (continuation), projecting onto the PSD cone by
  clipping negative eigenvalues after every step.  Each iteration costs
  ``O(n_pairs * d^2 + d^3)``; it handles hundreds of thousands of triplets.

Both return the same minimiser up to solver tolerance on problems small enough for both.
"""

import dataclasses
import functools
import warnings

import numpy as np

__all__ = ["TripletProblem", "build_problem", "objective", "project_psd", "solve_sdp",
           "solve_sdp_clarabel", "solve_projected_gradient", "SDP_MAX_TRIPLETS", "SDP_MAX_FEATURES",
           "SDP_MAX_COST"]

# Beyond these sizes the cvxpy formulation becomes slow (its constraint matrix is dense,
# n_triplets x n_features^2) or memory hungry; "auto" then uses the fast solver.
SDP_MAX_TRIPLETS = 3000
SDP_MAX_FEATURES = 40
SDP_MAX_COST = 60_000   # n_triplets * n_features^2

# Clarabel's linear-system solver in solve_sdp_clarabel: QDLDL below this many features,
# faer from it on (the timings behind the cut-over: docs/metric_learning.md).
CLARABEL_FAER_FROM_FEATURES = 22
CLARABEL_THREADS = 1


@dataclasses.dataclass
class TripletProblem:
    """A metric learning problem with its difference vectors de-duplicated.

    Attributes
    ----------
    differences : ndarray of shape (n_unique_pairs, n_features)
        ``x_a - x_b`` for every distinct pair that appears in the objective.
    pull_counts : ndarray of shape (n_unique_pairs,)
        How often each pair appears in the pull term.
    positive_pair : ndarray of shape (n_triplets,)
        Row of ``differences`` holding ``x_i - x_j`` for each triplet.
    negative_pair : ndarray of shape (n_triplets,)
        Row of ``differences`` holding ``x_i - x_l`` for each triplet.
    c : float
        Weight of the hinge (push) term.
    """
    differences: np.ndarray
    pull_counts: np.ndarray
    positive_pair: np.ndarray
    negative_pair: np.ndarray
    c: float

    @property
    def n_features(self):
        return self.differences.shape[1]

    @property
    def n_triplets(self):
        return self.positive_pair.size


def build_problem(X, pairs, triplets, c):
    """Collect the difference vectors of ``pairs`` and ``triplets`` into a TripletProblem."""
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    pairs = np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
    triplets = np.asarray(triplets, dtype=np.intp).reshape(-1, 3)
    keys = np.concatenate([pairs[:, 0] * n + pairs[:, 1],
                           triplets[:, 0] * n + triplets[:, 1],
                           triplets[:, 0] * n + triplets[:, 2]])
    unique_keys, inverse = np.unique(keys, return_inverse=True)
    first, second = np.divmod(unique_keys, n)
    n_pull, n_trip = len(pairs), len(triplets)
    pull_counts = np.bincount(inverse[:n_pull], minlength=unique_keys.size).astype(float)
    return TripletProblem(differences=X[first] - X[second], pull_counts=pull_counts,
                          positive_pair=inverse[n_pull:n_pull + n_trip],
                          negative_pair=inverse[n_pull + n_trip:], c=float(c))


def _pair_distances(problem, M):
    return np.sum((problem.differences @ M) * problem.differences, axis=1)


def objective(problem, M):
    """Exact objective ``f(M)`` (pull term plus c times the hinge losses)."""
    distances = _pair_distances(problem, M)
    margins = 1.0 + distances[problem.positive_pair] - distances[problem.negative_pair]
    return float(problem.pull_counts @ distances
                 + problem.c * np.maximum(margins, 0.0).sum())


def project_psd(M):
    """Nearest (Frobenius) positive semi-definite matrix: clip negative eigenvalues."""
    M = (M + M.T) / 2.0
    eigenvalues, eigenvectors = np.linalg.eigh(M)
    return (eigenvectors * np.maximum(eigenvalues, 0.0)) @ eigenvectors.T


def _evaluate(problem, M, width, with_gradient):
    """Smoothed objective, exact objective and (optionally) the smoothed gradient.

    The hinge ``[z]_+`` is replaced by the Huber function that is quadratic ``z^2/(2w)``
    for ``0 < z < w``; it differs from the hinge by at most ``w/2`` per triplet.
    """
    distances = _pair_distances(problem, M)
    margins = 1.0 + distances[problem.positive_pair] - distances[problem.negative_pair]
    clipped = np.clip(margins, 0.0, width)
    pull = float(problem.pull_counts @ distances)
    huber = np.where(margins >= width, margins - width / 2.0, clipped ** 2 / (2.0 * width))
    smoothed_value = pull + problem.c * float(huber.sum())
    exact_value = pull + problem.c * float(np.maximum(margins, 0.0).sum())
    if not with_gradient:
        return smoothed_value, exact_value, None
    slope = clipped / width
    n_pairs = problem.differences.shape[0]
    pair_weights = (problem.pull_counts
                    + problem.c * np.bincount(problem.positive_pair, slope, n_pairs)
                    - problem.c * np.bincount(problem.negative_pair, slope, n_pairs))
    gradient = problem.differences.T @ (pair_weights[:, None] * problem.differences)
    return smoothed_value, exact_value, gradient


def solve_projected_gradient(problem, max_iter=2000, tol=1e-6, initial=None):
    """Minimise the objective over the PSD cone by smoothed accelerated projected gradient.

    Parameters
    ----------
    problem : TripletProblem
    max_iter : int
        Total number of gradient steps over all smoothing stages.
    tol : float
        A stage ends when the relative change of M falls below ``tol``.
    initial : ndarray of shape (n_features, n_features), optional
        Starting point; the identity by default.

    Returns
    -------
    M : ndarray of shape (n_features, n_features)
        The best iterate found (smallest exact objective), PSD.
    info : dict
        ``n_iter`` and ``objective``.
    """
    d = problem.n_features
    # Precondition by whitening the difference vectors: with v' = W^T v and M = W M' W^T
    # the objective is unchanged and M' is PSD exactly when M is (W is invertible), but
    # the problem in M' is far better conditioned for a first-order method.  Directions
    # the differences do not span get a floored eigenvalue; they do not enter the objective.
    covariance = problem.differences.T @ problem.differences / max(len(problem.differences), 1)
    eigenvalues, eigenvectors = np.linalg.eigh(covariance)
    floor = max(eigenvalues.max(), 1e-300) * 1e-10
    whitening = eigenvectors / np.sqrt(np.maximum(eigenvalues, floor))
    scaled = dataclasses.replace(problem, differences=problem.differences @ whitening)
    unwhitening = np.linalg.inv(whitening)
    M = (np.eye(d) if initial is None
         else unwhitening @ np.asarray(initial, dtype=float) @ unwhitening.T)
    best_M, best_value = M, objective(scaled, M)

    widths = [1.0, 0.1, 1e-2, 1e-3, 1e-4]
    lipschitz = 1.0
    n_iter = 0
    for stage, width in enumerate(widths):
        # Steps a stage does not need (it converged early) go to the later stages.
        stage_budget = max(1, (max_iter - n_iter) // (len(widths) - stage))
        previous, momentum_point, t = M, M, 1.0
        for _ in range(stage_budget):
            value, _, gradient = _evaluate(scaled, momentum_point, width, True)
            # Backtracking: grow the Lipschitz estimate until the quadratic bound holds.
            while True:
                candidate = project_psd(momentum_point - gradient / lipschitz)
                step = candidate - momentum_point
                candidate_value, exact, _ = _evaluate(scaled, candidate, width, False)
                bound = value + np.sum(gradient * step) + lipschitz / 2 * np.sum(step ** 2)
                if candidate_value <= bound + 1e-12 * abs(value) or lipschitz > 1e12:
                    break
                lipschitz *= 2.0
            n_iter += 1
            if exact < best_value:
                best_M, best_value = candidate, exact
            t_next = (1.0 + np.sqrt(1.0 + 4.0 * t * t)) / 2.0
            momentum_point = candidate + (t - 1.0) / t_next * (candidate - previous)
            change = np.linalg.norm(candidate - previous) / max(np.linalg.norm(candidate), 1e-12)
            previous, t = candidate, t_next
            lipschitz = max(lipschitz / 1.5, 1e-12)  # let the step grow again
            if change < tol:
                break
        M = best_M
    solution = project_psd(whitening @ best_M @ whitening.T)
    return solution, {"n_iter": n_iter, "objective": objective(problem, solution)}


def solve_sdp(problem, solver="CLARABEL"):
    """Solve the SDP of eq. 2.9 as written, with cvxpy.

    Returns
    -------
    M : ndarray of shape (n_features, n_features)
        The optimal metric, projected onto the PSD cone to remove solver round-off.
    info : dict
        ``status``, ``objective`` and the solver's ``n_iter``.

    Raises
    ------
    ImportError
        If cvxpy is not installed.
    RuntimeError
        If the conic solver does not report an optimal (or nearly optimal) solution.
    """
    import cvxpy as cp

    d = problem.n_features
    # Solve at unit data scale (better conditioned for the interior-point solver); the
    # optimum for differences / sqrt(s) is s times the optimum for the original ones.
    scale = float(np.mean(np.sum(problem.differences ** 2, axis=1))) / d
    scale = scale if scale > 0 else 1.0
    differences = problem.differences / np.sqrt(scale)
    M = cp.Variable((d, d), PSD=True)
    slack = cp.Variable(problem.n_triplets, nonneg=True)
    distances = cp.sum(cp.multiply(differences @ M, differences), axis=1)
    pull_matrix = differences.T @ (problem.pull_counts[:, None] * differences)
    constraints = []
    if problem.n_triplets:
        constraints.append(distances[problem.negative_pair] - distances[problem.positive_pair]
                           >= 1 - slack)
    cost = cp.trace(pull_matrix @ M) + problem.c * cp.sum(slack)
    sdp = cp.Problem(cp.Minimize(cost), constraints)
    with warnings.catch_warnings(record=True) as caught:
        # cvxpy warns (UserWarning) when a solution is only nearly optimal; we report the
        # status ourselves instead of letting the warning escape.
        warnings.simplefilter("always", UserWarning)
        sdp.solve(solver=solver)
    if sdp.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        messages = "; ".join(str(w.message) for w in caught)
        raise RuntimeError(f"SDP solver {solver} ended with status {sdp.status!r} {messages}")
    solution = project_psd(np.asarray(M.value)) / scale
    return solution, {"status": sdp.status, "objective": objective(problem, solution),
                      "n_iter": sdp.solver_stats.num_iters}


@functools.lru_cache(maxsize=256)
def _zero_csc(n):
    """The all-zero ``n x n`` quadratic cost (the SDP is linear), built once per size:
    Clarabel copies it, so one per size is enough."""
    import scipy.sparse as sparse
    return sparse.csc_matrix((n, n))


@functools.lru_cache(maxsize=64)
def _svec_indices(d):
    """Row/column of each entry of Clarabel's PSD-triangle vector and its scaling.

    Clarabel's ``PSDTriangleConeT(d)`` holds the upper triangle of a symmetric matrix in
    column-major order, off-diagonal entries multiplied by sqrt(2), so that
    ``<A, M> = svec(A) . svec(M)`` for symmetric ``A`` and ``M``.
    """
    columns, rows = np.tril_indices(d)       # (col, row), row <= col, column by column
    scale = np.where(rows == columns, 1.0, np.sqrt(2.0))
    for array in (rows, columns, scale):
        array.flags.writeable = False      # cached: shared by every call with this d
    return rows, columns, scale


def solve_sdp_clarabel(problem):
    """Solve the SDP of eq. 2.9 as written, stated directly for Clarabel (no cvxpy).

    Variables ``x = (svec(M), xi)``; cost ``svec(P) . svec(M) + c sum xi`` with ``P`` the
    pull matrix; constraints, all as ``s = b - A x`` in a cone:

    * ``d_M(i, l) - d_M(i, j) + xi_ijl - 1 >= 0`` (non-negative cone), one per triplet,
      with ``d_M(a, b) = svec((x_a - x_b)(x_a - x_b)^T) . svec(M)``;
    * ``xi >= 0`` (non-negative cone);
    * ``svec(M)`` in the PSD triangle cone.

    The data are rescaled to unit mean squared difference as in :func:`solve_sdp`.  Returns
    and raises like :func:`solve_sdp`.
    """
    import clarabel
    import scipy.sparse as sparse

    d = problem.n_features
    scale = float(np.mean(np.sum(problem.differences ** 2, axis=1))) / d
    scale = scale if scale > 0 else 1.0
    differences = problem.differences / np.sqrt(scale)
    rows, columns, factor = _svec_indices(d)
    # svec(v v^T) of every distinct pair: row p holds v_r v_c * (1 or sqrt 2).
    outer = differences[:, rows] * differences[:, columns] * factor
    n_svec, n_triplets = rows.size, problem.n_triplets
    pull = problem.pull_counts @ outer                      # svec of the pull matrix P
    q = np.concatenate([pull, np.full(n_triplets, problem.c)])
    margin = outer[problem.positive_pair] - outer[problem.negative_pair]   # -(d_il - d_ij)
    # A in compressed-column form, built directly (scipy's block stacking cost more than
    # the solve on small spheres).  Rows: T margin rows, T slack rows, n_svec PSD rows.
    # Column a of svec(M): the margin column (dense) and -1 in PSD row a.
    # Column of slack t: -1 in margin row t and -1 in slack row t.
    T = n_triplets
    m_indices = np.empty((n_svec, T + 1), dtype=np.int64)
    m_indices[:, :T] = np.arange(T)
    m_indices[:, T] = 2 * T + np.arange(n_svec)
    m_data = np.empty((n_svec, T + 1))
    m_data[:, :T] = margin.T
    m_data[:, T] = -1.0
    slack_indices = np.stack([np.arange(T), T + np.arange(T)], axis=1)
    indices = np.concatenate([m_indices.ravel(), slack_indices.ravel()])
    data = np.concatenate([m_data.ravel(), np.full(2 * T, -1.0)])
    indptr = np.concatenate([np.arange(n_svec + 1) * (T + 1),
                             n_svec * (T + 1) + 2 * np.arange(1, T + 1)])
    n_variables = n_svec + T
    A = sparse.csc_matrix((data, indices, indptr), shape=(2 * T + n_svec, n_variables))
    b = np.concatenate([-np.ones(T), np.zeros(T + n_svec)])
    cones = []
    if T:
        cones.append(clarabel.NonnegativeConeT(2 * T))
    cones.append(clarabel.PSDTriangleConeT(d))
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    # Clarabel's "auto" always picks faer, slower than QDLDL on small problems but faster
    # from about 22 features on (docs/metric_learning.md).
    settings.direct_solve_method = ("faer" if d >= CLARABEL_FAER_FROM_FEATURES
                                    else "qdldl")
    settings.max_threads = CLARABEL_THREADS
    solver = clarabel.DefaultSolver(_zero_csc(n_variables), q, A, b, cones, settings)
    solution = solver.solve()
    status = str(solution.status)
    if status not in ("Solved", "AlmostSolved"):
        raise RuntimeError(f"SDP solver Clarabel (direct) ended with status {status!r}")
    svec = np.asarray(solution.x[:n_svec])
    M = np.zeros((d, d))
    M[rows, columns] = svec / factor
    M[columns, rows] = svec / factor
    M = project_psd(M) / scale
    return M, {"status": "optimal" if status == "Solved" else "optimal_inaccurate",
               "objective": objective(problem, M), "n_iter": int(solution.iterations)}

