"""The presorting radix sorter, simulated by cocotb under Verilator, against the model."""

import pytest

from hw.sorter import RadixSorter
from sim.runner import simulate


@pytest.mark.parametrize("parameters, seed", [
    ({"max_rows": 64, "code_bits": 16, "radix_bits": 8}, 11),      # two passes, even
    ({"max_rows": 100, "code_bits": 12, "radix_bits": 5}, 12),     # three passes, odd
    ({"max_rows": 40, "code_bits": 4, "radix_bits": 8}, 13),       # one pass, narrow codes
])
def test_sorter_matches_model_in_verilator(parameters, seed):
    tests, failed = simulate("radix_sorter", "sim.tb_sorter", parameters=parameters,
                             testbench={"random_cases": 40}, seed=seed)
    assert (tests, failed) == (5, 0)


@pytest.mark.parametrize("arguments, text", [
    ({"max_rows": 1}, "max_rows must be between 2 and 1048576, not 1"),
    ({"code_bits": 0}, "code_bits must be between 1 and 32, not 0"),
    ({"radix_bits": 13}, "radix_bits must be between 1 and 12, not 13"),
])
def test_bad_parameters_are_refused(arguments, text):
    with pytest.raises(ValueError, match=text):
        RadixSorter(**arguments)
