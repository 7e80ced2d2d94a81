"""``forest_top``: the accelerator behind Avalon-MM, for Platform Designer.

``hw.system.ForestSystem`` with its register bus as an Avalon-MM slave (``csr``), an
interrupt (``irq``, level, active high) and two Avalon-MM masters through which the
accelerator itself moves its streams to and from external memory:

* ``mem_read`` (:class:`hw.avalon.StreamReader`): the dataset, a forest for inference
  (``trees_in``) or test rows, one job at a time, from ``READ_BASE``, ``READ_BEATS`` beats;
* ``mem_write`` (:class:`hw.avalon.StreamWriter`): the trained trees or the predictions, to
  ``WRITE_BASE``, at most ``WRITE_LIMIT`` beats.

Registers of the system keep their addresses; the wrapper's own (:data:`TOP_REGISTERS`)
are at 0x30 .. 0x3F. The slave answers every read one cycle later (``readdatavalid``).

Clocks: by default bus, memory and core share ``clk`` and the slave never holds
``waitrequest``. With ``separate_core_clock=True`` the system runs in the domain ``core``
(ports ``core_clk``, ``core_rst``) and the Avalon side in ``sync`` (``clk``, ``rst``), two
unrelated clocks: the five streams cross through ``AsyncFIFO`` s, a register access of the
system crosses by a toggle handshake with ``waitrequest`` held until its answer is back,
and the ``STATUS`` bits the interrupt watches cross through two-flip-flop synchronisers
(:mod:`hw.avalon.crossing`). Documented in ``docs/registers.md`` (section "Avalon-MM view").
"""

from amaranth.hdl import Cat, DomainRenamer, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

from hw.avalon import StreamReader, StreamWriter, read_master_signature, slave_signature
from hw.avalon import write_master_signature
from hw.avalon.crossing import RegisterCrossing, StreamCrossing
from hw.checks import check_integer, refuse_construction
from hw.system import REGISTERS, STATUS_BITS, ForestSystem

__all__ = ["AvalonTop", "ForestTop", "TOP_REGISTERS", "IRQ_CAUSES", "DMA_STATUS_BITS", "READ_TARGETS",
           "WRITE_TARGETS", "ERROR_STATUS_BITS"]

#: Causes of the interrupt, by bit of ``IRQ_ENABLE`` / ``IRQ_STATUS``.
IRQ_CAUSES = ("trained", "error", "read_done", "write_done")
#: ``READ_START`` / ``WRITE_START`` values -> stream.
READ_TARGETS = {1: "dataset", 2: "trees_in", 3: "rows"}
WRITE_TARGETS = {1: "trees", 2: "predictions"}
#: The bits of ``DMA_STATUS``.
DMA_STATUS_BITS = ("read_busy", "write_armed", "write_busy", "read_refused_busy", "read_unaligned",
                   "read_bad_target", "write_refused_busy", "write_unaligned", "write_bad_target",
                   "write_overflow")
#: ``STATUS`` bits whose rise raises the ``error`` cause (not ``inference_bad_config``: it
#: only says ``N_TREES`` is not a stored forest's size now, as while it is configured).
ERROR_STATUS_BITS = ("bad_config", "dataset_error", "start_while_busy", "tree_error", "bad_node",
                     "bad_row", "bad_feature", "depth_exceeded", "value_too_wide")

