"""The forest trainer (dataset banks, presort, P PEs), simulated under Verilator against train_forest."""

import gc
import warnings

import pytest
from amaranth.hdl import UnusedElaboratable

from hw.trainer import LIMITS, ForestTrainer
from sim.runner import simulate
from sw.data.datasets import available

# Thesis-mode trees (16 draws) take the PEs' sparse fill here, their codes looked up through
# the trainer's look-up ports; the system tests' builds (no sparse_rows) use the list filter.
SMALL = {"max_trees": 16, "radix_bits": 4, "max_rows": 64, "max_samples": 64, "feature_capacity": 8,
         "feature_lanes": 4, "code_bits": 8, "classes": 4, "max_depth": 8,
         "sparse_rows": 16}


# Two PEs with short lists in make test; one and four PEs are long.
@pytest.mark.parametrize("pe_count, seed, lists", [pytest.param(1, 201, None, marks=pytest.mark.long),
                                                   (2, 202, 44),
                                                   pytest.param(4, 203, None, marks=pytest.mark.long)])
def test_forests_equal_the_model_for_any_pe_count(pe_count, seed, lists):
    # Also: forests stopped on tree_error (a tree deeper than max_depth = 8, or, with lists
    # of 44 rows, a bootstrap of more distinct rows), each followed by forests that must not
    # see what the stopped one left in the PEs.
    parameters = {**SMALL, "pe_count": pe_count, **({"max_inbag_rows": lists} if lists else {})}
    tests, failed = simulate("forest_trainer", "sim.tb_trainer", parameters=parameters,
                             testbench={"random_forests": 4, "stopped_forests": 2}, seed=seed)
    assert (tests, failed) == (6, 0)


@pytest.mark.long
def test_a_forest_of_65536_trees_finishes():
    # The largest forest the trainer accepts (LIMITS["max_trees"]): its tree counter must
    # reach n_trees = 65,536, a 17-bit number.
    parameters = {**SMALL, "pe_count": 2, "max_trees": LIMITS["max_trees"][1]}
    # Few stalls: 65,536 trees take about a million cycles.
    tests, failed = simulate("forest_trainer", "sim.tb_trainer", parameters=parameters,
                             testcase="largest_forest_finishes", seed=65536,
                             testbench={"idle_probability": 0.05, "stall_probability": 0.05})
    assert (tests, failed) == (1, 0)


@pytest.mark.long
@pytest.mark.parametrize("pe_count", [1, 2, 4])
def test_dataset_forests_equal_the_model(pe_count):
    names = ["iris", "sonar", "heart_failure", "ctg"]
    missing = [name for name in names if not available(name)]
    if missing:
        pytest.skip(f"datasets {missing} not found: set HWFOREST_DATA_DIR to a folder holding them "
                    f"(e.g. ../shared/datasets), see docs/running.md")
    # Two lanes per PE keep the Verilator build of four PEs short (lanes do not change trees);
    # 2,200 rows hold ctg (2,126 rows, 21 features, 3 classes); lists of 1,536 rows hold its
    # bootstraps (about 1,344 distinct rows), as the comparison's PEs assume.
    build = {**SMALL, "max_rows": 2200, "max_samples": 2200, "max_inbag_rows": 1536, "feature_capacity": 64,
             "feature_lanes": 2,
             "code_bits": 16, "max_depth": 24, "radix_bits": 8, "pe_count": pe_count}
    tests, failed = simulate("forest_trainer", "sim.tb_trainer", parameters=build,
                             testcase="dataset_forests_match_model",
                             testbench={"datasets": names, "trees": 4}, seed=210 + pe_count)
    assert (tests, failed) == (1, 0)


@pytest.mark.parametrize("arguments, text", [
    ({"pe_count": 0}, "pe_count must be between 1 and 64, not 0"),
    ({"max_trees": 0}, "max_trees must be between 1 and 65536, not 0"),
    ({"feature_lanes": 3}, "feature_lanes must be a power of two, not 3"),
])
def test_bad_parameters_are_refused(arguments, text):
    with pytest.raises(ValueError, match=text):
        ForestTrainer(**arguments)


def test_an_unknown_keyword_is_refused_before_any_pe_is_made(monkeypatch):
    # Amaranth warns about unused elaboratables only once something was elaborated.
    monkeypatch.setattr(UnusedElaboratable, "_MustUse__silence", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(TypeError, match="ForestTrainer has no parameter 'lanes' .*feature_lanes"):
            ForestTrainer(lanes=4)
        gc.collect()                             # a half-made PE would warn as it is freed
    assert [str(w.message) for w in caught] == []
