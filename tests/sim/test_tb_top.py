"""forest_top through its Avalon-MM interfaces only (one small build for every test here)."""

from hw.designs import BUILDS
from sim.runner import simulate


def test_forest_top_through_avalon():
    design, parameters = BUILDS["forest_top_small"]
    tests, failed = simulate(design, "sim.tb_top", parameters=parameters,
                             testbench={"random_forests": 3, "iris": True}, seed=2207)
    assert (tests, failed) == (4, 0)
