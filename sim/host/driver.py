"""The host driver of ``hw.system.ForestSystem``: registers and streams, in cocotb.

Everything a host program does with the accelerator, as coroutines: read and write
registers by name (``hw.system.REGISTERS``), stream a dataset in, train a forest and
collect its trees, load a forest for inference, stream test rows and collect predictions.
Testbenches and the simulation backend (``sim.host.session``) use it; nobody else needs to
know the signal names.
"""

import random

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotb.utils import get_sim_time

from hw.trainer import dataset_layout, forest_node_layout
from hw.inference import InferenceGeometry
from hw.system import IDENTIFIER, REGISTERS
from sim.support.streams import StreamSink, StreamSource, clock_cycles
from sim.support.testbench import CLOCK_IMPL
from sim.support.trees import PECapacity, bits, dataset_beats, tree_from_nodes, tree_inputs

__all__ = ["HostDriver", "SystemError_", "start_host"]

STATUS_BITS = ("busy", "done", "bad_config", "dataset_error", "start_while_busy", "tree_error",
               "inference_idle", "inference_bad_config", "bad_node", "bad_row", "bad_feature",
               "depth_exceeded", "value_too_wide")


class SystemError_(RuntimeError):
    """The accelerator reported an error flag (named in the message)."""


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


class HostDriver:
    """Drives a simulated ``ForestSystem`` (``dut``) built with the parameters ``design``."""

    def __init__(self, dut, design, rng, idle_probability=0.0, stall_probability=0.0, period_ns=10):
        self.dut = dut
        self.design = design
        self.period_ns = period_ns
        self.capacity = capacity = PECapacity(design)
        self.max_trees = design["max_trees"]
        self.geometry = InferenceGeometry(
            max_trees=self.max_trees, max_nodes_per_tree=capacity.max_nodes,
            feature_capacity=capacity.feature_capacity, code_bits=capacity.code_bits,
            classes=capacity.classes, count_bits=capacity.count_bits, max_depth=capacity.max_depth,
            traversal_stages=min(design.get("traversal_stages", 1), capacity.max_depth + 1))
        clock = dut.clk
        source = {"clock": clock, "rng": rng, "idle_probability": idle_probability, "period_ns": period_ns}
        sink = {"clock": clock, "rng": rng, "stall_probability": stall_probability, "period_ns": period_ns,
                "reset": dut.rst}
        self.dataset = StreamSource(dut, "dataset", dataset_layout(capacity.code_bits, capacity.label_bits,
                                                                   capacity.feature_lanes), **source)
        self.trees = StreamSink(dut, "trees", forest_node_layout(bits(self.max_trees - 1), capacity.node_layout),
                                **sink)
        self.trees_in = StreamSource(dut, "trees_in", self.geometry.node_layout, **source)
        self.rows = StreamSource(dut, "rows", self.geometry.row_layout, **source)
        self.predictions = StreamSink(dut, "predictions", self.geometry.prediction_layout, **sink)
        self.drivers = [self.dataset, self.trees, self.trees_in, self.rows, self.predictions]
        dut.csr__write.value = 0
        dut.csr__read.value = 0

    # ---------------------------------------------------------------- registers
    async def write(self, name, value):
        address, access, width, _ = REGISTERS[name]
        if access == "R":
            raise ValueError(f"register {name} is read-only")
        if not 0 <= int(value) < 1 << 32:
            raise ValueError(f"{name} = {value} does not fit a 32-bit register")
        self.dut.csr__address.value = address
        self.dut.csr__write_data.value = int(value)
        self.dut.csr__write.value = 1
        await RisingEdge(self.dut.clk)
        self.dut.csr__write.value = 0

    async def read(self, name):
        self.dut.csr__address.value = REGISTERS[name][0]
        self.dut.csr__read.value = 1
        await RisingEdge(self.dut.clk)
        self.dut.csr__read.value = 0
        await ReadOnly()
        value = int(self.dut.csr__read_data.value)
        await RisingEdge(self.dut.clk)
        return value

    async def status(self):
        word = await self.read("STATUS")
        return {name: (word >> bit) & 1 for bit, name in enumerate(STATUS_BITS)}

    async def check_identity(self):
        identifier = await self.read("ID")
        if identifier != IDENTIFIER:
            raise SystemError_(f"ID register reads {identifier:#x}, not {IDENTIFIER:#x}")
        return {name: await self.read(name) for name in
                ("PE_COUNT", "MAX_ROWS", "FEATURE_CAPACITY", "CLASSES", "MAX_TREES", "MAX_DEPTH",
                 "CODE_BITS", "MAX_SAMPLES")}

    # ---------------------------------------------------------------- training
    async def load_dataset(self, codes, labels):
        codes = np.asarray(codes, dtype=np.int64)
        n_rows, n_features = codes.shape
        await self.write("N_FEATURES", n_features)
        for beat in dataset_beats(codes, labels, self.capacity.feature_lanes):
            self.dataset.send(beat)
        await self.dataset.wait_idle()
        await ClockCycles(self.dut.clk, 2)
        if (await self.status())["dataset_error"]:
            raise SystemError_(f"the accelerator refused the dataset ({n_rows} rows x {n_features} features)")
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

    async def train(self, params, seed, n_trees, budget=50_000_000, poll=256, progress=None):
        """Train a forest; return (trees in tree order, cycles, presort cycles)."""
        await self.configure(params, seed, n_trees)
        self.trees.clear()
        await self.write("CONTROL", 1)
        waited = 0
        while True:
            await self.cycles(poll)
            waited += poll
            status = await self.status()
            if progress is not None:
                progress(await self.read("TREES_DONE"))
            if not status["busy"]:
                break
            if waited > budget:
                raise SystemError_(f"training did not finish within {budget} cycles")
        for flag in ("bad_config", "value_too_wide", "dataset_error"):
            if status[flag]:
                raise SystemError_(f"training stopped: STATUS.{flag} is set")
        if status["tree_error"]:
            capacity = self.capacity
            raise SystemError_(
                f"training stopped: STATUS.tree_error is set (a tree needs more than the "
                f"build's max_depth = {capacity.max_depth} levels or max_nodes = "
                f"{capacity.max_nodes} nodes, or its bootstrap more than max_inbag_rows = "
                f"{capacity.max_inbag_rows} distinct rows; limit max_depth or max_samples, "
                f"or build for more)")
        groups = {}
        for beat in self.trees.received:
            groups.setdefault(beat["tree"], []).append(beat["node"])
        trees = [tree_from_nodes(groups[index], self.capacity, params.n_classes, f"tree {index}")
                 for index in range(n_trees)]
        return trees, await self.read("CYCLES"), await self.read("SORT_CYCLES")

    # ---------------------------------------------------------------- inference
    async def load_forest(self, trees):
        """Write the trees' nodes into the inference engine (no training needed)."""
        capacity = self.capacity
        mask_counts = None
        for index, tree in enumerate(trees):
            if tree.n_nodes > capacity.max_nodes:
                raise ValueError(f"tree {index} has {tree.n_nodes} nodes, more than the "
                                 f"{capacity.max_nodes} the accelerator holds per tree")
            for node in range(tree.n_nodes):
                leaf = int(tree.left_child[node] < 0)
                counts = sum(int(c) << (k * capacity.count_bits) for k, c in enumerate(tree.class_counts[node]))
                self.trees_in.send({"tree": index, "node": node, "leaf": leaf,
                                    "feature": 0 if leaf else int(tree.feature[node]),
                                    "threshold": 0 if leaf else int(tree.threshold_code[node]),
                                    "left_child": 0 if leaf else int(tree.left_child[node]),
                                    "majority_class": int(tree.majority_class[node]),
                                    "class_counts": counts})
        del mask_counts
        await self.trees_in.wait_idle()
        await self.write("N_TREES", len(trees))
        await ClockCycles(self.dut.clk, 2)
        if (await self.status())["bad_node"]:
            raise SystemError_("the inference engine refused a node (STATUS.bad_node)")

    async def predict(self, codes, labels=None):
        """Stream rows; return (predicted classes, votes, class-count sums, cycles)."""
        codes = np.asarray(codes, dtype=np.int64)
        n_rows, n_features = codes.shape
        self.predictions.clear()
        await self.write("CONTROL", 2)              # clear the counters and flags
        start = self.cycle_count()
        for row in range(n_rows):
            for feature in range(n_features):
                last = feature == n_features - 1
                self.rows.send({"code": int(codes[row, feature]),
                                "label": int(labels[row]) if (last and labels is not None) else 0,
                                "has_label": int(last and labels is not None), "last": int(last)})
        while len(self.predictions.received) < n_rows:
            await self.cycles(16)
        cycles = self.cycle_count() - start
        g = self.geometry
        predicted = np.array([p["predicted_class"] for p in self.predictions.received], dtype=np.int64)
        votes = np.array([[(p["votes"] >> (c * g.vote_bits)) & ((1 << g.vote_bits) - 1)
                           for c in range(g.classes)] for p in self.predictions.received], dtype=np.int64)
        sums = np.array([[(p["class_count_sums"] >> (c * g.sum_bits)) & ((1 << g.sum_bits) - 1)
                          for c in range(g.classes)] for p in self.predictions.received], dtype=np.int64)
        if any(p["error"] for p in self.predictions.received):
            status = await self.status()
            raise SystemError_(f"the inference engine flagged rows as errors: "
                               f"{ {k: v for k, v in status.items() if v and k != 'inference_idle'} }")
        return predicted, votes, sums, cycles

    async def cycles(self, count):
        """Wait ``count`` cycles (two wake-ups when called right after a rising edge)."""
        await clock_cycles(self.dut.clk, count, self.period_ns)

    def cycle_count(self):
        return int(get_sim_time("ns")) // self.period_ns
