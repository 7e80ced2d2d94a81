"""The Gini calculator, simulated by cocotb under Verilator, against the golden model."""

import pytest

from hw.gini import GiniScanner
from sim.runner import simulate


@pytest.mark.parametrize("parameters, seed", [
    ({"classes": 3, "count_bits": 8, "code_bits": 8, "row_bits": 7}, 31),
    ({"classes": 8, "count_bits": 13, "code_bits": 16, "row_bits": 12}, 32),
    ({"classes": 2, "count_bits": 5, "code_bits": 16, "row_bits": 4}, 33),     # thesis: 16 samples
])
def test_gini_scanner_matches_model_in_verilator(parameters, seed):
    tests, failed = simulate("gini_scanner", "sim.tb_gini", parameters=parameters,
                             testbench={"random_segments": 150}, seed=seed)
    assert (tests, failed) == (4, 0)


@pytest.mark.parametrize("arguments, text", [
    ({"classes": 1}, "classes must be between 2 and 64, not 1"),
    ({"count_bits": 25}, "count_bits must be between 1 and 24, not 25"),
    ({"row_bits": 0}, "row_bits must be between 1 and 24, not 0"),
])
def test_bad_parameters_are_refused(arguments, text):
    with pytest.raises(ValueError, match=text):
        GiniScanner(**arguments)
