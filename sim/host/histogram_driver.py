"""The host driver of ``hw.histogram_system.HistogramSystem``: its register map and sequences, over a transport.

As :mod:`sim.host.driver` for the ``ForestSystem``: registers by name
(``hw.histogram_system.HISTOGRAM_REGISTERS``), the dataset streamed in row by row, a
forest trained and its node records collected into ``sw.methods.forest.model.Tree`` s,
errors as :class:`sim.host.errors.AcceleratorError` naming the ``STATUS`` flags. The words
and beats travel through a transport: by default :class:`HistogramTransport` (the
system's own bus and streams under cocotb), or
:class:`sim.host.avalon_transport.AvalonTransport` (``histogram_top``'s Avalon-MM slave
and a memory its DMA masters read and write, as a board would). A transport has the
register calls, ``send_dataset``, ``arm_trees(limit)`` and ``collect_trees()``,
``wait_cycles`` and ``cycle_count``, and for a build with its codes in memory
``send_codes(image)``: the code store's bytes put in the accelerator's memory, returning
their base address (the driver writes it to ``CODE_BASE`` and streams only the labels).

What the histogram PE trains is the golden model's forest-mode tree (a fresh feature draw
a split, ``min_samples_leaf = 1``); a job outside that is refused before anything is
sent, naming the parameter. A tree without a depth limit runs with the build's
``MAX_DEPTH``; a node that reaches it and could still split is reported as an error
(the unlimited tree might be deeper), never returned as a cut tree.
"""

import random

import numpy as np

from hw.histogram_pe import node_record_layout
from hw.histogram_system import (HISTOGRAM_IDENTIFIER, HISTOGRAM_REGISTERS, HISTOGRAM_STATUS_BITS,
                                 forest_record_layout)
from hw.code_reader import CodeStoreFormat
from hw.row_gather import dataset_layout, label_layout
from sim.host.errors import AcceleratorError
from sim.support.avalon import RandomMemory, SparseMemory
from sim.host.transport import CocotbRegisters, NamedRegisters
from sim.support.streams import StreamSink, StreamSource
from sim.support.trees import bits
from sw.methods.forest.model import Tree

__all__ = ["HistogramCapacity", "HistogramTransport", "HistogramHostDriver", "HISTOGRAM_MEANINGS",
           "tree_from_records", "check_histogram_job"]

#: Cycles :meth:`HistogramHostDriver.train` waits by default before giving up.
TRAIN_BUDGET = 2_000_000_000

#: What each error flag of ``STATUS`` means, in a host program's terms.
HISTOGRAM_MEANINGS = {
    "bad_config": "N_TREES is 0 or more than MAX_TREES, or CODE_BASE is not on a memory word's "
                  "boundary or puts the code store past 2**32: nothing was started",
    "dataset_error": "a dataset row's index was at or past MAX_ROWS",
    "start_while_busy": "a start was written while a training ran (ignored)",
    "bad_start": "the PE refused a tree's parameters (no rows or features, more than the build "
                 "holds, no feature a split, a depth limit of 0 or past MAX_DEPTH, "
                 "min_samples_split below 2, or a bootstrap whose weights reach 2**count_bits)",
    "overflow": "a tree needed more nodes than MAX_NODES",
    "value_too_wide": "a configuration register holds more bits than the hardware has: the start "
                      "was refused (never truncated)",
}
TRAINING_ERRORS = ("bad_config", "value_too_wide", "dataset_error", "bad_start", "overflow")


