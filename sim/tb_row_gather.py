"""cocotb testbench of ``hw.row_gather.RowGather`` against NumPy gathers and the
partition the out-of-core plan makes (``docs/out_of_core.md``).

A case loads a random dataset (codes, labels), a tree's weights and its root rows, then
grows a random tree over the two banks: per node a gather of random features, checked
beat by beat against ``codes[rows, features]``, ``labels[rows]`` and ``weights[rows]`` in
the bank's order, and a partition by a random feature and threshold, checked by its
count going left and by the gathers of the children (whose rows, in the other bank,
the testbench places as the partition must: left upwards, right downwards).

With the codes in memory (the design's ``code_store`` is ``"memory"``) the dataset's
labels go in on ``dataset`` and its codes into a memory model on the ``codes`` master
(:class:`sim.support.avalon.RandomMemory`: random ``waitrequest`` and in-order read
latency), in the code store's format (:class:`hw.code_reader.CodeStoreFormat`); a gather
then checks only its drawn lanes.

Settings (from the runner): ``random_cases``, ``idle_probability``, ``stall_probability``,
``memory_latency`` (cycles, an inclusive range), ``waitrequest_probability``.
"""

import cocotb
import numpy as np
from amaranth.lib import data
from cocotb.triggers import ClockCycles
from cocotb.utils import get_sim_time

from hw.checks import bits
from hw.code_reader import CodeStoreFormat
from hw.row_gather import beat_layout, dataset_layout, job_layout, label_layout
from sim.support.avalon import RandomMemory, SparseMemory
from sim.support.testbench import CLOCK_PERIOD_NS, StreamTestbench

#: Where the testbench puts the code store (a byte address, the words aligned).
CODE_BASE = 0x0010_0000


