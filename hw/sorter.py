"""Presorting unit: a stable LSD radix sort of one feature's codes over the whole dataset.

The golden model's ``presorted order`` of a feature is ``np.argsort(codes, kind="stable")``:
rows in ascending code order, equal codes in ascending row order. This block produces
exactly that, once per feature and dataset, so that no tree ever sorts again.

Why a radix sort (see ``docs/sorter.md`` for the numbers): the keys are short unsigned
codes, so ``ceil(code_bits / radix_bits)`` counting passes sort ``n`` rows in about
``n * (passes + 2) + passes * 2**radix_bits`` cycles with no comparator at all, against
``n * log2(n)`` cycles for a FIFO merge sorter and ``log2(n)**2 / 2`` comparator stages
of ``n / 2`` comparators for a bitonic network. An LSD radix sort is stable by
construction, which gives the row-index tie-break for free.
"""

from types import SimpleNamespace

from amaranth.hdl import Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.checks import check_integer, refuse_construction
from hw.skid import SkidOutput

__all__ = ["RadixSorter", "code_layout", "sorted_row_layout"]


def code_layout(code_bits):
    """Payload of the input: one row's code, rows in row order; ``last`` on the final row."""
    return data.StructLayout({"code": code_bits, "last": 1})


def sorted_row_layout(code_bits, row_bits):
    """Payload of the output: a row index and its code, in sorted order."""
    return data.StructLayout({"row": row_bits, "code": code_bits, "last": 1})


