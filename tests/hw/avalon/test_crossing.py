"""The clock-domain crossings of ``forest_top`` (``hw/avalon/crossing.py``) in Amaranth's
simulator with two unrelated clocks: register accesses performed once each, in order, with
the core side's answers; streams through unchanged, in order, under random stalls."""

import random

import pytest
from amaranth.hdl import Array, ClockDomain, Elaboratable, Module, Signal
from amaranth.lib import data
from amaranth.sim import Simulator

from hw.avalon.crossing import RegisterCrossing, StreamCrossing
from hw.system import csr_signature

#: (bus clock, core clock) periods in ns: slower and faster core, and a far slower one.
CLOCKS = [(10, 13), (13, 10), (10, 37)]


class _CoreRegisters(Elaboratable):
    """The crossing with a register file behind it in domain ``core`` (read data the cycle
    after ``read``, as the system's), counting the accesses it sees."""

    def __init__(self):
        self.crossing = RegisterCrossing(csr_signature())
        self.accesses = Signal(16)

    def elaborate(self, platform):
        m = Module()
        m.domains.sync = ClockDomain()
        m.domains.core = ClockDomain()
        m.submodules.crossing = crossing = self.crossing
        registers = Array(Signal(32, name=f"r{index}") for index in range(16))
        csr = crossing.csr
        with m.If(csr.write):
            m.d.core += registers[csr.address[:4]].eq(csr.write_data)
        with m.If(csr.read):
            m.d.core += csr.read_data.eq(registers[csr.address[:4]])
        m.d.core += self.accesses.eq(self.accesses + (csr.read | csr.write))
        return m


@pytest.mark.parametrize("bus_ns, core_ns", CLOCKS)
def test_register_accesses_cross_once_each_with_their_answers(bus_ns, core_ns):
    rng = random.Random(bus_ns * 100 + core_ns)
    dut = _CoreRegisters()
    crossing = dut.crossing
    model, checked = {}, []

    async def bench(ctx):
        for _ in range(150):
            address, value, is_read = rng.randrange(16), rng.getrandbits(32), rng.random() < 0.5
            ctx.set(crossing.address, address)
            ctx.set(crossing.write_data, value)
            ctx.set(crossing.read if is_read else crossing.write, 1)
            waited = 0
            while not ctx.get(crossing.done):       # held, as a master held by waitrequest
                await ctx.tick()
                waited += 1
                assert waited < 40, "an access was never answered"
            await ctx.tick()
            ctx.set(crossing.read, 0)
            ctx.set(crossing.write, 0)
            if is_read:
                assert ctx.get(crossing.read_data) == model.get(address, 0), f"read of register {address}"
            else:
                model[address] = value
            checked.append(waited)
            await ctx.tick().repeat(rng.choice([0, 0, 1, 5]) + 1)
        assert ctx.get(dut.accesses) == len(checked), "an access was performed twice or not at all"

    sim = Simulator(dut)
    sim.add_clock(bus_ns * 1e-9, domain="sync")
    sim.add_clock(core_ns * 1e-9, domain="core")
    sim.add_testbench(bench)
    sim.run()
    assert len(checked) == 150 and min(checked) >= 3, "an answer came back faster than two synchronisers"


class _Crossing(Elaboratable):
    def __init__(self, layout, depth):
        self.crossing = StreamCrossing(layout, w_domain="sync", r_domain="core", depth=depth)

    def elaborate(self, platform):
        m = Module()
        m.domains.sync = ClockDomain()
        m.domains.core = ClockDomain()
        m.submodules.crossing = self.crossing
        return m


@pytest.mark.parametrize("bus_ns, core_ns", CLOCKS)
def test_stream_crosses_in_order_and_level_returns_to_zero(bus_ns, core_ns):
    rng = random.Random(bus_ns + 7 * core_ns)
    layout = data.StructLayout({"a": 70, "b": 3})
    beats = [rng.getrandbits(73) for _ in range(200)]
    dut = _Crossing(layout, depth=4)
    crossing = dut.crossing
    got = []

    async def writer(ctx):
        for beat in beats:
            ctx.set(crossing.i.payload.as_value(), beat)
            ctx.set(crossing.i.valid, 1)
            while True:
                await ctx.tick("sync")
                if ctx.get(crossing.i.ready):
                    break
            ctx.set(crossing.i.valid, 0)
            if rng.random() < 0.3:
                await ctx.tick("sync").repeat(rng.randint(1, 4))
        ctx.set(crossing.i.valid, 0)
        while len(got) < len(beats):
            await ctx.tick("sync")
        await ctx.tick("sync").repeat(8)
        assert ctx.get(crossing.level) == 0, "the write side still counts entries once all were taken"

    async def reader(ctx):
        while len(got) < len(beats):
            ready = rng.random() < 0.6
            ctx.set(crossing.o.ready, ready)
            valid, payload = ctx.get(crossing.o.valid), ctx.get(crossing.o.payload.as_value())
            await ctx.tick("core")
            if ready and valid:
                got.append(payload)

    sim = Simulator(dut)
    sim.add_clock(bus_ns * 1e-9, domain="sync")
    sim.add_clock(core_ns * 1e-9, domain="core")
    sim.add_testbench(writer)
    sim.add_testbench(reader)
    sim.run()
    assert got == beats
