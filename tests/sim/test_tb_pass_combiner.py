"""The pass combiner (the lazy draw's choice of lanes and a node's best split over its
passes), simulated by cocotb under Verilator, against the golden model's draw and split."""

import pytest

from hw.pass_combiner import PassCombiner
from sim.runner import simulate


@pytest.mark.parametrize("parameters, seed", [
    ({"lanes": 4, "pass_bits": 4, "classes": 3, "code_bits": 3, "count_bits": 8}, 81),
    ({"lanes": 3, "pass_bits": 3, "classes": 2, "code_bits": 2, "count_bits": 7}, 82),
    ({"lanes": 1, "pass_bits": 5, "classes": 4, "code_bits": 4, "count_bits": 8}, 83),
])
def test_pass_combiner_matches_model_in_verilator(parameters, seed):
    tests, failed = simulate("pass_combiner", "sim.tb_pass_combiner", parameters=parameters,
                             testbench={"random_cases": 60}, seed=seed)
    assert (tests, failed) == (2, 0)


@pytest.mark.parametrize("arguments, text", [
    ({"lanes": 17}, "lanes must be between 1 and 16, not 17"),
    ({"pass_bits": 0}, "pass_bits must be between 1 and 8, not 0"),
])
def test_bad_parameters_are_refused(arguments, text):
    with pytest.raises(ValueError, match=text):
        PassCombiner(**arguments)
