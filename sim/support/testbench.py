"""The frame every cocotb testbench of the project shares.

Settings from the runner, a random generator seeded by cocotb's seed (so a failing run
is reproduced with ``--seed``), stream drivers with random stalls, the clock and the reset.
Every sink checks the stream rules on the design's output stream it consumes
(:mod:`sim.support.monitors`): a violation fails the test, naming the stream, the cycle
and the rule.
"""

import json
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge

from sim.runner import testbench_parameters
from sim.support.streams import StreamSink, StreamSource

__all__ = ["StreamTestbench", "CLOCK_PERIOD_NS", "CLOCK_IMPL"]

CLOCK_PERIOD_NS = 10
#: The clock toggled by the simulator's C++ side (no Python wake-up per edge).
CLOCK_IMPL = "gpi"


class StreamTestbench:
    """Base of a block's testbench.

    Settings read: ``design`` (the design parameters), ``idle_probability`` (sources hold
    valid low) and ``stall_probability`` (sinks hold ready low), both 0.3 by default.
    """

    def __init__(self, dut):
        self.dut = dut
        self.settings = testbench_parameters()
        self.design = self.settings["design"]
        self.rng = random.Random(cocotb.RANDOM_SEED)
        self.sources, self.sinks = [], []

    def source(self, name, layout):
        """A driver for the stream input ``name`` with random idle cycles."""
        driver = StreamSource(self.dut, name, layout, self.dut.clk, self.rng,
                              idle_probability=self.settings.get("idle_probability", 0.3),
                              period_ns=CLOCK_PERIOD_NS)
        self.sources.append(driver)
        return driver

    def sink(self, name, layout):
        """A consumer of the stream output ``name`` with random stalls."""
        driver = StreamSink(self.dut, name, layout, self.dut.clk, self.rng,
                            stall_probability=self.settings.get("stall_probability", 0.3),
                            period_ns=CLOCK_PERIOD_NS, reset=self.dut.rst)
        self.sinks.append(driver)
        return driver

    def without_stalls(self):
        """No idle cycles on any source and no stalls on any sink (for timed runs)."""
        for driver in self.sources:
            driver.idle_probability = 0.0
        for driver in self.sinks:
            driver.stall_probability = 0.0

    async def begin(self):
        """Start the clock and the drivers, then reset the design."""
        Clock(self.dut.clk, CLOCK_PERIOD_NS, unit="ns", impl=CLOCK_IMPL).start()
        for driver in self.sources + self.sinks:
            cocotb.start_soon(driver.run())
        await self.reset()

    async def reset(self, cycles=2):
        """Hold reset for ``cycles`` cycles; queued input and received output are dropped."""
        self.dut.rst.value = 1
        for source in self.sources:
            source.clear()
        await ClockCycles(self.dut.clk, cycles)
        self.dut.rst.value = 0
        for sink in self.sinks:
            sink.clear()

    async def wait_until(self, condition, budget, label):
        """Wait, a clock edge at a time, until ``condition()`` holds; fail naming ``label``
        after ``budget`` cycles."""
        for _ in range(budget):
            if condition():
                return
            await RisingEdge(self.dut.clk)
        raise AssertionError(f"{label}: timed out after {budget} cycles")

    async def expect_received(self, sink, expected, budget, label, observe=None):
        """Wait for ``len(expected)`` payloads on ``sink`` (at most ``budget`` cycles) and
        4 cycles more, in which nothing may follow; then check them in order against
        ``expected``, each received payload passed through ``observe`` first if given."""
        await self.wait_until(lambda: len(sink.received) >= len(expected), budget,
                              f"{label}: {len(expected)} payloads")
        await ClockCycles(self.dut.clk, 4)
        got = [observe(payload) if observe else payload for payload in sink.received]
        assert len(got) == len(expected), f"{label}: {len(got)} payloads, model {len(expected)}"
        for k, (payload, model) in enumerate(zip(got, expected)):
            assert payload == model, f"{label}: payload {k} is {payload}, model {model}"

    def write_report(self):
        """Append the testbench's ``cycle_log`` records to the JSON file named by ``report``."""
        path = self.settings.get("report")
        records = getattr(self, "cycle_log", [])
        if not path or not records:
            return
        try:
            with open(path) as file:
                log = json.load(file)
        except (OSError, ValueError):
            log = []
        with open(path, "w") as file:
            json.dump(log + records, file)
