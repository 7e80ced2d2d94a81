"""A transport over Avalon-MM only: the host driver's words and buffers through a wrapper's
register slave and a memory its DMA masters read and write (``hw.top.AvalonTop``).

:class:`AvalonTransport` is what a board's link does, simulated: register reads and
writes become Avalon-MM transfers on ``csr`` (``cocotbext-avalon``'s master, as a PCIe
BAR would map them); a buffer sent becomes memory words at a base address
(``sim.support.avalon``'s packing, the format of ``docs/registers.md``) and a DMA read job
the accelerator runs itself; trees come back as a DMA write job into memory, read back
once the job is done. The memory model answers both masters with random ``waitrequest``
and a random in-order read latency. Used with
:class:`sim.host.histogram_driver.HistogramHostDriver` on ``histogram_top``.
"""

from cocotb.triggers import ClockCycles
from cocotb.utils import get_sim_time
from cocotbext.avalon import AvalonMMBus, AvalonMMMasterBFM

from hw.avalon.bus import words_per_beat
from hw.top import DMA_STATUS_BITS, TOP_REGISTERS
from sim.host.errors import AcceleratorError
from sim.support.avalon import RandomMemory, SparseMemory, beats_to_words, words_to_beats

__all__ = ["AvalonTransport", "BASES"]

#: Where the host puts its buffers in the memory model (byte addresses).
BASES = {"dataset": 0x0001_0000, "trees": 0x0040_0000, "codes": 0x1000_0000}


class AvalonTransport:
    """The wrapper ``dut`` (``csr``, ``mem_read``, ``mem_write``) of a system whose
    ``dataset`` and ``trees`` streams carry ``layouts["dataset"]`` and
    ``layouts["trees"]`` and whose ``READ_START`` / ``WRITE_START`` targets are
    ``read_targets`` / ``write_targets``. Call :meth:`start` once the clock runs."""

    def __init__(self, dut, layouts, read_targets, write_targets, rng, *, waitrequest_probability=0.3,
                 latency=(1, 8), period_ns=10, poll=64):
        self.dut, self.layouts, self.period_ns, self.poll = dut, layouts, period_ns, poll
        self.read_target = {name: value for value, name in read_targets.items()}
        self.write_target = {name: value for value, name in write_targets.items()}
        self.memory = SparseMemory()
        self.master = AvalonMMMasterBFM(AvalonMMBus.from_prefix(dut, "csr_"), dut.clk, dut.rst)
        self.models = [RandomMemory(dut, name, self.memory, rng, latency=latency,
                                    waitrequest_probability=waitrequest_probability)
                       for name in ("mem_read", "mem_write")]
        if hasattr(dut, "mem_codes__address"):
            # the code reader's master (codes in memory), on the core clock if there is one
            separate = hasattr(dut, "core_clk")
            self.models.append(RandomMemory(
                dut, "mem_codes", self.memory, rng, latency=latency, waitrequest_probability=waitrequest_probability,
                clock=dut.core_clk if separate else None, reset=dut.core_rst if separate else None))
        self.drivers = []

    def start(self):
        self.master.start()
        for model in self.models:
            model.start()

    async def write_register(self, address, value):
        await self.master.write(address, int(value))

    async def read_register(self, address):
        return int(await self.master.read(address))

    async def _top(self, name, value=None):
        if value is None:
            return await self.read_register(TOP_REGISTERS[name][0])
        await self.write_register(TOP_REGISTERS[name][0], value)

    async def _dma_flags(self):
        word = await self._top("DMA_STATUS")
        return {flag for bit, flag in enumerate(DMA_STATUS_BITS) if word >> bit & 1}

    async def send_codes(self, image):
        """The code store's bytes into memory; returns its base address."""
        self.memory.write_region(BASES["codes"], image)
        return BASES["codes"]

    async def send_dataset(self, beats):
        """The beats into memory, then a read job into ``dataset``; returns when it is done."""
        beats = list(beats)
        self.memory.write_words(BASES["dataset"], beats_to_words(self.layouts["dataset"], beats))
        await self._top("READ_BASE", BASES["dataset"])
        await self._top("READ_BEATS", len(beats))
        await self._top("READ_START", self.read_target["dataset"])
        while await self._top("READ_COUNT") < len(beats) or "read_busy" in await self._dma_flags():
            await self.wait_cycles(self.poll)
        refused = await self._dma_flags() & {"read_refused_busy", "read_unaligned", "read_bad_target"}
        if refused:
            raise AcceleratorError(f"the dataset's read job was refused: DMA_STATUS {sorted(refused)}",
                                   sorted(refused))

    async def arm_trees(self, limit):
        """A write job for ``trees`` of at most ``limit`` beats."""
        await self._top("WRITE_BASE", BASES["trees"])
        await self._top("WRITE_LIMIT", limit)
        await self._top("WRITE_START", self.write_target["trees"])

    async def collect_trees(self):
        """The node beats the write job wrote, once it has written the last in full."""
        while "write_busy" in await self._dma_flags():
            await self.wait_cycles(self.poll)
        flags = await self._dma_flags()
        if "write_overflow" in flags:
            raise AcceleratorError("the trees' write job overflowed its WRITE_LIMIT", ["write_overflow"])
        written = await self._top("WRITE_COUNT")
        words = self.memory.read_words(BASES["trees"], written * words_per_beat(self.layouts["trees"]))
        return words_to_beats(self.layouts["trees"], words)

    async def wait_cycles(self, count):
        await ClockCycles(self.dut.clk, count)

    def cycle_count(self):
        return int(get_sim_time("ns")) // self.period_ns