class HistogramCapacity:
    """The sizes of a ``HistogramSystem`` built with the parameters ``design`` (a dict)."""

    def __init__(self, design):
        for name in ("max_rows", "features", "lanes", "code_bits", "classes", "count_bits", "pass_bits",
                     "max_nodes", "max_depth"):
            setattr(self, name, design[name])
        self.tree_index_bits = design.get("tree_index_bits", 16)
        self.max_trees = 1 << self.tree_index_bits
        self.max_samples = (1 << self.count_bits) - 1
        self.row_bits, self.feature_bits = bits(self.max_rows - 1), bits(self.features - 1)
        self.record_layout = node_record_layout(bits(self.max_nodes - 1), self.feature_bits, self.code_bits,
                                                self.classes, self.count_bits, self.row_bits,
                                                bits(self.max_depth))
        self.forest_layout = forest_record_layout(self.tree_index_bits, self.record_layout)
        self.code_store = design.get("code_store", "chip")
        self.store = None
        if self.code_store == "memory":
            self.store = CodeStoreFormat(self.max_rows, self.features, self.code_bits,
                                         design.get("code_word_bits", 512))
            self.dataset_layout = label_layout(self.row_bits, bits(self.classes - 1))
        else:
            self.dataset_layout = dataset_layout(self.row_bits, self.features, self.code_bits,
                                                 bits(self.classes - 1))


def check_histogram_job(capacity, n_rows, n_features, n_classes, params, n_trees):
    """Refuse, by name and limit, a job the build ``capacity`` cannot train as the model does."""
    if params.thesis_mode:
        raise ValueError("the histogram PE trains forest mode only (a fresh feature draw a split), "
                         "not mode='thesis'")
    if params.min_samples_leaf != 1:
        raise ValueError(f"the histogram PE trains with min_samples_leaf = 1, not {params.min_samples_leaf}")
    limits = [("rows", n_rows, capacity.max_rows), ("features", n_features, capacity.features),
              ("classes", n_classes, capacity.classes), ("trees", n_trees, capacity.max_trees)]
    for what, value, limit in limits:
        if value > limit:
            raise ValueError(f"{value} {what} are more than the histogram build's {limit}")
    weight = params.max_samples if params.bootstrap else n_rows
    if weight > capacity.max_samples:
        raise ValueError(f"a tree's {weight} draws (max_samples, or every row without a bootstrap) are "
                         f"more than the build's {capacity.max_samples} (count_bits = {capacity.count_bits})")
    if params.max_depth is not None and params.max_depth > capacity.max_depth:
        raise ValueError(f"max_depth={params.max_depth} is more than the build's {capacity.max_depth} levels")


def tree_from_records(records, capacity, n_classes, label="tree"):
    """A ``sw.methods.forest.model.Tree`` from one tree's node records (dicts of the PE's
    ``node_record_layout``), checking that they come in node order and end on ``last``."""
    mask = (1 << capacity.count_bits) - 1
    n_nodes = len(records)
    if not n_nodes:
        raise AcceleratorError(f"{label}: no node came out")
    columns = {name: np.full(n_nodes, -1, dtype=np.int64) for name in
               ("feature", "threshold_code", "left_child", "right_child")}
    counts = np.zeros((n_nodes, n_classes), dtype=np.int64)
    n_rows, depth = np.zeros(n_nodes, dtype=np.int64), np.zeros(n_nodes, dtype=np.int64)
    for index, record in enumerate(records):
        if record["node"] != index or record["last"] != int(index == n_nodes - 1):
            raise AcceleratorError(f"{label}: node {index} came out as node {record['node']} "
                                   f"(last = {record['last']}) of {n_nodes}")
        if record["split"]:
            columns["feature"][index], columns["threshold_code"][index] = record["feature"], record["threshold"]
            columns["left_child"][index], columns["right_child"][index] = record["left"], record["left"] + 1
        every = [(record["class_counts"] >> (c * capacity.count_bits)) & mask for c in range(capacity.classes)]
        if any(every[n_classes:]):
            raise AcceleratorError(f"{label}: node {index} counts a class past the dataset's {n_classes}")
        counts[index] = every[:n_classes]
        n_rows[index], depth[index] = record["rows"], record["depth"]
    return Tree(class_counts=counts, majority_class=np.argmax(counts, axis=1),
                n_samples=counts.sum(axis=1), n_rows=n_rows, depth=depth, **columns)