class DatasetLoader(StreamTestbench):
    """Loads a random dataset, a tree's weights and its root rows into a design with the
    row gather's load streams (``dataset``, ``weights``, ``roots``; the last two only with
    ``tree_loads``); ``weight_parameter`` names the design parameter that is a weight's width."""

    def __init__(self, dut, weight_parameter, tree_loads=True):
        super().__init__(dut)
        d = self.design
        self.max_rows, self.features, self.lanes = d["max_rows"], d["features"], d["lanes"]
        self.code_bits, self.classes, self.weight_bits = d["code_bits"], d["classes"], d[weight_parameter]
        self.row_bits, self.feature_bits = bits(self.max_rows - 1), bits(self.features - 1)
        self.in_memory = d.get("code_store", "chip") == "memory"
        if self.in_memory:
            self.store = CodeStoreFormat(self.max_rows, self.features, self.code_bits,
                                         d.get("code_word_bits", 512))
            self.memory = SparseMemory()
            self.memory_model = RandomMemory(
                dut, "codes", self.memory, self.rng, latency=tuple(self.settings.get("memory_latency", (1, 16))),
                waitrequest_probability=self.settings.get("waitrequest_probability", 0.3))
            self.dataset = self.source("dataset", label_layout(self.row_bits, bits(self.classes - 1)))
        else:
            self.dataset = self.source("dataset", dataset_layout(self.row_bits, self.features, self.code_bits,
                                                                 bits(self.classes - 1)))
        if tree_loads:
            self.weights = self.source("weights", data.StructLayout({"row": self.row_bits,
                                                                    "weight": self.weight_bits}))
            self.roots = self.source("roots", data.StructLayout({"row": self.row_bits, "last": 1}))

    async def begin(self):
        if self.in_memory:
            self.dut.code_base.value = CODE_BASE
            self.memory_model.start()
        await super().begin()

    def without_stalls(self):
        """No stalls on the streams; the memory model keeps its latency but never waits."""
        super().without_stalls()
        if self.in_memory:
            self.memory_model.waitrequest_probability = 0.0

    async def check_partitioned(self, banks, bank, base, goes_left, label):
        """Wait for the partition of a node's segment (its job sent), check the rows it
        sends left against ``goes_left`` (one per row of the segment) and move the
        testbench's copy of the banks as the row gather does (left upwards from ``base``,
        right downwards from the segment's end); returns the children's counts."""
        count = len(goes_left)
        rows = banks[bank][base:base + count]
        await self.wait_until(lambda: self.partitioned.received, 40 * count + 200, label)
        left = int(np.count_nonzero(goes_left))
        assert self.partitioned.received[0]["left"] == left, \
            f"{label}: {self.partitioned.received[0]['left']} rows left, expected {left}"
        other = banks[1 - bank]
        other[base:base + left] = rows[goes_left]
        other[base + left:base + count] = rows[~goes_left][::-1]
        return left, count - left

    async def load(self, total_below=None, weighting=None):
        """A random dataset, weights and root list; returns them and the banks' model.
        With ``total_below``, the weights sum below it (rows dropped from the bag or
        lightened until they do); with ``weighting``, the weights are ``weighting(n_rows)``."""
        rng = self.rng
        codes, labels = self.random_rows()
        n_rows = len(labels)
        heaviest = (1 << self.weight_bits) - 1
        weights = np.array([rng.choice([0, 1, 1, min(2, heaviest), rng.randint(1, heaviest)])
                            for _ in range(n_rows)])
        weights[rng.randrange(n_rows)] = max(1, weights[0])       # at least one row in-bag
        while total_below is not None and weights.sum() >= total_below:
            heavy = int(np.argmax(weights))
            weights[heavy] = weights[heavy] // 2 if np.count_nonzero(weights) == 1 else 0
        if weighting is not None:
            weights = np.asarray(weighting(n_rows))
        return (codes, labels, weights, *await self.send_dataset(codes, labels, weights))

    def random_rows(self):
        """A random dataset of 2 to ``max_rows`` rows: its codes (some at the extremes) and labels."""
        rng = self.rng
        n_rows = rng.choice([2, self.max_rows, rng.randint(2, self.max_rows)])
        codes = np.array([[rng.randrange(1 << self.code_bits) if rng.random() < 0.7 else
                           rng.choice([0, (1 << self.code_bits) - 1]) for _ in range(self.features)]
                          for _ in range(n_rows)])
        return codes, np.array([rng.randrange(self.classes) for _ in range(n_rows)])

    def send_rows(self, codes, labels):
        """Queues the dataset's rows in a random order (features past the dataset's as 0);
        with the codes in memory, writes them there and queues the labels."""
        n_rows = len(labels)
        if self.in_memory:
            self.memory.write_region(CODE_BASE, self.store.image(codes))
            for row in self.rng.sample(range(n_rows), n_rows):
                self.dataset.send({"row": row, "label": int(labels[row])})
            return
        padding = [0] * (self.features - codes.shape[1])
        for row in self.rng.sample(range(n_rows), n_rows):
            self.dataset.send({"row": row, "codes": [int(code) for code in codes[row]] + padding,
                               "label": int(labels[row])})

    async def send_dataset(self, codes, labels, weights):
        """Loads ``codes``, ``labels`` and ``weights`` (rows in a random order; features past
        the dataset's as 0) and the in-bag rows as the root list; returns the banks' model
        and the root's rows."""
        rng, n_rows = self.rng, len(labels)
        self.send_rows(codes, labels)
        for row in rng.sample(range(n_rows), n_rows):
            self.weights.send({"row": row, "weight": int(weights[row])})
        roots = rng.sample([int(row) for row in np.flatnonzero(weights)], int(np.count_nonzero(weights)))
        for k, row in enumerate(roots):
            self.roots.send({"row": row, "last": int(k == len(roots) - 1)})
        await self.wait_until(lambda: self.dataset.idle and self.weights.idle and self.roots.idle,
                              20 * n_rows + 100, "loads")
        banks = [np.full(self.max_rows, -1), np.full(self.max_rows, -1)]
        banks[0][:len(roots)] = roots
        return banks, len(roots)


