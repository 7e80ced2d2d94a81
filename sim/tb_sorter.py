"""cocotb testbench of ``hw.sorter.RadixSorter`` against the golden model's presorted order.

Settings (from the runner): ``random_cases``, ``idle_probability``, ``stall_probability``.
"""

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

from hw.sorter import code_layout, sorted_row_layout
from sim.coverage import bins, coverage_for
from sim.support.testbench import StreamTestbench
from sw.methods.forest.model import presorted_order


def reference_order(codes):
    """The golden model's presorted order of one feature."""
    return presorted_order(np.asarray(codes)[:, None])[0]


class SorterTestbench(StreamTestbench):
    def __init__(self, dut):
        super().__init__(dut)
        self.max_rows = self.design["max_rows"]
        self.code_bits = self.design["code_bits"]
        self.row_bits = (self.max_rows - 1).bit_length()
        # The digit counters are cleared (one per cycle) after a reset and an overflow.
        self.clear_cycles = 1 << min(self.design["radix_bits"], self.code_bits)
        self.codes = self.source("codes", code_layout(self.code_bits))
        self.sorted = self.sink("sorted", sorted_row_layout(self.code_bits, self.row_bits))
        self.coverage = coverage_for(self)

    def send(self, codes):
        for row, code in enumerate(codes):
            self.codes.send({"code": int(code), "last": int(row == len(codes) - 1)})

    async def sort(self, codes, label):
        self.sorted.clear()
        self.send(codes)
        budget = 2000 + 12 * len(codes) + 16 * (1 << self.settings["design"]["radix_bits"])
        for _ in range(budget):
            if self.sorted.received and self.sorted.received[-1]["last"]:
                break
            await RisingEdge(self.dut.clk)
        else:
            raise AssertionError(f"{label}: sort of {len(codes)} rows did not finish in {budget} cycles")
        rows = [item["row"] for item in self.sorted.received]
        got_codes = [item["code"] for item in self.sorted.received]
        expected = reference_order(codes)
        self.coverage.record(bins.sorter_list, codes, self.max_rows)
        assert rows == list(expected), f"{label}: rows {rows[:16]}... expected {list(expected[:16])}..."
        assert got_codes == [int(codes[r]) for r in expected], f"{label}: codes differ"
        assert [item["last"] for item in self.sorted.received].count(1) == 1

    def random_codes(self, count):
        kind = self.rng.randrange(4)
        top = (1 << self.code_bits) - 1
        if kind == 0:                                   # many ties
            return [self.rng.randrange(4) for _ in range(count)]
        if kind == 1:                                   # all equal
            return [self.rng.randint(0, top)] * count
        if kind == 2:                                   # ranks, like the rank quantiser
            return [min(self.rng.randrange(count), top) for _ in range(count)]
        return [self.rng.randint(0, top) for _ in range(count)]


@cocotb.test()
async def random_inputs_match_model(dut):
    tb = SorterTestbench(dut)
    await tb.begin()
    for case in range(tb.settings.get("random_cases", 40)):
        count = tb.rng.choice([1, 2, 3, tb.max_rows, tb.rng.randint(1, tb.max_rows)])
        await tb.sort(tb.random_codes(count), f"case {case}")


@cocotb.test()
async def corner_cases_match_model(dut):
    tb = SorterTestbench(dut)
    await tb.begin()
    top = (1 << tb.code_bits) - 1
    cases = {
        "one row": [5],
        "two rows, descending": [top, 0],
        "two rows, equal": [7, 7],
        "all equal, full": [top] * tb.max_rows,
        "descending, full": [top - i % (top + 1) for i in range(tb.max_rows)],
        "alternating extremes": [(i % 2) * top for i in range(tb.max_rows)],
    }
    for label, codes in cases.items():
        await tb.sort(codes, label)


@cocotb.test()
async def too_many_rows_raise_overflow_and_emit_nothing(dut):
    tb = SorterTestbench(dut)
    await tb.begin()
    tb.sorted.clear()
    tb.send(tb.random_codes(tb.max_rows + 3))
    for _ in range(4 * tb.max_rows + 2000 + tb.clear_cycles):
        if tb.codes.idle:
            break
        await RisingEdge(dut.clk)
    await ClockCycles(dut.clk, 600)
    await ReadOnly()
    assert int(dut.overflow.value) == 1, "overflow must be flagged"
    assert tb.sorted.received == [], "nothing may be emitted after an overflow"
    await RisingEdge(dut.clk)
    # The next dataset sorts normally and clears the flag.
    codes = tb.random_codes(tb.rng.randint(1, tb.max_rows))
    await tb.sort(codes, "after overflow")
    await ReadOnly()
    assert int(dut.overflow.value) == 0


@cocotb.test()
async def reset_in_the_middle_then_sort_again(dut):
    tb = SorterTestbench(dut)
    await tb.begin()
    for case in range(8):
        tb.sorted.clear()
        tb.send(tb.random_codes(tb.max_rows))
        # Interrupt while loading, scattering or emitting.
        await ClockCycles(dut.clk, tb.rng.randint(1, 3 * tb.max_rows + 600))
        await tb.reset()
        await tb.sort(tb.random_codes(tb.rng.randint(1, tb.max_rows)), f"after reset {case}")


@cocotb.test()
async def cycles_without_stalls(dut):
    """Cycle count of a full sort without stalls, against n * (passes + 2) + passes * 2**r."""
    tb = SorterTestbench(dut)
    tb.codes.idle_probability = 0.0
    tb.sorted.stall_probability = 0.0
    await tb.begin()
    await ClockCycles(dut.clk, 300 + tb.clear_cycles)       # let the counter clear finish
    codes = tb.random_codes(tb.max_rows)
    start = cocotb.utils.get_sim_time("ns")
    await tb.sort(codes, "timed")
    cycles = int((cocotb.utils.get_sim_time("ns") - start) // 10)
    radix_bits = min(tb.settings["design"]["radix_bits"], tb.code_bits)
    passes = -(-tb.code_bits // radix_bits)
    model = tb.max_rows * (passes + 2) + passes * (1 << radix_bits)
    dut._log.info("sorted %d rows in %d cycles (model %d)", tb.max_rows, cycles, model)
    assert cycles <= model + 16 * passes + 16, f"{cycles} cycles, model {model}"