#: The wrapper's registers: name -> (address, access, width, meaning), as ``REGISTERS``;
#: ``W1C``: write 1 to clear a bit.
TOP_REGISTERS = {
    "IRQ_ENABLE":       (0x30, "RW", 4, "bit per cause: 0 trained, 1 error, 2 read done, 3 write done"),
    "IRQ_STATUS":       (0x31, "W1C", 4, "causes seen (set whether enabled or not); irq = "
                                          "any(IRQ_STATUS & IRQ_ENABLE)"),
    "READ_BASE":        (0x32, "RW", 32, "byte address of the read job (word-aligned)"),
    "READ_BEATS":       (0x33, "RW", 32, "beats the read job delivers"),
    "READ_START":       (0x34, "W", 32, "start the read job into 1 dataset, 2 trees_in, 3 rows"),
    "READ_COUNT":       (0x35, "R", 32, "beats delivered by the running or last read job"),
    "WRITE_BASE":       (0x36, "RW", 32, "byte address of the write job (word-aligned)"),
    "WRITE_LIMIT":      (0x37, "RW", 32, "beats the write buffer holds"),
    "WRITE_START":      (0x38, "W", 32, "arm the write job for 1 trees, 2 predictions; 0 disarms"),
    "WRITE_COUNT":      (0x39, "R", 32, "beats written in full by the armed or last write job"),
    "DMA_STATUS":       (0x3A, "R", len(DMA_STATUS_BITS),
                         "bit 0 read busy, 1 write armed, 2 write busy, 3-5 read start refused: "
                         "busy, unaligned base, bad target; 6-8 write start refused: the same; "
                         "9 write overflow (a beat beyond WRITE_LIMIT was discarded)"),
    "DATASET_WORDS":    (0x3B, "R", 8, "memory words per dataset beat"),
    "TREES_IN_WORDS":   (0x3C, "R", 8, "memory words per trees_in beat"),
    "ROWS_WORDS":       (0x3D, "R", 8, "memory words per rows beat"),
    "TREES_WORDS":      (0x3E, "R", 8, "memory words per trees beat"),
    "PREDICTIONS_WORDS": (0x3F, "R", 8, "memory words per predictions beat"),
}


