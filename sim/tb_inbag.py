"""cocotb testbench of ``hw.inbag.InBagBuilder``: bootstrap weights and in-bag lists.

Reference: the golden model's ``bootstrap_weights`` and ``inbag_lists``. Lists go in
``lanes`` side by side (one word per position), each word's lanes masked by a random
``lane_mask`` (the masked-out lanes carry random entries that must not come out). Settings
(from the runner): ``random_trees``, ``idle_probability``, ``stall_probability``.
"""

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotb.utils import get_sim_time

from hw.inbag import inbag_word_layout, presorted_layout
from sim.coverage import bins, coverage_for
from sim.support.testbench import StreamTestbench
from sw.methods.forest.model import bootstrap_weights, inbag_lists, presorted_order
from sw.methods.forest.rng import TreeRandom


def reference_weights(seed, tree_index, n_rows, n_samples, bootstrap):
    return bootstrap_weights(TreeRandom(seed, tree_index), n_rows, n_samples, bool(bootstrap))


def reference_inbag(codes, weights):
    """The golden model's in-bag list of one feature: (row, code, weight) in list order."""
    rows, row_weights = inbag_lists(presorted_order(np.asarray(codes)[:, None]), weights)
    return [(int(r), int(codes[r]), int(w)) for r, w in zip(rows[0], row_weights[0])]


class InBagTestbench(StreamTestbench):
    def __init__(self, dut):
        super().__init__(dut)
        self.max_rows, self.max_samples = self.design["max_rows"], self.design["max_samples"]
        self.code_bits = self.design["code_bits"]
        self.tree_index_bits = self.design["tree_index_bits"]
        self.lanes = self.design.get("lanes", 1)
        row_bits = (self.max_rows - 1).bit_length()
        weight_bits = self.max_samples.bit_length()
        self.presorted = self.source("presorted", presorted_layout(self.code_bits, row_bits, self.lanes))
        self.inbag = self.sink("inbag", inbag_word_layout(self.code_bits, row_bits, weight_bits, self.lanes))
        for name in ("start", "seed", "tree_index", "n_rows", "n_samples", "bootstrap", "lane_mask"):
            getattr(dut, name).value = 0
        self.coverage = coverage_for(self)

    async def start(self, seed, tree_index, n_rows, n_samples, bootstrap):
        dut = self.dut
        dut.seed.value, dut.tree_index.value = seed, tree_index
        dut.n_rows.value, dut.n_samples.value, dut.bootstrap.value = n_rows, n_samples, bootstrap
        dut.start.value = 1
        await RisingEdge(dut.clk)
        dut.start.value = 0

    async def wait_until_ready(self, budget):
        for cycle in range(budget):
            await ReadOnly()
            if int(self.dut.weights_ready.value):
                await RisingEdge(self.dut.clk)
                return cycle
            await RisingEdge(self.dut.clk)
        raise AssertionError(f"weights not ready within {budget} cycles")

    def send_lists(self, lane_codes):
        """Queue the words of ``lane_codes`` (lane -> codes of one feature, None for a lane
        without a list: random entries) and set ``lane_mask`` to the lanes with a list."""
        n_rows = len(next(codes for codes in lane_codes if codes is not None))
        orders = [None if codes is None else np.argsort(codes, kind="stable") for codes in lane_codes]
        top = (1 << self.code_bits) - 1
        for position in range(n_rows):
            entries = [{"row": self.rng.randrange(self.max_rows), "code": self.rng.randint(0, top)}
                       if order is None else {"row": int(order[position]), "code": int(codes[order[position]])}
                       for codes, order in zip(lane_codes, orders)]
            self.presorted.send({"entries": entries, "last": int(position == n_rows - 1)})
        self.dut.lane_mask.value = sum(1 << lane for lane, codes in enumerate(lane_codes) if codes is not None)

    async def filter_lists(self, lane_codes, label):
        """Stream the lists of ``lane_codes`` through; return each lane's in-bag entries."""
        self.inbag.clear()
        self.send_lists(lane_codes)
        for _ in range(20 * len(next(c for c in lane_codes if c is not None)) + 100):
            # Done when every input word was taken and the filter holds nothing more.
            await ReadOnly()
            if self.presorted.idle and not int(self.dut.filtering.value):
                self.filtered_at = get_sim_time("ns")
                break
            await RisingEdge(self.dut.clk)
        else:
            raise AssertionError(f"{label}: the in-bag lists never ended")
        for _ in range(3):                      # nothing may follow the last entry
            await RisingEdge(self.dut.clk)
        return [[(entry["row"], entry["code"], entry["weight"], entry["last"])
                 for word in self.inbag.received if (word["present"] >> lane) & 1
                 for entry in [word["entries"][lane]]]
                for lane in range(self.lanes)]

    async def check_tree(self, seed, tree_index, n_rows, n_samples, bootstrap, features, label):
        await self.start(seed, tree_index, n_rows, n_samples, bootstrap)
        # The first tree after a reset (and every 255th) clears all max_rows tags first.
        await self.wait_until_ready(budget=self.max_rows + 4 * n_samples + 100)
        weights = reference_weights(seed, tree_index, n_rows, n_samples, bootstrap)
        self.coverage.record(bins.inbag_tree, n_rows, n_samples, bootstrap, self.max_rows, self.max_samples)
        await ReadOnly()
        assert int(self.dut.inbag_rows.value) == int(np.count_nonzero(weights)), f"{label}: in-bag count"
        await RisingEdge(self.dut.clk)
        top = (1 << self.code_bits) - 1

        def random_codes():
            kind = self.rng.randrange(3)
            if kind == 0:
                return np.array([self.rng.randint(0, top) for _ in range(n_rows)])
            if kind == 1:
                return np.full(n_rows, self.rng.randint(0, top))
            return np.array([self.rng.randrange(3) for _ in range(n_rows)])

        for word_list in range(features):
            # Every lane, or a random non-empty subset (the last slot of a PE, thesis mode).
            used = set(range(self.lanes)) if self.rng.random() < 0.5 else \
                set(self.rng.sample(range(self.lanes), self.rng.randint(1, self.lanes)))
            lane_codes = [random_codes() if lane in used else None for lane in range(self.lanes)]
            got = await self.filter_lists(lane_codes, f"{label} lists {word_list}")
            for lane, codes in enumerate(lane_codes):
                reference = [] if codes is None else reference_inbag(codes, weights)
                expected = [entry + (int(position == len(reference) - 1),)
                            for position, entry in enumerate(reference)]
                assert got[lane] == expected, \
                    f"{label} lists {word_list} lane {lane}: got {got[lane][:8]}..., expected {expected[:8]}..."

    def random_tree(self):
        n_rows = self.rng.choice([1, 2, self.max_rows, self.rng.randint(1, self.max_rows)])
        n_samples = self.rng.choice([1, n_rows if n_rows <= self.max_samples else self.max_samples,
                                     self.max_samples, self.rng.randint(1, self.max_samples)])
        return (self.rng.getrandbits(32), self.rng.getrandbits(self.tree_index_bits), n_rows,
                n_samples, int(self.rng.random() < 0.8))


