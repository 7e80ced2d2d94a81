"""A cocotb test added to ``sim.tb_trainer`` for coverage (run by ``python -m sim.coverage``):
the dataset offered while a forest trains waits (the trainer holds ``dataset.ready`` low
while busy), and the forest is not disturbed by it."""

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles, RisingEdge

from sim.support.trees import assert_trees_equal, dataset_beats
from sim.tb_trainer import ForestTestbench
from sw.methods.forest.model import TrainingParameters, train_forest


@cocotb.test()
async def dataset_offered_while_training_waits(dut):
    tb = ForestTestbench(dut)
    await tb.begin()
    codes = np.array([[(row * 5 + feature * 3) % 13 for feature in range(3)] for row in range(24)])
    labels = np.arange(24) % 3
    params = TrainingParameters(n_classes=3, max_depth=3, max_samples=24, features_per_split=2)
    expected = train_forest(codes, labels, params, 21, 3)
    tb.nodes.clear()
    await tb.load(codes, labels)
    tb.configure(*codes.shape, 3, params, 21)
    await tb.pulse_start()
    await ClockCycles(dut.clk, 20)
    stalls = tb.dataset.stall_cycles
    for beat in dataset_beats(codes, labels, tb.lanes):        # the same rows, offered again
        tb.dataset.send(beat)
    await tb.wait_until_finished(200_000, "forest trained while the dataset waits")
    trees = tb.trees_from_nodes(3)
    assert sorted(trees) == [0, 1, 2], f"trees {sorted(trees)} came out"
    for index, tree in trees.items():
        assert_trees_equal(tree, expected[index], f"tree {index} trained while the dataset waited")
    while not tb.dataset.idle:
        await RisingEdge(dut.clk)
    assert tb.dataset.stall_cycles > stalls, "the dataset was not held off while the forest trained"
    await tb.check_forest(codes, labels, params, 22, 2, "a forest on the dataset loaded after training")
