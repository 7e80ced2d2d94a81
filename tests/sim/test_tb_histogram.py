"""The histogram unit, simulated by cocotb under Verilator, against the golden model."""

import pytest

from hw.histogram import HistogramUnit
from sim.runner import simulate


@pytest.mark.parametrize("parameters, seed", [
    ({"classes": 3, "count_bits": 9, "code_bits": 8, "row_bits": 9}, 51),
    # A bin count whose groups are uneven (4 groups of 8 bits), many classes, a weight
    # width that bounds a run before its row width does.
    ({"classes": 26, "count_bits": 7, "code_bits": 5, "row_bits": 10}, 52),
    # The smallest histogram: two bins, one group.
    ({"classes": 2, "count_bits": 4, "code_bits": 1, "row_bits": 4}, 53),
])
def test_histogram_unit_matches_model_in_verilator(parameters, seed):
    tests, failed = simulate("histogram_unit", "sim.tb_histogram", parameters=parameters,
                             testbench={"random_cases": 30}, seed=seed)
    assert (tests, failed) == (3, 0)


@pytest.mark.parametrize("arguments, text", [
    ({"classes": 1}, "classes must be between 2 and 64, not 1"),
    ({"code_bits": 11}, "code_bits must be between 1 and 10, not 11"),
    ({"count_bits": 0}, "count_bits must be between 1 and 24, not 0"),
    ({"row_bits": 25}, "row_bits must be between 1 and 24, not 25"),
])
def test_bad_parameters_are_refused(arguments, text):
    with pytest.raises(ValueError, match=text):
        HistogramUnit(**arguments)
