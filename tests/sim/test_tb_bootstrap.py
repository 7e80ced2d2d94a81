"""The histogram PE's bootstrap unit, simulated by cocotb under Verilator, against the
model's bootstrap."""

import pytest

from hw.bootstrap import BootstrapUnit
from sim.runner import simulate


@pytest.mark.parametrize("parameters, seed", [
    ({"max_rows": 40, "classes": 3, "count_bits": 7}, 11),
    # weights of one bit: a bootstrap of at most one draw, or none (every row once)
    ({"max_rows": 2, "classes": 2, "count_bits": 2}, 12),
    ({"max_rows": 300, "classes": 5, "count_bits": 10}, 13),
])
def test_bootstrap_unit_matches_model_in_verilator(parameters, seed):
    tests, failed = simulate("bootstrap_unit", "sim.tb_bootstrap", parameters=parameters,
                             testbench={"random_cases": 12, "idle_probability": 0.4, "stall_probability": 0.4},
                             seed=seed)
    assert (tests, failed) == (2, 0)


@pytest.mark.parametrize("arguments, text", [
    ({"max_rows": 1}, "max_rows must be between 2 and 65536, not 1"),
    ({"classes": 65}, "classes must be between 2 and 64, not 65"),
    ({"count_bits": 25}, "count_bits must be between 1 and 24, not 25"),
])
def test_bad_parameters_are_refused(arguments, text):
    with pytest.raises(ValueError, match=text):
        BootstrapUnit(**arguments)
