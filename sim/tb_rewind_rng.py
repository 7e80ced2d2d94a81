"""cocotb testbench of ``hw.rewind_rng.RewindableRandom`` against the golden model's
drawer (``sw.methods.forest.sampling.NodeFeatureDrawer`` on ``sw.methods.forest.rng.TreeRandom``).

A case starts a random (seed, tree) stream at a random position and runs segments as the histogram PE does:
a run of draw requests (random bounds, runs of one bound and of bounds falling by one, now
and then bound 0), every draw checked for its value and its stream position, then a rewind
to a random position (one seen in the segment, the current one, one ahead, any 32-bit
word), sent once the draws are in, and taken before the next requests. Random idles and
stalls on all three streams; starts and resets in the middle of a segment.

Settings (from the runner): ``cases``, ``idle_probability``, ``stall_probability``.
"""

import cocotb
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

from hw.rewind_rng import REWIND_CYCLES, positioned_draw_layout, rewind_layout
from hw.rng import request_layout
from sim.support.testbench import StreamTestbench
from sw.methods.forest.rng import TreeRandom
from sw.methods.forest.sampling import NodeFeatureDrawer


class RewindTestbench(StreamTestbench):
    def __init__(self, dut):
        super().__init__(dut)
        self.bound_bits = self.design["bound_bits"]
        self.tree_index_bits = self.design["tree_index_bits"]
        self.requests = self.source("requests", request_layout(self.bound_bits))
        self.rewinds = self.source("rewinds", rewind_layout())
        self.draws = self.sink("draws", positioned_draw_layout(self.bound_bits))
        dut.start.value = dut.seed.value = dut.tree_index.value = dut.position.value = 0
        self.model = None

    async def start(self, seed, tree_index, position=0):
        """Select a stream from ``position`` (anything in flight is dropped); the model follows."""
        self.requests.clear()
        self.rewinds.clear()
        self.dut.seed.value, self.dut.tree_index.value, self.dut.position.value = seed, tree_index, position
        self.dut.start.value = 1
        await RisingEdge(self.dut.clk)
        # (sampled on the start: what the inputs hold after it does not matter)
        self.dut.start.value = 0
        self.dut.seed.value, self.dut.position.value = self.rng.getrandbits(32), self.rng.getrandbits(32)
        self.dut.tree_index.value = self.rng.getrandbits(self.tree_index_bits)
        self.draws.clear()
        self.model = NodeFeatureDrawer(TreeRandom(seed, tree_index))
        self.model.rewind(position)

    def expected(self, bound):
        """The model's draw for ``bound``: value and position (bound 0: value 0, one word)."""
        if bound == 0:
            self.model.rewind(self.model.position + 1)
            return {"value": 0, "position": self.model.position}
        return {"value": self.model.integer(bound), "position": self.model.position}

    def random_bounds(self, count):
        top = (1 << self.bound_bits) - 1
        bounds = []
        while len(bounds) < count:
            first = self.rng.choice([1, 2, top, 1 << self.rng.randrange(self.bound_bits),
                                     self.rng.randint(1, top)])
            length = self.rng.randint(1, 8)
            falling = self.rng.random() < 0.6
            bounds += [max(first - i, 1) if falling else first for i in range(length)]
        if self.rng.random() < 0.05:
            bounds[self.rng.randrange(len(bounds))] = 0
        return bounds[:count]

    async def draw(self, bounds, label):
        """Request ``bounds`` and check each draw against the model."""
        before = len(self.draws.received)
        for bound in bounds:
            self.requests.send({"bound": bound})
        await self.wait_until(lambda: len(self.draws.received) >= before + len(bounds),
                              60 + 60 * len(bounds), f"{label}: {len(bounds)} draws")
        got = self.draws.received[before:]
        for k, (bound, draw) in enumerate(zip(bounds, got)):
            expected = self.expected(bound)
            assert draw == expected, f"{label}: draw {k} (bound {bound}) is {draw}, model {expected}"
        return [draw["position"] for draw in got]

    async def rewind(self, position):
        self.rewinds.send({"position": position})
        await self.rewinds.wait_idle()
        self.model.rewind(position)

    def random_position(self, seen):
        choice = self.rng.randrange(4)
        if choice == 0 and seen:
            return self.rng.choice(seen)
        if choice == 1:
            return self.model.position + self.rng.randint(0, 5)
        if choice == 2:
            return self.rng.getrandbits(32)
        return self.model.position


