"""``backend="sim"`` as a user meets it: refusals before any elaboration, the accelerator's
errors in the exception, the log kept off the terminal, progress, one build for many
datasets, and predictions that do not train again (real simulations on one small build)."""

import dataclasses
import time

import numpy as np
import pytest

from sim import backend, runner
from sim.host.builds import build_folder, host_build_folders
from sw.methods.forest.estimator import HardwareForestClassifier
from sw.methods.forest.model import TrainingParameters, forest_votes, train_forest

#: The small build every simulation here runs on (depth 4, so deeper trees overflow it).
TINY = {"pe_count": 2, "max_trees": 8, "radix_bits": 4, "traversal_stages": 1, "max_rows": 48,
        "max_samples": 48, "feature_capacity": 4, "feature_lanes": 2, "code_bits": 8, "classes": 4,
        "max_depth": 4}


@pytest.fixture(scope="module")
def tiny():
    backend.build(TINY)             # built once and listed among the builds the backend reuses
    folder = build_folder(TINY)
    return folder / folder.name.removesuffix("_ports")        # the simulator's executable


@pytest.mark.parametrize("shape, settings, message", [
    # The case: inside every per-parameter limit, but minutes of elaboration.
    ((5000, 100, 20), {}, r"5000 rows x 100 features with 2 PEs need a build of 8192 rows x 128 "
                          r"features, about \d\.\d million lines of Verilog \(at least \d+ min"),
    ((300, 10, 2), {"pe_count": 64}, r"with 64 PEs need a build of 512 rows x 16 features.* at most "
                                     r"1\.0 million \(2,048 rows x 64 features with 2 PEs"),
    ((30, 3, 2), {"max_depth": 300}, "max_depth=300 is more than the 255 levels the accelerator "
                                     "can be built for"),
    ((30, 3, 2), {"n_estimators": 70_000}, r"70000 trees is more than the accelerator can be "
                                           r"built for \(65536\)"),
])
def test_a_job_no_build_can_serve_is_refused_before_elaboration(shape, settings, message, tmp_path,
                                                                monkeypatch):
    monkeypatch.setattr(runner, "BUILD_ROOT", tmp_path)
    rows, features, classes = shape
    X = np.random.default_rng(0).random((rows, features))
    y = np.arange(rows) % classes
    started = time.perf_counter()
    with pytest.raises(ValueError, match=message):
        HardwareForestClassifier(backend="sim", verbose=0, **settings).fit(X, y)
    assert time.perf_counter() - started < 5
    assert not any(tmp_path.iterdir()), "something was elaborated or built"


def test_a_depth_the_limit_allows_is_built_not_refused_off_by_one():
    params = TrainingParameters(n_classes=2, max_depth=200, max_samples=30, features_per_split=2)
    backend.check_job(30, 3, 2, 4, params)
    assert backend.design_for(30, 3, 2, 4, params)["max_depth"] == 255   # hw.pe.LIMITS' largest


def test_a_tree_deeper_than_the_build_raises_the_flag_and_limit_with_the_log_kept_aside(tiny, capfd):
    rng = np.random.default_rng(1)
    codes, labels = rng.integers(0, 16, (40, 3)), rng.integers(0, 2, 40)
    params = TrainingParameters(n_classes=2, max_depth=None, max_samples=40, features_per_split=2)
    depths = [int(tree.depth.max()) for tree in train_forest(codes, labels, params, 9, 2)]
    assert depths[0] > TINY["max_depth"], depths                # the model's tree 0 needs more levels
    capfd.readouterr()
    with pytest.raises(backend.AcceleratorError) as caught:
        backend.train(codes, labels, params, 9, 2, design=TINY, progress=False)
    error = caught.value
    assert error.flags == ("tree_error",)
    assert str(error).startswith("tree 0 needs more than the build's 4 levels (STATUS.tree_error): "
                                 "refit with max_depth <= 4")
    assert f"(simulation log: {error.log})" in str(error)
    log = error.log.read_text()
    assert "sim.host.session.run_job" in log
    printed = capfd.readouterr()
    assert "cocotb" not in printed.out + printed.err and printed.out == ""


