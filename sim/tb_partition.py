"""cocotb testbench of ``hw.partition.PartitionUnit`` against ``sw.methods.forest.model.stable_partition``.

A case is a run of jobs, as a lane issues them: per job, go-left bits for its rows, then
its lists (segments holding the job's rows, each list in its own order, at their own bank
addresses) back to back. The testbench applies the unit's writes to a model of the bank
and checks, per case: every address of every segment written exactly once and nothing
else; no address written before the entry it held was taken in (the lane partitions in
place); and the bank image equals ``stable_partition`` of every segment.

Settings (from the runner): ``random_cases``, ``idle_probability``, ``stall_probability``.
"""

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

from hw.partition import decision_layout, partition_input_layout, partition_write_layout
from sim.coverage import bins, coverage_for
from sim.support.testbench import StreamTestbench
from sw.methods.forest.model import stable_partition


class PartitionTestbench(StreamTestbench):
    def __init__(self, dut):
        super().__init__(dut)
        self.max_rows = self.design["max_rows"]
        self.max_segment = self.design.get("max_segment") or self.max_rows
        self.code_bits = self.design["code_bits"]
        self.address_bits = self.design["address_bits"]
        row_bits = (self.max_rows - 1).bit_length()
        weight_bits = self.design["max_samples"].bit_length()
        self.max_weight = self.design["max_samples"]
        layouts = (self.code_bits, row_bits, weight_bits, self.address_bits)
        self.decisions = self.source("decisions", decision_layout(row_bits))
        self.segment_in = self.source("segment_in", partition_input_layout(*layouts))
        self.writes = self.sink("writes", partition_write_layout(*layouts))
        self.taken_at_write = []            # per write (in order): entries taken in by then
        self.coverage = coverage_for(self)

    async def begin(self):
        await super().begin()
        cocotb.start_soon(self.monitor())

    async def monitor(self):
        while True:
            await ReadOnly()
            if int(self.dut.writes__valid.value) and int(self.dut.writes__ready.value):
                self.taken_at_write.append(self.segment_in.sent)  # the sink logs the write
            await RisingEdge(self.dut.clk)

    def random_job(self):
        # Rows from anywhere in the dataset, segments up to the longest the queue is built for.
        length = self.rng.choice([1, 2, 3, self.max_segment, self.rng.randint(1, self.max_segment)])
        rows = np.array(self.rng.sample(range(self.max_rows), length))
        goes_left = np.zeros(self.max_rows, dtype=bool)
        kind = self.rng.randrange(4)
        if kind == 0:
            goes_left[rows] = True                     # everything left
        elif kind == 2:
            share = self.rng.random()
            goes_left[rows] = [self.rng.random() < share for _ in rows]
        elif kind == 3:
            goes_left[rows] = [self.rng.random() < 0.5 for _ in rows]
        # kind 1: everything right
        lists = self.rng.randint(1, 4)
        return rows, goes_left, [self.rng.sample(list(rows), length) for _ in range(lists)]

    async def run_case(self, jobs, label):
        """Stream the jobs' segments (disjoint address ranges) and check the bank image."""
        first_index = self.segment_in.sent
        self.taken_at_write.clear()
        bank, expected, order, base = {}, {}, [], 0
        for job, (rows, goes_left, lists) in enumerate(jobs):
            await self.wait_until(lambda: self.segment_in.idle, 40 * self.max_rows + 400,
                                f"{label} job {job - 1} intake")
            self.coverage.record(bins.partition_job, rows, goes_left, self.max_segment)
            for row in rows:
                self.decisions.send({"row": int(row), "left": int(goes_left[row])})
            # The lane starts a job's lists once its go-left bits are all written.
            await self.wait_until(lambda: self.decisions.idle, 40 * len(rows) + 100,
                                f"{label} job {job} decisions")
            if job == 0:
                self.started = cocotb.utils.get_sim_time("ns")
            for segment in lists:
                entries = [{"row": int(row), "code": self.rng.randrange(1 << self.code_bits),
                            "weight": self.rng.randint(1, self.max_weight)} for row in segment]
                by_row = {entry["row"]: entry for entry in entries}
                for position, entry in enumerate(entries):
                    bank[base + position] = entry
                    order.append(base + position)
                    self.segment_in.send({"entry": {**entry, "last": int(position == len(entries) - 1)},
                                          "base": base})
                for position, row in enumerate(stable_partition(np.array(segment), goes_left)):
                    expected[base + position] = by_row[int(row)]
                base += len(segment) + self.rng.choice([0, 0, 1, 5])
        assert base < 1 << self.address_bits, f"{label}: case does not fit {self.address_bits} address bits"
        await self.wait_until(lambda: self.segment_in.idle and int(self.dut.idle.value)
                            and not self.decisions.queue,
                            40 * len(order) + 400, f"{label} writes")
        self.finished = cocotb.utils.get_sim_time("ns")
        await ClockCycles(self.dut.clk, 3)           # nothing may follow
        assert int(self.dut.idle.value)
        taken_before = {address: first_index + index for index, address in enumerate(order)}
        written = [write["address"] for write in self.writes.received]
        assert len(self.taken_at_write) == len(written)
        assert sorted(written) == sorted(order), \
            f"{label}: {len(written)} writes to {len(set(written))} addresses, expected {len(order)}"
        for address, taken in zip(written, self.taken_at_write):
            assert taken > taken_before[address], \
                f"{label}: address {address} written before its entry was taken in"
        for write in self.writes.received:
            bank[write["address"]] = {key: write["entry"][key] for key in ("row", "code", "weight")}
            assert write["entry"]["last"] == 0
        wrong = [address for address in order if bank[address] != expected[address]]
        assert not wrong, f"{label}: {len(wrong)} wrong entries, first at {wrong[0]}: " \
                          f"{bank[wrong[0]]}, expected {expected[wrong[0]]}"
        self.writes.clear()