class HistogramTransport(CocotbRegisters):
    """The simulated ``HistogramSystem`` ``dut`` of the build ``capacity`` under cocotb:
    its register bus and its two streams (``dataset``, ``trees``; both in ``drivers``); with
    its codes in memory, a memory model on its ``codes`` master (``memory``: random
    ``waitrequest`` at ``idle_probability``, read latency in ``memory_latency``)."""

    #: Where :meth:`send_codes` puts the code store (a byte address).
    CODE_BASE = 0x1000_0000

    def __init__(self, dut, capacity, rng, idle_probability=0.0, stall_probability=0.0, period_ns=10,
                 memory_latency=(1, 16)):
        super().__init__(dut, rng, idle_probability, stall_probability, period_ns)
        self.dataset = StreamSource(dut, "dataset", capacity.dataset_layout, **self.source)
        self.trees = StreamSink(dut, "trees", capacity.forest_layout, **self.sink)
        self.drivers = [self.dataset, self.trees]
        self.memory = self.memory_model = None
        if capacity.store is not None:
            self.memory = SparseMemory()
            self.memory_model = RandomMemory(dut, "codes", self.memory, rng, latency=tuple(memory_latency),
                                             waitrequest_probability=idle_probability)
            self.memory_model.start()

    async def send_codes(self, image):
        self.memory.write_region(self.CODE_BASE, image)
        return self.CODE_BASE

    async def send_dataset(self, beats):
        for beat in beats:
            self.dataset.send(beat)
        await self.dataset.wait_idle()

    async def arm_trees(self, limit):
        """Ready to receive at most ``limit`` node beats (here: the sink forgets the last ones)."""
        self.trees.clear()

    async def collect_trees(self):
        """The node beats received since :meth:`arm_trees`."""
        return list(self.trees.received)


