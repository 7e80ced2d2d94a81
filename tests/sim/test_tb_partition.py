"""The lane partition unit, simulated by cocotb under Verilator, against the golden model."""

import pytest

from hw.partition import PartitionUnit
from sim.runner import simulate


@pytest.mark.parametrize("parameters, seed", [
    ({"max_rows": 64, "max_samples": 20, "code_bits": 8, "address_bits": 11}, 41),
    ({"max_rows": 300, "max_samples": 300, "code_bits": 16, "address_bits": 14}, 42),
    # A queue shorter than the rows and not a power of two (a PE's in-bag list length).
    ({"max_rows": 100, "max_samples": 40, "code_bits": 8, "address_bits": 10, "max_segment": 37}, 43),
])
def test_partition_unit_matches_model_in_verilator(parameters, seed):
    tests, failed = simulate("partition_unit", "sim.tb_partition", parameters=parameters,
                             testbench={"random_cases": 30}, seed=seed)
    assert (tests, failed) == (3, 0)


@pytest.mark.parametrize("arguments, text", [
    ({"max_rows": 1}, "max_rows must be between 2 and 1048576, not 1"),
    ({"max_samples": 0}, "max_samples must be between 1 and 1048576, not 0"),
    ({"address_bits": 0}, "address_bits must be between 1 and 32, not 0"),
    ({"max_rows": 64, "max_segment": 65}, "max_segment must be between 1 and 64, not 65"),
])
def test_bad_parameters_are_refused(arguments, text):
    with pytest.raises(ValueError, match=text):
        PartitionUnit(**arguments)
