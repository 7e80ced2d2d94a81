"""cocotb testbench of ``histogram_top`` (``hw.histogram_top.HistogramTop``) through its
Avalon-MM interfaces only.

The host driver of the histogram system (``sim.host.histogram_driver``) over the Avalon-MM
transport (``sim.host.avalon_transport``): its registers through ``cocotbext-avalon``'s
master on ``csr``, the dataset put in memory and read by the accelerator's read master,
the trees written by its write master and read back; one memory model behind both masters
with random ``waitrequest`` and random read latency. The random forests of
``sim.tb_histogram_system`` (every tree equal to ``train_forest``'s, overflow and depth
refusals), then the interrupt: *trained* and *read done* raised and cleared, an error
cause for a refused start. A build with a separate core clock runs the system (and its code
reader's master, ``mem_codes``, with the codes in memory) on ``core_clk``. Settings:
``random_forests``, ``waitrequest_probability``, ``max_latency``, ``core_period_ps``.
"""

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles

from hw.avalon.bus import words_per_beat
from hw.histogram_top import HISTOGRAM_READ_TARGETS, HISTOGRAM_WRITE_TARGETS
from hw.top import IRQ_CAUSES, TOP_REGISTERS
from sim.host.avalon_transport import AvalonTransport
from sim.host.histogram_driver import HistogramCapacity
from sim.runner import testbench_parameters
from sim.support.testbench import CLOCK_IMPL, CLOCK_PERIOD_NS
from sim.support.trees import assert_trees_equal
from sim.tb_histogram_system import HistogramSystemTestbench
from sw.methods.forest.model import TrainingParameters, train_forest


class HistogramTopTestbench(HistogramSystemTestbench):
    def __init__(self, dut):
        import random
        settings = testbench_parameters()
        capacity = HistogramCapacity(settings["design"])
        self.avalon = AvalonTransport(
            dut, {"dataset": capacity.dataset_layout, "trees": capacity.forest_layout},
            HISTOGRAM_READ_TARGETS, HISTOGRAM_WRITE_TARGETS, random.Random(cocotb.RANDOM_SEED + 1),
            waitrequest_probability=settings.get("waitrequest_probability", 0.3),
            latency=(1, settings.get("max_latency", 8)), period_ns=CLOCK_PERIOD_NS)
        super().__init__(dut, transport=self.avalon)

    async def begin(self):
        """The bus clock (and a build with a separate core clock's ``core_clk``, at
        ``core_period_ps``, default 13,000: 77 MHz), the memory models, a reset of both."""
        if self.design.get("separate_core_clock", False):
            Clock(self.dut.core_clk, self.settings.get("core_period_ps", 13_000), unit="ps",
                  impl=CLOCK_IMPL).start()
        await super().begin()
        self.avalon.start()

    async def reset(self, cycles=2):
        separate = self.design.get("separate_core_clock", False)
        if separate:
            self.dut.core_rst.value = 1
        await super().reset(6 if separate else cycles)
        if separate:
            self.dut.core_rst.value = 0

    async def top(self, name, value=None):
        if value is None:
            return await self.avalon.read_register(TOP_REGISTERS[name][0])
        await self.avalon.write_register(TOP_REGISTERS[name][0], value)


@cocotb.test()
async def random_forests_through_avalon_match_model(dut):
    tb = HistogramTopTestbench(dut)
    await tb.begin()
    await tb.host.check_identity()
    for name, layout in (("DATASET", tb.capacity.dataset_layout), ("TREES", tb.capacity.forest_layout)):
        assert await tb.top(f"{name}_WORDS") == words_per_beat(layout), name
    outcomes = [await tb.check_forest(f"forest {case}") for case in range(tb.settings.get("random_forests", 4))]
    dut._log.info("forests: %s", outcomes)


def _cause(name):
    return 1 << IRQ_CAUSES.index(name)


@cocotb.test()
async def interrupt_causes_rise_and_clear(dut):
    tb = HistogramTopTestbench(dut)
    await tb.begin()
    host, c = tb.host, tb.capacity
    await tb.top("IRQ_ENABLE", (1 << len(IRQ_CAUSES)) - 1)
    codes = tb.random_codes(12)
    labels = np.array([0, 1, 1] * 4)
    # (depth 1: three nodes, which every build holds)
    params = TrainingParameters(n_classes=2, max_samples=12, features_per_split=2, max_depth=1)
    await host.load_dataset(codes, labels)
    assert await tb.top("IRQ_STATUS") & _cause("read_done") and int(dut.irq.value) == 1
    await tb.top("IRQ_STATUS", _cause("read_done"))
    await ClockCycles(dut.clk, 2)
    assert await tb.top("IRQ_STATUS") == 0 and int(dut.irq.value) == 0, "read done not cleared"
    trees, _ = await host.train(params, 4, 2)
    for got, want in zip(trees, train_forest(codes, labels, params, 4, 2)):
        assert_trees_equal(got, want, "with the interrupt enabled")
    assert await tb.top("IRQ_STATUS") & _cause("trained"), "no trained cause after a forest"
    await tb.top("IRQ_STATUS", (1 << len(IRQ_CAUSES)) - 1)
    # A refused start (no trees) raises the error cause, and the interrupt while enabled.
    await host.write("N_TREES", 0)
    await host.write("CONTROL", 1)
    await ClockCycles(dut.clk, 8)
    assert await tb.top("IRQ_STATUS") & _cause("error") and int(dut.irq.value) == 1, "no error cause"
    await tb.top("IRQ_ENABLE", 0)
    await ClockCycles(dut.clk, 2)
    assert int(dut.irq.value) == 0, "irq high with every cause masked"
