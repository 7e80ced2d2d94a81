"""The data-parallel fit on Dask equals the serial fit; the cluster is found as documented.

One LocalCluster of two single-threaded worker processes serves the module."""

import numpy as np
import pytest

distributed = pytest.importorskip("distributed", reason="pip install dask distributed")

from sw.methods.elm import distributed as elm_distributed                 # noqa: E402
from sw.methods.elm.distributed import DaskShards                          # noqa: E402
from sw.methods.elm.incremental import IncrementalELMRegressor             # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as local:
        with distributed.Client(local) as client:
            yield local, client


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(1001, 5))      # odd: shards of 500 and 501 rows
    y = 0.5 + 0.3 * np.sin(2 * X[:, 0] * X[:, 1]) + 0.2 * X[:, 2] + 0.05 * rng.normal(size=1001)
    return X, y


def _same_model(serial, parallel, X):
    # The same neurons are chosen; sums differ only in the order of addition.
    assert np.array_equal(serial.input_weights_, parallel.input_weights_)
    assert np.array_equal(serial.biases_, parallel.biases_)
    np.testing.assert_allclose(parallel.output_weights_, serial.output_weights_, rtol=1e-9)
    np.testing.assert_allclose(parallel.predict(X), serial.predict(X), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(parallel.train_rmse_, serial.train_rmse_, rtol=1e-9)


@pytest.mark.parametrize("variant", ["ei-elm", "eci-elm", "ci-elm"])
def test_sharded_fit_equals_the_serial_fit(cluster, data, variant):
    _, client = cluster
    X, y = data
    params = dict(max_neurons=40, random_state=4)
    serial = IncrementalELMRegressor(variant, **params).fit(X, y)
    parallel = IncrementalELMRegressor(variant, parallel="dask", scheduler=client,
                                       **params).fit(X, y)
    _same_model(serial, parallel, X)


def test_one_map_gives_the_partial_sums_of_all_rows(cluster, data):
    """The reduce of the shards' partial sums equals the sums over all rows, computed
    here directly: <e, e>, <e, d_k>, <d_k, d_k> with e = y before the first neuron."""
    _, client = cluster
    X, y = data
    rng = np.random.default_rng(2)
    A, b = rng.uniform(-1, 1, size=(3, 5)), rng.uniform(-1, 1, size=3)
    g = 1.0 / (1.0 + np.exp(-(X @ A.T + b)))
    shards = DaskShards(X, y, scheduler=client)
    try:
        assert len(shards.actors) == 2 and list(shards.bounds) == [0, 500, 1001]
        plain = shards.step(None, A, b, convex=False)
        np.testing.assert_allclose(plain, np.concatenate([[y @ y], y @ g, (g * g).sum(0)]),
                                   rtol=1e-12)
        convex = shards.step(None, A, b, convex=True)
        d = g                                    # e = y: e - (y - g) = g
        np.testing.assert_allclose(convex, np.concatenate([[y @ y], y @ d, (d * d).sum(0)]),
                                   rtol=1e-12)
        # Choosing candidate 1 with weight 0.5 leaves e = y - 0.5 g_1 on every worker.
        assert shards.finish((1, 0.5)) == pytest.approx(np.sum((y - 0.5 * g[:, 1]) ** 2),
                                                       rel=1e-12)
    finally:
        shards.close()


def test_scheduler_by_address_and_by_environment(cluster, data, monkeypatch):
    local, _ = cluster
    X, y = data
    serial = IncrementalELMRegressor(max_neurons=15, random_state=5).fit(X, y)
    by_address = IncrementalELMRegressor(max_neurons=15, random_state=5, parallel="dask",
                                         scheduler=local.scheduler_address).fit(X, y)
    _same_model(serial, by_address, X)

    def no_local_cluster(*args, **kwargs):
        raise AssertionError("started a LocalCluster although DASK_SCHEDULER_ADDRESS is set")

    monkeypatch.setattr(elm_distributed, "local_cluster", no_local_cluster)
    monkeypatch.setenv(elm_distributed.ENV_ADDRESS, local.scheduler_address)
    by_environment = IncrementalELMRegressor(max_neurons=15, random_state=5,
                                             parallel="dask").fit(X, y)
    _same_model(serial, by_environment, X)


def test_one_worker_and_too_many_workers(cluster, data):
    _, client = cluster
    X, y = data
    serial = IncrementalELMRegressor("ci-elm", max_neurons=15, random_state=6).fit(X, y)
    one = IncrementalELMRegressor("ci-elm", max_neurons=15, random_state=6, parallel="dask",
                                  scheduler=client, n_workers=1).fit(X, y)
    _same_model(serial, one, X)
    with pytest.raises(ValueError, match="n_workers=3 is more than the 2 workers"):
        IncrementalELMRegressor(parallel="dask", scheduler=client, n_workers=3).fit(X, y)


def test_default_is_a_local_cluster_of_one_worker_per_core(data, monkeypatch):
    monkeypatch.delenv(elm_distributed.ENV_ADDRESS, raising=False)
    started, sizes = [], []
    original = elm_distributed.local_cluster

    def recording(*args, **kwargs):
        started.append(original(*args, **kwargs))
        sizes.append(len(started[-1].workers))
        return started[-1]

    monkeypatch.setattr(elm_distributed, "local_cluster", recording)
    X, y = data
    serial = IncrementalELMRegressor(max_neurons=10, random_state=8).fit(X, y)
    parallel = IncrementalELMRegressor(max_neurons=10, random_state=8,
                                       parallel="dask").fit(X, y)
    _same_model(serial, parallel, X)
    assert len(started) == 1 and sizes == [elm_distributed._cores()]
    assert started[0].status.name == "closed"       # closed after the fit
