"""forest_top through its Avalon-MM interfaces only: random forests and iris on the small
build, and (long: make test-long, make avalon) on its twin with a separate core clock at
both clock pairs and the thesis datasets on the build sized for them (``hw.designs.BUILDS``)."""

import pytest

from hw.designs import BUILDS
from sim.runner import simulate
from sim.tb_top import CLOCK_PAIRS
from sw.data.datasets import available

def test_forest_top_through_avalon():
    design, parameters = BUILDS["forest_top_small"]
    tests, failed = simulate(design, "sim.tb_top", parameters=parameters,
                             testbench={"random_forests": 3, "iris": True}, seed=2207)
    # Five tests, the datasets' skipped (none asked for).
    assert (tests, failed) == (5, 0)


@pytest.mark.long
@pytest.mark.parametrize("clocks", CLOCK_PAIRS)
def test_forest_top_with_a_separate_core_clock(clocks):
    # The system on core_clk, the Avalon side on clk: 100 MHz bus with a 77 MHz core and
    # the reverse (sim.tb_top.CLOCK_PAIRS), trees and predictions still the model's.
    bus, core = clocks
    design, parameters = BUILDS["forest_top_small_cdc"]
    tests, failed = simulate(design, "sim.tb_top", parameters=parameters, seed=bus + core,
                             testbench={"random_forests": 2, "iris": True, "bus_period_ps": bus,
                                        "core_period_ps": core})
    assert (tests, failed) == (5, 0)


@pytest.mark.long                                # make avalon runs them too
@pytest.mark.parametrize("name", ["sonar", "ctg"])
def test_dataset_through_avalon(name):
    if not available(name):
        pytest.skip(f"dataset {name} not found: set HWFOREST_DATA_DIR to a folder holding it "
                    f"(e.g. ../shared/datasets), see docs/running.md")
    design, parameters = BUILDS["forest_top_datasets"]
    tests, failed = simulate(design, "sim.tb_top", parameters=parameters,
                             testcase="datasets_through_avalon_match_model",
                             testbench={"datasets": [name]}, seed=2208)
    assert (tests, failed) == (1, 0)