class RadixSorter(wiring.Component):
    """Stable LSD radix sort of up to ``max_rows`` codes.

    Phases: clear the digit counters (``2**radix_bits`` cycles, also after a reset, since
    memories keep their contents), load the rows while counting the first digit (one row
    per cycle), then per digit turn counts into offsets (``2**radix_bits`` cycles) and
    scatter every row to its place (one row per cycle, counting the next digit on the
    way), and finally stream the sorted rows out (one per cycle when not stalled).

    More than ``max_rows`` rows: the input is drained up to its ``last`` row, nothing is
    emitted, and ``overflow`` stays high until the next sort starts.

    Parameters
    ----------
    max_rows : int
        Capacity in rows (2 to 2**20).
    code_bits : int
        Width of a code (1 to 32).
    radix_bits : int
        Digit width of one counting pass (1 to 12); ``2**radix_bits`` counters.

    Members
    -------
    codes : In(stream.Signature(code_layout(code_bits)))
        The feature's codes in row order.
    sorted : Out(stream.Signature(sorted_row_layout(code_bits, row_bits)))
        (row, code) in ascending code order, ties in ascending row order.
    busy : Out(1)
        A sort is under way (from the first row in to the last row out).
    overflow : Out(1)
        The last input had more than ``max_rows`` rows.
    """

    def __init__(self, *, max_rows=4096, code_bits=16, radix_bits=8):
        try:
            check_integer("max_rows", max_rows, 2, 1 << 20)
            check_integer("code_bits", code_bits, 1, 32)
            check_integer("radix_bits", radix_bits, 1, 12)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        self.max_rows = max_rows
        self.code_bits = code_bits
        self.radix_bits = min(radix_bits, code_bits)
        self.passes = -(-code_bits // self.radix_bits)
        self.row_bits = (max_rows - 1).bit_length()
        super().__init__({
            "codes": In(stream.Signature(code_layout(code_bits))),
            "sorted": Out(stream.Signature(sorted_row_layout(code_bits, self.row_bits))),
            "busy": Out(1),
            "overflow": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        s = self._datapath(m)
        self._sorted_output(m, s)
        with m.FSM(init="Clear counters") as fsm:
            self._clear_counters(m, s)
            self._load_rows(m, s)
            self._finish_loading(m, s)
            self._turn_counts_into_offsets(m, s)
            self._scatter_rows(m, s)
            self._emit_sorted_rows(m, s)
        m.d.comb += self.busy.eq(~fsm.ongoing("Load rows and count first digit") | (s.row_count != 0) |
                                 s.output.valid | s.output.skid_valid)
        return m

    def _datapath(self, m):
        """The memories, registers and digit selectors every phase shares."""
        radix = 1 << self.radix_bits
        entry_layout = data.StructLayout({"code": self.code_bits, "row": self.row_bits})
        count_shape = unsigned(self.row_bits + 1)

        # Two row buffers (ping-pong between passes) and two digit-counter memories (one
        # holds the offsets of the current pass while the other counts the next digit).
        # Read ports are transparent, so a counter read in the cycle it is written sees the
        # write (the two updates written after a read are forwarded to it, below).
        buffer_write, buffer_read = [], []
        counter_write, counter_read = [], []
        for index in range(2):
            buffer = Memory(shape=entry_layout, depth=self.max_rows, init=[])
            counter = Memory(shape=count_shape, depth=radix, init=[])
            m.submodules[f"buffer{index}"] = buffer
            m.submodules[f"counter{index}"] = counter
            buffer_write.append(buffer.write_port())
            buffer_read.append(buffer.read_port(transparent_for=(buffer_write[-1],)))
            counter_write.append(counter.write_port())
            counter_read.append(counter.read_port(transparent_for=(counter_write[-1],)))

        row_count = Signal(self.row_bits + 1)       # rows loaded
        index = Signal(max(self.row_bits + 1, self.radix_bits + 1))
        digit_pass = Signal(range(self.passes + 1))
        parity = Signal()                           # digit_pass % 2
        running_sum = Signal(count_shape)

        # The digits every phase needs, computed once from the entries they belong to. A
        # scatter's source row leaves its buffer's block RAM into a register of its own
        # (``fetched``) before the pass's buffer is selected and its digits taken: a
        # one-cycle path from a block RAM's output through the select and the digit's
        # multiplexer set the system's clock (docs/timing_history.md).
        fetched_valid = Signal()
        fetched = [Signal(entry_layout, name=f"fetched{index}") for index in range(2)]
        m.d.sync += [register.eq(read.data) for register, read in zip(fetched, buffer_read)]
        source_entry = Signal(entry_layout)         # the row read from this pass's source
        m.d.comb += source_entry.eq(Mux(parity, fetched[1], fetched[0]))
        load_digit = self._digit(m, self.codes.p.code, 0)
        scatter_digit = self._digit(m, source_entry.code, digit_pass)
        following_digit = self._digit(m, source_entry.code, digit_pass + 1)

        # Pipeline registers: the read issued last cycle and what it was for; in a scatter
        # the source row is registered (``staged``) before its digits address the counters,
        # so no path runs from a buffer's block RAM into a counter's.
        staged_valid = Signal()
        staged_entry = Signal(entry_layout)
        staged_digit = Signal(self.radix_bits)
        staged_next_digit = Signal(self.radix_bits)
        stage1_valid = Signal()
        stage1_digit = Signal(self.radix_bits)
        stage2_valid = Signal()
        stage2_entry = Signal(entry_layout)
        stage2_digit = Signal(self.radix_bits)
        stage2_next_digit = Signal(self.radix_bits)
        # A counter's read is registered as it leaves the block RAM (``held``), its
        # incremented value registered again (``stage3``) and written a cycle later, so no
        # path runs from a counter's block RAM through the adder, nor back into it. The
        # read misses the updates of the two rows before it (written after it was made):
        # the one in stage 3 and the one written in the cycle before are taken instead
        # (``forward_*``, decided from registered digits); an update written in the read's
        # own cycle reaches it through the transparent port.
        held_valid = Signal()
        held_entry = Signal(entry_layout)
        held_digit = Signal(self.radix_bits)
        held_count = Signal(count_shape)
        held_next_digit = Signal(self.radix_bits)
        held_next_count = Signal(count_shape)
        forward = {name: Signal(name=f"forward_{name}")
                   for name in ("stage3", "written", "next_stage3", "next_written")}
        stage3_valid = Signal()
        stage3_entry = Signal(entry_layout)
        stage3_position = Signal(count_shape)
        stage3_digit = Signal(self.radix_bits)
        stage3_count = Signal(count_shape)
        stage3_next_digit = Signal(self.radix_bits)
        stage3_next_count = Signal(count_shape)
        written_count = Signal(count_shape)         # stage 3's counts, a cycle later
        written_next_count = Signal(count_shape)
        m.d.sync += [fetched_valid.eq(0), staged_valid.eq(0), stage1_valid.eq(0), stage2_valid.eq(0),
                     held_valid.eq(0), stage3_valid.eq(0),
                     written_count.eq(stage3_count), written_next_count.eq(stage3_next_count)]

        return SimpleNamespace(
            radix=radix, buffer_write=buffer_write, buffer_read=buffer_read,
            counter_write=counter_write, counter_read=counter_read,
            row_count=row_count, index=index, digit_pass=digit_pass, parity=parity,
            running_sum=running_sum, source_entry=source_entry, load_digit=load_digit,
            scatter_digit=scatter_digit, following_digit=following_digit, fetched_valid=fetched_valid,
            staged_valid=staged_valid, staged_entry=staged_entry, staged_digit=staged_digit,
            staged_next_digit=staged_next_digit,
            stage1_valid=stage1_valid, stage1_digit=stage1_digit,
            stage2_valid=stage2_valid, stage2_entry=stage2_entry,
            stage2_digit=stage2_digit, stage2_next_digit=stage2_next_digit,
            held_valid=held_valid, held_entry=held_entry, held_digit=held_digit,
            held_count=held_count, held_next_digit=held_next_digit,
            held_next_count=held_next_count, forward=forward,
            written_count=written_count, written_next_count=written_next_count,
            stage3_valid=stage3_valid, stage3_entry=stage3_entry, stage3_position=stage3_position,
            stage3_digit=stage3_digit, stage3_count=stage3_count,
            stage3_next_digit=stage3_next_digit, stage3_next_count=stage3_next_count)

    def _digit(self, m, code, which):
        """Digit ``which`` (a constant or a signal) of ``code``."""
        result = Signal(self.radix_bits)
        if isinstance(which, int):
            m.d.comb += result.eq(code >> (which * self.radix_bits))
            return result
        with m.Switch(which):
            for p in range(self.passes):
                with m.Case(p):
                    m.d.comb += result.eq(code >> (p * self.radix_bits))
        return result

    def _hold(self, m, s, digit, count, next_digit=None, next_count=None):
        """A counter read (``count``, for ``digit``) leaves the block RAM into ``held``,
        with whether the rows in stage 3 and just written update the same counter."""
        m.d.sync += [s.held_valid.eq(1), s.held_digit.eq(digit), s.held_count.eq(count),
                     s.forward["stage3"].eq(s.held_valid & (s.held_digit == digit)),
                     s.forward["written"].eq(s.stage3_valid & (s.stage3_digit == digit))]
        if next_digit is not None:
            m.d.sync += [s.held_next_digit.eq(next_digit), s.held_next_count.eq(next_count),
                         s.forward["next_stage3"].eq(s.held_valid & (s.held_next_digit == next_digit)),
                         s.forward["next_written"].eq(s.stage3_valid & (s.stage3_next_digit == next_digit))]

    @staticmethod
    def _latest(s, held, in_stage3, stage3, just_written, written):
        """A held counter value, or the newer one of the row ahead or the row before it."""
        return Mux(s.forward[in_stage3], stage3, Mux(s.forward[just_written], written, held))

    def _count_loaded_digit(self, m, s):
        """Counting during the load: the counter read last cycle is held, its latest value
        plus one registered in stage 3 and written from there."""
        with m.If(s.stage1_valid):
            self._hold(m, s, s.stage1_digit, s.counter_read[0].data)
        current = self._latest(s, s.held_count, "stage3", s.stage3_count, "written", s.written_count)
        with m.If(s.held_valid):
            m.d.sync += [s.stage3_valid.eq(1), s.stage3_digit.eq(s.held_digit),
                         s.stage3_count.eq(current + 1)]
        with m.If(s.stage3_valid):
            m.d.comb += [s.counter_write[0].addr.eq(s.stage3_digit),
                         s.counter_write[0].data.eq(s.stage3_count),
                         s.counter_write[0].en.eq(1)]

    def _clear_counters(self, m, s):
        with m.State("Clear counters"):
            for port in s.counter_write:
                m.d.comb += [port.addr.eq(s.index), port.data.eq(0), port.en.eq(1)]
            m.d.sync += s.index.eq(s.index + 1)
            with m.If(s.index == s.radix - 1):
                m.d.sync += [s.index.eq(0), s.row_count.eq(0)]
                m.next = "Load rows and count first digit"

    def _load_rows(self, m, s):
        with m.State("Load rows and count first digit"):
            m.d.comb += self.codes.ready.eq(1)
            code = self.codes.p.code
            with m.If(self.codes.valid):
                with m.If(s.row_count < self.max_rows):
                    m.d.comb += [
                        s.buffer_write[0].addr.eq(s.row_count),
                        s.buffer_write[0].data.code.eq(code),
                        s.buffer_write[0].data.row.eq(s.row_count),
                        s.buffer_write[0].en.eq(1),
                        s.counter_read[0].addr.eq(s.load_digit),
                    ]
                    m.d.sync += [s.stage1_valid.eq(1), s.stage1_digit.eq(s.load_digit),
                                 s.row_count.eq(s.row_count + 1)]
                with m.Else():
                    m.d.sync += self.overflow.eq(1)
                with m.If(self.codes.p.last):
                    m.next = "Finish loading"
            with m.If(self.codes.valid & (s.row_count == 0)):
                m.d.sync += self.overflow.eq(0)
            self._count_loaded_digit(m, s)

    def _finish_loading(self, m, s):
        with m.State("Finish loading"):
            self._count_loaded_digit(m, s)
            m.d.sync += [s.index.eq(0), s.digit_pass.eq(0), s.parity.eq(0), s.running_sum.eq(0)]
            # The last count is written in the cycle that leaves (stage 3).
            with m.If(~s.stage1_valid & ~s.held_valid):
                with m.If(self.overflow):
                    m.next = "Clear counters"
                with m.Else():
                    m.next = "Turn counts into offsets"

    def _turn_counts_into_offsets(self, m, s):
        with m.State("Turn counts into offsets"):
            # Exclusive prefix sum over the counters of this pass, in place; the other
            # counter memory is zeroed for the next digit's count. A count leaves the
            # block RAM into ``held`` before the sum adds it (no block RAM -> adder path).
            for p in range(2):
                with m.If(s.parity == p):
                    m.d.comb += s.counter_read[p].addr.eq(s.index)
                    with m.If(s.stage1_valid):
                        m.d.sync += [s.held_valid.eq(1), s.held_digit.eq(s.stage1_digit),
                                     s.held_count.eq(s.counter_read[p].data)]
                    with m.If(s.held_valid):
                        m.d.comb += [s.counter_write[p].addr.eq(s.held_digit),
                                     s.counter_write[p].data.eq(s.running_sum),
                                     s.counter_write[p].en.eq(1)]
                        m.d.sync += s.running_sum.eq(s.running_sum + s.held_count)
                    m.d.comb += [s.counter_write[1 - p].addr.eq(s.index),
                                 s.counter_write[1 - p].data.eq(0),
                                 s.counter_write[1 - p].en.eq(s.index < s.radix)]
            with m.If(s.index < s.radix):
                m.d.sync += [s.stage1_valid.eq(1), s.stage1_digit.eq(s.index), s.index.eq(s.index + 1)]
            with m.Elif(~s.stage1_valid & ~s.held_valid):
                m.d.sync += s.index.eq(0)
                m.next = "Scatter rows by digit"

    def _scatter_rows(self, m, s):
        with m.State("Scatter rows by digit"):
            for p in range(2):
                with m.If(s.parity == p):
                    source_read = s.buffer_read[p]
                    target_write = s.buffer_write[1 - p]
                    offsets_read, offsets_write = s.counter_read[p], s.counter_write[p]
                    next_read, next_write = s.counter_read[1 - p], s.counter_write[1 - p]
                    # Stage 0: read the next row of the source buffer.
                    m.d.comb += source_read.addr.eq(s.index)
                    with m.If(s.index < s.row_count):
                        m.d.sync += [s.stage1_valid.eq(1), s.index.eq(s.index + 1)]
                    # Stage 1: the row leaves the block RAM (``fetched``); then register
                    # it and its two digits.
                    with m.If(s.stage1_valid):
                        m.d.sync += s.fetched_valid.eq(1)
                    with m.If(s.fetched_valid):
                        m.d.sync += [s.staged_valid.eq(1), s.staged_entry.eq(s.source_entry),
                                     s.staged_digit.eq(s.scatter_digit),
                                     s.staged_next_digit.eq(s.following_digit)]
                    # Stage 1b: read its offset and its next-digit counter.
                    m.d.comb += [offsets_read.addr.eq(s.staged_digit),
                                 next_read.addr.eq(s.staged_next_digit)]
                    with m.If(s.staged_valid):
                        m.d.sync += [s.stage2_valid.eq(1), s.stage2_entry.eq(s.staged_entry),
                                     s.stage2_digit.eq(s.staged_digit),
                                     s.stage2_next_digit.eq(s.staged_next_digit)]
                    # Stage 2: the two counters leave the block RAMs into ``held``.
                    with m.If(s.stage2_valid):
                        self._hold(m, s, s.stage2_digit, offsets_read.data,
                                   s.stage2_next_digit, next_read.data)
                        m.d.sync += s.held_entry.eq(s.stage2_entry)
                    # Held: the row's place and its next digit's count, registered.
                    position = self._latest(s, s.held_count, "stage3", s.stage3_count,
                                            "written", s.written_count)
                    next_count = self._latest(s, s.held_next_count, "next_stage3", s.stage3_next_count,
                                              "next_written", s.written_next_count)
                    with m.If(s.held_valid):
                        m.d.sync += [s.stage3_valid.eq(1), s.stage3_entry.eq(s.held_entry),
                                     s.stage3_position.eq(position),
                                     s.stage3_digit.eq(s.held_digit),
                                     s.stage3_count.eq(position + 1),
                                     s.stage3_next_digit.eq(s.held_next_digit),
                                     s.stage3_next_count.eq(next_count + 1)]
                    # Stage 3: place the row, bump its offset and count the next digit.
                    with m.If(s.stage3_valid):
                        m.d.comb += [
                            target_write.addr.eq(s.stage3_position),
                            target_write.data.eq(s.stage3_entry),
                            target_write.en.eq(1),
                            offsets_write.addr.eq(s.stage3_digit),
                            offsets_write.data.eq(s.stage3_count),
                            offsets_write.en.eq(1),
                            next_write.addr.eq(s.stage3_next_digit),
                            next_write.data.eq(s.stage3_next_count),
                            next_write.en.eq(1),
                        ]
            # The last row is placed in the cycle that leaves (stage 3).
            with m.If((s.index == s.row_count) & ~s.stage1_valid & ~s.fetched_valid & ~s.staged_valid &
                      ~s.stage2_valid & ~s.held_valid):
                m.d.sync += [s.index.eq(0), s.running_sum.eq(0),
                             s.digit_pass.eq(s.digit_pass + 1), s.parity.eq(~s.parity)]
                with m.If(s.digit_pass == self.passes - 1):
                    m.next = "Emit sorted rows"
                with m.Else():
                    m.next = "Turn counts into offsets"

    def _sorted_output(self, m, s):
        """``sorted`` from an output register with a skid register behind it
        (:class:`hw.skid.SkidOutput`), outside the phases so that it drains after the last
        row's read: no path runs from the buffer's block RAM to the consumer (in the
        forest trainer, the label bank's read address: docs/timing_history.md)."""
        s.output = SkidOutput(self.sorted.p.shape(), name="sorted_out")
        s.emit_valid = Signal()
        s.emit_payload = Signal(self.sorted.p.shape())
        s.emit_moves = s.output.feed(m, s.emit_valid, s.emit_payload, self.sorted.ready)
        m.d.comb += [self.sorted.valid.eq(s.output.valid), self.sorted.p.eq(s.output.payload)]

    def _emit_sorted_rows(self, m, s):
        with m.State("Emit sorted rows"):
            # The read port's data enters the output registers; its enable only moves when
            # the row read moves into them, so the row holds still while they are full.
            read_valid = Signal()
            read_last = Signal()
            final = self.passes % 2
            read = s.buffer_read[final]
            advance = ~read_valid | s.emit_moves
            m.d.comb += [
                read.addr.eq(s.index), read.en.eq(advance),
                s.emit_valid.eq(read_valid),
                s.emit_payload.row.eq(read.data.row),
                s.emit_payload.code.eq(read.data.code),
                s.emit_payload.last.eq(read_last),
            ]
            with m.If(advance):
                with m.If(s.index < s.row_count):
                    m.d.sync += [read_valid.eq(1), read_last.eq(s.index + 1 == s.row_count),
                                 s.index.eq(s.index + 1)]
                with m.Else():
                    m.d.sync += [read_valid.eq(0), s.index.eq(0)]
                    m.next = "Clear counters"
