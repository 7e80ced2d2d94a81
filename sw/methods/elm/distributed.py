"""The master/worker data-parallel fit of the incremental ELMs on Dask (seed 002 §4.4).

Design (the seed's listing at L1395-L1418, on ``dask.distributed``):

* **Workers** hold a shard of the rows: the inputs X_p, targets y_p and residuals e_p
  (rows split in order into P near-equal contiguous blocks, one per worker). Each is a
  Dask *actor* of :class:`sw.methods.elm.incremental.Shard`, pinned to its worker, so the
  data and the residuals stay where they are between steps.
* **The master** (this process) holds the network {a_i, b_i, w_i} and draws the K
  candidate neurons from the estimator's random stream, exactly as the serial fit does.
* **One neuron = one map and one reduce.** Map: every worker receives the K candidates
  (and the previous step's choice k*, w_L, which it first applies to its residuals:
  ``e_p <- e_p - w_L d_k*``, eq. 4.2 or 4.4) and returns its 1 + 2K partial sums
  ``sum_p e^2``, ``sum_p e d_k`` and ``sum_p d_k^2`` (d_k = g_k for I-ELM/EI-ELM,
  ``e - y + g_k`` for CI-ELM/ECI-ELM). Reduce: the master adds the P vectors in shard
  order, computes w_k = <e, d_k>/<d_k, d_k> (eq. 4.2/4.3) and the residual norm
  ``<e, e> - <e, d_k>^2/<d_k, d_k>`` of each candidate, keeps the best and applies eq.
  4.5 to the older weights. The seed's second round trip (workers computing the K
  residual norms after a broadcast of the K weights) is not needed: the norms follow
  from the first round's sums.

The fitted network equals the serial fit up to the order of floating-point summation (a
sum over N rows in the serial fit, P partial sums added in the parallel one): predictions
agree to a relative 1e-9 in the tests. A candidate choice could differ only if two
candidates' residual norms were equal to that precision.

Cluster: a ``distributed.Client`` or a scheduler address given to the estimator
(``scheduler=``), else the ``DASK_SCHEDULER_ADDRESS`` environment variable, else a
``LocalCluster`` of one single-threaded worker process per core, started for the fit and
closed after it. Workers of an existing cluster must be able to import ``sw`` (the
project installed in their environment).
"""

import os

import numpy as np

from sw.methods.elm.incremental import Shard

__all__ = ["DaskShards", "connect", "local_cluster", "ENV_ADDRESS"]

#: The environment variable naming the scheduler of an existing cluster (Dask's own).
ENV_ADDRESS = "DASK_SCHEDULER_ADDRESS"


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:      # not Linux
        return os.cpu_count() or 1


def local_cluster(n_workers=None, processes=True):
    """A ``LocalCluster`` of ``n_workers`` (default: one per core) single-threaded worker
    processes (``processes=False``: threads of this process, quicker to start), its
    dashboard on a free port."""
    from distributed import LocalCluster
    return LocalCluster(n_workers=n_workers or _cores(), threads_per_worker=1,
                        processes=processes, dashboard_address=":0")


def connect(scheduler=None):
    """(client, things to close after the fit): ``scheduler`` a ``Client`` (used as is), an
    address (connected to), or None (``DASK_SCHEDULER_ADDRESS``, else a new LocalCluster)."""
    from distributed import Client
    if scheduler is not None and not isinstance(scheduler, str):
        return scheduler, []
    address = scheduler or os.environ.get(ENV_ADDRESS) or None
    if address:
        client = Client(address)
        return client, [client]
    cluster = local_cluster()
    client = Client(cluster)
    return client, [client, cluster]


class DaskShards:
    """Rows of (X, y) sharded over the workers of a Dask cluster, one :class:`Shard` actor
    per worker; :meth:`step` is one map of partial sums and one reduce.

    ``n_workers``: shards to make (None: one per worker of the cluster); at most the
    cluster's workers."""

    def __init__(self, X, y, scheduler=None, n_workers=None):
        self.client, self._owned = connect(scheduler)
        try:
            self._start(X, y, n_workers)
        except BaseException:
            self.close()
            raise

    def _start(self, X, y, n_workers):
        workers = sorted(self.client.scheduler_info()["workers"])
        if not workers:
            raise ValueError("the Dask cluster has no workers")
        if n_workers is not None and n_workers > len(workers):
            raise ValueError(f"n_workers={n_workers} is more than the {len(workers)} workers "
                             f"of the Dask cluster")
        count = min(n_workers or len(workers), X.shape[0])
        bounds = np.linspace(0, X.shape[0], count + 1).round().astype(int)
        self.bounds = bounds
        self._futures = []
        for worker, low, high in zip(workers, bounds[:-1], bounds[1:]):
            rows, targets = self.client.scatter([X[low:high], y[low:high]], workers=[worker])
            self._futures.append(self.client.submit(
                Shard, rows, targets, actor=True, workers=[worker], allow_other_workers=False))
        self.actors = [future.result() for future in self._futures]

    def step(self, chosen, input_weights, biases, convex):
        """Map: every shard applies ``chosen`` and returns its partial sums for the
        candidates; reduce: their sum, in shard order."""
        calls = [actor.step(chosen, input_weights, biases, convex) for actor in self.actors]
        return _reduce([call.result() for call in calls])

    def finish(self, chosen):
        """Apply the last choice; the residual sum of squares over all rows."""
        calls = [actor.apply(chosen) for actor in self.actors]
        for call in calls:
            call.result()
        return float(_reduce([actor.residual_norm2().result() for actor in self.actors]))

    def close(self):
        """Release the shards; close the client and cluster if this object started them."""
        self.actors = []
        futures, self._futures = getattr(self, "_futures", []), []
        if futures and self.client.status == "running":
            self.client.cancel(futures)
        for thing in self._owned:
            thing.close()
        self._owned = []


def _reduce(partials):
    """Sum of the shards' partial-sum vectors, added in shard order."""
    total = np.array(partials[0], dtype=np.float64, copy=True)
    for partial in partials[1:]:
        total += partial
    return total
