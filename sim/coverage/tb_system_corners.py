"""cocotb tests added to ``sim.tb_system`` for coverage (run by ``python -m sim.coverage``):
a forest stopped by a tree too deep for the build, and input streams offered while the
accelerator trains (``dataset`` and ``trees_in`` are held off until it is idle)."""

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles

from sim.support.trees import assert_trees_equal, dataset_beats, depth_overflow_expected
from sim.tb_system import SystemTestbench
from sw.methods.forest.model import TrainingParameters, forest_votes, train_forest


def deep_forest(tb, attempts=200):
    """(codes, labels, params, seed, n_trees) of a forest whose first tree is deeper than
    the build holds (random distinct codes, unlimited depth), drawn with the testbench's rng."""
    capacity = tb.host.capacity
    for _ in range(attempts):
        n_rows, n_features = capacity.max_rows, tb.rng.randint(1, capacity.feature_capacity)
        codes = np.array([[tb.rng.randrange(1 << capacity.code_bits) for _ in range(n_features)]
                          for _ in range(n_rows)])
        labels = np.array([tb.rng.randrange(capacity.classes) for _ in range(n_rows)])
        params = TrainingParameters(n_classes=capacity.classes, max_depth=None, max_samples=n_rows,
                                    features_per_split=n_features)
        seed = tb.rng.getrandbits(32)
        if depth_overflow_expected(codes, labels, params, seed, 0, capacity.max_depth):
            return codes, labels, params, seed, 2
    raise AssertionError(f"no forest deeper than max_depth = {capacity.max_depth} in {attempts} draws")


@cocotb.test()
async def too_deep_a_tree_stops_training(dut):
    tb = SystemTestbench(dut)
    await tb.begin()
    codes, labels, params, seed, n_trees = deep_forest(tb)
    assert await tb.check_train_and_predict(codes, labels, params, seed, n_trees, "too deep") is None
    codes, labels, params, seed, n_trees = tb.random_forest()
    while any(depth_overflow_expected(codes, labels, params, seed, tree, tb.host.capacity.max_depth)
              for tree in range(n_trees)):
        codes, labels, params, seed, n_trees = tb.random_forest()
    await tb.check_train_and_predict(codes, labels, params, seed, n_trees, "after the tree error")


@cocotb.test()
async def input_offered_while_training_waits(dut):
    """While a forest trains, the same dataset and a host forest are offered: both wait
    until training ends (ready low), the trained forest equals the model, then the host
    forest replaces it in the inference engine and predicts as the model does."""
    tb = SystemTestbench(dut)
    await tb.begin()
    host = tb.host
    codes = np.array([[(row * 7 + feature * 3) % 11 for feature in range(3)] for row in range(24)])
    labels = np.arange(24) % 3
    params = TrainingParameters(n_classes=3, max_depth=3, max_samples=24, features_per_split=2)
    await host.load_dataset(codes, labels)
    expected = train_forest(codes, labels, params, 11, 3)
    loaded = train_forest(codes, labels, params, 12, 2)
    before = {name: (driver.stall_cycles, driver.transfers)
              for name, driver in (("dataset", host.dataset), ("trees_in", host.trees_in))}
    training = cocotb.start_soon(host.train(params, 11, 3))
    await ClockCycles(dut.clk, 20)
    dataset = cocotb.start_soon(host.transport.send_dataset(
        dataset_beats(codes, labels, host.capacity.feature_lanes)))
    forest = cocotb.start_soon(host.transport.send_forest(host._node_beats(loaded)))
    trees, _, _ = await training
    for index, (got, want) in enumerate(zip(trees, expected)):
        assert_trees_equal(got, want, f"tree {index} trained while input waited")
    await dataset
    await forest
    for name, driver in (("dataset", host.dataset), ("trees_in", host.trees_in)):
        assert driver.stall_cycles > before[name][0], f"{name} was not held off while training"
    await host.write("N_TREES", len(loaded))
    _, votes, _, _ = await host.predict(codes)
    assert np.array_equal(votes[:, :3], forest_votes(loaded, codes, 3)), "the host forest predicts otherwise"
