"""``forest_top``: the accelerator behind Avalon-MM, for Platform Designer.

``hw.system.ForestSystem`` with its register bus as an Avalon-MM slave (``csr``), an
interrupt (``irq``, level, active high) and two Avalon-MM masters through which the
accelerator itself moves its streams to and from external memory:

* ``mem_read`` (:class:`hw.avalon.StreamReader`): the dataset, a forest for inference
  (``trees_in``) or test rows, one job at a time, from ``READ_BASE``, ``READ_BEATS`` beats;
* ``mem_write`` (:class:`hw.avalon.StreamWriter`): the trained trees or the predictions, to
  ``WRITE_BASE``, at most ``WRITE_LIMIT`` beats.

Registers of the system keep their addresses; the wrapper's own (:data:`TOP_REGISTERS`)
are at 0x30 .. 0x3F. The slave answers every read one cycle later (``readdatavalid``) and
never holds ``waitrequest``. One clock domain: bus, memory and core share ``clk``.
Documented in ``docs/registers.md`` (section "Avalon-MM view").
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hw.avalon import StreamReader, StreamWriter, read_master_signature, slave_signature
from hw.avalon import write_master_signature
from hw.checks import refuse_construction
from hw.system import REGISTERS, STATUS_BITS, ForestSystem

__all__ = ["ForestTop", "TOP_REGISTERS", "IRQ_CAUSES", "DMA_STATUS_BITS", "READ_TARGETS",
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


class ForestTop(wiring.Component):
    """The system behind Avalon-MM (module docstring). Parameters: as :class:`ForestSystem`,
    plus ``read_fifo_depth`` (reads in flight)."""

    def __init__(self, *, read_fifo_depth=8, **system_parameters):
        try:
            self._system = ForestSystem(**system_parameters)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        s = self._system
        streams = {name: getattr(s, name).signature.members["payload"].shape
                   for name in ("dataset", "trees_in", "rows", "trees", "predictions")}
        self.reader = StreamReader([streams[name] for name in READ_TARGETS.values()],
                                   fifo_depth=read_fifo_depth)
        self.writer = StreamWriter([streams[name] for name in WRITE_TARGETS.values()])
        self.words = dict(zip(READ_TARGETS.values(), self.reader.words))
        self.words.update(zip(WRITE_TARGETS.values(), self.writer.words))
        super().__init__({
            "csr": In(slave_signature()), "irq": Out(1),
            "mem_read": Out(read_master_signature()), "mem_write": Out(write_master_signature()),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.system = system = self._system
        m.submodules.reader = reader = self.reader
        m.submodules.writer = writer = self.writer
        csr = self.csr
        wiring.connect(m, wiring.flipped(self.mem_read), reader.bus)
        wiring.connect(m, wiring.flipped(self.mem_write), writer.bus)
        for index, name in READ_TARGETS.items():
            wiring.connect(m, getattr(reader, f"out{index}"), getattr(system, name))
        for index, name in WRITE_TARGETS.items():
            wiring.connect(m, getattr(system, name), getattr(writer, f"in{index}"))

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
        m.d.comb += [mine.eq(csr.address[4:] == 3), csr.waitrequest.eq(0)]
        from_top = Signal()
        top_data = Signal(32)
        m.d.sync += [csr.readdatavalid.eq(csr.read), from_top.eq(mine)]
        m.d.comb += [system.csr.address.eq(csr.address), system.csr.write_data.eq(csr.writedata),
                     system.csr.read.eq(csr.read & ~mine), system.csr.write.eq(csr.write & ~mine),
                     csr.readdata.eq(Mux(from_top, top_data, system.csr.read_data))]
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
        status = system.status
        errors = Cat([status[STATUS_BITS.index(name)] for name in ERROR_STATUS_BITS], dma_status[3:])
        errors_before = Signal.like(errors)
        training = Signal()             # a training ran; ``trained`` once its trees are written
        m.d.sync += errors_before.eq(errors)
        with m.If(status[STATUS_BITS.index("busy")]):
            m.d.sync += training.eq(1)
        trained = training & ~status[STATUS_BITS.index("busy")] & ~writer.busy
        with m.If(trained):
            m.d.sync += training.eq(0)
        raised = Cat(trained, (errors & ~errors_before).any(), reader.done, writer.done)
        m.d.sync += irq_status.eq((irq_status & ~cleared) | raised)
        m.d.comb += self.irq.eq((irq_status & values["IRQ_ENABLE"]).any())
        return m


assert not set(TOP_REGISTERS) & set(REGISTERS)
assert not {a for a, *_ in TOP_REGISTERS.values()} & {a for a, *_ in REGISTERS.values()}
