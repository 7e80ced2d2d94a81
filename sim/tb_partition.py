"""cocotb testbench of ``hw.partition.PartitionUnit`` against ``sw.model.stable_partition``.

Settings (from the runner): ``random_segments``, ``idle_probability``, ``stall_probability``.
"""

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles, RisingEdge

from hw.inbag import inbag_layout
from hw.partition import decision_layout
from sim.testbench import StreamTestbench
from sw.model import stable_partition


class PartitionTestbench(StreamTestbench):
    def __init__(self, dut):
        super().__init__(dut)
        self.max_rows = self.design["max_rows"]
        self.code_bits = self.design["code_bits"]
        row_bits = (self.max_rows - 1).bit_length()
        weight_bits = self.design["max_samples"].bit_length()
        self.max_weight = self.design["max_samples"]
        entry = inbag_layout(self.code_bits, row_bits, weight_bits)
        self.decisions = self.source("decisions", decision_layout(row_bits))
        self.segment_in = self.source("segment_in", entry)
        self.segment_out = self.sink("segment_out", entry)

    async def wait_for(self, condition, budget, label):
        for _ in range(budget):
            if condition():
                return
            await RisingEdge(self.dut.clk)
        raise AssertionError(f"{label}: timed out after {budget} cycles")

    async def partition(self, rows, goes_left, label):
        """Write the go-left bits, stream one segment through, compare with the model."""
        codes = {int(r): self.rng.randrange(1 << self.code_bits) for r in rows}
        weights = {int(r): self.rng.randint(1, self.max_weight) for r in rows}
        for row in rows:
            self.decisions.send({"row": int(row), "left": int(goes_left[row])})
        await self.wait_for(lambda: self.decisions.idle, 20 * len(rows) + 50, f"{label} decisions")
        self.segment_out.clear()
        for position, row in enumerate(rows):
            self.segment_in.send({"row": int(row), "code": codes[int(row)],
                                  "weight": weights[int(row)], "last": int(position == len(rows) - 1)})
        await self.wait_for(lambda: self.segment_out.received and self.segment_out.received[-1]["last"],
                            30 * len(rows) + 100, f"{label} segment")
        await ClockCycles(self.dut.clk, 3)             # nothing may follow the last entry
        got = self.segment_out.received
        expected = stable_partition(rows, goes_left)
        assert [e["row"] for e in got] == [int(r) for r in expected], \
            f"{label}: rows {[e['row'] for e in got][:12]}..., model {list(expected[:12])}..."
        assert [(e["code"], e["weight"]) for e in got] == [(codes[int(r)], weights[int(r)]) for r in expected]
        assert [e["last"] for e in got] == [0] * (len(got) - 1) + [1]

    def random_case(self):
        length = self.rng.choice([1, 2, 3, self.max_rows, self.rng.randint(1, self.max_rows)])
        rows = np.array(self.rng.sample(range(self.max_rows), length))
        goes_left = np.zeros(self.max_rows, dtype=bool)
        kind = self.rng.randrange(4)
        if kind == 0:
            goes_left[rows] = True                     # everything left
        elif kind == 1:
            pass                                       # everything right
        else:
            share = self.rng.random()
            goes_left[rows] = [self.rng.random() < share for _ in rows]
        return rows, goes_left


@cocotb.test()
async def random_segments_match_model(dut):
    tb = PartitionTestbench(dut)
    await tb.begin()
    for case in range(tb.settings.get("random_segments", 60)):
        await tb.partition(*tb.random_case(), f"segment {case}")


@cocotb.test()
async def cycles_without_stalls(dut):
    """length + rows going right + 3 cycles per segment when nothing stalls."""
    tb = PartitionTestbench(dut)
    for driver in tb.sources:
        driver.idle_probability = 0.0
    tb.segment_out.stall_probability = 0.0
    await tb.begin()
    rows = np.arange(tb.max_rows)
    goes_left = np.arange(tb.max_rows) % 3 == 0
    start = cocotb.utils.get_sim_time("ns")
    await tb.partition(rows, goes_left, "timed")
    cycles = int((cocotb.utils.get_sim_time("ns") - start) // 10) - 3 - tb.max_rows  # minus the decisions
    model = tb.max_rows + int(np.count_nonzero(~goes_left)) + 3
    dut._log.info("partitioned %d rows in %d cycles (model %d)", tb.max_rows, cycles, model)
    assert cycles <= model + 4, f"{cycles} cycles, model {model}"


@cocotb.test()
async def reset_in_the_middle_then_again(dut):
    tb = PartitionTestbench(dut)
    await tb.begin()
    for case in range(6):
        rows, goes_left = tb.random_case()
        for row in rows:
            tb.decisions.send({"row": int(row), "left": int(goes_left[row])})
        for position, row in enumerate(rows):
            tb.segment_in.send({"row": int(row), "code": 0, "weight": 1,
                                "last": int(position == len(rows) - 1)})
        await ClockCycles(dut.clk, tb.rng.randint(1, 3 * len(rows) + 10))
        await tb.reset()
        await tb.partition(*tb.random_case(), f"after reset {case}")
