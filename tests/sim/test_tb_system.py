"""The whole accelerator through its host interface, and backend="sim" of the estimator."""

import numpy as np
import pytest
from sklearn.datasets import load_iris

from hw.system import ForestSystem
from sim.runner import PROJECT_ROOT, simulate
from sw.methods.forest.estimator import HardwareForestClassifier

SMALL = {"pe_count": 2, "max_trees": 8, "radix_bits": 4, "traversal_stages": 1, "max_rows": 48,
         "max_samples": 48, "feature_capacity": 6, "feature_lanes": 2, "code_bits": 8, "classes": 4,
         "max_depth": 8}


def test_system_through_the_host_driver():
    tests, failed = simulate("forest_system", "sim.tb_system", parameters=SMALL,
                             testbench={"random_forests": 4}, seed=301)
    assert (tests, failed) == (5, 0)


@pytest.mark.parametrize("mode", ["forest", "thesis"])
def test_sim_backend_equals_model_backend(mode):
    X, y = load_iris(return_X_y=True)
    rows = np.r_[0:40, 50:90, 100:140]
    test = np.setdiff1d(np.arange(150), rows)
    settings = dict(n_estimators=6, mode=mode, random_state=2026)
    simulated = HardwareForestClassifier(backend="sim", **settings).fit(X[rows], y[rows])
    reference = HardwareForestClassifier(backend="model", **settings).fit(X[rows], y[rows])
    for got, want in zip(simulated.trees_, reference.trees_):
        for field in ("feature", "threshold_code", "left_child", "class_counts", "n_rows"):
            assert np.array_equal(getattr(got, field), getattr(want, field)), field
    assert simulated.train_cycles_ > simulated.sort_cycles_ > 0
    np.testing.assert_array_equal(simulated.predict(X[test]), reference.predict(X[test]))
    np.testing.assert_array_equal(simulated.predict(X[test]), reference.to_sklearn().predict(X[test]))
    np.testing.assert_array_equal(simulated.predict_class_counts(X[test]),
                                  reference.predict_class_counts(X[test]))


def test_sim_backend_refuses_what_it_cannot_build():
    X = np.zeros((10, 5000))
    X[:, 0] = np.arange(10)
    with pytest.raises(ValueError, match="5000 features is more than the accelerator can be built for"):
        HardwareForestClassifier(backend="sim", n_estimators=1).fit(X, np.arange(10) % 2)
    with pytest.raises(ValueError, match=r"65 pe count is more than the accelerator can be built for \(64\)"):
        HardwareForestClassifier(backend="sim", n_estimators=1, pe_count=65).fit(X[:, :2], np.arange(10) % 2)


def test_sim_backend_refuses_lists_a_bootstrap_overflows():
    """A design whose lists are shorter than the rows is refused, before any build, for the
    first tree whose bootstrap draws more distinct rows than they hold (counted with the
    model's draws, independently of the backend's own count)."""
    from sim import backend
    from sw.methods.forest.model import TrainingParameters, bootstrap_weights
    from sw.methods.forest.rng import TreeRandom
    rng = np.random.default_rng(3)
    codes, labels = rng.integers(0, 8, (40, 3)), rng.integers(0, 2, 40)
    params = TrainingParameters(n_classes=2, max_samples=40)
    distinct = [int(np.count_nonzero(bootstrap_weights(TreeRandom(5, tree), 40, 40))) for tree in range(6)]
    lists = sorted(distinct)[2]
    first = next(tree for tree, count in enumerate(distinct) if count > lists)
    design = {**SMALL, "max_inbag_rows": lists}
    with pytest.raises(ValueError, match=f"design max_inbag_rows = {lists} is too small: tree {first} "
                                         f"of seed 5 draws {distinct[first]} distinct rows"):
        backend.train(codes, labels, params, 5, 6, design=design)


@pytest.mark.parametrize("arguments, text", [
    ({"traversal_stages": 0}, "traversal_stages must be between 1 and 256, not 0"),
    ({"pe_count": 65}, "pe_count must be between 1 and 64, not 65"),
    # Trees of 2 * 2**17 - 1 nodes: the system's parameter is named, not the engine's.
    ({"max_rows": 1 << 17, "max_samples": 1 << 17, "max_depth": 255},
     "max_nodes must be between 1 and 65536, not 262143"),
])
def test_bad_parameters_are_refused(arguments, text):
    with pytest.raises(ValueError, match=text):
        ForestSystem(**arguments)


def test_register_map_document_matches_the_hardware():
    from hw.system import REGISTERS
    text = (PROJECT_ROOT / "docs" / "registers.md").read_text()
    for name, (address, access, width, _) in REGISTERS.items():
        assert f"| `{name}` | `{address:#04x}` | {access} | {width} |" in text, f"{name} is not documented as built"
    addresses = [address for address, *_ in REGISTERS.values()]
    assert len(addresses) == len(set(addresses)), "two registers share an address"