@cocotb.test()
async def random_trees_match_model(dut):
    tb = InBagTestbench(dut)
    await tb.begin()
    for case in range(tb.settings.get("random_trees", 30)):
        await tb.check_tree(*tb.random_tree(), features=tb.rng.randint(1, 3), label=f"tree {case}")


@cocotb.test()
async def corner_cases_match_model(dut):
    tb = InBagTestbench(dut)
    await tb.begin()
    cases = {
        "one row, one sample": (1, 1, 1),
        "two rows": (2, 2, 1),
        "every draw on a tiny set (maximum weights)": (2, tb.max_samples, 1),
        "full capacity": (tb.max_rows, tb.max_samples, 1),
        "bootstrap off": (tb.max_rows, 1, 0),
        "thesis: 16 samples": (min(tb.max_rows, 150), min(16, tb.max_samples), 1),
    }
    for label, (n_rows, n_samples, bootstrap) in cases.items():
        await tb.check_tree(2026, 3, n_rows, n_samples, bootstrap, features=2, label=label)


@cocotb.test()
async def bad_configurations_are_flagged(dut):
    tb = InBagTestbench(dut)
    await tb.begin()
    for n_rows, n_samples, bootstrap in [(0, 5, 1), (tb.max_rows + 1, 5, 1), (5, 0, 1),
                                         (5, tb.max_samples + 1, 1)]:
        if n_rows >= 1 << (len(dut.n_rows)) or n_samples >= 1 << len(dut.n_samples):
            continue                                   # not representable on the port
        await tb.start(1, 1, n_rows, n_samples, bootstrap)
        await ClockCycles(dut.clk, tb.max_rows + 50)
        await ReadOnly()
        assert int(dut.bad_config.value) == 1, (n_rows, n_samples)
        assert int(dut.weights_ready.value) == 0, "a bad configuration must not start a tree"
        await RisingEdge(dut.clk)
    # A good configuration afterwards works and clears the flag.
    await tb.check_tree(5, 6, 7, 8, 1, features=1, label="after bad configurations")
    await ReadOnly()
    assert int(dut.bad_config.value) == 0


@cocotb.test()
async def reset_in_the_middle_then_again(dut):
    tb = InBagTestbench(dut)
    await tb.begin()
    for case in range(6):
        seed, tree_index, n_rows, n_samples, bootstrap = tb.random_tree()
        await tb.start(seed, tree_index, n_rows, n_samples, bootstrap)
        tb.send_lists([np.array([tb.rng.randrange(50) for _ in range(n_rows)])
                       for _ in range(tb.lanes)])
        await ClockCycles(dut.clk, tb.rng.randint(1, n_rows + 2 * n_samples + 40))
        await tb.reset()
        await tb.check_tree(*tb.random_tree(), features=1, label=f"after reset {case}")


