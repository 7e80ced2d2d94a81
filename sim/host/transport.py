"""The link between the host driver and an accelerator: one interface, one implementation per link.

:class:`sim.host.driver.HostDriver` knows the register map and the sequences of
``docs/registers.md`` (what to write, in which order, which flags mean what); a
:class:`Transport` only moves words and buffers. Every method is a coroutine (or a plain
accessor), so one driver runs over any link:

* :class:`CocotbTransport` (here): the simulated ``hw.system.ForestSystem`` under cocotb,
  its register bus (``csr__*``) driven signal by signal and its five streams by the
  project's stream drivers (random stalls, protocol monitors).
* A board (not built yet; issue #22 item 1): the register calls become 32-bit reads and
  writes through the PCIe BAR that maps ``forest_top``'s Avalon-MM slave; the buffers
  (``send_dataset``, ``send_forest``, ``send_rows``, ``received_trees``,
  ``received_predictions``) become DMA transfers into and out of DDR4 buffers whose base
  addresses and lengths the transport programs before a start, packed as ``forest_top``
  documents in ``docs/registers.md``; ``wait_cycles`` becomes a sleep or an interrupt wait,
  and ``cycle_count`` the wall time times the clock. Such a class implements the methods
  below (with ``asyncio`` instead of cocotb triggers) and is passed as
  ``HostDriver(None, design, transport=...)``.
"""

import numpy as np
from cocotb.triggers import ReadOnly, RisingEdge
from cocotb.utils import get_sim_time

from hw.trainer import dataset_layout, forest_node_layout
from sim.host.errors import AcceleratorError
from sim.support.streams import StreamSink, StreamSource, clock_cycles
from sim.support.trees import bits

__all__ = ["Transport", "NamedRegisters", "CocotbRegisters", "CocotbTransport", "row_beats"]


class Transport:
    """What a host driver needs from its link to the accelerator (all addresses are word
    addresses of the register map; beats are dicts of the stream payloads of
    ``docs/registers.md``)."""

    async def write_register(self, address, value):
        raise NotImplementedError

    async def read_register(self, address):
        raise NotImplementedError

    async def send_dataset(self, beats):
        """Deliver the training set's beats; return when the accelerator has taken them all."""
        raise NotImplementedError

    async def send_forest(self, nodes):
        """Deliver a forest's node beats (``trees_in``); return when all are taken."""
        raise NotImplementedError

    def send_rows(self, beats):
        """Queue test-row beats (``rows``); predictions arrive in ``received_predictions``."""
        raise NotImplementedError

    def received_trees(self):
        """The node beats (``trees``) received since :meth:`clear_trees`."""
        raise NotImplementedError

    def clear_trees(self):
        raise NotImplementedError

    def received_predictions(self):
        """The prediction beats received since :meth:`clear_predictions`."""
        raise NotImplementedError

    def clear_predictions(self):
        raise NotImplementedError

    async def wait_cycles(self, count):
        """Let about ``count`` accelerator clock cycles pass."""
        raise NotImplementedError

    def cycle_count(self):
        """Accelerator clock cycles since the start of the session."""
        raise NotImplementedError


class NamedRegisters:
    """A host driver's register access by name: ``registers`` is its map (name ->
    (address, access, width, meaning)); the words go through ``self.transport``."""

    registers = {}

    async def write(self, name, value):
        address, access, width, _ = self.registers[name]
        if access == "R":
            raise ValueError(f"register {name} is read-only")
        if not 0 <= int(value) < 1 << 32:
            raise ValueError(f"{name} = {value} does not fit a 32-bit register")
        await self.transport.write_register(address, int(value))

    async def read(self, name):
        return await self.transport.read_register(self.registers[name][0])

    async def wait_while_busy(self, n_trees, budget, poll, progress=None):
        """Poll ``STATUS`` (the driver's ``status()``) every ``poll`` cycles until ``busy``
        falls; return it. ``progress(TREES_DONE)`` after each poll; past ``budget`` cycles
        the error says how many of ``n_trees`` trees are done."""
        waited = 0
        while True:
            await self.transport.wait_cycles(poll)
            waited += poll
            status = await self.status()
            if progress is not None:
                progress(await self.read("TREES_DONE"))
            if not status["busy"]:
                return status
            if waited > budget:
                raise AcceleratorError(f"training did not finish within {budget} cycles "
                                       f"({await self.read('TREES_DONE')} of {n_trees} trees done)")


