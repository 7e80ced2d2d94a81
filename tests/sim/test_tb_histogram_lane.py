"""The histogram lane (two histogram units and a Gini scanner), simulated by cocotb under
Verilator, against the golden model's split of each histogram."""

import pytest

from hw.histogram_lane import HistogramLane
from sim.runner import simulate


@pytest.mark.parametrize("parameters, seed", [
    ({"classes": 3, "count_bits": 9, "code_bits": 8, "row_bits": 9}, 61),
    # Many classes on few bins: nodes whose histograms have many cells a bin.
    ({"classes": 10, "count_bits": 7, "code_bits": 3, "row_bits": 8}, 62),
])
def test_histogram_lane_matches_model_in_verilator(parameters, seed):
    tests, failed = simulate("histogram_lane", "sim.tb_histogram_lane", parameters=parameters,
                             testbench={"random_cases": 30}, seed=seed)
    assert (tests, failed) == (3, 0)


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="code_bits must be between 1 and 10, not 0"):
        HistogramLane(code_bits=0)