@cocotb.test()
async def generation_tags_wrap_without_stale_weights(dut):
    """Weights are tagged with an 8-bit tree generation instead of being cleared per tree:
    300 trees on the same rows cross the wrap (and its clearing pass) with every tree's
    weights as the model's, whatever earlier trees left in the memory."""
    tb = InBagTestbench(dut)
    await tb.begin()
    n_rows = min(tb.max_rows, 6)
    for tree in range(300):
        await tb.check_tree(7, tree % (1 << tb.tree_index_bits), n_rows, min(tb.max_samples, 5), 1,
                            features=1, label=f"tree {tree}")


@cocotb.test()
async def cycles_without_stalls(dut):
    """Without stalls, a bootstrap of n draws on a power-of-two number of rows is ready
    about n cycles after its start (one draw per cycle), and a word of lists filters in
    one cycle (n words in n cycles plus the pipeline's latency)."""
    tb = InBagTestbench(dut)
    tb.presorted.idle_probability = 0.0
    tb.inbag.stall_probability = 0.0
    await tb.begin()
    n_rows = 1 << (tb.max_rows.bit_length() - 1)
    n_samples = min(tb.max_samples, n_rows)
    await ready_after_start(tb, 1, 1, n_rows, 1)         # the clearing pass after the reset
    draw_cycles = await ready_after_start(tb, 3, 2, n_rows, n_samples)
    weights = reference_weights(3, 2, n_rows, n_samples, 1)
    lane_codes = [np.array([tb.rng.randrange(9) for _ in range(n_rows)]) for _ in range(tb.lanes)]
    started = get_sim_time("ns")
    got = await tb.filter_lists(lane_codes, "timed")
    filter_cycles = int((tb.filtered_at - started) // 10)
    for lane, codes in enumerate(lane_codes):
        reference = reference_inbag(codes, weights)
        assert got[lane] == [entry + (int(position == len(reference) - 1),)
                             for position, entry in enumerate(reference)], f"lane {lane}"
    dut._log.info("%d draws on %d rows ready in %d cycles; %d words of %d lanes filtered in %d cycles",
                  n_samples, n_rows, draw_cycles, n_rows, tb.lanes, filter_cycles)
    assert draw_cycles <= n_samples + 30, f"{n_samples} draws took {draw_cycles} cycles"
    assert filter_cycles <= n_rows + 4, f"{n_rows} words took {filter_cycles} cycles"


async def ready_after_start(tb, seed, tree_index, n_rows, n_samples):
    """Start a bootstrap tree; the cycles until its weights are ready (a clearing pass
    first takes ``max_rows`` of them)."""
    await tb.start(seed, tree_index, n_rows, n_samples, 1)
    return await tb.wait_until_ready(budget=tb.max_rows + 4 * n_samples + 100)


@cocotb.test()
async def resets_keep_the_generation_and_an_interrupted_clear_is_redone(dut):
    """The weight generation survives resets, so a reset costs no clearing pass, and the
    tags a reset leaves behind never count as a later tree's; the clearing pass at the
    generation wrap, interrupted by a start, is done again."""
    tb = InBagTestbench(dut)
    await tb.begin()
    full = (tb.max_rows, tb.max_samples)            # trees that tag many rows
    # Trees whose draws take well under max_rows cycles, so a clearing pass shows.
    tagging = (tb.max_rows, max(1, min(tb.max_samples, tb.max_rows // 8)))
    # Resets in the middle of trees' draws; the next trees must see none of their tags.
    for case in range(4):
        await tb.start(tb.rng.getrandbits(32), case, *full, 1)
        await ClockCycles(dut.clk, tb.rng.randint(1, tb.max_samples + 10))
        await tb.reset()
        await tb.check_tree(*tb.random_tree(), features=1, label=f"after reset {case}")
    # Find a clearing pass (the wrap comes within 255 trees), leaving generation 1.
    for tree in range(257):
        if await ready_after_start(tb, 7, tree, *tagging) >= tb.max_rows:
            break
    else:
        raise AssertionError("no clearing pass in 257 trees")
    # A reset now: the next tree (generation 2) must not clear.
    await tb.reset()
    cycles = await ready_after_start(tb, 8, 0, *tagging)
    assert cycles < tb.max_rows, f"a reset forced a clearing pass ({cycles} cycles to the weights)"
    # On to generation 255, every tree tagging its rows; the next start begins the clear.
    for tree in range(253):
        await ready_after_start(tb, 9, tree, *tagging)
    await tb.start(5, 1, *tagging, 1)
    await ClockCycles(dut.clk, 1 + tb.rng.randrange(max(1, tb.max_rows // 2)))
    # Interrupted: the next start must clear again (a tree that skipped it would take a
    # generation whose tags the trees above left behind).
    cycles = await ready_after_start(tb, 6, 2, *tagging)
    assert cycles >= tb.max_rows, f"the interrupted clear was skipped ({cycles} cycles to the weights)"
    await tb.check_tree(13, 2, tb.max_rows, min(tb.max_samples, 3), 1, features=2,
                        label="after a start during the clear")