@cocotb.test()
async def random_jobs_match_model(dut):
    """Runs of 1 to 4 jobs, 1 to 4 lists each; rows may recur in the next job."""
    tb = PartitionTestbench(dut)
    await tb.begin()
    for case in range(tb.settings.get("random_cases", 30)):
        jobs = [tb.random_job() for _ in range(tb.rng.randint(1, 4))]
        await tb.run_case(jobs, f"case {case}")


@cocotb.test()
async def cycles_without_stalls(dut):
    """A job of 3 lists takes about 3 x length + rows going right cycles; one list at a time
    with its own rows going right (the unit before, 1174aed) took 3 x (length + right)."""
    tb = PartitionTestbench(dut)
    for driver in tb.sources:
        driver.idle_probability = 0.0
    tb.writes.stall_probability = 0.0
    await tb.begin()
    rows = np.arange(tb.max_segment)
    goes_left = np.zeros(tb.max_rows, dtype=bool)
    goes_left[rows] = rows % 3 == 0
    right = int(np.count_nonzero(~goes_left[rows]))
    lists = [list(tb.rng.sample(list(rows), len(rows))) for _ in range(3)]
    await tb.run_case([(rows, goes_left, lists)], "timed")
    cycles = int((tb.finished - tb.started) // 10)
    model = 3 * tb.max_segment + right
    before = 3 * (tb.max_segment + right)
    dut._log.info("3 lists of %d rows (%d going right) in %d cycles (model %d; one list at a "
                  "time %d)", tb.max_segment, right, cycles, model, before)
    assert cycles <= model + 12, f"{cycles} cycles, model {model}"


@cocotb.test()
async def reset_in_the_middle_then_again(dut):
    tb = PartitionTestbench(dut)
    await tb.begin()
    for case in range(6):
        rows, goes_left, lists = tb.random_job()
        for row in rows:
            tb.decisions.send({"row": int(row), "left": int(goes_left[row])})
        for segment in lists:
            for position, row in enumerate(segment):
                tb.segment_in.send({"entry": {"row": int(row), "code": 0, "weight": 1,
                                              "last": int(position == len(segment) - 1)}, "base": 0})
        await ClockCycles(dut.clk, tb.rng.randint(1, 3 * len(rows) * len(lists) + 10))
        await tb.reset()
        await tb.run_case([tb.random_job() for _ in range(2)], f"after reset {case}")
