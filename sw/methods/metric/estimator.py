"""The large-margin metric learning estimator (thesis eq. 2.8/2.9, chapter 3)."""

import math
import time

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted, check_X_y
from threadpoolctl import threadpool_limits

from .hierarchical import (DEFAULT_N_ITERATIONS, hierarchical_schedule, points_in_sphere,
                           sphere_centres, stratified_sample)
from sw.methods.params import Boolean, Integer, Options, Real, validate_parameters

from .mining import canonical_miner_name, mine_triplets
from .solvers import (SDP_MAX_COST, SDP_MAX_FEATURES, SDP_MAX_TRIPLETS, build_problem, project_psd,
                      solve_projected_gradient, solve_sdp, solve_sdp_clarabel)

__all__ = ["LargeMarginMetricLearning", "SOLVERS", "SDP_INTERFACES"]

SOLVERS = ("auto", "sdp", "projected_gradient")
SDP_INTERFACES = ("auto", "cvxpy", "clarabel")


class LargeMarginMetricLearning(TransformerMixin, BaseEstimator):
    """Large-margin Mahalanobis metric learning for nearest-neighbour classification.

    Learns a positive semi-definite matrix ``M = L L^T`` minimising eq. 2.9 of the thesis:
    the squared Mahalanobis distances of the pulled anchor-positive pairs plus ``c`` times
    the hinge losses of triplets whose negative is not a unit margin farther from the anchor
    than the positive.  Which pairs and triplets enter is decided by the triplet miner
    (thesis sections 3.1-3.5).  With ``hierarchical=True`` the problem is solved on
    stratified samples inside growing hyperspheres and the metrics are averaged
    (section 3.6, Algorithm 1).

    The interface follows scikit-learn-contrib ``metric-learn``: ``components_`` holds
    ``L^T`` (one projection direction per row), ``transform(X) = X @ components_.T`` and
    ``get_mahalanobis_matrix()`` returns ``M``.

    Parameters
    ----------
    mining : str, default="batch_hard"
        Triplet miner: ``"batch_all"``, ``"batch_hard"`` (= k-HPHN), ``"batch_semi_hard"``,
        ``"hpen"``, ``"epen"``, ``"ephn"`` or ``"negative_sampling"``; the thesis names
        (``"k-BA"``, ``"k-BH"``, ...) are accepted too.  See :mod:`sw.methods.metric.mining`.
    hierarchical : bool, default=False
        Use the hierarchical approach with stratified sampling and model averaging.
    solver : {"auto", "sdp", "projected_gradient"}, default="auto"
        ``"sdp"`` solves the SDP as written with cvxpy (small problems only),
        ``"projected_gradient"`` the same objective by accelerated projected gradient on the
        PSD cone; ``"auto"`` takes the SDP when the problem has at most
        ``SDP_MAX_TRIPLETS`` triplets, ``SDP_MAX_FEATURES`` features and
        ``n_triplets * n_features**2 <= SDP_MAX_COST``.
    sdp_interface : {"auto", "cvxpy", "clarabel"}, default="auto"
        How the SDP reaches the interior-point solver Clarabel: ``"cvxpy"`` states it in
        cvxpy (a fixed compilation cost per problem), ``"clarabel"`` hands Clarabel the
        same conic problem directly (:func:`sw.methods.metric.solvers.solve_sdp_clarabel`; same
        optimum to solver tolerance).  ``"auto"``: cvxpy for the single problem of the
        non-hierarchical approach, Clarabel directly for the many small sphere problems
        of the hierarchical approach.
    k : int, default=3
        Positives per anchor and negatives per anchor-positive pair.
    c : float, default=1.0
        Weight of the hinge (push) term; too small a ``c`` makes ``M = 0`` optimal.
    negative_sampling_cap : float, default=1.4
        ``lambda`` of eq. 2.12 (negative sampling only).
    max_iter : int, default=2000
        Gradient steps of the projected-gradient solver (per sphere when hierarchical).
    tol : float, default=1e-6
        Relative change of M that ends a stage of the projected-gradient solver.
    max_triplets : int, default=1_000_000
        Refuse problems with more triplets than this (memory); use ``hierarchical=True``.
    n_iterations : int, default=17
        Iterations ``T`` of the hierarchical approach.
    sphere_placement : {"data", "box"}, default="data"
        Where hierarchical sphere centres are drawn: at random training points, or
        uniformly in the bounding box of the data (the literal ``c_s ~ range(X)``).
    diagonal_strengthening : float, default=0.1
        Added to the diagonal of the solved metric (after scaling it to unit mean
        eigenvalue; scale does not matter to kNN) so that directions the optimum leaves at
        zero are damped rather than collapsed (section 3.6).  Applied to every averaged
        metric of the hierarchical approach and to the single metric otherwise; 0 keeps
        the raw optimum of eq. 2.9 (available as ``raw_metric_`` when not hierarchical).
    random_state : None, int or numpy.random.Generator, default=None
        Randomness of negative sampling and of the hierarchical spheres and samples.

    Attributes
    ----------
    components_ : ndarray of shape (n_features, n_features)
        ``L^T``: rows are the projection directions, sorted by decreasing eigenvalue.
    n_triplets_ : int
        Triplets used (summed over all spheres when hierarchical).
    solver_ : str
        Solver that was actually used (``"sdp"``, ``"projected_gradient"`` or both).
    objective_ : float or None
        Final objective value (non-hierarchical only).
    n_spheres_solved_ : int
        Hierarchical only: number of spheres that held enough points to be solved.
    raw_metric_ : ndarray of shape (n_features, n_features)
        Non-hierarchical only: the solver's optimum of eq. 2.9, before strengthening.
    fit_time_ : float
        Wall-clock seconds spent in ``fit``.
    """

    _parameter_constraints = {
        "hierarchical": [Boolean()],
        "solver": [Options(*SOLVERS)],
        "sdp_interface": [Options(*SDP_INTERFACES)],
        "k": [Integer(1)],
        "c": [Real(0, math.inf, low_open=True)],
        "negative_sampling_cap": [Real(0, math.inf, low_open=True)],
        "max_iter": [Integer(1)],
        "tol": [Real(0, math.inf)],
        "max_triplets": [Integer(1)],
        "n_iterations": [Integer(1)],
        "sphere_placement": [Options("data", "box")],
        "diagonal_strengthening": [Real(0, math.inf)],
    }

    def __init__(self, mining="batch_hard", hierarchical=False, solver="auto", k=3, c=1.0,
                 negative_sampling_cap=1.4, max_iter=2000, tol=1e-6, max_triplets=1_000_000,
                 n_iterations=DEFAULT_N_ITERATIONS, sphere_placement="data",
                 diagonal_strengthening=0.1, random_state=None, sdp_interface="auto"):
        self.mining = mining
        self.hierarchical = hierarchical
        self.solver = solver
        self.sdp_interface = sdp_interface
        self.k = k
        self.c = c
        self.negative_sampling_cap = negative_sampling_cap
        self.max_iter = max_iter
        self.tol = tol
        self.max_triplets = max_triplets
        self.n_iterations = n_iterations
        self.sphere_placement = sphere_placement
        self.diagonal_strengthening = diagonal_strengthening
        self.random_state = random_state

    # ------------------------------------------------------------------ validation
    def _validate_hyperparameters(self):
        canonical_miner_name(self.mining)
        validate_parameters(self)

    @staticmethod
    def _validate_labels(y, k):
        classes, counts = np.unique(y, return_counts=True)
        if classes.size < 2:
            raise ValueError(f"metric learning needs at least 2 classes; y has only class "
                             f"{classes.tolist()}")
        smallest = int(np.argmin(counts))
        label, size = classes[smallest].item(), int(counts[smallest])
        if size < 2:
            raise ValueError(f"class {label!r} has {size} sample; every class needs at least "
                             f"2 samples (an anchor and a positive), so no k >= 1 works")
        if size < k + 1:
            raise ValueError(
                f"k={k} is larger than a class allows: class {label!r} has "
                f"{size} samples, so each anchor has at most "
                f"{size - 1} positives (need k <= {size - 1})")
        return classes

    @staticmethod
    def _check_finite(X):
        bad = ~np.isfinite(X)
        if bad.any():
            rows, columns = np.nonzero(bad)
            value = float(X[rows[0], columns[0]])
            raise ValueError(
                f"X contains {int(bad.sum())} non-finite value(s) (NaN or infinity), the first "
                f"{value!r} at row {rows[0]}, column {columns[0]}; metric learning needs every "
                f"value finite: impute or drop those rows")

    # ------------------------------------------------------------------ solving
    def _solve(self, X, y, k, rng, sphere=False):
        """Mine triplets on (X, y) and solve; returns (M, n_triplets, solver, info).

        ``sphere`` marks a hierarchical sphere problem: under ``sdp_interface="auto"``
        those go to Clarabel directly.
        """
        if canonical_miner_name(self.mining) == "batch_all":
            # k positives x every negative per anchor: count before building the array
            # (k-BA on MNIST would allocate hundreds of MB only to be refused).
            _, class_index, counts = np.unique(y, return_inverse=True, return_counts=True)
            expected = int(k * np.sum(len(y) - counts[class_index]))
            if expected > self.max_triplets:
                self._refuse(expected, k)
        pairs, triplets = mine_triplets(X, y, self.mining, k, random_state=rng,
                                        negative_sampling_cap=self.negative_sampling_cap)
        if len(triplets) > self.max_triplets:
            self._refuse(len(triplets), k)
        problem = build_problem(X, pairs, triplets, self.c)
        solver = self.solver
        if solver == "auto":
            d = X.shape[1]
            small = (len(triplets) <= SDP_MAX_TRIPLETS and d <= SDP_MAX_FEATURES
                     and len(triplets) * d ** 2 <= SDP_MAX_COST)
            solver = "sdp" if small else "projected_gradient"
        M = info = None
        if solver == "sdp":
            try:
                interface = self.sdp_interface
                if interface == "auto":
                    interface = "clarabel" if sphere else "cvxpy"
                M, info = (solve_sdp_clarabel(problem) if interface == "clarabel"
                           else solve_sdp(problem))
            except RuntimeError:
                if self.solver == "sdp":
                    raise
                # "auto": an interior-point run that stalls (degenerate sample) is retried
                # with the first-order solver, which always returns its best iterate.
                solver = "projected_gradient"
        if solver == "projected_gradient":
            M, info = solve_projected_gradient(problem, max_iter=self.max_iter, tol=self.tol)
        return M, len(triplets), solver, info

    def _refuse(self, n_triplets, k):
        raise ValueError(
            f"mining={self.mining!r} with k={k} gives {n_triplets} triplets, more "
            f"than max_triplets={self.max_triplets}; use hierarchical=True, a smaller "
            f"k, or raise max_triplets")

    @staticmethod
    def _decompose(M):
        """``M = L L^T`` by eigendecomposition (eq. 3.8), columns by decreasing eigenvalue."""
        eigenvalues, eigenvectors = np.linalg.eigh((M + M.T) / 2.0)
        order = np.argsort(eigenvalues)[::-1]
        return eigenvectors[:, order] * np.sqrt(np.maximum(eigenvalues[order], 0.0))

    def _strengthen(self, M):
        """Scale M to unit mean eigenvalue and add ``diagonal_strengthening`` to its diagonal.

        Section 3.6: strengthening the diagonal keeps the metric from collapsing into a
        low-rank subspace without changing its leading directions.  A zero M (c too small
        for any push to pay off) becomes the scaled identity, i.e. the Euclidean metric.
        """
        d = M.shape[0]
        mean_eigenvalue = np.trace(M) / d
        if mean_eigenvalue <= 0:
            return np.eye(d)
        return M / mean_eigenvalue + self.diagonal_strengthening * np.eye(d)

    def _fit_hierarchical(self, X, y, rng):
        n, d = X.shape
        transform = np.eye(d)          # accumulated L: current data = X @ transform
        current = X.copy()
        solvers_used, n_triplets, n_solved = set(), 0, 0
        self.schedule_ = hierarchical_schedule(n, self.n_iterations)
        for step in self.schedule_:
            sigma = float(np.mean(current.std(axis=0)))
            radius = step.radius_in_sigma * sigma
            metrics = []
            for centre in sphere_centres(current, step.n_spheres, rng, self.sphere_placement):
                inside = points_in_sphere(current, centre, radius)
                sample = stratified_sample(inside, y, step.sampling_portion, rng)
                labels, counts = np.unique(y[sample], return_counts=True)
                usable = labels[counts >= 2]  # a class needs an anchor and a positive
                if usable.size < 2:
                    continue
                sample = sample[np.isin(y[sample], usable)]
                k = min(self.k, int(counts[counts >= 2].min()) - 1)
                M, count, solver, _ = self._solve(current[sample], y[sample], k, rng,
                                                  sphere=True)
                metrics.append(M)
                solvers_used.add(solver)
                n_triplets += count
                n_solved += 1
            if not metrics:
                continue
            averaged = np.mean(metrics, axis=0)
            if np.trace(averaged) <= 0:
                continue  # every sphere preferred M = 0: nothing to project on
            L = self._decompose(self._strengthen(averaged))
            current = current @ L
            transform = transform @ L
        self.n_spheres_solved_ = n_solved
        self.objective_ = None
        return transform, n_triplets, "+".join(sorted(solvers_used)) or "none"

    # ------------------------------------------------------------------ public API
    def fit(self, X, y):
        """Learn the metric from labelled data.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            Training data; must be finite.
        y : array_like of shape (n_samples,)
            Class labels; at least two classes, each with at least ``k + 1`` samples.

        Returns
        -------
        self : LargeMarginMetricLearning
        """
        # The matrices here are small (d x d, d <= a few hundred): one BLAS thread is
        # several times faster than a contended pool on a busy machine.
        with threadpool_limits(limits=1, user_api="blas"):
            return self._fit(X, y)

    def _fit(self, X, y):
        start = time.perf_counter()
        self._validate_hyperparameters()
        X, y = check_X_y(X, y, dtype=np.float64, ensure_all_finite=False)
        self._check_finite(X)
        self.classes_ = self._validate_labels(y, self.k)
        self.n_features_in_ = X.shape[1]
        rng = np.random.default_rng(self.random_state)
        if self.hierarchical:
            L, self.n_triplets_, self.solver_ = self._fit_hierarchical(X, y, rng)
            # Re-decompose the product so directions come sorted by importance.
            L = self._decompose(L @ L.T)
        else:
            M, self.n_triplets_, self.solver_, info = self._solve(X, y, self.k, rng)
            self.objective_ = info["objective"]
            self.raw_metric_ = project_psd(M)
            L = self._decompose(self._strengthen(self.raw_metric_))
        self.components_ = L.T
        self.fit_time_ = time.perf_counter() - start
        return self

    def transform(self, X):
        """Project ``X`` onto the learned directions: ``X @ components_.T``."""
        check_is_fitted(self, "components_")
        X = check_array(X, dtype=np.float64)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but the metric was fitted on "
                             f"{self.n_features_in_}")
        return X @ self.components_.T

    def get_mahalanobis_matrix(self):
        """The learned PSD matrix ``M = L L^T``."""
        check_is_fitted(self, "components_")
        return self.components_.T @ self.components_

    def get_metric(self):
        """A callable ``metric(u, v)`` giving the learned Mahalanobis distance.

        Usable as ``KNeighborsClassifier(metric=model.get_metric())``; faster alternatives
        are ``KNeighborsClassifier().fit(model.transform(X), y)`` or
        ``metric="mahalanobis", metric_params={"VI": model.get_mahalanobis_matrix()}``.
        """
        check_is_fitted(self, "components_")
        components = self.components_.copy()

        def metric(u, v):
            difference = components @ (np.asarray(u, dtype=float) - np.asarray(v, dtype=float))
            return float(np.sqrt(difference @ difference))
        return metric

    def pair_distance(self, X1, X2):
        """Learned distances between the rows of ``X1`` and the rows of ``X2`` (paired)."""
        return np.linalg.norm(self.transform(X1) - self.transform(X2), axis=1)
