"""cocotb testbench of ``hw.rng.TreeRandom`` against the golden model ``sw.methods.forest.rng.TreeRandom``.

Run through ``sim.runner.simulate("tree_random", "sim.tb_rng", ...)`` (pytest does this in
``tests/sim/test_tb_rng.py``). Testbench settings (from the runner): ``seed_count``,
``long_draws``, ``idle_probability``, ``stall_probability``.
"""

import cocotb
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

from hw.rng import MIXER_STAGES, draw_layout, request_layout
from sim.coverage import coverage_for
from sim.support.testbench import StreamTestbench
from sw.methods.forest.rng import TreeRandom as ReferenceRandom

class RandomTestbench(StreamTestbench):
    """The generator's two streams with random stalls, and its start/seed inputs."""

    def __init__(self, dut):
        super().__init__(dut)
        self.bound_bits = self.design["bound_bits"]
        self.tree_index_bits = self.design["tree_index_bits"]
        self.requests = self.source("requests", request_layout(self.bound_bits))
        self.draws = self.sink("draws", draw_layout(self.bound_bits))
        dut.start.value = 0
        dut.seed.value = 0
        dut.tree_index.value = 0
        self.coverage = coverage_for(self)

    async def start(self, seed, tree_index):
        """Select a stream; requests queued afterwards are answered from its first word."""
        self.requests.clear()
        self.dut.seed.value = seed
        self.dut.tree_index.value = tree_index
        self.dut.start.value = 1
        await RisingEdge(self.dut.clk)
        self.dut.start.value = 0
        self.draws.clear()

    async def collect(self, count, timeout_cycles):
        for _ in range(timeout_cycles):
            if len(self.draws.received) >= count:
                return [item["value"] for item in self.draws.received]
            await RisingEdge(self.dut.clk)
        raise AssertionError(
            f"only {len(self.draws.received)} of {count} draws within {timeout_cycles} cycles")

    def random_bounds(self, count):
        """Bounds that exercise the rejection rule: 1, powers of two, 2^k + 1, random."""
        top = (1 << self.bound_bits) - 1
        bounds = []
        for _ in range(count):
            kind = self.rng.randrange(4)
            k = self.rng.randrange(self.bound_bits)
            if kind == 0:
                bounds.append(1 << k)
            elif kind == 1:
                bounds.append(min((1 << k) + 1, top))
            elif kind == 2:
                bounds.append(self.rng.randint(1, top))
            else:
                bounds.append(self.rng.choice([1, 2, 3, top]))
        return bounds

    def random_seed(self):
        return self.rng.choice([0, (1 << 32) - 1, self.rng.getrandbits(32)])

    def random_tree(self):
        return self.rng.choice([0, (1 << self.tree_index_bits) - 1,
                                self.rng.getrandbits(self.tree_index_bits)])

    async def check_stream(self, seed, tree_index, bounds, label):
        await self.start(seed, tree_index)
        for bound in bounds:
            self.requests.send({"bound": bound})
        got = await self.collect(len(bounds), timeout_cycles=40 + 40 * len(bounds))
        # "reference_seed_offset" deliberately breaks the reference: the runner's own
        # test uses it to show that a mismatch does fail.
        reference = ReferenceRandom(seed ^ self.settings.get("reference_seed_offset", 0), tree_index)
        expected = [reference.integer(bound) for bound in bounds]
        assert got == expected, (
            f"{label}: seed={seed} tree={tree_index}: first mismatch at draw "
            f"{next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)}: "
            f"got {got[:20]}..., expected {expected[:20]}...")


def _testbench(dut):
    return RandomTestbench(dut)


@cocotb.test()
async def many_seeds_match_model(dut):
    """Short streams of many (seed, tree) pairs and mixed bounds equal the model's."""
    tb = _testbench(dut)
    await tb.begin()
    seed_count = tb.settings.get("seed_count", 1000)
    for case in range(seed_count):
        bounds = tb.random_bounds(tb.rng.randint(1, 12))
        await tb.check_stream(tb.random_seed(), tb.random_tree(), bounds, f"case {case}")
    dut._log.info("%d seeds matched the model", seed_count)


@cocotb.test()
async def long_streams_match_model(dut):
    """Bootstrap-like runs: thousands of draws with one bound, under stalls."""
    tb = _testbench(dut)
    await tb.begin()
    top = (1 << tb.bound_bits) - 1
    for bound in sorted({min(150, top), min(2126, top), top, 1 << (tb.bound_bits - 1)}):
        count = tb.settings.get("long_draws", 2000)
        await tb.check_stream(tb.random_seed(), tb.random_tree(), [bound] * count, f"bound {bound}")


@cocotb.test()
async def full_throughput_without_stalls(dut):
    """With no stalls a power-of-two bound gives one draw per cycle."""
    tb = _testbench(dut)
    tb.requests.idle_probability = 0.0
    tb.draws.stall_probability = 0.0
    await tb.begin()
    await tb.start(7, 3)
    count = 200
    for _ in range(count):
        tb.requests.send({"bound": 1 << (tb.bound_bits - 1)})
    # Key derivation passes three words through the mixer; then one draw per cycle.
    got = await tb.collect(count, timeout_cycles=count + 3 * (MIXER_STAGES + 2) + 8)
    reference = ReferenceRandom(7, 3)
    assert got == [reference.integer(1 << (tb.bound_bits - 1)) for _ in range(count)]