class HistogramHostDriver(NamedRegisters):
    """Drives a ``HistogramSystem`` built with the parameters ``design``: the simulated
    ``dut`` (stream stalls drawn from ``rng``), or whatever ``transport`` reaches."""

    def __init__(self, dut, design, rng=None, idle_probability=0.0, stall_probability=0.0, period_ns=10,
                 *, transport=None, memory_latency=(1, 16)):
        self.capacity = HistogramCapacity(design)
        self.transport = transport or HistogramTransport(dut, self.capacity, rng or random.Random(0),
                                                         idle_probability, stall_probability, period_ns,
                                                         memory_latency)
        self.n_rows = self.n_features = None

    drivers = property(lambda self: self.transport.drivers)
    registers = HISTOGRAM_REGISTERS

    async def status(self):
        word = await self.read("STATUS")
        return {name: (word >> bit) & 1 for bit, name in enumerate(HISTOGRAM_STATUS_BITS)}

    async def check_identity(self):
        """The build's capacities as its registers read; an error if it is no ``HistogramSystem``."""
        identifier = await self.read("ID")
        if identifier != HISTOGRAM_IDENTIFIER:
            raise AcceleratorError(f"ID register reads {identifier:#x}, not {HISTOGRAM_IDENTIFIER:#x}")
        return {name: await self.read(name) for name in
                ("LANES", "MAX_ROWS", "FEATURE_CAPACITY", "CLASSES", "MAX_TREES", "MAX_DEPTH", "CODE_BITS",
                 "MAX_SAMPLES", "MAX_NODES", "CODE_WORD_BITS")}

    async def load_dataset(self, codes, labels):
        """Stream the rows (codes padded with 0 past the dataset's features)."""
        capacity = self.capacity
        codes, labels = np.asarray(codes, dtype=np.int64), np.asarray(labels, dtype=np.int64)
        n_rows, n_features = codes.shape
        if n_rows > capacity.max_rows or n_features > capacity.features:
            raise ValueError(f"{n_rows} rows x {n_features} features do not fit the build's "
                             f"{capacity.max_rows} x {capacity.features}")
        if codes.size and (codes.min() < 0 or codes.max() >= 1 << capacity.code_bits):
            raise ValueError(f"a code of {int(codes.max())} does not fit the build's code_bits = {capacity.code_bits}")
        if labels.size and (labels.min() < 0 or labels.max() >= capacity.classes):
            raise ValueError(f"a label of {int(labels.max())} is past the build's {capacity.classes} classes")
        if capacity.store is not None:
            # the codes into the code store in memory, the labels streamed
            await self.write("CODE_BASE", await self.transport.send_codes(capacity.store.image(codes)))
            await self.transport.send_dataset({"row": row, "label": int(labels[row])} for row in range(n_rows))
        else:
            padding = [0] * (capacity.features - n_features)
            await self.transport.send_dataset(
                {"row": row, "codes": [int(code) for code in codes[row]] + padding, "label": int(labels[row])}
                for row in range(n_rows))
        status = await self.status()
        if status["dataset_error"]:
            raise AcceleratorError("the accelerator refused the dataset: " + self.explain(status, ["dataset_error"]),
                                   ["dataset_error"])
        self.n_rows, self.n_features = n_rows, n_features

    async def configure(self, params, seed, n_trees):
        capacity = self.capacity
        await self.write("SEED", seed)
        await self.write("N_ROWS", self.n_rows)
        await self.write("N_FEATURES", self.n_features)
        await self.write("N_TREES", n_trees)
        await self.write("N_SAMPLES", params.max_samples if params.bootstrap else 1)
        await self.write("FLAGS", int(params.bootstrap))
        await self.write("FEATURES_PER_SPLIT", params.features_per_split)
        await self.write("DEPTH_LIMIT", capacity.max_depth if params.max_depth is None else params.max_depth)
        # (a node never has more rows than the dataset: a larger minimum splits the same nodes)
        await self.write("MIN_SAMPLES_SPLIT", min(params.min_samples_split, self.n_rows + 1))

    async def train(self, params, seed, n_trees, budget=TRAIN_BUDGET, poll=1024, progress=None):
        """Train a forest on the loaded dataset; return (trees in tree order, cycles).

        ``progress(trees_done)`` after each poll (every ``poll`` cycles)."""
        if self.n_rows is None:
            raise ValueError("no dataset loaded: call load_dataset first")
        check_histogram_job(self.capacity, self.n_rows, self.n_features, params.n_classes, params, n_trees)
        await self.configure(params, seed, n_trees)
        await self.transport.arm_trees(n_trees * self.capacity.max_nodes)
        await self.write("CONTROL", 1)
        status = await self.wait_while_busy(n_trees, budget, poll, progress)
        errors = [flag for flag in TRAINING_ERRORS if status[flag]]
        if errors:
            done = await self.read("TREES_DONE")
            raise AcceleratorError(f"training stopped after {done} of {n_trees} trees: "
                                   + self.explain(status, errors), errors)
        groups = [[] for _ in range(n_trees)]
        for beat in await self.transport.collect_trees():
            groups[beat["tree"]].append(beat["node"])
        trees = [tree_from_records(records, self.capacity, params.n_classes, f"tree {index}")
                 for index, records in enumerate(groups)]
        if params.max_depth is None:
            self._check_depth(trees, params)
        return trees, await self.read("CYCLES")

    def _check_depth(self, trees, params):
        """An unlimited tree ran with the build's depth limit: refuse a tree with a leaf at
        that limit that has the rows and the classes to split."""
        limit, least = self.capacity.max_depth, max(2, params.min_samples_split)
        for index, tree in enumerate(trees):
            at_limit = tree.is_leaf & (tree.depth == limit) & (tree.n_rows >= least) & \
                (np.count_nonzero(tree.class_counts, axis=1) > 1)
            if at_limit.any():
                raise AcceleratorError(f"tree {index} reached the build's max_depth = {limit} levels with a node "
                                       f"that may split further: refit with max_depth <= {limit}", ["depth"])

    @staticmethod
    def explain(status, flags):
        return "; ".join(f"STATUS.{flag} ({HISTOGRAM_MEANINGS[flag]})" for flag in flags if status.get(flag))
