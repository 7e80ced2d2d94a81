"""``backend="sim"`` on the histogram system (``sim_engine="histogram"``, or "auto" for
data the ``ForestSystem``'s builds cannot hold): refusals before any elaboration, trees
equal to ``backend="model"``'s, one build reused across dataset sizes, errors with the
build's limit and the log's path."""

import time
import warnings

import numpy as np
import pytest

from sim import histogram_backend, runner
from sim.host.builds import host_build_folders
from sim.host.errors import AcceleratorError
from sw.methods.forest.estimator import HardwareForestClassifier, _sim_engine
from sw.methods.forest.model import TrainingParameters, train_forest


def _fit_params(**settings):
    estimator = HardwareForestClassifier(backend="sim", **settings)
    return estimator.effective_params()


def test_auto_trains_on_the_histogram_system_what_the_system_cannot_hold():
    params = TrainingParameters(n_classes=20, max_samples=20_000, features_per_split=10)
    assert _sim_engine((20_000, 100), 20, params, _fit_params(code_bits=8)) == "histogram"
    assert _sim_engine((100, 4), 3, TrainingParameters(n_classes=3, max_samples=100), _fit_params(code_bits=8)) \
        == "system"
    with pytest.raises(ValueError, match=r"rows x 100 features with 2 PEs need a build .* nor can the histogram "
                                         r"system \(sim_engine='histogram'\) train it: .*16 code bits is more "
                                         r"than it can be built for \(10\)"):
        _sim_engine((20_000, 100), 20, params, _fit_params())


@pytest.mark.parametrize("shape, settings, message", [
    ((70_000, 3, 2), {}, r"70000 rows is more than it can be built for \(65536\)"),
    ((30, 1100, 2), {}, r"1100 features is more than it can be built for \(1024\)"),
    ((30, 3, 2), {"mode": "thesis"}, "trains forest mode only"),
    ((30, 3, 2), {"min_samples_leaf": 2}, "trains with min_samples_leaf = 1, not 2"),
    ((30, 3, 2), {"code_bits": 12}, r"12 code bits is more than it can be built for \(10\)"),
])
def test_a_job_the_histogram_system_cannot_serve_is_refused_before_elaboration(shape, settings, message,
                                                                               tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "BUILD_ROOT", tmp_path)
    rows, features, classes = shape
    X = np.random.default_rng(0).random((rows, features))
    y = np.arange(rows) % classes
    started = time.perf_counter()
    with pytest.raises(ValueError, match=message):
        HardwareForestClassifier(backend="sim", sim_engine="histogram", **{"code_bits": 8, **settings}).fit(X, y)
    assert time.perf_counter() - started < 10
    assert not any(tmp_path.iterdir()), "something was elaborated or built"


def test_histogram_fits_equal_the_model_share_one_build_and_say_how_they_predict(capfd):
    rng = np.random.default_rng(3)
    X, y = rng.random((70, 5)), rng.integers(0, 3, 70)
    settings = {"n_estimators": 3, "code_bits": 6, "random_state": 11, "verbose": 0}
    with pytest.warns(UserWarning, match="histogram system, which has no inference engine"):
        fitted = HardwareForestClassifier(backend="sim", sim_engine="histogram", **settings).fit(X, y)
    expected = HardwareForestClassifier(**settings).fit(X, y)
    assert fitted.sim_engine_ == "histogram" and fitted.train_cycles_ > 0 and fitted.sort_cycles_ == 0
    for got, want in zip(fitted.trees_, expected.trees_):
        for field in ("feature", "threshold_code", "left_child", "class_counts", "n_rows", "depth"):
            assert np.array_equal(getattr(got, field), getattr(want, field)), field
    assert np.array_equal(fitted.predict_proba(X), expected.predict_proba(X))
    folders = host_build_folders()
    # Fewer rows, another seed: the same build serves (nothing new under the build folder).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        second = HardwareForestClassifier(backend="sim", sim_engine="histogram",
                                          **{**settings, "random_state": 12}).fit(X[:50], y[:50])
    assert second.sim_design_ == fitted.sim_design_
    assert host_build_folders() == folders
    reference = HardwareForestClassifier(**{**settings, "random_state": 12}).fit(X[:50], y[:50])
    assert [tree.n_nodes for tree in second.trees_] == [tree.n_nodes for tree in reference.trees_]
    printed = capfd.readouterr()
    assert "cocotb" not in printed.out + printed.err


def test_an_unlimited_tree_deeper_than_the_build_is_refused_with_the_limit_and_the_log():
    rng = np.random.default_rng(1)
    codes, labels = rng.integers(0, 16, (40, 3)), rng.integers(0, 2, 40)
    params = TrainingParameters(n_classes=2, max_depth=None, max_samples=40, features_per_split=2)
    assert max(int(tree.depth.max()) for tree in train_forest(codes, labels, params, 9, 2)) > 4
    design = {**histogram_backend.design_for(40, 3, 2, 4), "max_depth": 4}
    with pytest.raises(ValueError, match="design max_depth = 4 is too small for trees without a depth limit"):
        histogram_backend.train(codes, labels, params, 9, 2, code_bits=4, design=design, progress=False)
    shallow = TrainingParameters(n_classes=2, max_depth=None, max_samples=40, features_per_split=2)
    from sim.backend import _session
    with pytest.raises(AcceleratorError) as caught:
        _session(design, {"train": {"codes": codes, "labels": labels, "params": shallow, "seed": 9, "n_trees": 2}},
                 module="sim.host.histogram_session", progress=False, toplevel="histogram_system")
    error = caught.value
    assert error.flags == ("depth",)
    assert "reached the build's max_depth = 4 levels with a node that may split further: refit with " \
           "max_depth <= 4" in str(error)
    assert f"(simulation log: {error.log})" in str(error) and "histogram_session" in error.log.read_text()


def test_codes_larger_than_the_chip_takes_go_to_memory_and_such_chip_builds_are_not_reused():
    # isolet (7,797 x 617 at 8 bits: 40.9 Mbit in its 8,192 x 624 build) is more than half
    # the 10AX115's 55.6 Mbit of M20K; random20k (17 Mbit) is not.
    isolet = histogram_backend.design_for(7_797, 617, 26, 8)
    assert isolet["code_store"] == "memory" and isolet["code_word_bits"] == 512
    assert "code_store" not in histogram_backend.design_for(20_000, 100, 20, 8)
    on_chip = {**isolet, "code_store": "chip"}
    params = TrainingParameters(n_classes=26, max_samples=7_797, features_per_split=24)
    assert "40.9 Mbit of codes on the chip, more than the 27.8 Mbit" in \
        histogram_backend.shortfall(on_chip, 7_797, 617, 26, 8, params, 2)
    assert histogram_backend.shortfall(isolet, 7_797, 617, 26, 8, params, 2) is None


def test_built_at_is_none_for_a_build_never_made_and_the_digest_time_once_made(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "BUILD_ROOT", tmp_path)
    design = histogram_backend.design_for(100, 4, 3, 8)
    assert histogram_backend.built_at(design) is None
    from sim.host.builds import build_folder
    folder = build_folder(design, "histogram_system")
    folder.mkdir(parents=True)
    (folder / "verilog.sha1").write_text("0" * 40)
    assert histogram_backend.built_at(design) == (folder / "verilog.sha1").stat().st_mtime_ns