@cocotb.test()
async def reset_and_restart_in_the_middle(dut):
    """A reset or a new start while draws are in flight restarts cleanly."""
    tb = _testbench(dut)
    await tb.begin()
    for case in range(20):
        seed, tree_index = tb.random_seed(), tb.random_tree()
        await tb.start(seed, tree_index)
        interrupted_bounds = tb.random_bounds(50)
        for bound in interrupted_bounds:
            tb.requests.send({"bound": bound})
        await ClockCycles(dut.clk, tb.rng.randint(1, 60))
        partial = [item["value"] for item in tb.draws.received]
        reference = ReferenceRandom(seed, tree_index)
        # What came out before the interruption is a prefix of the model's stream.
        assert partial == [reference.integer(b) for b in interrupted_bounds[:len(partial)]]
        if case % 2 == 0:
            await tb.reset(cycles=tb.rng.randint(1, 3))
            await ReadOnly()
            assert not int(dut.running.value), "running must drop on reset"
            await RisingEdge(dut.clk)
        # Restart (after the reset, or straight in the middle of the run).
        bounds = tb.random_bounds(tb.rng.randint(5, 30))
        await tb.check_stream(seed ^ case, tree_index, bounds, f"restart {case}")


@cocotb.test()
async def zero_bound_is_flagged(dut):
    """Bound 0 is answered with 0, raises bad_bound, and uses one raw word."""
    tb = _testbench(dut)
    await tb.begin()
    await tb.start(99, 5)
    top = (1 << tb.bound_bits) - 1
    bounds = [min(10, top), 0, min(300, top), 7]
    for bound in bounds:
        tb.requests.send({"bound": bound})
    got = await tb.collect(len(bounds), timeout_cycles=400)
    reference = ReferenceRandom(99, 5)
    first = reference.integer(bounds[0])
    reference.raw(1)                           # the word the zero bound used
    expected = [first, 0, reference.integer(bounds[2]), reference.integer(7)]
    assert got == expected, f"got {got}, expected {expected}"
    assert int(dut.bad_bound.value) == 1
    await tb.start(99, 5)
    await ReadOnly()
    assert int(dut.bad_bound.value) == 0, "start must clear bad_bound"


@cocotb.test()
async def cached_masks_cost_cycles_only_at_a_new_bound(dut):
    """A node's feature draws (bounds falling by one) and a bootstrap's (one bound) are
    decided from the cached masks: without stalls, consecutive draws are as many cycles
    apart as raw words they use, plus two when the bound is neither the previous one
    nor one less (its masks are worked out from a register of it)."""
    tb = _testbench(dut)
    tb.requests.idle_probability = 0.0
    tb.draws.stall_probability = 0.0
    await tb.begin()
    await tb.start(11, 2)
    top = (1 << tb.bound_bits) - 1
    bounds = []
    for _ in range(12):
        first = tb.rng.randint(1, top)
        kind = tb.rng.randrange(3)
        length = tb.rng.randint(1, min(first, 6))
        bounds += [first - i for i in range(length)] if kind else [first] * length
    for bound in bounds:
        tb.requests.send({"bound": bound})
    arrivals = []
    for cycle in range(40 * len(bounds) + 100):
        arrivals += [cycle] * (len(tb.draws.received) - len(arrivals))
        if len(arrivals) == len(bounds):
            break
        await RisingEdge(dut.clk)
    assert len(arrivals) == len(bounds), f"only {len(arrivals)} of {len(bounds)} draws"
    reference = ReferenceRandom(11, 2)
    expected, used = [], []
    for bound in bounds:
        before = reference.position
        expected.append(reference.integer(bound))
        used.append(reference.position - before)
    assert [item["value"] for item in tb.draws.received] == expected
    new_bound = [0] + [int(b not in (a, a - 1)) for a, b in zip(bounds, bounds[1:])]
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
    assert gaps == [used[i] + 2 * new_bound[i] for i in range(1, len(bounds))], (bounds, gaps, used)


@cocotb.test()
async def a_bound_shown_before_its_request_costs_no_cycle(dut):
    """A new bound (neither the last nor one less) on the request port while ``valid`` is
    low has its masks worked out by then: shown ``k`` cycles before its request, the draw
    comes ``max(0, 2 - k)`` cycles later than a draw of a bound already cached, with the
    raw words it uses counted. Every draw still equals the model's."""
    tb = _testbench(dut)
    tb.requests.idle_probability = 0.0
    tb.draws.stall_probability = 0.0
    await tb.begin()
    top = (1 << tb.bound_bits) - 1
    seed, tree = tb.random_seed(), tb.random_tree()
    await tb.start(seed, tree)
    reference = ReferenceRandom(seed, tree)
    cycle = 0

    async def request(bound, shown):
        """Show ``bound`` for ``shown`` cycles, then request it; returns (cycles from the
        request to its draw, raw words it used)."""
        nonlocal cycle
        if shown:
            dut.requests__payload.value = bound
            for _ in range(shown):
                await RisingEdge(dut.clk)
        before, position = len(tb.draws.received), reference.position
        tb.requests.send({"bound": bound})
        start = cycle
        while len(tb.draws.received) == before:
            await RisingEdge(dut.clk)
            cycle += 1
            assert cycle - start < 200, f"no draw for bound {bound}"
        assert tb.draws.received[-1]["value"] == reference.integer(bound)
        return cycle - start, reference.position - position

    previous = tb.rng.randint(3, top)
    await request(previous, 0)
    for case in range(24):
        shown = case % 4
        bound = tb.rng.randint(1, top)
        while bound in (previous, previous - 1):
            bound = tb.rng.randint(1, top)
        latency, used = await request(bound, shown)
        cached, cached_used = await request(bound, 0)        # the same bound: cached
        assert latency - used == cached - cached_used + max(0, 2 - shown), (
            case, previous, bound, shown, latency, used, cached, cached_used)
        previous = bound
