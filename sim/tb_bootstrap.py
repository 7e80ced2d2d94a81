"""cocotb testbench of ``hw.bootstrap.BootstrapUnit`` against the golden model's bootstrap
(``sw.methods.forest.sampling.bootstrap_weights`` on the tree's stream).

A case writes random labels, starts a random bootstrap (rows, draws, with or without
bootstrap) and plays the generator from the model's stream (each request answered with
the drawn row and the stream position after it). Every row's weight must come out on
``weights`` in row order, the in-bag rows on ``roots`` in row order with ``last`` on the
final one, and ``done`` must hold the class totals, the in-bag rows and the position
after the last draw. Random idles and stalls on every stream; resets in the middle (the
next bootstrap must not see the weights left behind).

Settings (from the runner): ``random_cases``, ``reset_cases``, ``idle_probability``, ``stall_probability``.
"""

import cocotb
import numpy as np
from amaranth.lib import data
from cocotb.triggers import ClockCycles, RisingEdge

from hw.bootstrap import bootstrap_done_layout, bootstrap_start_layout
from hw.rewind_rng import positioned_draw_layout
from hw.rng import request_layout
from sim.support.streams import pack
from sim.support.testbench import StreamTestbench
from sw.methods.forest.rng import TreeRandom
from sw.methods.forest.sampling import NodeFeatureDrawer, bootstrap_weights


class BootstrapTestbench(StreamTestbench):
    def __init__(self, dut):
        super().__init__(dut)
        d = self.design
        self.max_rows, self.classes, self.count_bits = d["max_rows"], d["classes"], d["count_bits"]
        self.row_bits = (self.max_rows - 1).bit_length()
        self.start = self.source("start", bootstrap_start_layout(self.row_bits, self.count_bits))
        self.requests = self.sink("requests", request_layout(self.row_bits + 1))
        self.draws = self.source("draws", positioned_draw_layout(self.row_bits + 1))
        self.weights = self.sink("weights", data.StructLayout({"row": self.row_bits, "weight": self.count_bits}))
        self.roots = self.sink("roots", data.StructLayout({"row": self.row_bits, "last": 1}))
        self.done = self.sink("done", bootstrap_done_layout(self.row_bits, self.classes, self.count_bits))
        self.label_layout = data.StructLayout({"en": 1, "row": self.row_bits, "label": (self.classes - 1).bit_length()})
        dut.label_write.value = 0
        self.drawer, self.answered = None, 0

    async def generator(self):
        """Answers each request with the model's stream (``drawer``), in order, from the
        request ``answered`` on (set with the drawer)."""
        while True:
            await RisingEdge(self.dut.clk)
            while self.drawer is not None and self.answered < len(self.requests.received):
                value = self.drawer.integer(self.requests.received[self.answered]["bound"])
                self.draws.send({"value": value, "position": self.drawer.position})
                self.answered += 1

    def play(self, seed, tree):
        """Answer the requests from now on with the stream of (``seed``, ``tree``)."""
        self.drawer, self.answered = NodeFeatureDrawer(TreeRandom(seed, tree)), len(self.requests.received)

    async def write_labels(self, labels):
        for row, label in enumerate(labels):
            self.dut.label_write.value = pack(self.label_layout, {"en": 1, "row": row, "label": int(label)})
            await RisingEdge(self.dut.clk)
        self.dut.label_write.value = 0

    def random_case(self):
        rng = self.rng
        n_rows = rng.choice([1, 2, self.max_rows, rng.randint(1, self.max_rows)])
        heaviest = (1 << self.count_bits) - 1
        bootstrap = rng.random() < 0.8 or n_rows > heaviest
        max_samples = min(heaviest, rng.choice([n_rows, 1, rng.randint(1, 2 * n_rows)]))
        return n_rows, max_samples, bootstrap

    async def check(self, label, labels, n_rows, max_samples, bootstrap):
        seed, tree = self.rng.getrandbits(32), self.rng.getrandbits(16)
        random = TreeRandom(seed, tree)
        self.play(seed, tree)
        weights = bootstrap_weights(random, n_rows, max_samples, bootstrap)
        in_bag = [int(row) for row in np.flatnonzero(weights)]
        totals = np.bincount(labels[:n_rows], weights=weights, minlength=self.classes).astype(int)
        for sink in (self.weights, self.roots, self.done):
            sink.clear()
        self.start.send({"n_rows": n_rows, "max_samples": max_samples, "bootstrap": int(bootstrap)})
        budget = 40 * (max_samples + n_rows) + 4 * self.max_rows + 200
        await self.wait_until(lambda: self.done.received, budget, f"{label}: done")
        await ClockCycles(self.dut.clk, 3)
        assert [w["row"] for w in self.weights.received] == list(range(n_rows)), f"{label}: weight rows"
        assert [w["weight"] for w in self.weights.received] == [int(w) for w in weights], f"{label}: weights"
        assert self.roots.received == [{"row": row, "last": int(k == len(in_bag) - 1)}
                                       for k, row in enumerate(in_bag)], f"{label}: roots"
        done = self.done.received
        packed = sum(int(total) << (k * self.count_bits) for k, total in enumerate(totals))
        expected = {"class_counts": packed, "rows": len(in_bag),
                    "position": random.position}
        assert done == [expected], f"{label}: done {done}, model {expected}"
        self.drawer, self.answered = None, 0


@cocotb.test()
async def random_bootstraps_match_model(dut):
    tb = BootstrapTestbench(dut)
    await tb.begin()
    cocotb.start_soon(tb.generator())
    for case in range(tb.settings.get("random_cases", 20)):
        labels = np.array([tb.rng.randrange(tb.classes) for _ in range(tb.max_rows)])
        await tb.write_labels(labels)
        for draw in range(3):           # the same labels, three trees
            await tb.check(f"case {case}.{draw}", labels, *tb.random_case())


@cocotb.test()
async def resets_in_the_middle_leave_nothing_behind(dut):
    tb = BootstrapTestbench(dut)
    await tb.begin()
    cocotb.start_soon(tb.generator())
    labels = np.array([tb.rng.randrange(tb.classes) for _ in range(tb.max_rows)])
    await tb.write_labels(labels)
    for case in range(tb.settings.get("reset_cases", 8)):
        n_rows = tb.max_rows
        tb.play(case, case)
        tb.start.send({"n_rows": n_rows, "max_samples": min(n_rows, (1 << tb.count_bits) - 1), "bootstrap": 1})
        await ClockCycles(dut.clk, tb.rng.randint(2, 3 * n_rows))
        tb.drawer = None
        await tb.reset()
        await tb.check(f"after reset {case}", labels, *tb.random_case())