def test_fits_of_other_sizes_share_one_build_and_predict_does_not_train(tiny, monkeypatch, capfd):
    folders = host_build_folders()
    built = tiny.stat().st_mtime_ns
    rng = np.random.default_rng(4)
    settings = {"n_estimators": 4, "max_depth": 3, "random_state": 11}
    X1, y1 = rng.random((30, 3)), rng.integers(0, 2, 30)
    first = HardwareForestClassifier(backend="sim", verbose=1, **settings).fit(X1, y1)
    captured = capfd.readouterr()
    assert "backend='sim': training" in captured.err and "4/4" in captured.err, captured.err[-500:]
    assert captured.out == "", "the simulator's log reached the terminal"
    X2, y2 = rng.random((44, 4)), rng.integers(0, 3, 44)
    second = HardwareForestClassifier(backend="sim", verbose=0, **settings).fit(X2, y2)
    assert first.sim_design_ == second.sim_design_ == TINY
    assert host_build_folders() == folders and tiny.stat().st_mtime_ns == built
    reference = HardwareForestClassifier(backend="model", **settings).fit(X2, y2)
    for got, want in zip(second.trees_, reference.trees_):
        assert np.array_equal(got.feature, want.feature) and np.array_equal(got.class_counts, want.class_counts)
    jobs = []
    session = backend._session
    monkeypatch.setattr(backend, "_session", lambda design, job, **kw: (jobs.append(job), session(design, job, **kw))[1])
    X_test = rng.random((12, 4))
    np.testing.assert_array_equal(second.predict(X_test), reference.predict(X_test))
    np.testing.assert_array_equal(second.predict_proba(X_test), reference.predict_proba(X_test))
    np.testing.assert_array_equal(second.predict_class_counts(X_test), reference.predict_class_counts(X_test))
    assert [sorted(job) for job in jobs] == [["forest", "predict"]], "predict trained, or ran twice"
    codes = reference.quantizer_.transform(X_test)
    np.testing.assert_array_equal(second.predict_votes(X_test),
                                  forest_votes(reference.trees_, codes, reference.n_classes_))


def test_an_inference_error_flag_comes_back_named(tiny):
    """Rows shorter than the features the stored trees test: the engine flags them
    (STATUS.bad_feature) and the exception says so, with the log."""
    rng = np.random.default_rng(5)
    codes, labels = rng.integers(0, 16, (30, 3)), rng.integers(0, 2, 30)
    params = TrainingParameters(n_classes=2, max_depth=3, max_samples=30, features_per_split=3)
    trees = train_forest(codes, labels, params, 2, 3)
    assert any((tree.feature == 2).any() for tree in trees)      # some node tests feature 2
    with pytest.raises(backend.AcceleratorError) as caught:
        backend.predict(trees, codes[:, :2], TINY, progress=False)
    assert "bad_feature" in caught.value.flags
    assert "STATUS.bad_feature (a stored node names a feature the test row does not have)" in str(caught.value)
    assert caught.value.log.exists() and str(caught.value.log) in str(caught.value)


def test_a_forest_the_build_cannot_hold_is_refused_before_simulating(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "BUILD_ROOT", tmp_path)
    rng = np.random.default_rng(6)
    codes, labels = rng.integers(0, 64, (48, 3)), rng.integers(0, 2, 48)
    params = TrainingParameters(n_classes=2, max_samples=48, bootstrap=False, features_per_split=3)
    deep = train_forest(codes, labels, params, 1, 2)
    largest = max(tree.n_nodes for tree in deep)
    assert largest > 31                                          # a depth-4 build holds 2**5 - 1 nodes
    with pytest.raises(ValueError, match=f"has {largest} nodes, more than the build's 31 per tree"):
        backend.predict(deep, codes, TINY)
    with pytest.raises(ValueError, match="a code of 300 is wider than the build's code_bits = 8"):
        shallow = train_forest(codes, labels, dataclasses.replace(params, max_depth=2), 1, 1)
        backend.predict(shallow, np.array([[300, 0, 0]]), TINY)
    assert not any(tmp_path.iterdir())

