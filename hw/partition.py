"""Partition unit of one feature lane: stable partition of a node's segment by go-left bits.

Reference: ``sw.model.stable_partition``. After a level's splits are chosen, every row
of a split node gets a go-left bit (``code of the split feature <= threshold``); each lane
then rewrites its in-bag list so that, inside every split node's segment, the rows going
left come first and the rows going right follow, both in their old (code-sorted) order.
Each child's segment is therefore contiguous and still sorted, and no tree ever re-sorts.

Why a right-side FIFO rather than two write pointers into a second list buffer: rows going
left only ever move towards the front of their segment, so they can be written back in
place as they stream past; only the rows going right wait in a FIFO until the segment's
last row has passed. One list memory per lane suffices (no ping-pong copy), at the price of
``rows going right`` extra cycles per segment.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.checks import check_integer, refuse_construction
from hw.inbag import inbag_layout

__all__ = ["PartitionUnit", "decision_layout"]


def decision_layout(row_bits):
    """A go-left bit for one row."""
    return data.StructLayout({"row": row_bits, "left": 1})


class PartitionUnit(wiring.Component):
    """Stably partitions segments of a lane's in-bag list by per-row go-left bits.

    ``decisions`` writes go-left bits (one row per cycle, accepted while no segment is in
    flight). A segment arrives on ``segment_in`` (in-bag entries in list order, ``last`` on
    its final entry) and leaves on ``segment_out`` in partitioned order, ``last`` on its
    final entry. Rows going left pass through at one per cycle; rows going right are
    queued and follow once the segment's last row is in. Cycles per segment:
    ``length + rows going right + 3`` without stalls.

    Parameters
    ----------
    max_rows : int
        Rows of the dataset (go-left memory depth and longest segment), 2 to 2**20.
    max_samples : int
        Largest bootstrap weight carried with an entry, 1 to 2**20.
    code_bits : int
        Width of the codes carried with the entries, 1 to 32.
    """

    def __init__(self, *, max_rows=4096, max_samples=4096, code_bits=16):
        try:
            check_integer("max_rows", max_rows, 2, 1 << 20)
            check_integer("max_samples", max_samples, 1, 1 << 20)
            check_integer("code_bits", code_bits, 1, 32)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        self.max_rows = max_rows
        self.max_samples = max_samples
        self.code_bits = code_bits
        self.row_bits = (max_rows - 1).bit_length()
        self.weight_bits = max_samples.bit_length()
        entry = inbag_layout(code_bits, self.row_bits, self.weight_bits)
        super().__init__({
            "decisions": In(stream.Signature(decision_layout(self.row_bits))),
            "segment_in": In(stream.Signature(entry)),
            "segment_out": Out(stream.Signature(entry)),
        })

    def elaborate(self, platform):
        m = Module()
        entry_layout = inbag_layout(self.code_bits, self.row_bits, self.weight_bits)

        m.submodules.goes_left = goes_left = Memory(shape=1, depth=self.max_rows, init=[])
        decision_write = goes_left.write_port()
        decision_read = goes_left.read_port()
        m.submodules.rights = rights = Memory(shape=entry_layout, depth=self.max_rows, init=[])
        right_write = rights.write_port()
        right_read = rights.read_port()

        right_count = Signal(self.row_bits + 1)     # rows queued to go right
        drain_index = Signal(self.row_bits + 1)     # next queued row to read
        drain_pending = Signal()                    # right_read.data holds a queued row

        output_valid = Signal()
        output = Signal(entry_layout)
        m.d.comb += [self.segment_out.valid.eq(output_valid), self.segment_out.payload.eq(output)]
        output_free = ~output_valid | self.segment_out.ready
        with m.If(self.segment_out.ready):
            m.d.sync += output_valid.eq(0)

        # Stage 1 holds the entry whose go-left bit is being read; the read port only moves
        # with stage 1, so the bit holds still while a left row waits for the output.
        stage1_valid = Signal()
        stage1 = Signal(entry_layout)

        with m.FSM(init="Stream the segment"):
            with m.State("Stream the segment"):
                m.d.comb += self.decisions.ready.eq(~stage1_valid)
                with m.If(self.decisions.valid & ~stage1_valid):
                    m.d.comb += [decision_write.addr.eq(self.decisions.p.row),
                                 decision_write.data.eq(self.decisions.p.left),
                                 decision_write.en.eq(1)]
                goes = decision_read.data
                stage1_moves = stage1_valid & (~goes | output_free)
                # Stop taking rows after the segment's last one has entered stage 1.
                advance = ~stage1_valid | (stage1_moves & ~stage1.last)
                m.d.comb += [self.segment_in.ready.eq(advance & ~self.decisions.valid),
                             decision_read.addr.eq(self.segment_in.p.row),
                             decision_read.en.eq(advance)]
                with m.If(advance):
                    m.d.sync += [stage1_valid.eq(self.segment_in.valid & ~self.decisions.valid),
                                 stage1.eq(self.segment_in.p)]
                with m.If(stage1_moves):
                    with m.If(goes):
                        # The last row out is the segment's last row when nothing went right.
                        m.d.sync += [output_valid.eq(1), output.eq(stage1),
                                     output.last.eq(stage1.last & (right_count == 0))]
                    with m.Else():
                        m.d.comb += [right_write.addr.eq(right_count), right_write.data.eq(stage1),
                                     right_write.en.eq(1)]
                        m.d.sync += right_count.eq(right_count + 1)
                    with m.If(stage1.last):
                        m.d.sync += [stage1_valid.eq(0), drain_index.eq(0), drain_pending.eq(0)]
                        m.next = "Emit the rows going right"

            with m.State("Emit the rows going right"):
                load = ~drain_pending | output_free
                m.d.comb += [right_read.addr.eq(drain_index), right_read.en.eq(load)]
                with m.If(load):
                    with m.If(drain_pending):
                        m.d.sync += [output_valid.eq(1), output.eq(right_read.data),
                                     output.last.eq(drain_index == right_count)]
                    with m.If(drain_index < right_count):
                        m.d.sync += [drain_pending.eq(1), drain_index.eq(drain_index + 1)]
                    with m.Else():
                        m.d.sync += [drain_pending.eq(0), right_count.eq(0)]
                        m.next = "Stream the segment"
        return m
