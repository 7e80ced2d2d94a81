"""The Dask cluster the regression runs on.

An existing cluster when a scheduler address is given (``--scheduler ADDRESS`` or Dask's
own ``DASK_SCHEDULER_ADDRESS`` variable), else a ``LocalCluster`` on this machine of one
single-threaded worker process per core (or ``workers``), closed afterwards. This is the
rule of ``sw.methods.elm.distributed``, whose cluster helpers it reuses. Workers of an
existing cluster must be able to import the project (``sim``, ``hw``, ``sw``) and, to skip
building, see the build folder (``sim.runner.BUILD_ROOT``) of the machine that starts
the regression.
"""

import contextlib
import os

from sw.methods.elm.distributed import ENV_ADDRESS, local_cluster

__all__ = ["ENV_ADDRESS", "cluster_client", "describe_cluster"]


@contextlib.contextmanager
def cluster_client(scheduler=None, workers=None):
    """A ``distributed.Client`` of the cluster chosen as the module docstring says."""
    from distributed import Client
    address = scheduler or os.environ.get(ENV_ADDRESS) or None
    if address:
        with Client(address) as client:
            yield client
        return
    with local_cluster(n_workers=workers) as cluster, Client(cluster) as client:
        yield client


def describe_cluster(client):
    """{"scheduler", "workers", "threads"} of the cluster behind ``client``."""
    info = client.scheduler_info(n_workers=-1)
    workers = info.get("workers", {})
    return {"scheduler": info.get("address", ""), "workers": len(workers),
            "threads": sum(worker.get("nthreads", 1) for worker in workers.values())}
