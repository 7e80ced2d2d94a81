"""The protocol monitors catch a design that breaks the stream rules on an output stream.

Pure-Python checks of :class:`sim.support.monitors.StreamMonitor`, and a tiny Amaranth
producer simulated under Verilator through :class:`sim.support.testbench.StreamTestbench`
(random stalls on its output): correct, it passes; made to drop valid, or to change the
payload, under a stall, the cocotb test fails with the monitor's message. This file is
also the cocotb test module of that simulation (the ``probe_*`` coroutines).
"""

import xml.etree.ElementTree as ElementTree
from pathlib import Path

import cocotb
import pytest
from amaranth.hdl import Module
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out
from cocotb.triggers import ClockCycles
from cocotb.types import LogicArray

from sim.support.monitors import ProtocolViolation, StreamMonitor

LAYOUT = data.StructLayout({"value": 8})
FAULTS = {"none": 0, "drop": 1, "change": 2}


class Producer(wiring.Component):
    """Counts 1, 2, 3, ... on ``o``; ``fault`` 1 drops valid under a stall, 2 moves on."""

    o: Out(stream.Signature(LAYOUT))
    fault: In(2)

    def elaborate(self, platform):
        m = Module()
        with m.If(self.o.valid & ~self.o.ready):
            with m.If(self.fault == 1):
                m.d.sync += self.o.valid.eq(0)
            with m.Elif(self.fault == 2):
                m.d.sync += self.o.payload.value.eq(self.o.payload.value + 1)
        with m.Else():
            m.d.sync += [self.o.valid.eq(1), self.o.payload.value.eq(self.o.payload.value + 1)]
        return m


@cocotb.test()
async def probe_stream_rules(dut):
    from sim.support.testbench import StreamTestbench
    tb = StreamTestbench(dut)
    dut.fault.value = tb.settings["fault"]
    sink = tb.sink("o", LAYOUT)
    await tb.begin()
    await ClockCycles(dut.clk, 300)
    values = [beat["value"] for beat in sink.received]
    assert values == [(1 + k) % 256 for k in range(len(values))], values[:20]
    assert sink.stall_cycles > 10 and sink.transfers == len(values) > 100


@cocotb.test()
async def probe_clock_cycles(dut):
    """``clock_cycles`` waits exactly ``count`` edges, on the timer path after an edge."""
    from cocotb.triggers import RisingEdge
    from cocotb.utils import get_sim_time

    from sim.support.streams import _after_edge, clock_cycles
    from sim.support.testbench import StreamTestbench
    tb = StreamTestbench(dut)
    await tb.begin()
    for count in (1, 3, 257):
        await RisingEdge(dut.clk)
        start = get_sim_time("ns")
        assert _after_edge(dut.clk)             # so clock_cycles takes its timer path
        await clock_cycles(dut.clk, count)
        assert round(get_sim_time("ns") - start, 6) == 10 * count


# ---------------------------------------------------------------- pure Python

def _feed(monitor, samples):
    for cycle, (valid, ready, payload) in enumerate(samples):
        monitor.sample(10 * cycle, valid, ready, payload)


def test_monitor_accepts_held_streams_and_idle_gaps():
    monitor = StreamMonitor("s")
    _feed(monitor, [(0, 0, 7), (1, 0, 5), (1, 0, 5), (1, 1, 5), (1, 1, 6), (0, 1, 9), (1, 0, 3), (1, 1, 3)])
    assert not monitor.pending and monitor.checked == 8


@pytest.mark.parametrize("samples, rule, cycle", [
    ([(1, 0, 5), (0, 1, 5)], "valid-dropped", 1),
    ([(1, 1, 5), (1, 0, 6), (1, 0, 6), (1, 1, 7)], "payload-changed", 3),
    ([(0, 0, 0), (LogicArray("X"), 1, 0)], "valid-unknown", 1),
    ([(1, 0, LogicArray("0000")), (1, 1, LogicArray("00Z0"))], "payload-unknown", 1),
])
def test_monitor_names_stream_cycle_and_rule(samples, rule, cycle):
    with pytest.raises(ProtocolViolation) as caught:
        _feed(StreamMonitor("beats"), samples)
    assert (caught.value.stream, caught.value.rule, caught.value.cycle) == ("beats", rule, cycle)
    assert f"'beats' at {10 * cycle} ns (cycle {cycle}): {rule}" in str(caught.value)


def test_monitor_excuses_a_reset():
    monitor = StreamMonitor("s")
    monitor.sample(0, 1, 0, 5)
    monitor.sample(10, 1, 0, 5, in_reset=True)
    monitor.sample(20, 0, 0, 0)                 # dropped by the reset: no violation
    assert not monitor.pending


# ---------------------------------------------------------------- under Verilator

@pytest.fixture(scope="module")
def probe_build():
    from amaranth.back import verilog
    from cocotb_tools.runner import get_runner

    from sim.runner import BUILD_ROOT, verilator_environment
    verilator_environment()
    folder = Path(BUILD_ROOT) / "sim" / "monitor_probe"
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "monitor_probe.v"
    source.write_text(verilog.convert(Producer(), name="monitor_probe"))
    runner = get_runner("verilator")
    runner.build(sources=[source], hdl_toplevel="monitor_probe", build_dir=folder,
                 build_args=["-Wno-fatal"], always=True, log_file=folder / "build.log")
    return runner, folder


def _run_probe(probe_build, fault):
    from sim.runner import PROJECT_ROOT, testbench_environment
    runner, folder = probe_build
    results = folder / f"results_{fault}.xml"
    settings = {"design": {}, "fault": FAULTS[fault], "stall_probability": 0.5}
    module = ".".join(Path(__file__).resolve().relative_to(PROJECT_ROOT).with_suffix("").parts)
    try:
        runner.test(test_module=module, hdl_toplevel="monitor_probe", build_dir=folder,
                    test_dir=folder, seed=3, results_xml=str(results),
                    extra_env=testbench_environment(settings))
    except SystemExit:
        pass                                     # a failing cocotb run ends so under pytest
    cases = ElementTree.parse(results).getroot().iter("testcase")
    return [element.get("message", "") for case in cases for element in case
            if element.tag in ("failure", "error")]


def test_a_correct_stream_passes(probe_build):
    assert _run_probe(probe_build, "none") == []


@pytest.mark.parametrize("fault, rule", [("drop", "valid-dropped"), ("change", "payload-changed")])
def test_a_broken_stream_fails_the_test(probe_build, fault, rule):
    failures = _run_probe(probe_build, fault)
    assert len(failures) == 1
    assert "output stream 'o' at" in failures[0] and f"): {rule}:" in failures[0], failures[0]
