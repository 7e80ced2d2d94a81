"""Partition unit of one feature lane: stable partition of segments by go-left bits, each
write addressed, with the rows going right of one segment written while the next streams.

Reference: ``sw.methods.forest.model.stable_partition``. After a level's splits are chosen, every row
of a split node gets a go-left bit (``code of the split feature <= threshold``); each lane
then rewrites its in-bag lists so that, inside every split node's segment, the rows going
left come first and the rows going right follow, both in their old (code-sorted) order.
Each child's segment is therefore contiguous and still sorted, and no tree ever re-sorts.

Rows going left only ever move towards the front of their segment, so they are written
back in place as they stream past. Rows going right wait in a circular FIFO: their places
are known only once the segment's last row has passed (they follow its rows going left).
The unit emits *writes* (bank address and entry), one per cycle, and fills the cycles in
which a row going right streams past (the write port would idle) with a queued row going
right of the segment before. A lane streams all its lists of a split node back to back:
every list of the node has the same rows going right, so the queue of one list drains
while the next streams, and a node's partition takes ``lists x length`` writes plus the
last list's rows going right, which drain while the next job's go-left bits are computed
(``idle`` says when they are all written). Before this (at 1174aed) every segment waited
for its own rows going right: ``lists x (length + rows going right)``.

Rows going right of the segment before are written only in cycles no row going left
needs; when a segment ends and rows of the one before are still queued (segments of
different nodes, or stalls), the next segment waits until they are written, so a queued
row always belongs to one of the last two segments.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.checks import check_integer, refuse_construction
from hw.inbag import inbag_layout

__all__ = ["PartitionUnit", "decision_layout", "partition_input_layout", "partition_write_layout"]


def decision_layout(row_bits):
    """A go-left bit for one row."""
    return data.StructLayout({"row": row_bits, "left": 1})


def partition_input_layout(code_bits, row_bits, weight_bits, address_bits):
    """One entry of a segment (``last`` on the segment's final entry) and the bank address
    of the segment's first entry."""
    return data.StructLayout({"entry": inbag_layout(code_bits, row_bits, weight_bits),
                              "base": address_bits})


def partition_write_layout(code_bits, row_bits, weight_bits, address_bits):
    """One write of the partitioned segments: where, and which entry (``last`` is 0)."""
    return data.StructLayout({"address": address_bits,
                              "entry": inbag_layout(code_bits, row_bits, weight_bits)})


class PartitionUnit(wiring.Component):
    """Stably partitions segments of a lane's in-bag lists by per-row go-left bits.

    ``decisions`` writes go-left bits (one row per cycle, accepted while no entry is being
    looked up). Segments arrive on ``segment_in``, one after the other, each entry with its
    segment's bank address ``base`` and ``last`` on the segment's final entry. ``writes``
    carries the partitioned entries with their addresses: entry ``i`` of the partitioned
    segment goes to ``base + i``. ``idle`` is high when every entry taken in has been
    written. Cycles without stalls: one per entry, plus the last segment's rows going
    right, plus one per segment that follows the one before without a gap (the go-left
    bit is read, then registered, before an entry is written or queued); a segment whose
    predecessor had more rows going right than it has waits for the difference.

    Parameters
    ----------
    max_rows : int
        Rows of the dataset (go-left memory depth), 2 to 2**20.
    max_segment : int or None
        Longest segment (the queue of rows going right holds this many entries: a segment's
        own and its predecessor's still queued never exceed it), 1 to ``max_rows``; default
        ``max_rows``. A PE passes its in-bag list length.
    max_samples : int
        Largest bootstrap weight carried with an entry, 1 to 2**20.
    code_bits : int
        Width of the codes carried with the entries, 1 to 32.
    address_bits : int
        Width of the bank addresses, 1 to 32.
    """

    def __init__(self, *, max_rows=4096, max_samples=4096, code_bits=16, address_bits=16,
                 max_segment=None):
        try:
            check_integer("max_rows", max_rows, 2, 1 << 20)
            if max_segment is None:
                max_segment = max_rows
            check_integer("max_segment", max_segment, 1, max_rows)
            check_integer("max_samples", max_samples, 1, 1 << 20)
            check_integer("code_bits", code_bits, 1, 32)
            check_integer("address_bits", address_bits, 1, 32)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        self.max_rows = max_rows
        self.max_segment = max_segment
        self.max_samples = max_samples
        self.code_bits = code_bits
        self.address_bits = address_bits
        self.row_bits = (max_rows - 1).bit_length()
        self.weight_bits = max_samples.bit_length()
        layouts = (code_bits, self.row_bits, self.weight_bits, address_bits)
        super().__init__({
            "decisions": In(stream.Signature(decision_layout(self.row_bits))),
            "segment_in": In(stream.Signature(partition_input_layout(*layouts))),
            "writes": Out(stream.Signature(partition_write_layout(*layouts))),
            "idle": Out(1),
        })

    def _memories(self, m):
        """The go-left bits (by row) and the queue of rows going right: the queue's entry
        layout and each memory's (write, read) ports."""
        m.submodules.goes_left = goes_left = Memory(shape=1, depth=self.max_rows, init=[])
        decision_write = goes_left.write_port()
        decision_read = goes_left.read_port()
        # The queue holds an entry without its last flag and with its weight less one (at
        # least 1), as the lane bank does: 40 bits for the 2,048-row PEs, one M20K in four
        # less than the entry's 42.
        stored_layout = data.StructLayout({"row": self.row_bits, "code": self.code_bits,
                                           "weight_less_one": (self.max_samples - 1).bit_length()})
        m.submodules.rights = rights = Memory(shape=stored_layout, depth=self.max_segment, init=[])
        right_write = rights.write_port()
        right_read = rights.read_port()
        return stored_layout, (decision_write, decision_read), (right_write, right_read)

    def _intake(self, m, decision_write, decision_read, stage1_valid, advance):
        """Go-left bits in while stage 1 is empty; a segment's entries looked up as stage 1
        takes them (``advance``). Intake stops after a segment's last entry until that
        segment is complete (``advance`` is low then). An entry that cannot be looked up as
        it arrives waits in a skid register, so ``segment_in.ready`` is a register: the
        chain from the held writes through the queue and the stages' moves ends here, not
        in the lane's output register. Returns (the skid register's valid, the entry
        offered to stage 1)."""
        m.d.comb += self.decisions.ready.eq(~stage1_valid)
        with m.If(self.decisions.valid & ~stage1_valid):
            m.d.comb += [decision_write.addr.eq(self.decisions.p.row),
                         decision_write.data.eq(self.decisions.p.left),
                         decision_write.en.eq(1)]
        skid_valid = Signal(name="intake_skid_valid")
        skid = Signal(self.segment_in.payload.shape(), name="intake_skid")
        incoming = Signal(self.segment_in.payload.shape())
        m.d.comb += incoming.eq(Mux(skid_valid, skid, self.segment_in.p))
        taken = advance & ~self.decisions.valid
        m.d.comb += [self.segment_in.ready.eq(~skid_valid),
                     decision_read.addr.eq(incoming.entry.row),
                     decision_read.en.eq(advance)]
        with m.If(skid_valid):
            with m.If(taken):
                m.d.sync += skid_valid.eq(0)
        with m.Elif(self.segment_in.valid & ~taken):
            m.d.sync += [skid_valid.eq(1), skid.eq(self.segment_in.p)]
        return skid_valid, incoming

    def elaborate(self, platform):
        m = Module()
        depth = self.max_segment
        count_bits = depth.bit_length()                 # 0 .. depth
        pointer_bits = max(1, (depth - 1).bit_length())

        stored_layout, (decision_write, decision_read), (right_write, right_read) = self._memories(m)

        def following(pointer):
            return Mux(pointer == depth - 1, 0, pointer + 1)

        # The queue of rows going right: those of the previous segment (complete, their
        # places known) first, then those of the current segment.
        head = Signal(pointer_bits)
        tail = Signal(pointer_bits)
        queued = Signal(count_bits)                     # rows in the queue
        queue_empty = Signal(init=1)                    # queued == 0, registered
        queue_full = Signal()                           # queued == depth, registered
        head_loaded = Signal()                          # right_read.data holds the head
        previous_left = Signal(count_bits)              # previous segment's rows still queued
        previous_waiting = Signal()                     # previous_left != 0, registered
        previous_address = Signal(self.address_bits)    # where the next of them goes
        current_lefts = Signal(count_bits)              # current segment so far (its rows
                                                        # going right: queued - previous_left)
        current_complete = Signal()                     # its last entry is in; waits for the previous

        # Writes leave through two entries (the older on ``writes``; ``can_write``: not both
        # full, a register), each with a left row and a queued row apart: the queue's block
        # RAM output reaches flip-flops through no logic (``docs/gateware.md``).
        held_layout = data.StructLayout({"address": self.address_bits, "queued": 1,
                                         "left": stored_layout, "right": stored_layout})
        held = [Signal(held_layout, name=f"held{k}") for k in range(2)]
        held_valid = [Signal(name=f"held{k}_valid") for k in range(2)]
        oldest = Signal()                               # which entry goes out first
        # A write fills the other entry while one is held, else the oldest (none or both
        # held: no write then), so the write pointer is no register of its own.
        newest = oldest ^ held_valid[0] ^ held_valid[1]
        write = Signal()
        write_address = Signal(self.address_bits)
        out = Signal(held_layout)
        out_entry = Signal(stored_layout)
        m.d.comb += [out.eq(Mux(oldest, held[1], held[0])), out_entry.eq(Mux(out.queued, out.right, out.left)),
                     self.writes.valid.eq(Mux(oldest, held_valid[1], held_valid[0])),
                     self.writes.p.address.eq(out.address),
                     self.writes.p.entry.row.eq(out_entry.row), self.writes.p.entry.code.eq(out_entry.code),
                     self.writes.p.entry.weight.eq(out_entry.weight_less_one + 1)]
        can_write = ~(held_valid[0] & held_valid[1])
        sent = self.writes.valid & self.writes.ready
        with m.If(sent):
            m.d.sync += oldest.eq(~oldest)

        # Stage 1 holds the entry whose go-left bit is being read (the read port only moves
        # with stage 1); stage 2 the entry with its bit registered, where it is written or
        # queued. Every enable and ready below is a function of registers only: not of the
        # bit read, nor of ``writes.ready``.
        stage1_valid = Signal()
        stage1 = Signal(self.segment_in.payload.shape())
        stage2_valid = Signal()
        stage2 = Signal(self.segment_in.payload.shape())
        stage2_stored = Signal(stored_layout)           # its entry as the queue holds it
        goes = Signal()

        left_moves = stage2_valid & goes & can_write
        # (the queue's counts enter as flags registered beside them: no compare of a
        # count lies between the held entries and the lane reader's enables)
        pop = previous_waiting & head_loaded & can_write & ~left_moves
        right_moves = stage2_valid & ~goes & (~queue_full | pop)
        stage2_moves = left_moves | right_moves
        last_moves = stage2_moves & stage2.entry.last
        stage1_moves = stage1_valid & (~stage2_valid | stage2_moves)

        closing = (stage1_valid & stage1.entry.last) | (stage2_valid & stage2.entry.last)
        advance = (~stage1_valid | stage1_moves) & ~closing & ~current_complete
        skid_valid, incoming = self._intake(m, decision_write, decision_read, stage1_valid, advance)
        with m.If(advance):
            m.d.sync += [stage1_valid.eq((skid_valid | self.segment_in.valid) & ~self.decisions.valid),
                         stage1.eq(incoming)]
        with m.Elif(stage1_moves):
            m.d.sync += stage1_valid.eq(0)
        with m.If(stage1_moves):
            m.d.sync += [stage2_valid.eq(1), stage2.eq(stage1), goes.eq(decision_read.data),
                         stage2_stored.row.eq(stage1.entry.row), stage2_stored.code.eq(stage1.entry.code),
                         stage2_stored.weight_less_one.eq(stage1.entry.weight - 1)]
        with m.Elif(stage2_moves):
            m.d.sync += stage2_valid.eq(0)

        # Writes: a row going left in place, else a queued row of the previous segment.
        m.d.comb += [write.eq(left_moves | pop),
                     write_address.eq(Mux(left_moves, stage2.base + current_lefts, previous_address))]
        for k in range(2):
            with m.If(write & (newest == k)):
                m.d.sync += [held_valid[k].eq(1), held[k].address.eq(write_address),
                             held[k].queued.eq(~left_moves)]
                with m.If(left_moves):
                    m.d.sync += held[k].left.eq(stage2_stored)
                with m.Else():
                    m.d.sync += held[k].right.eq(right_read.data)
            with m.Elif(sent & (oldest == k)):
                m.d.sync += held_valid[k].eq(0)

        # The queue: push at the tail, pop at the head; the read port always fetches the
        # head after this cycle's pop (a fetch of the place being written is stale).
        head_after = Mux(pop, following(head), head)
        m.d.comb += [right_read.addr.eq(head_after), right_read.en.eq(1)]
        queue_empty_after = Mux(right_moves, 0, Mux(pop, queued == 1, queue_empty))
        m.d.sync += [head.eq(head_after), head_loaded.eq(~(right_moves & (tail == head_after))),
                     queued.eq(queued + right_moves - pop), queue_empty.eq(queue_empty_after),
                     queue_full.eq(Mux(right_moves & ~pop, queued == depth - 1,
                                       Mux(pop & ~right_moves, 0, queue_full)))]
        with m.If(right_moves):
            m.d.comb += [right_write.addr.eq(tail), right_write.data.eq(stage2_stored), right_write.en.eq(1)]
            m.d.sync += tail.eq(following(tail))

        # Segment bookkeeping. A complete segment becomes the previous one as soon as the
        # previous one's rows are all written (in the cycle its last entry moves, if so):
        # then every queued row is its. Stage 2 keeps the last entry's base until then,
        # since no entry is taken in meanwhile.
        lefts_after = current_lefts + left_moves
        previous_after = previous_left - pop
        # (previous_after == 0, from compares of the register: a pop never subtracts a
        # carry chain's worth of logic on the way from ``head_loaded`` to the promotion.)
        previous_done = ~previous_waiting | ((previous_left == 1) & pop)
        promote = (last_moves | current_complete) & previous_done
        with m.If(promote):
            m.d.sync += [previous_left.eq(queued + right_moves - pop), previous_waiting.eq(~queue_empty_after),
                         previous_address.eq(stage2.base + lefts_after),
                         current_lefts.eq(0), current_complete.eq(0)]
        with m.Else():
            m.d.sync += [previous_left.eq(previous_after), current_lefts.eq(lefts_after),
                         previous_waiting.eq(Mux(pop, previous_left != 1, previous_waiting))]
            with m.If(pop):
                m.d.sync += previous_address.eq(previous_address + 1)
            with m.If(last_moves):
                m.d.sync += current_complete.eq(1)

        # (A complete segment waiting for the previous one has rows queued.)
        # ``idle`` is an AND of registers: it reaches the PE's controller through the lanes.
        m.d.comb += self.idle.eq(~skid_valid & ~stage1_valid & ~stage2_valid & queue_empty &
                                 ~held_valid[0] & ~held_valid[1])
        return m