@cocotb.test()
async def rewound_streams_match_model(dut):
    """Segments of draws and rewinds, on many streams, under random stalls."""
    tb = RewindTestbench(dut)
    await tb.begin()
    for case in range(tb.settings.get("cases", 60)):
        seed, tree = tb.rng.getrandbits(32), tb.rng.getrandbits(tb.tree_index_bits)
        await tb.start(seed, tree, tb.rng.choice([0, tb.rng.randint(1, 3000), tb.rng.getrandbits(32)]))
        seen = []
        for segment in range(tb.rng.randint(1, 8)):
            label = f"case {case} (seed {seed}, tree {tree}) segment {segment}"
            seen += await tb.draw(tb.random_bounds(tb.rng.randint(1, 12)), label)
            await tb.rewind(tb.random_position(seen))
        await tb.draw(tb.random_bounds(3), f"case {case} after the last rewind")


@cocotb.test()
async def starts_and_resets_in_the_middle(dut):
    """A start or a reset while draws, or a rewind, are in flight: what came out is the
    model's, and the next stream starts clean."""
    tb = RewindTestbench(dut)
    await tb.begin()
    for case in range(24):
        seed, tree = tb.rng.getrandbits(32), tb.rng.getrandbits(tb.tree_index_bits)
        await tb.start(seed, tree)
        await tb.rewind(tb.rng.getrandbits(32))
        if case % 4 < 2:            # interrupted while drawing
            bounds = tb.random_bounds(30)
            for bound in bounds:
                tb.requests.send({"bound": bound})
            await ClockCycles(dut.clk, tb.rng.randint(1, 50))
            partial = list(tb.draws.received)
            assert partial == [tb.expected(bound) for bound in bounds[:len(partial)]], f"case {case}"
        else:                       # interrupted while rewinding
            await tb.draw(tb.random_bounds(5), f"case {case}")
            tb.rewinds.send({"position": tb.rng.getrandbits(32)})
            await ClockCycles(dut.clk, tb.rng.randint(0, 9))
        if case % 2:
            await tb.reset(cycles=tb.rng.randint(1, 3))
            await ReadOnly()
            assert not int(dut.running.value), "running must drop on reset"
            await RisingEdge(dut.clk)
        await tb.start(seed ^ case, tree)
        await tb.draw(tb.random_bounds(10), f"restart {case}")


@cocotb.test()
async def rewind_costs_its_documented_cycles(dut):
    """Without stalls, a draw after a rewind (a bound already cached) comes
    ``REWIND_CYCLES`` plus the raw words it uses after the rewind is taken; a rewind and
    a request valid together: the rewind goes first."""
    tb = RewindTestbench(dut)
    tb.without_stalls()
    await tb.begin()
    await tb.start(12345, 6 % (1 << tb.tree_index_bits))
    bound = min(21, (1 << tb.bound_bits) - 1)
    await tb.draw([bound] * 4, "before")
    for case in range(20):
        position = tb.random_position([])
        before = len(tb.draws.received)
        tb.rewinds.send({"position": position})
        tb.requests.send({"bound": bound})
        taken = arrived = None
        for cycle in range(100):
            await ReadOnly()
            if taken is None and int(dut.rewinds__ready.value) and int(dut.rewinds__valid.value):
                taken = cycle
            if int(dut.draws__valid.value):
                arrived = cycle
                break
            await RisingEdge(dut.clk)
        await ClockCycles(dut.clk, 2)
        assert len(tb.draws.received) == before + 1, f"case {case}: no draw"
        tb.model.rewind(position)
        start = tb.model.position
        assert tb.draws.received[-1] == tb.expected(bound), f"case {case}: the rewind went first"
        used = tb.model.position - start
        # (the rewind's handshake is at the edge after the cycle it is seen in)
        assert arrived - taken == REWIND_CYCLES + used + 1, (case, arrived, taken, used)
