"""The processing element, simulated by cocotb under Verilator, against the golden model.

Each build runs the five cocotb tests of ``sim/tb_pe.py``: random trees (data, parameters,
seeds, thesis and forest mode), corner cases, bad configurations and inputs, resets and
restarts in the middle of a tree; the datasets build also trains trees on iris, sonar and
ctg. Every tree is compared with ``sw.methods.forest.model.train_tree`` node by node.
"""

import pytest

from hw.pe import ProcessingElement
from hw.designs import build_parameters
from sim.runner import simulate
from sw.data.datasets import available

BUILDS = {
    # Four lanes, eight features: two lists per lane.
    # Thesis-mode bootstraps of up to 32 draws take the sparse fill (code look-ups + sort).
    "4 lanes": ({"max_rows": 64, "max_samples": 64, "feature_capacity": 8, "feature_lanes": 4,
                 "code_bits": 8, "classes": 4, "max_depth": 8, "sparse_rows": 32}, 70, 101),
    # One lane holds every list; classes not a power of two (labels >= 3 are bad input).
    "1 lane, 3 classes": ({"max_rows": 48, "max_samples": 80, "feature_capacity": 5, "feature_lanes": 1,
                           "code_bits": 6, "classes": 3, "max_depth": 10, "sparse_rows": 16}, 50, 102),
    # More lanes than some trees have features; few nodes of depth (2^(5+1) - 1 nodes).
    "8 lanes, depth 5": ({"max_rows": 40, "max_samples": 40, "feature_capacity": 12, "feature_lanes": 8,
                          "code_bits": 10, "classes": 5, "max_depth": 5}, 50, 103),
    # Lists of 24 in-bag rows, bootstraps of up to 40 draws: more distinct rows than a list
    # holds raise inbag_overflow.
    "short lists": ({"max_rows": 100, "max_samples": 40, "max_inbag_rows": 24, "feature_capacity": 6,
                     "feature_lanes": 2, "code_bits": 12, "classes": 2, "max_depth": 12}, 40, 104),
}

DATASETS_BUILD = build_parameters("pe_datasets")


# Two builds in make test; the one-lane and eight-lane builds are long.
LONG_BUILDS = ("1 lane, 3 classes", "8 lanes, depth 5")


@pytest.mark.parametrize("build", [pytest.param(name, marks=pytest.mark.long) if name in LONG_BUILDS else name
                                   for name in BUILDS])
def test_pe_trains_trees_identical_to_the_model(build):
    parameters, cases, seed = BUILDS[build]
    tests, failed = simulate("processing_element", "sim.tb_pe", parameters=parameters,
                             testbench={"random_cases": cases}, seed=seed)
    assert (tests, failed) == (7, 0)


def test_pe_trains_dataset_trees_identical_to_the_model():
    names = ["iris", "sonar", "ctg"]
    missing = [name for name in names if not available(name)]
    if missing:
        pytest.skip(f"datasets {missing} not found: set HWFOREST_DATA_DIR to a folder holding them "
                    f"(e.g. ../shared/datasets), see docs/running.md")
    tests, failed = simulate("processing_element", "sim.tb_pe", parameters=DATASETS_BUILD,
                             testcase="datasets_match_model",
                             testbench={"datasets": names, "dataset_trees": 2}, seed=105)
    assert (tests, failed) == (1, 0)


def test_pe_cycles_per_tree_stay_within_the_cycle_model():
    """Cycles, not wall time: every tree trained alone after the first (which alone clears
    the weight tags) takes at most 1.5 x the analytical model of docs/gateware.md, in both
    modes. A clearing pass or a lost overlap per tree shows up here as a multiple of the
    model. Queued back to back (the serialised pipeline), thesis-mode trees take less per
    tree than alone (their prologue runs while the tree before trains), and forest-mode
    trees no more than alone. Thesis-mode trees take under 200 cycles each even alone
    (issue 4's target), and so less than that queued."""
    from sw.experiments.pe_cycles import BUILD, cycle_model, latency_and_steady_state, measure
    names = ["iris", "sonar"]
    if not all(available(name) for name in names):
        pytest.skip("iris and sonar not found: set HWFOREST_DATA_DIR (e.g. ../shared/datasets)")
    records = measure(names, trees=3)
    assert {record["mode"] for record in records} == {"thesis", "forest"}
    for record in records[1:]:
        if record["handover"] == "alone":
            model = cycle_model(record, BUILD["feature_lanes"])
            assert record["cycles"] <= 1.5 * model, (record["label"], record["mode"], record["cycles"], model)
            if record["mode"] == "thesis":
                assert record["cycles"] < 200, (record["label"], record["cycles"])
    for (name, mode), row in latency_and_steady_state(records, BUILD["feature_lanes"]).items():
        limit = 0.85 * row["latency"] if mode == "thesis" else row["latency"] + 2
        assert row["steady"] <= limit, (name, mode, row)


@pytest.mark.parametrize("arguments, text", [
    ({"feature_lanes": 3}, "feature_lanes must be a power of two, not 3"),
    ({"feature_capacity": 4, "feature_lanes": 8}, "feature_lanes must be at most feature_capacity"),
    ({"classes": 1}, "classes must be between 2 and 64, not 1"),
    ({"max_inbag_rows": 300, "max_rows": 256}, "max_inbag_rows must be between 1 and 256, not 300"),
    ({"max_depth": 0}, "max_depth must be between 1 and 255, not 0"),
    ({"code_bits": 25}, "code_bits must be between 1 and 24, not 25"),
    # The default max_nodes (the largest tree) beyond what a PE stores: said in the
    # parameters the user passed, not as a max_nodes they never gave.
    ({"max_rows": 1 << 20, "max_samples": 1 << 20, "max_depth": 40},
     "a tree of up to 1048576 in-bag rows and depth 40 can have 2097151 nodes, more than the "
     "1048576 a PE stores"),
])
def test_bad_parameters_are_refused(arguments, text):
    with pytest.raises(ValueError, match=text):
        ProcessingElement(**arguments)
