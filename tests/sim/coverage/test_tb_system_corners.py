"""The system's coverage corners: a tree too deep stops training with tree_error, and input
offered while the accelerator trains waits (the build of tests/sim/test_tb_system.py)."""

from sim.coverage.__main__ import RUNS
from sim.runner import simulate


def test_tree_error_and_input_offered_while_training():
    design, module, parameters, settings, seed = RUNS["system_corners"]
    assert (design, module) == ("forest_system", "sim.coverage.tb_system_corners")
    tests, failed = simulate(design, module, parameters=parameters, testbench=settings, seed=seed)
    assert (tests, failed) == (2, 0)