class RowGatherTestbench(DatasetLoader):
    def __init__(self, dut):
        super().__init__(dut, "weight_bits")
        self.jobs = self.source("jobs", job_layout(self.row_bits, self.lanes, self.feature_bits,
                                                   self.code_bits))
        self.beats = self.sink("beats", beat_layout(self.row_bits, self.lanes, self.code_bits, self.classes,
                                                    self.weight_bits))
        self.partitioned = self.sink("partitioned", data.StructLayout({"left": self.row_bits + 1}))

    def job(self, partition, bank, base, count, features, threshold=0, drawn=None):
        drawn = (1 << self.lanes) - 1 if drawn is None else drawn
        self.jobs.send({"partition": partition, "bank": bank, "base": base, "count": count,
                        "features": features, "drawn": drawn, "threshold": threshold})

    async def gather(self, case, bank, base, count, label):
        codes, labels, weights, banks = case
        features = [self.rng.randrange(self.features) for _ in range(self.lanes)]
        # (on the chip every lane has its code; from memory only the lanes drawn)
        drawn = (1 << self.lanes) - 1
        if self.in_memory:
            drawn = self.rng.choice([drawn, self.rng.randrange(1, 1 << self.lanes)])
        checked = sum(((1 << self.code_bits) - 1) << (i * self.code_bits)
                      for i in range(self.lanes) if drawn >> i & 1)
        self.beats.clear()
        self.job(0, bank, base, count, features, drawn=drawn)
        await self.wait_until(lambda: len(self.beats.received) >= count, 40 * count + 200, label)
        rows = banks[bank][base:base + count]
        for k, (beat, row) in enumerate(zip(self.beats.received, rows)):
            expected = {"row": int(row), "label_one_hot": 1 << int(labels[row]),
                        "weight_less_one": int(weights[row]) - 1,
                        "codes": sum(int(codes[row, f]) << (i * self.code_bits)
                                     for i, f in enumerate(features)) & checked,
                        "last": int(k == count - 1)}
            assert dict(beat, codes=beat["codes"] & checked) == expected, \
                f"{label}: beat {k} is {beat}, expected {expected} in the lanes {drawn:b}"
        return features, drawn

    async def partition(self, case, bank, base, count, label):
        """Partition a node into the other bank; returns the two children's counts."""
        codes, _, _, banks = case
        rows = banks[bank][base:base + count]
        feature = self.rng.randrange(self.features)
        values = codes[rows, feature]
        threshold = self.rng.choice([0, (1 << self.code_bits) - 1, int(self.rng.choice(list(values)))])
        goes_left = values <= threshold
        self.partitioned.clear()
        self.job(1, bank, base, count, [feature] + [self.rng.randrange(self.features)
                                                    for _ in range(self.lanes - 1)], threshold, drawn=0)
        return await self.check_partitioned(banks, bank, base, goes_left, label)

    async def grow(self, case, n_roots, label, nodes=12):
        """Gather and partition nodes depth-first from the root, up to ``nodes`` of them."""
        pending = [(0, 0, n_roots)]
        for k in range(nodes):
            if not pending:
                break
            bank, base, count = pending.pop(self.rng.randrange(len(pending)))
            await self.gather(case, bank, base, count, f"{label} node {k} gather")
            if count > 1:
                left, right = await self.partition(case, bank, base, count, f"{label} node {k} partition")
                pending += [(1 - bank, base, left), (1 - bank, base + left, right)]


@cocotb.test()
async def random_trees_match_model(dut):
    tb = RowGatherTestbench(dut)
    await tb.begin()
    for case in range(tb.settings.get("random_cases", 8)):
        codes, labels, weights, banks, n_roots = await tb.load()
        await tb.grow((codes, labels, weights, banks), n_roots, f"case {case}")
        # A partition of no rows sends none left (and the next job still runs).
        tb.partitioned.clear()
        tb.job(1, tb.rng.randrange(2), tb.rng.randrange(tb.max_rows), 0, [0] * tb.lanes)
        await tb.wait_until(lambda: tb.partitioned.received, 100, f"case {case} empty partition")
        assert tb.partitioned.received[0]["left"] == 0


@cocotb.test()
async def cycles_without_stalls(dut):
    """A gather of ``count`` rows takes ``count`` cycles and the pipeline's few."""
    tb = RowGatherTestbench(dut)
    tb.without_stalls()
    await tb.begin()
    codes, labels, weights, banks, n_roots = await tb.load()
    started = get_sim_time("ns")
    features, drawn = await tb.gather((codes, labels, weights, banks), 0, 0, n_roots, "timed")
    cycles = int((get_sim_time("ns") - started) // CLOCK_PERIOD_NS)
    dut._log.info("a gather of %d rows: %d cycles", n_roots, cycles)
    if not tb.in_memory:
        assert cycles <= n_roots + 7, f"{cycles} cycles for {n_roots} rows"
        return
    # From memory: a row takes a cycle, or one a word it reads (a drawn lane reads when its
    # row's word is not the one it holds).
    rows = banks[0][:n_roots]
    words = np.array([[tb.store.word(features[i], int(row)) for row in rows]
                      for i in range(tb.lanes) if drawn >> i & 1])
    misses = np.ones(words.shape, dtype=bool)
    misses[:, 1:] = words[:, 1:] != words[:, :-1]
    reads, issue_cycles = int(misses.sum()), int(np.maximum(1, misses.sum(axis=0)).sum())
    latency = tb.memory_model.latency[1]
    dut._log.info("%d words read; the memory's latency at most %d cycles", reads, latency)
    assert cycles <= issue_cycles + latency + 14, \
        f"{cycles} cycles for {n_roots} rows, {reads} reads ({issue_cycles} cycles to ask for them)"


@cocotb.test()
async def reset_in_the_middle_then_again(dut):
    """A reset during a job; the memories keep what was loaded, the next case reloads."""
    tb = RowGatherTestbench(dut)
    await tb.begin()
    for case in range(4):
        codes, labels, weights, banks, n_roots = await tb.load()
        tb.job(tb.rng.randrange(2), 0, 0, n_roots, [0] * tb.lanes, tb.rng.randrange(1 << tb.code_bits))
        await ClockCycles(dut.clk, tb.rng.randint(1, n_roots + 6))
        await tb.reset()
        codes, labels, weights, banks, n_roots = await tb.load()
        await tb.grow((codes, labels, weights, banks), n_roots, f"after reset {case}", nodes=4)