class CocotbRegisters(Transport):
    """The register bus (``csr__*``) and the clock of a simulated ``dut`` under cocotb,
    with the stream drivers' settings (``source`` and ``sink``) for a subclass's streams."""

    def __init__(self, dut, rng, idle_probability=0.0, stall_probability=0.0, period_ns=10):
        self.dut, self.period_ns = dut, period_ns
        clock = dut.clk
        self.source = {"clock": clock, "rng": rng, "idle_probability": idle_probability, "period_ns": period_ns}
        self.sink = {"clock": clock, "rng": rng, "stall_probability": stall_probability, "period_ns": period_ns,
                     "reset": dut.rst}
        dut.csr__write.value = 0
        dut.csr__read.value = 0

    async def write_register(self, address, value):
        self.dut.csr__address.value = address
        self.dut.csr__write_data.value = int(value)
        self.dut.csr__write.value = 1
        await RisingEdge(self.dut.clk)
        self.dut.csr__write.value = 0

    async def read_register(self, address):
        self.dut.csr__address.value = address
        self.dut.csr__read.value = 1
        await RisingEdge(self.dut.clk)
        self.dut.csr__read.value = 0
        await ReadOnly()
        value = int(self.dut.csr__read_data.value)
        await RisingEdge(self.dut.clk)
        return value

    async def wait_cycles(self, count):
        """Wait ``count`` cycles (two wake-ups when called right after a rising edge)."""
        await clock_cycles(self.dut.clk, count, self.period_ns)

    def cycle_count(self):
        return int(get_sim_time("ns")) // self.period_ns


class CocotbTransport(CocotbRegisters):
    """The simulated ``ForestSystem`` ``dut`` of the build ``capacity`` (a
    ``sim.support.trees.PECapacity``) and inference ``geometry``, under cocotb. The stream
    drivers are the attributes ``dataset``, ``trees``, ``trees_in``, ``rows`` and
    ``predictions`` (all in ``drivers``; whoever owns the clock starts them)."""

    def __init__(self, dut, capacity, geometry, max_trees, rng, idle_probability=0.0,
                 stall_probability=0.0, period_ns=10):
        super().__init__(dut, rng, idle_probability, stall_probability, period_ns)
        source, sink = self.source, self.sink
        self.dataset = StreamSource(dut, "dataset", dataset_layout(capacity.code_bits, capacity.label_bits,
                                                                   capacity.feature_lanes), **source)
        self.trees = StreamSink(dut, "trees", forest_node_layout(bits(max_trees - 1), capacity.node_layout),
                                **sink)
        self.trees_in = StreamSource(dut, "trees_in", geometry.node_layout, **source)
        self.rows = StreamSource(dut, "rows", geometry.row_layout, **source)
        self.predictions = StreamSink(dut, "predictions", geometry.prediction_layout, **sink)
        self.drivers = [self.dataset, self.trees, self.trees_in, self.rows, self.predictions]

    async def send_dataset(self, beats):
        for beat in beats:
            self.dataset.send(beat)
        await self.dataset.wait_idle()

    async def send_forest(self, nodes):
        for node in nodes:
            self.trees_in.send(node)
        await self.trees_in.wait_idle()

    def send_rows(self, beats):
        for beat in beats:
            self.rows.send(beat)

    def received_trees(self):
        return self.trees.received

    def clear_trees(self):
        self.trees.clear()

    def received_predictions(self):
        return self.predictions.received

    def clear_predictions(self):
        self.predictions.clear()


def row_beats(codes, labels):
    """The ``rows`` stream of ``codes`` (one feature code per beat, the label on ``last``)."""
    codes = np.asarray(codes, dtype=np.int64)
    n_rows, n_features = codes.shape
    for row in range(n_rows):
        for feature in range(n_features):
            last = feature == n_features - 1
            yield {"code": int(codes[row, feature]),
                   "label": int(labels[row]) if (last and labels is not None) else 0,
                   "has_label": int(last and labels is not None), "last": int(last)}
