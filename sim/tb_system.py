"""cocotb testbench of ``hw.system.ForestSystem`` through the host driver (``sim.host.driver``).

The whole accelerator as a host sees it: registers, dataset in, forest trained and
exported, predictions of the stored forest, a forest loaded by the host, error flags.
Settings: ``random_forests``, ``idle_probability``, ``stall_probability``.
"""

import dataclasses

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles

from hw.system import REGISTERS
from sim.host.driver import HostDriver, SystemError_
from sim.coverage import bins as coverage_bins, coverage_for
from sim.support.testbench import StreamTestbench
from sim.support.trees import assert_trees_equal, depth_overflow_expected, random_forest_case
from sw.methods.forest.model import TrainingParameters, forest_class_counts, forest_votes, train_forest


class SystemTestbench(StreamTestbench):
    def __init__(self, dut):
        super().__init__(dut)
        self.host = HostDriver(dut, self.design, self.rng,
                               idle_probability=self.settings.get("idle_probability", 0.3),
                               stall_probability=self.settings.get("stall_probability", 0.3))
        self.sources = [self.host.dataset, self.host.trees_in, self.host.rows]
        self.sinks = [self.host.trees, self.host.predictions]
        self.coverage = coverage_for(self)

    def random_forest(self):
        return random_forest_case(self.rng, self.host.capacity, self.host.max_trees)

    async def check_train_and_predict(self, codes, labels, params, seed, n_trees, label):
        host = self.host
        await host.load_dataset(codes, labels)
        expected = train_forest(codes, labels, params, seed, n_trees)
        overflow = any(depth_overflow_expected(codes, labels, params, seed, tree, host.capacity.max_depth)
                       for tree in range(n_trees))
        self.coverage.record(coverage_bins.forest_case, n_trees, None, overflow, params.thesis_mode)
        if overflow:
            # A tree deeper than the build holds stops training with a named error.
            try:
                await host.train(params, seed, n_trees)
            except SystemError_ as error:
                assert "tree_error" in str(error), f"{label}: {error}"
                return None
            raise AssertionError(f"{label}: a tree deeper than max_depth = "
                                 f"{host.capacity.max_depth} did not stop training")
        trees, cycles, sort_cycles = await host.train(params, seed, n_trees)
        for index, (got, want) in enumerate(zip(trees, expected)):
            assert_trees_equal(got, want, f"{label} tree {index}")
        assert 0 < sort_cycles < cycles, f"{label}: cycles {cycles}, presort {sort_cycles}"
        assert await host.read("TREES_DONE") == n_trees
        # The trained forest stays in the inference engine: predict rows, some never seen.
        test = np.vstack([codes, np.array([[self.rng.randint(0, (1 << host.capacity.code_bits) - 1)
                                            for _ in range(codes.shape[1])] for _ in range(5)])])
        test_labels = np.concatenate([labels, [self.rng.randrange(params.n_classes) for _ in range(5)]])
        predicted, votes, sums, _ = await host.predict(test, test_labels)
        want_votes = forest_votes(expected, test, params.n_classes)
        classes = host.capacity.classes
        assert np.array_equal(votes[:, :params.n_classes], want_votes) and not votes[:, params.n_classes:].any(), \
            f"{label}: votes differ"
        assert np.array_equal(predicted, want_votes.argmax(axis=1)), f"{label}: predictions differ"
        assert np.array_equal(sums[:, :params.n_classes], forest_class_counts(expected, test, params.n_classes)), \
            f"{label}: class-count sums differ"
        assert classes >= params.n_classes
        correct = int(np.count_nonzero(want_votes.argmax(axis=1) == test_labels))
        assert (await host.read("ROWS_SEEN"), await host.read("ROWS_LABELLED"),
                await host.read("ROWS_CORRECT")) == (len(test), len(test), correct), f"{label}: counters"
        self.coverage.hit("forest", "inference after training")
        return expected


