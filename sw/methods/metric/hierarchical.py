"""Hierarchical large-margin metric learning with stratified sampling (thesis 3.6, Alg. 1).

At iteration ``tau`` the algorithm places ``n_s`` hyperspheres of radius ``r`` in the
current data space, draws a stratified sample (a portion ``p`` of every class) of the
points inside each sphere, mines triplets among them and solves the metric learning
problem per sphere.  The metrics of the spheres are averaged (model averaging), the
average is decomposed ``M = L L^T`` (eq. 3.8) and all the data are projected onto the
column space of ``L``; the next iteration works in the projected space.

The published schedule (section 3.6), with ``sigma`` the mean per-feature standard
deviation and ``n`` the number of training samples::

    r   = 0.1 sigma,                          then r   += 0.3 sigma
    n_s = floor(0.01 n) clipped to [10, 20],  then n_s  = max(n_s - floor(0.2 n_s), 1)
    p   = 1,                                  then p    = max(p - 0.05, 0.2)

The iteration uses the current values and then updates them, so iteration 1 uses the
initial values.  The thesis does not fix the number of iterations ``T``; the default here
is 17, the number of iterations it takes ``p`` to walk from 1 down to its floor 0.2.
"""

import dataclasses
import math

import numpy as np

__all__ = ["ScheduleStep", "hierarchical_schedule", "DEFAULT_N_ITERATIONS",
           "points_in_sphere", "stratified_sample", "sphere_centres"]

DEFAULT_N_ITERATIONS = 17


@dataclasses.dataclass(frozen=True)
class ScheduleStep:
    """Parameters of one iteration: radius in units of sigma, sphere count, portion."""
    radius_in_sigma: float
    n_spheres: int
    sampling_portion: float


def hierarchical_schedule(n_samples, n_iterations=DEFAULT_N_ITERATIONS):
    """The published schedule of Algorithm 1 for ``n_samples`` training points.

    Parameters
    ----------
    n_samples : int
        Number of training samples ``n``.
    n_iterations : int
        Number of iterations ``T``.

    Returns
    -------
    list of ScheduleStep
        One entry per iteration; multiply ``radius_in_sigma`` by the data's sigma.
    """
    if n_iterations < 1:
        raise ValueError(f"n_iterations={n_iterations} must be at least 1")
    n_spheres = min(max(math.floor(0.01 * n_samples), 10), 20)
    # Work in integer hundredths/tenths so the schedule is free of float drift.
    radius_tenths, portion_hundredths = 1, 100
    steps = []
    for _ in range(n_iterations):
        steps.append(ScheduleStep(radius_tenths / 10, n_spheres, portion_hundredths / 100))
        radius_tenths += 3
        n_spheres = max(n_spheres - math.floor(0.2 * n_spheres), 1)
        portion_hundredths = max(portion_hundredths - 5, 20)
    return steps


def sphere_centres(X, n_spheres, rng, placement):
    """Draw ``n_spheres`` centres: uniform in the bounding box or at random data points.

    ``placement="box"`` is the literal reading of Algorithm 1 (``c_s ~ range(X)``);
    ``placement="data"`` centres each sphere on a random training point, which keeps
    spheres from falling into empty regions of high-dimensional spaces.
    """
    if placement == "box":
        low, high = X.min(axis=0), X.max(axis=0)
        return rng.uniform(low, high, size=(n_spheres, X.shape[1]))
    if placement == "data":
        return X[rng.choice(len(X), size=n_spheres, replace=len(X) < n_spheres)]
    raise ValueError(f"sphere_placement={placement!r} must be 'data' or 'box'")


def points_in_sphere(X, centre, radius):
    """Indices of the rows of ``X`` within Euclidean distance ``radius`` of ``centre``."""
    return np.flatnonzero(np.sum((X - centre) ** 2, axis=1) <= radius ** 2)


def stratified_sample(indices, y, portion, rng):
    """Draw ``ceil(portion * size)`` points of every class among ``indices`` (strata).

    Returns the sampled indices, sorted.
    """
    chosen = []
    for label in np.unique(y[indices]):
        stratum = indices[y[indices] == label]
        size = max(1, math.ceil(portion * stratum.size - 1e-9))
        chosen.append(rng.choice(stratum, size=size, replace=False))
    return np.sort(np.concatenate(chosen)) if chosen else np.empty(0, dtype=np.intp)
