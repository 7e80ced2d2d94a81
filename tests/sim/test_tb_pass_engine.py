"""The pass engine (the out-of-core PE's datapath: row gather, histogram lanes, pass
combiner), simulated by cocotb under Verilator, against the golden model's lazy draw, best
split and partition."""

import pytest

from hw.pass_engine import PassEngine
from sim.runner import simulate


@pytest.mark.parametrize("parameters, seed", [
    ({"max_rows": 48, "features": 7, "lanes": 3, "code_bits": 3, "classes": 3, "count_bits": 9,
      "pass_bits": 2}, 91),
    # One lane (a pass per feature), two-bit codes, more features than one pass takes.
    ({"max_rows": 30, "features": 5, "lanes": 1, "code_bits": 2, "classes": 2, "count_bits": 8,
      "pass_bits": 3}, 92),
])
def test_pass_engine_matches_model_in_verilator(parameters, seed):
    tests, failed = simulate("pass_engine", "sim.tb_pass_engine", parameters=parameters,
                             testbench={"random_cases": 4, "nodes": 12}, seed=seed)
    assert (tests, failed) == (3, 0)


@pytest.mark.parametrize("arguments, text", [
    ({"lanes": 17}, "lanes must be between 1 and 16, not 17"),
    ({"features": 9, "lanes": 2, "pass_bits": 2}, "features must be at most lanes \\* 2\\*\\*pass_bits = 8"),
    ({"count_bits": 25}, "count_bits must be between 1 and 24, not 25"),
    ({"max_rows": 1}, "max_rows must be between 2 and 65536, not 1"),
])
def test_bad_parameters_are_refused(arguments, text):
    with pytest.raises(ValueError, match=text):
        PassEngine(**arguments)
