"""The host driver of ``hw.system.ForestSystem``: the register map and its sequences, over a transport.

Everything a host program does with the accelerator, as coroutines: read and write
registers by name (``hw.system.REGISTERS``), stream a dataset in, train a forest and
collect its trees, load a forest for inference, stream test rows and collect predictions;
errors come back as :class:`sim.host.errors.AcceleratorError` naming the ``STATUS`` flags
and their meaning. The words and buffers travel through a :class:`sim.host.transport.Transport`:
by default the cocotb simulation (:class:`~sim.host.transport.CocotbTransport`, whose stream
drivers are reachable as ``host.dataset``, ``host.trees``, ... for testbenches); a board's
link would be another transport (see :mod:`sim.host.transport`). Testbenches and the
simulation backend's sessions (``sim.host.session``) use it; nobody else needs to know the
signal names.
"""

import random

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles

from hw.inference import InferenceGeometry
from hw.system import IDENTIFIER, REGISTERS
from sim.host.errors import (INFERENCE_ERRORS, STATUS_BITS, TRAINING_ERRORS, AcceleratorError,
                             decode_status, explain)
from sim.host.transport import CocotbTransport, NamedRegisters, row_beats
from sim.support.testbench import CLOCK_IMPL
from sim.support.trees import PECapacity, dataset_beats, tree_from_nodes, tree_inputs

__all__ = ["HostDriver", "AcceleratorError", "SystemError_", "STATUS_BITS", "start_host"]

#: The former name of :class:`AcceleratorError` (testbenches catch it).
SystemError_ = AcceleratorError

#: Cycles :meth:`HostDriver.train` waits by default before giving up on a training.
TRAIN_BUDGET = 50_000_000


async def start_host(dut, design, clock_period_ns=10):
    """Start the clock and a stall-free :class:`HostDriver`, reset the design and check it
    is the build ``design`` describes. Returns ``(host, capacity)``."""
    Clock(dut.clk, clock_period_ns, unit="ns", impl=CLOCK_IMPL).start()
    host = HostDriver(dut, design, random.Random(0), period_ns=clock_period_ns)
    for driver in host.drivers:
        cocotb.start_soon(driver.run())
    dut.rst.value = 1
    await ClockCycles(dut.clk, 2)
    dut.rst.value = 0
    return host, await host.check_identity()


