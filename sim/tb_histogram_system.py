"""cocotb testbench of ``hw.histogram_system.HistogramSystem`` through its host driver
(``sim.host.histogram_driver``), against the golden model's forest (``train_forest``).

Random forests: a random dataset loaded in row order through the register map, random
forest-mode parameters (bootstrap or none, draws, features a split, depth limit or none,
``min_samples_split``), 1 to 4 trees, random stalls on both streams; every tree equal to
the model's node for node. A forest whose tree needs more nodes than the build holds
stops with ``overflow`` after the trees before it; an unlimited tree deeper than the
build's ``max_depth`` is refused by the driver. The error flags: ``bad_config``,
``value_too_wide``, ``bad_start``, ``start_while_busy`` and ``dataset_error`` each raised by
its cause and cleared by the next good start.

With the codes in memory (``code_store="memory"``) the driver writes the code store into a
memory model on the ``codes`` master (random ``waitrequest`` at ``idle_probability``, read
latency in ``memory_latency``), sets ``CODE_BASE`` and streams the labels; a misaligned
``CODE_BASE``, or one that puts the store past 2**32, is refused with ``bad_config``.

Settings: ``random_forests``, ``idle_probability``, ``stall_probability``, ``memory_latency``.
"""

import dataclasses

import cocotb
import numpy as np

from sim.host.histogram_driver import HistogramHostDriver
from sim.host.errors import AcceleratorError
from sim.support.testbench import StreamTestbench
from sim.support.trees import assert_trees_equal
from sw.methods.forest.model import TrainingParameters, train_forest


class HistogramSystemTestbench(StreamTestbench):
    """The host driver on the system's own bus and streams, or on ``transport`` (with no
    stream drivers of the testbench's: ``sim.tb_histogram_top``'s Avalon-MM transport)."""

    def __init__(self, dut, transport=None):
        super().__init__(dut)
        self.host = HistogramHostDriver(dut, self.design, self.rng,
                                        idle_probability=self.settings.get("idle_probability", 0.3),
                                        stall_probability=self.settings.get("stall_probability", 0.3),
                                        transport=transport,
                                        memory_latency=self.settings.get("memory_latency", (1, 16)))
        self.capacity = self.host.capacity
        if transport is None:
            self.sources, self.sinks = [self.host.transport.dataset], [self.host.transport.trees]

    def random_codes(self, n_rows):
        c = self.capacity
        return np.array([[self.rng.randrange(1 << c.code_bits) for _ in range(c.features)] for _ in range(n_rows)])

    def random_job(self):
        c, rng = self.capacity, self.rng
        n_rows = rng.choice([2, c.max_rows, rng.randint(2, c.max_rows), rng.randint(2, c.max_rows)])
        n_features = rng.choice([1, c.features, rng.randint(1, c.features)])
        n_classes = rng.randint(2, c.classes)
        codes = np.array([[rng.randrange(1 << c.code_bits) if rng.random() < 0.7 else
                           rng.choice([0, (1 << c.code_bits) - 1]) for _ in range(n_features)]
                          for _ in range(n_rows)])
        labels = np.array([rng.randrange(n_classes) for _ in range(n_rows)])
        bootstrap = rng.random() < 0.8 or n_rows > c.max_samples
        params = TrainingParameters(
            n_classes=n_classes, bootstrap=bootstrap,
            max_samples=min(c.max_samples, rng.choice([n_rows, n_rows, 1, rng.randint(1, 2 * n_rows)])),
            features_per_split=rng.choice([1, n_features, rng.randint(1, n_features)]),
            max_depth=rng.choice([None, c.max_depth, rng.randint(1, c.max_depth)]),
            min_samples_split=rng.choice([2, 2, 2, 3, 5, 2 * c.max_rows]))
        return codes, labels, params, rng.getrandbits(32), rng.randint(1, 4)

    async def check_forest(self, label):
        codes, labels, params, seed, n_trees = self.random_job()
        host, capacity = self.host, self.capacity
        await host.load_dataset(codes, labels)
        expected = train_forest(codes, labels, params, seed, n_trees)
        overflow = [index for index, tree in enumerate(expected)
                    if np.any(tree.left_child + 2 > capacity.max_nodes)]
        too_deep = [index for index, tree in enumerate(expected) if params.max_depth is None
                    and tree.depth.max() > capacity.max_depth]
        if params.max_depth is None and not too_deep and any(tree.depth.max() == capacity.max_depth
                                                             for tree in expected):
            params = dataclasses.replace(params, max_depth=capacity.max_depth)   # (the check's "may")
        cases = {"overflow": overflow[:1], "depth": too_deep[:1]}
        first = min(overflow + too_deep, default=None)
        try:
            trees, cycles = await host.train(params, seed, n_trees)
        except AcceleratorError as error:
            assert first is not None, f"{label}: {error}"
            kind = next(kind for kind, trees in cases.items() if first in trees)
            assert kind in error.flags, f"{label}: expected {kind} at tree {first}, got {error}"
            if kind == "overflow":
                assert await host.read("TREES_DONE") == first, f"{label}: trees done past the overflow"
            return f"{kind} at tree {first}"
        assert first is None, f"{label}: tree {first} should have been refused ({cases})"
        assert len(trees) == n_trees and cycles > 0
        for index, (got, want) in enumerate(zip(trees, expected)):
            assert_trees_equal(got, want, f"{label} tree {index}")
        status = await host.status()
        assert status["done"] and not status["busy"], f"{label}: status {status}"
        assert await host.read("TREES_DONE") == n_trees
        return sum(tree.n_nodes for tree in trees)


