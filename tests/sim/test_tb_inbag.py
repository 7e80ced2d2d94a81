"""Bootstrap sampler and in-bag list builder, simulated by cocotb under Verilator."""

import pytest

from hw.inbag import InBagBuilder
from sim.runner import simulate


@pytest.mark.parametrize("parameters, seed", [
    ({"max_rows": 64, "max_samples": 100, "code_bits": 8, "tree_index_bits": 8, "lanes": 4}, 21),
    ({"max_rows": 300, "max_samples": 16, "code_bits": 16, "tree_index_bits": 16}, 22),  # thesis-like
])
def test_inbag_builder_matches_model_in_verilator(parameters, seed):
    tests, failed = simulate("inbag_builder", "sim.tb_inbag", parameters=parameters,
                             testbench={"random_trees": 40}, seed=seed)
    assert (tests, failed) == (7, 0)


@pytest.mark.parametrize("arguments, text", [
    ({"max_rows": 1}, "max_rows must be between 2 and 1048576, not 1"),
    ({"max_samples": 0}, "max_samples must be between 1 and 1048576, not 0"),
    ({"code_bits": 33}, "code_bits must be between 1 and 32, not 33"),
    ({"lanes": 0}, "lanes must be between 1 and 64, not 0"),
])
def test_bad_parameters_are_refused(arguments, text):
    with pytest.raises(ValueError, match=text):
        InBagBuilder(**arguments)
