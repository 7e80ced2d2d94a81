"""The histogram PE's rewindable generator, simulated by cocotb under Verilator, against
the model's drawer."""

import pytest

from sim.runner import simulate


@pytest.mark.parametrize("widths, seed", [({}, 20261207), ({"bound_bits": 4, "tree_index_bits": 2}, 3)],
                         ids=["default", "narrow"])
def test_rewindable_generator_matches_model_in_verilator(widths, seed):
    # Segments of draws and rewinds on many streams, starts and resets mid-run, the
    # rewind's cycles; random idles and stalls on all three streams.
    tests, failed = simulate("rewind_random", "sim.tb_rewind_rng", parameters=widths,
                             testbench={"cases": 80, "idle_probability": 0.4, "stall_probability": 0.4},
                             seed=seed)
    assert (tests, failed) == (3, 0)


@pytest.mark.parametrize("arguments, text", [
    ({"bound_bits": 0}, "bound_bits must be between 1 and 32, not 0"),
    ({"tree_index_bits": 33}, "tree_index_bits must be between 1 and 32, not 33"),
])
def test_bad_parameters_are_refused(arguments, text):
    from hw.rewind_rng import RewindableRandom
    with pytest.raises(ValueError, match=text):
        RewindableRandom(**arguments)