class HostDriver(NamedRegisters):
    """Drives a ``ForestSystem`` built with the parameters ``design``: the simulated
    ``dut`` (with stream stalls drawn from ``rng``), or whatever ``transport`` reaches."""

    def __init__(self, dut, design, rng=None, idle_probability=0.0, stall_probability=0.0, period_ns=10,
                 *, transport=None):
        self.dut = dut
        self.design = design
        self.capacity = capacity = PECapacity(design)
        self.max_trees = design["max_trees"]
        self.geometry = InferenceGeometry(
            max_trees=self.max_trees, max_nodes_per_tree=capacity.max_nodes,
            feature_capacity=capacity.feature_capacity, code_bits=capacity.code_bits,
            classes=capacity.classes, count_bits=capacity.count_bits, max_depth=capacity.max_depth,
            traversal_stages=min(design.get("traversal_stages", 1), capacity.max_depth + 1))
        self.transport = transport or CocotbTransport(
            dut, capacity, self.geometry, self.max_trees, rng or random.Random(0),
            idle_probability, stall_probability, period_ns)

    # The simulation's stream drivers, for testbenches (CocotbTransport only).
    dataset = property(lambda self: self.transport.dataset)
    trees = property(lambda self: self.transport.trees)
    trees_in = property(lambda self: self.transport.trees_in)
    rows = property(lambda self: self.transport.rows)
    predictions = property(lambda self: self.transport.predictions)
    drivers = property(lambda self: self.transport.drivers)

    # ---------------------------------------------------------------- registers
    registers = REGISTERS

    async def status(self):
        return decode_status(await self.read("STATUS"))

    async def check_identity(self):
        identifier = await self.read("ID")
        if identifier != IDENTIFIER:
            raise AcceleratorError(f"ID register reads {identifier:#x}, not {IDENTIFIER:#x}")
        return {name: await self.read(name) for name in
                ("PE_COUNT", "MAX_ROWS", "FEATURE_CAPACITY", "CLASSES", "MAX_TREES", "MAX_DEPTH",
                 "CODE_BITS", "MAX_SAMPLES")}

    # ---------------------------------------------------------------- training
    async def load_dataset(self, codes, labels):
        codes = np.asarray(codes, dtype=np.int64)
        n_rows, n_features = codes.shape
        await self.write("N_FEATURES", n_features)
        await self.transport.send_dataset(dataset_beats(codes, labels, self.capacity.feature_lanes))
        await self.cycles(2)
        status = await self.status()
        if status["dataset_error"]:
            raise AcceleratorError(f"the accelerator refused the dataset ({n_rows} rows x {n_features} "
                                   f"features): {'; '.join(explain(status, ['dataset_error']))}",
                                   ["dataset_error"])
        await self.write("N_ROWS", n_rows)

    async def configure(self, params, seed, n_trees, export_trees=True):
        inputs = tree_inputs(params)
        await self.write("SEED", seed)
        await self.write("N_TREES", n_trees)
        await self.write("N_SAMPLES", inputs["n_samples"])
        await self.write("FLAGS", inputs["bootstrap"] | inputs["thesis_mode"] << 1
                         | inputs["depth_limited"] << 2 | int(export_trees) << 3)
        await self.write("FEATURES_PER_SPLIT", inputs["features_per_split"])
        await self.write("DEPTH_LIMIT", inputs["depth_limit"])
        await self.write("MIN_SAMPLES_SPLIT", inputs["min_samples_split"])
        await self.write("MIN_SAMPLES_LEAF", inputs["min_samples_leaf"])

    async def train(self, params, seed, n_trees, budget=TRAIN_BUDGET, poll=256, progress=None):
        """Train a forest; return (trees in tree order, cycles, presort cycles).

        ``progress(trees_done)`` is called after each poll of ``TREES_DONE`` (every ``poll``
        cycles); more than ``budget`` cycles raise :class:`AcceleratorError`."""
        await self.configure(params, seed, n_trees)
        self.transport.clear_trees()
        await self.write("CONTROL", 1)
        status = await self.wait_while_busy(n_trees, budget, poll, progress)
        errors = [flag for flag in TRAINING_ERRORS if status[flag]]
        if errors:
            raise AcceleratorError(self._training_error(errors, status, params), errors)
        groups = {}
        for beat in self.transport.received_trees():
            groups.setdefault(beat["tree"], []).append(beat["node"])
        trees = [tree_from_nodes(groups[index], self.capacity, params.n_classes, f"tree {index}")
                 for index in range(n_trees)]
        return trees, await self.read("CYCLES"), await self.read("SORT_CYCLES")

    def _training_error(self, errors, status, params):
        capacity = self.capacity
        message = "training stopped: " + "; ".join(explain(status, errors))
        if "tree_error" in errors:
            message += (f". The build holds max_depth = {capacity.max_depth} levels, max_nodes = "
                        f"{capacity.max_nodes} nodes per tree and max_inbag_rows = "
                        f"{capacity.max_inbag_rows} distinct rows per bootstrap")
            if params.max_depth is None:
                message += (f": refit with max_depth <= {capacity.max_depth} (or a smaller "
                            f"max_samples), or use a build with more")
        return message

    # ---------------------------------------------------------------- inference
    async def load_forest(self, trees):
        """Write the trees' nodes into the inference engine (no training needed)."""
        capacity = self.capacity
        for index, tree in enumerate(trees):
            if tree.n_nodes > capacity.max_nodes:
                raise ValueError(f"tree {index} has {tree.n_nodes} nodes, more than the "
                                 f"{capacity.max_nodes} the accelerator holds per tree")
        await self.transport.send_forest(self._node_beats(trees))
        await self.write("N_TREES", len(trees))
        await self.cycles(2)
        status = await self.status()
        if status["bad_node"]:
            raise AcceleratorError("the inference engine refused a node: "
                                   + "; ".join(explain(status, ["bad_node"])), ["bad_node"])

    def _node_beats(self, trees):
        count_bits = self.capacity.count_bits
        for index, tree in enumerate(trees):
            for node in range(tree.n_nodes):
                leaf = int(tree.left_child[node] < 0)
                counts = sum(int(c) << (k * count_bits) for k, c in enumerate(tree.class_counts[node]))
                yield {"tree": index, "node": node, "leaf": leaf,
                       "feature": 0 if leaf else int(tree.feature[node]),
                       "threshold": 0 if leaf else int(tree.threshold_code[node]),
                       "left_child": 0 if leaf else int(tree.left_child[node]),
                       "majority_class": int(tree.majority_class[node]), "class_counts": counts}

    async def predict(self, codes, labels=None):
        """Stream rows; return (predicted classes, votes, class-count sums, cycles)."""
        codes = np.asarray(codes, dtype=np.int64)
        n_rows = codes.shape[0]
        transport = self.transport
        transport.clear_predictions()
        await self.write("CONTROL", 2)              # clear the counters and flags
        start = self.cycle_count()
        transport.send_rows(row_beats(codes, labels))
        while len(transport.received_predictions()) < n_rows:
            await self.cycles(16)
        cycles = self.cycle_count() - start
        received = transport.received_predictions()
        g = self.geometry
        predicted = np.array([p["predicted_class"] for p in received], dtype=np.int64)
        votes = np.array([[(p["votes"] >> (c * g.vote_bits)) & ((1 << g.vote_bits) - 1)
                           for c in range(g.classes)] for p in received], dtype=np.int64)
        sums = np.array([[(p["class_count_sums"] >> (c * g.sum_bits)) & ((1 << g.sum_bits) - 1)
                          for c in range(g.classes)] for p in received], dtype=np.int64)
        if any(p["error"] for p in received):
            status = await self.status()
            flags = [flag for flag in INFERENCE_ERRORS if status[flag]]
            rows = [index for index, p in enumerate(received) if p["error"]]
            raise AcceleratorError(f"the inference engine flagged {len(rows)} of {n_rows} rows as errors "
                                   f"(first: row {rows[0]}): " + "; ".join(explain(status, flags)), flags)
        return predicted, votes, sums, cycles

    async def cycles(self, count):
        """Wait ``count`` cycles."""
        await self.transport.wait_cycles(count)

    def cycle_count(self):
        return self.transport.cycle_count()