@cocotb.test()
async def registers_read_back(dut):
    tb = SystemTestbench(dut)
    await tb.begin()
    capacity = await tb.host.check_identity()
    d = tb.design
    assert capacity == {"PE_COUNT": d["pe_count"], "MAX_ROWS": d["max_rows"], "FEATURE_CAPACITY": d["feature_capacity"],
                        "CLASSES": d["classes"], "MAX_TREES": d["max_trees"], "MAX_DEPTH": d["max_depth"],
                        "CODE_BITS": d["code_bits"], "MAX_SAMPLES": d["max_samples"]}, capacity
    for name, (address, access, width, _) in REGISTERS.items():
        if access == "RW":
            value = tb.rng.getrandbits(width)
            await tb.host.write(name, value)
            assert await tb.host.read(name) == value, f"{name} does not read back"
    try:
        await tb.host.write("STATUS", 1)
    except ValueError:
        pass
    else:
        raise AssertionError("writing a read-only register was not refused")


@cocotb.test()
async def forests_trained_and_predicted_match_model(dut):
    tb = SystemTestbench(dut)
    await tb.begin()
    for case in range(tb.settings.get("random_forests", 3)):
        codes, labels, params, seed, n_trees = tb.random_forest()
        await tb.check_train_and_predict(codes, labels, params, seed, n_trees, f"forest {case}")


@cocotb.test()
async def host_loaded_forest_predicts_as_model(dut):
    tb = SystemTestbench(dut)
    await tb.begin()
    codes, labels, params, seed, _ = tb.random_forest()
    # Trees the build stores: no deeper than its depth (so no more nodes than it holds).
    deepest = tb.host.capacity.max_depth
    params = dataclasses.replace(params, max_depth=deepest if params.max_depth is None
                                 else min(params.max_depth, deepest))
    trees = train_forest(codes, labels, params, seed, 3)
    await tb.host.load_forest(trees)
    predicted, votes, _, _ = await tb.host.predict(codes)
    assert np.array_equal(votes[:, :params.n_classes], forest_votes(trees, codes, params.n_classes))
    assert await tb.host.read("ROWS_LABELLED") == 0
    tb.coverage.hit("forest", "host-loaded forest")


@cocotb.test()
async def bad_configurations_raise_flags(dut):
    tb = SystemTestbench(dut)
    await tb.begin()
    host = tb.host
    codes = np.arange(30).reshape(10, 3) % 7
    labels = np.arange(10) % 2
    depth = min(3, host.capacity.max_depth)          # the build's depth, when below 3
    params = TrainingParameters(n_classes=2, max_depth=depth, max_samples=10, features_per_split=2)
    await host.load_dataset(codes, labels)
    for label, register, value in [("no trees", "N_TREES", 0), ("rows not loaded", "N_ROWS", 11),
                                   ("too many trees", "N_TREES", tb.design["max_trees"] + 1)]:
        await host.configure(params, 1, 2)
        await host.write(register, value)
        await host.write("CONTROL", 1)
        await ClockCycles(dut.clk, 10)
        status = await host.status()
        assert status["bad_config"] and not status["busy"], f"{label}: {status}"
        tb.coverage.hit("refusal", label)
    # A value wider than the hardware's port is refused, never truncated into a valid one.
    await host.configure(params, 1, 2)
    await host.write("N_ROWS", 10 + (1 << 20))
    await host.write("CONTROL", 1)
    await ClockCycles(dut.clk, 10)
    status = await host.status()
    assert status["value_too_wide"] and not status["busy"], f"too wide: {status}"
    tb.coverage.hit("refusal", "value too wide")
    # Training with a bad configuration raises in the driver, naming the flag.
    await host.write("N_ROWS", 10)
    try:
        await host.train(params, 1, 0)
    except SystemError_ as error:
        assert "bad_config" in str(error)
        tb.coverage.hit("refusal", "training zero trees")
    else:
        raise AssertionError("training zero trees was not refused")
    # And a good forest afterwards.
    await host.write("N_ROWS", 10)
    await tb.check_train_and_predict(codes, labels, params, 3, 2, "after bad configurations")


@cocotb.test()
async def reset_in_the_middle_then_again(dut):
    tb = SystemTestbench(dut)
    await tb.begin()
    codes, labels, params, seed, n_trees = tb.random_forest()
    await tb.host.load_dataset(codes, labels)
    await tb.host.configure(params, seed, n_trees)
    await tb.host.write("CONTROL", 1)
    await ClockCycles(dut.clk, tb.rng.randint(10, 2000))
    await tb.reset()
    codes, labels, params, seed, n_trees = tb.random_forest()
    await tb.check_train_and_predict(codes, labels, params, seed, n_trees, "after reset")
    tb.coverage.hit("reset", "while busy")
