"""The dataset loader: registry round trip, scikit-learn fallback, checksums, downloads."""

import contextlib
import csv
import dataclasses
import functools
import hashlib
import http.server
import importlib.util
import os
import threading
from pathlib import Path

import numpy as np
import pytest
import sklearn.datasets

from sw.data import datasets

DATA_DIR = os.environ.get(datasets.DATA_DIR_VARIABLE)
NEEDS_DATA = pytest.mark.skipif(
    not DATA_DIR or not Path(DATA_DIR, "SHA256SUMS").is_file(),
    reason="needs the thesis datasets: set HWFOREST_DATA_DIR to a folder holding them "
           "(e.g. ../shared/datasets, as .ci/run does)")


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """Empty data and cache directories, and no mirror."""
    data, cache = tmp_path / "data", tmp_path / "cache"
    data.mkdir()
    monkeypatch.setenv(datasets.DATA_DIR_VARIABLE, str(data))
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.delenv(datasets.DATA_URL_VARIABLE, raising=False)
    return data, cache / "hwforest" / "datasets"


@contextlib.contextmanager
def http_server(directory):
    """A static file server on 127.0.0.1 for the download tests."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def toy_dataset(monkeypatch, tmp_path):
    """A small registry entry whose file the tests write and serve themselves."""
    served = tmp_path / "served"
    served.mkdir()
    text = "a,b,label\n" + "".join(f"{i},{i * 0.5},{'yes' if i % 3 else 'no'}\n" for i in range(30))
    (served / "toy.csv").write_text(text)
    info = datasets.DatasetInfo(
        "toy", "toy.csv", hashlib.sha256(text.encode()).hexdigest(), 30, 2, 2,
        ("no", "yes"), ("negative", "positive"), "https://example.invalid/toy", "CC0", "Toy (2026)")
    monkeypatch.setitem(datasets.REGISTRY, "toy", info)
    return served, text


def leftovers(directory):
    return sorted(p.name for p in Path(directory).glob("*")) if Path(directory).exists() else []


def expected_shapes():
    """Shapes and class counts from the data folder's own verification script."""
    spec = importlib.util.spec_from_file_location("verify", Path(DATA_DIR, "verify_datasets.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.EXPECTED


@NEEDS_DATA
def test_every_registered_file_round_trips():
    shapes = expected_shapes()
    assert {info.file_name for info in datasets.REGISTRY.values()} == set(shapes), \
        "the registry must cover exactly the 13 files of the data folder"
    for name, info in datasets.REGISTRY.items():
        dataset = datasets.load(name)
        rows, features, classes = shapes[info.file_name]
        assert dataset.X.shape == (rows, features) and dataset.X.dtype == np.float64, name
        assert dataset.y.dtype == np.int64 and set(dataset.y) == set(range(classes)), name
        assert len(dataset.class_names) == classes and len(dataset.feature_names) == features
        assert dataset.citation and dataset.origin.endswith(info.file_name)


@NEEDS_DATA
def test_file_values_and_labels_equal_an_independent_csv_read():
    for name in ("sonar", "cmc", "heart_failure"):
        info = datasets.REGISTRY[name]
        with open(Path(DATA_DIR, info.file_name), newline="") as file:
            rows = list(csv.reader(file))[1:]
        dataset = datasets.load(name)
        assert np.array_equal(dataset.X, np.array([[float(v) for v in r[:-1]] for r in rows]))
        # Class i is the registry's i-th label string.
        assert [info.labels[code] for code in dataset.y] == [r[-1] for r in rows]


@pytest.mark.parametrize("name, loader", [
    ("iris", sklearn.datasets.load_iris), ("wine", sklearn.datasets.load_wine),
    ("breast_cancer_wisconsin", sklearn.datasets.load_breast_cancer)])
def test_bundled_datasets_fall_back_to_scikit_learn(isolated, name, loader):
    dataset = datasets.load(name)
    bunch = loader()
    assert dataset.origin == "scikit-learn bundled copy"
    assert np.array_equal(dataset.X, bunch.data) and np.array_equal(dataset.y, bunch.target)
    assert datasets.available(name)


@NEEDS_DATA
@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer_wisconsin"])
def test_files_and_bundled_copies_agree(name, monkeypatch, tmp_path):
    from_file = datasets.load(name)
    monkeypatch.setenv(datasets.DATA_DIR_VARIABLE, str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    bundled = datasets.load(name)
    assert np.array_equal(from_file.X, bundled.X) and np.array_equal(from_file.y, bundled.y)


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(datasets.DatasetError, match="unknown dataset 'irises'; known datasets: .*ctg"):
        datasets.load("irises")


def test_missing_dataset_says_how_to_get_it(isolated):
    data, cache = isolated
    with pytest.raises(datasets.DatasetError) as error:
        datasets.load("sonar")
    message = str(error.value)
    for text in ("sonar.csv", str(data), str(cache), "HWFOREST_DATA_DIR", "HWFOREST_DATA_URL",
                 "https://doi.org/10.24432/C5T01Q"):
        assert text in message
    assert not datasets.available("sonar")


def test_corrupt_file_is_refused(isolated):
    data, _ = isolated
    (data / "sonar.csv").write_text("V1,Class\n0.5,R\n")
    with pytest.raises(datasets.DatasetError, match="checksum mismatch for dataset 'sonar'"):
        datasets.load("sonar")


def test_download_verifies_and_installs_atomically(isolated, toy_dataset):
    served, text = toy_dataset
    _, cache = isolated
    with http_server(served) as url:
        path = datasets.download("toy", url=f"{url}/toy.csv")
    assert path == cache / "toy.csv" and path.read_text() == text
    assert leftovers(cache) == ["toy.csv"]
    dataset = datasets.load("toy")
    assert dataset.X.shape == (30, 2) and list(dataset.y[:4]) == [0, 1, 1, 0]


def test_load_downloads_from_the_mirror_variable(isolated, toy_dataset, monkeypatch):
    served, _ = toy_dataset
    with http_server(served) as url:
        monkeypatch.setenv(datasets.DATA_URL_VARIABLE, url)
        dataset = datasets.load("toy")
    assert dataset.origin.endswith("toy.csv") and dataset.X.shape == (30, 2)


def test_corrupt_download_leaves_nothing_behind(isolated, toy_dataset):
    served, text = toy_dataset
    _, cache = isolated
    (served / "toy.csv").write_text(text.replace("15", "16"))
    with http_server(served) as url:
        with pytest.raises(datasets.DatasetError, match=r"checksum mismatch .* downloaded from http://127\.0\.0\.1"):
            datasets.download("toy", url=f"{url}/toy.csv")
    assert leftovers(cache) == []


def test_failed_download_names_the_url_and_leaves_nothing_behind(isolated, toy_dataset):
    served, _ = toy_dataset
    _, cache = isolated
    with http_server(served) as url:
        missing = f"{url}/absent/toy.csv"
        with pytest.raises(datasets.DatasetError, match=f"could not download dataset 'toy' from {missing}"):
            datasets.download("toy", url=missing)
    assert leftovers(cache) == []


def test_unreachable_server_times_out_cleanly(isolated, toy_dataset):
    _, cache = isolated
    # A listening socket that never answers: the download must give up after the timeout.
    import socket
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/toy.csv"
        with pytest.raises(datasets.DatasetError, match="timed out"):
            datasets.download("toy", url=url, timeout=0.5)
    assert leftovers(cache) == []


def test_registry_entries_are_complete():
    for name, info in datasets.REGISTRY.items():
        assert info.name == name
        assert len(info.sha256) == 64 and int(info.sha256, 16) >= 0
        assert len(info.labels) == len(info.class_names) == info.n_classes
        assert info.source_url.startswith("http") and info.licence and info.citation
        assert dataclasses.asdict(info)