@cocotb.test()
async def random_forests_match_model(dut):
    tb = HistogramSystemTestbench(dut)
    await tb.begin()
    identity = await tb.host.check_identity()
    c = tb.capacity
    assert identity == {"LANES": c.lanes, "MAX_ROWS": c.max_rows, "FEATURE_CAPACITY": c.features,
                        "CLASSES": c.classes, "MAX_TREES": c.max_trees, "MAX_DEPTH": c.max_depth,
                        "CODE_BITS": c.code_bits, "MAX_SAMPLES": c.max_samples, "MAX_NODES": c.max_nodes,
                        "CODE_WORD_BITS": c.store.word_bits if c.store else 0}
    outcomes = [await tb.check_forest(f"forest {case}") for case in range(tb.settings.get("random_forests", 6))]
    dut._log.info("forests: %s", outcomes)


async def _expect_flag(tb, flag, label):
    status = await tb.host.status()
    assert status[flag] and not status["busy"], f"{label}: {flag} not raised ({status})"


@cocotb.test()
async def error_flags_raise_and_clear(dut):
    tb = HistogramSystemTestbench(dut)
    tb.without_stalls()
    await tb.begin()
    host, c = tb.host, tb.capacity
    codes = tb.random_codes(8)
    labels = np.array([0, 1] * 4)
    params = TrainingParameters(n_classes=2, max_samples=8, features_per_split=1, max_depth=c.max_depth)
    await host.load_dataset(codes, labels)
    await host.configure(params, 1, 1)
    writes = [("bad_config", "N_TREES", 0), ("bad_config", "N_TREES", c.max_trees + 1),
              ("value_too_wide", "DEPTH_LIMIT", 1 << c.max_depth.bit_length()),
              ("value_too_wide", "N_ROWS", 1 << c.row_bits + 1),
              ("bad_start", "FEATURES_PER_SPLIT", 0), ("bad_start", "DEPTH_LIMIT", c.max_depth + 1)]
    if c.store is not None:                         # a code store off a word, or past 2**32
        writes += [("bad_config", "CODE_BASE", host.transport.CODE_BASE + c.store.word_bytes // 2),
                   ("bad_config", "CODE_BASE", (1 << 32) - c.store.size_bytes + c.store.word_bytes)]
    for flag, register, value in writes:
        if register == "DEPTH_LIMIT" and value >= 1 << 8:
            continue                                        # (not held by the 8-bit register)
        await host.configure(params, 1, 1)
        await host.write(register, value)
        await host.transport.arm_trees(1)
        await host.write("CONTROL", 1)
        await host.transport.wait_cycles(40)
        await _expect_flag(tb, flag, f"{register} = {value}")
        assert not await host.transport.collect_trees(), f"{register} = {value}: a node left"
    # A good start clears the flags and trains as the model does.
    if c.store is not None:
        await host.write("CODE_BASE", host.transport.CODE_BASE)
    trees, _ = await host.train(params, 1, 2)
    for got, want in zip(trees, train_forest(codes, labels, params, 1, 2)):
        assert_trees_equal(got, want, "after the errors")
    status = await host.status()
    assert not any(status[flag] for flag in ("bad_config", "value_too_wide", "bad_start")), f"status {status}"
    if c.max_rows < 1 << c.row_bits:                # a row index past the store
        host.transport.dataset.send({"row": c.max_rows, "label": 0} if c.store else
                                    {"row": c.max_rows, "codes": [0] * c.features, "label": 0})
        await host.transport.dataset.wait_idle()
        await host.transport.wait_cycles(4)
        assert (await host.status())["dataset_error"], "a row past MAX_ROWS was taken silently"


@cocotb.test()
async def start_while_busy_is_flagged(dut):
    tb = HistogramSystemTestbench(dut)
    tb.without_stalls()
    await tb.begin()
    host, c = tb.host, tb.capacity
    codes = tb.random_codes(c.max_rows)
    labels = np.array([tb.rng.randrange(2) for _ in range(c.max_rows)])
    params = TrainingParameters(n_classes=2, max_samples=c.max_rows, features_per_split=1, max_depth=2)
    await host.load_dataset(codes, labels)
    await host.configure(params, 3, 1)
    await host.write("CONTROL", 1)
    await host.write("CONTROL", 1)
    status = await host.status()
    assert status["busy"] and status["start_while_busy"], f"status {status}"