class AvalonTop(wiring.Component):
    """A system with a register bus (``csr``), streams and a ``status`` word behind Avalon-MM
    (the module docstring), for :class:`ForestTop` and ``hw.histogram_top.HistogramTop``,
    which name it in class attributes: ``system_class``, ``read_targets`` / ``write_targets``
    (its streams by ``READ_START`` / ``WRITE_START`` value), ``status_bits`` (its ``status``
    word's bits, one of them ``busy``) and ``error_bits`` (those whose rise raises the
    ``error`` cause). Parameters: the system's, plus ``read_fifo_depth`` (reads in flight, 1
    to 256), ``separate_core_clock`` (the system on a clock of its own, domain ``core``) and
    ``crossing_depth`` (entries of each stream's clock-crossing FIFO, a power of two from 2
    to 64; only with a separate core clock)."""

    system_class = read_targets = write_targets = status_bits = error_bits = None

    def __init__(self, *, read_fifo_depth=8, separate_core_clock=False, crossing_depth=8,
                 **system_parameters):
        try:
            if not isinstance(separate_core_clock, bool):
                raise TypeError(f"separate_core_clock must be True or False, not {separate_core_clock!r}")
            check_integer("read_fifo_depth", read_fifo_depth, 1, 256)
            check_integer("crossing_depth", crossing_depth, 2, 64)
            if crossing_depth & (crossing_depth - 1):
                raise ValueError(f"crossing_depth must be a power of two, not {crossing_depth}")
            self._system = system = self.system_class(**system_parameters)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        self.separate_core_clock = separate_core_clock
        self.crossing_depth = crossing_depth
        streams = {name: getattr(system, name).signature.members["payload"].shape
                   for name in [*self.read_targets.values(), *self.write_targets.values()]}
        self.reader = StreamReader([streams[name] for name in self.read_targets.values()],
                                   fifo_depth=read_fifo_depth)
        self.writer = StreamWriter([streams[name] for name in self.write_targets.values()])
        self.words = dict(zip(self.read_targets.values(), self.reader.words))
        self.words.update(zip(self.write_targets.values(), self.writer.words))
        # A system that reads its codes from memory has its own read master (on its clock).
        codes = {"mem_codes": system.signature.members["codes"]} if "codes" in system.signature.members else {}
        super().__init__({
            "csr": In(slave_signature()), "irq": Out(1),
            "mem_read": Out(read_master_signature()), "mem_write": Out(write_master_signature()),
            **codes,
        })

    def _streams(self, m, system, reader, writer):
        """Connect the DMA engines to the system's streams, through clock-crossing FIFOs with a
        separate core clock; return the ``level`` of the read-side crossings and of ``trees``'s."""
        levels = {}
        for index, name in [*self.read_targets.items(), *self.write_targets.items()]:
            reading = name in self.read_targets.values()
            ends = ((getattr(reader, f"out{index}"), getattr(system, name)) if reading
                    else (getattr(system, name), getattr(writer, f"in{index}")))
            if not self.separate_core_clock:
                wiring.connect(m, *ends)
                continue
            layout = ends[0].signature.members["payload"].shape
            crossing = StreamCrossing(layout, w_domain="sync" if reading else "core",
                                      r_domain="core" if reading else "sync", depth=self.crossing_depth)
            m.submodules[f"{name}_crossing"] = crossing
            wiring.connect(m, ends[0], crossing.i)
            wiring.connect(m, crossing.o, ends[1])
            levels[name] = crossing.level
        return levels

    def _register_bus(self, m, system, mine):
        """The system's registers on ``csr``: directly, or across the clocks. Returns the
        system's read word for ``readdata``."""
        csr = self.csr
        if not self.separate_core_clock:
            m.d.comb += [system.csr.address.eq(csr.address), system.csr.write_data.eq(csr.writedata),
                         system.csr.read.eq(csr.read & ~mine), system.csr.write.eq(csr.write & ~mine),
                         csr.waitrequest.eq(0)]
            return system.csr.read_data
        m.submodules.register_crossing = crossing = RegisterCrossing(system.csr.signature.flip())
        wiring.connect(m, crossing.csr, system.csr)
        m.d.comb += [crossing.address.eq(csr.address), crossing.write_data.eq(csr.writedata),
                     crossing.read.eq(csr.read & ~mine), crossing.write.eq(csr.write & ~mine),
                     csr.waitrequest.eq((csr.read | csr.write) & ~mine & ~crossing.done)]
        return crossing.read_data

    def elaborate(self, platform):
        m = Module()
        system = self._system
        m.submodules.system = DomainRenamer("core")(system) if self.separate_core_clock else system
        m.submodules.reader = reader = self.reader
        m.submodules.writer = writer = self.writer
        csr = self.csr
        wiring.connect(m, wiring.flipped(self.mem_read), reader.bus)
        wiring.connect(m, wiring.flipped(self.mem_write), writer.bus)
        if "mem_codes" in self.signature.members:
            wiring.connect(m, wiring.flipped(self.mem_codes), system.codes)
        levels = self._streams(m, system, reader, writer)

        # ------------------------------------------------------------ registers
        values = {name: Signal(width, name=name.lower())
                  for name, (_, access, width, _) in TOP_REGISTERS.items() if access == "RW"}
        irq_status = Signal(len(IRQ_CAUSES))
        dma_status = Cat(reader.busy, writer.armed, writer.busy, reader.busy_refused, reader.unaligned,
                         reader.bad_target, writer.busy_refused, writer.unaligned, writer.bad_target,
                         writer.overflow)
        readable = {**values, "IRQ_STATUS": irq_status, "READ_COUNT": reader.delivered,
                    "WRITE_COUNT": writer.written, "DMA_STATUS": dma_status,
                    **{f"{name.upper()}_WORDS": count for name, count in self.words.items()}}
        mine = Signal()
        m.d.comb += mine.eq(csr.address[4:] == 3)
        system_data = self._register_bus(m, system, mine)
        from_top = Signal()
        top_data = Signal(32)
        m.d.sync += [csr.readdatavalid.eq(csr.read & ~csr.waitrequest), from_top.eq(mine)]
        m.d.comb += csr.readdata.eq(Mux(from_top, top_data, system_data))
        with m.If(csr.read & mine):
            with m.Switch(csr.address):
                for name, value in readable.items():
                    with m.Case(TOP_REGISTERS[name][0]):
                        m.d.sync += top_data.eq(value)
                with m.Default():
                    m.d.sync += top_data.eq(0)
        cleared = Signal(len(IRQ_CAUSES))
        with m.If(csr.write & mine):
            with m.Switch(csr.address):
                for name, signal in values.items():
                    with m.Case(TOP_REGISTERS[name][0]):
                        m.d.sync += signal.eq(csr.writedata)
                with m.Case(TOP_REGISTERS["IRQ_STATUS"][0]):
                    m.d.comb += cleared.eq(csr.writedata)
                with m.Case(TOP_REGISTERS["READ_START"][0]):
                    m.d.comb += reader.start.eq(1)
                with m.Case(TOP_REGISTERS["WRITE_START"][0]):
                    m.d.comb += writer.start.eq(1)
        m.d.comb += [reader.base.eq(values["READ_BASE"]), reader.beats.eq(values["READ_BEATS"]),
                     reader.target.eq(csr.writedata), writer.base.eq(values["WRITE_BASE"]),
                     writer.limit.eq(values["WRITE_LIMIT"]), writer.target.eq(csr.writedata)]

        # ------------------------------------------------------------ interrupt
        status, drained, read_done = self._watched(m, system, reader, levels)
        errors = Cat([status[self.status_bits.index(name)] for name in self.error_bits], dma_status[3:])
        errors_before = Signal.like(errors)
        training = Signal()             # a training ran; ``trained`` once its trees are written
        m.d.sync += errors_before.eq(errors)
        with m.If(status[self.status_bits.index("busy")]):
            m.d.sync += training.eq(1)
        trained = training & ~status[self.status_bits.index("busy")] & drained & ~writer.busy
        with m.If(trained):
            m.d.sync += training.eq(0)
        raised = Cat(trained, (errors & ~errors_before).any(), read_done, writer.done)
        m.d.sync += irq_status.eq((irq_status & ~cleared) | raised)
        m.d.comb += self.irq.eq((irq_status & values["IRQ_ENABLE"]).any())
        return m

    def _watched(self, m, system, reader, levels):
        """What the interrupt logic watches, in the bus domain: the ``STATUS`` bits, whether
        every trained node has left the system's side (its crossing is empty), and the
        read job's end (its last beat taken by the system, not only by a crossing)."""
        if not self.separate_core_clock:
            return system.status, 1, reader.done
        busy = system.status[self.status_bits.index("busy")]
        core_side = Signal(len(system.status) + 1)     # registered: no glitch reaches the synchroniser
        m.d.core += core_side.eq(Cat(system.status, ~busy & (levels["trees"] == 0)))
        bus_side = Signal.like(core_side)
        m.submodules.status_sync = FFSynchronizer(core_side, bus_side, o_domain="sync")
        draining = Signal()             # a read job ended; its beats may still be crossing
        crossed = Cat(levels[name] == 0 for name in self.read_targets.values()).all()
        read_done = Signal()
        m.d.comb += read_done.eq(draining & crossed)
        with m.If(reader.done):
            m.d.sync += draining.eq(1)
        with m.Elif(read_done):
            m.d.sync += draining.eq(0)
        return bus_side[:-1], bus_side[-1], read_done


class ForestTop(AvalonTop):
    """The system behind Avalon-MM (module docstring). Parameters: as :class:`ForestSystem`,
    plus the wrapper's (:class:`AvalonTop`)."""

    system_class = ForestSystem
    read_targets, write_targets = READ_TARGETS, WRITE_TARGETS
    status_bits, error_bits = STATUS_BITS, ERROR_STATUS_BITS


assert not set(TOP_REGISTERS) & set(REGISTERS)
assert not {a for a, *_ in TOP_REGISTERS.values()} & {a for a, *_ in REGISTERS.values()}
