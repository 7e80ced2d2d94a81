"""The trainer's coverage corner: a dataset offered while a forest trains waits, and the forest
still equals the model (the build of tests/sim/test_tb_trainer.py with two PEs)."""

from sim.coverage.__main__ import RUNS
from sim.runner import simulate


def test_dataset_offered_while_training_waits():
    design, module, parameters, settings, seed = RUNS["trainer_corners"]
    assert (design, module) == ("forest_trainer", "sim.coverage.tb_trainer_corners")
    tests, failed = simulate(design, module, parameters=parameters, testbench=settings, seed=seed)
    assert (tests, failed) == (1, 0)
