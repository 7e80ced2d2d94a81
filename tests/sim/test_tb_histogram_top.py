"""histogram_top (the histogram system behind Avalon-MM), simulated by cocotb under
Verilator through its Avalon-MM interfaces only, against the golden model's forests."""

import pytest

from hw.histogram_top import HistogramTop
from sim.runner import simulate


@pytest.mark.parametrize("parameters, seed", [
    ({}, 301),
    # The build that overflows and outgrows its depth (as the system's testbench's).
    ({"max_rows": 24, "features": 4, "lanes": 1, "code_bits": 2, "classes": 2, "count_bits": 6,
      "pass_bits": 2, "max_nodes": 9, "max_depth": 6, "tree_index_bits": 3, "read_fifo_depth": 2}, 302),
    # The codes in memory, read through a third master (mem_codes) from the same memory
    # model: 64-bit words of 16 4-bit codes.
    ({"code_store": "memory", "code_word_bits": 64}, 303),
    # The same with the system and its code reader on a core clock of their own (77 MHz
    # beside the bus's 100 MHz).
    ({"code_store": "memory", "code_word_bits": 64, "separate_core_clock": True}, 304),
])
def test_histogram_top_matches_model_through_avalon(parameters, seed):
    tests, failed = simulate("histogram_top", "sim.tb_histogram_top", parameters=parameters,
                             testbench={"random_forests": 6}, seed=seed)
    assert (tests, failed) == (2, 0)


@pytest.mark.parametrize("arguments, text", [
    ({"read_fifo_depth": 0}, "read_fifo_depth must be between 1 and 256, not 0"),
    ({"crossing_depth": 6}, "crossing_depth must be a power of two, not 6"),
    ({"tree_index_bits": 32}, "tree_index_bits must be between 1 and 31, not 32"),
])
def test_bad_parameters_are_refused(arguments, text):
    with pytest.raises(ValueError, match=text):
        HistogramTop(**arguments)
