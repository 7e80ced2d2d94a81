"""The per-tree generator's gateware, simulated by cocotb under Verilator, against the model."""

import pytest

from sim.runner import SimulationFailed, simulate


def test_generator_matches_model_in_verilator():
    # 1000+ (seed, tree) pairs, long bootstrap-like runs, full throughput, reset and
    # restart mid-run, and the zero-bound flag; random stalls on both streams.
    tests, failed = simulate(
        "tree_random", "sim.tb_rng",
        testbench={"seed_count": 1200, "long_draws": 2000,
                   "idle_probability": 0.3, "stall_probability": 0.3},
        seed=20261122)
    assert (tests, failed) == (7, 0)


def test_generator_matches_model_with_heavy_stalls_and_narrow_bounds():
    tests, _ = simulate(
        "tree_random", "sim.tb_rng", parameters={"bound_bits": 5, "tree_index_bits": 3},
        testbench={"seed_count": 300, "long_draws": 300,
                   "idle_probability": 0.7, "stall_probability": 0.7},
        seed=7)
    assert tests == 7


def test_a_wrong_reference_makes_the_simulation_fail():
    # The comparison is live: the same testbench with a reference on another seed fails.
    with pytest.raises(SimulationFailed, match="failed against tree_random"):
        simulate("tree_random", "sim.tb_rng", testcase="many_seeds_match_model",
                 testbench={"seed_count": 5, "reference_seed_offset": 1}, seed=1)
