"""The row gather (a dataset on the chip, node row banks, gather and partition passes),
simulated by cocotb under Verilator, against NumPy's gathers and the plan's partition."""

import pytest

from hw.row_gather import RowGather
from sim.runner import simulate


@pytest.mark.parametrize("parameters, seed", [
    ({"max_rows": 64, "features": 5, "lanes": 3, "code_bits": 8, "classes": 3, "weight_bits": 4}, 71),
    # More lanes than features (lanes share features), one-bit codes, a row count not a
    # power of two.
    ({"max_rows": 37, "features": 2, "lanes": 4, "code_bits": 1, "classes": 2, "weight_bits": 1}, 72),
])
def test_row_gather_matches_model_in_verilator(parameters, seed):
    tests, failed = simulate("row_gather", "sim.tb_row_gather", parameters=parameters,
                             testbench={"random_cases": 8}, seed=seed)
    assert (tests, failed) == (3, 0)


@pytest.mark.parametrize("parameters, seed", [
    # 64-bit words of 8 codes: a lane rereads every 8 rows at most; 3 lanes, 5 features.
    ({"max_rows": 64, "features": 5, "lanes": 3, "code_bits": 8, "classes": 3, "weight_bits": 4,
      "code_store": "memory", "code_word_bits": 64}, 73),
    # 3-bit codes in 4-bit slots, 32-bit words, rows not a power of two, more lanes than
    # features; a memory of long latencies.
    ({"max_rows": 37, "features": 2, "lanes": 4, "code_bits": 3, "classes": 2, "weight_bits": 2,
      "code_store": "memory", "code_word_bits": 32}, 74),
])
def test_row_gather_reads_codes_from_memory_in_verilator(parameters, seed):
    latency = [1, 16] if seed == 73 else [20, 40]
    tests, failed = simulate("row_gather", "sim.tb_row_gather", parameters=parameters,
                             testbench={"random_cases": 8, "memory_latency": latency}, seed=seed)
    assert (tests, failed) == (3, 0)


@pytest.mark.parametrize("arguments, text", [
    ({"max_rows": 1}, "max_rows must be between 2 and 65536, not 1"),
    ({"features": 0}, "features must be between 1 and 1024, not 0"),
    ({"lanes": 65}, "lanes must be between 1 and 64, not 65"),
    ({"code_bits": 11}, "code_bits must be between 1 and 10, not 11"),
    ({"code_store": "disk"}, "code_store must be one of \\('chip', 'memory'\\), not 'disk'"),
    ({"code_store": "memory", "code_word_bits": 48}, "code_word_bits must be a power of two, not 48"),
])
def test_bad_parameters_are_refused(arguments, text):
    with pytest.raises(ValueError, match=text):
        RowGather(**arguments)
