"""The DMA engines of ``forest_top``: memory words to stream beats and back, over Avalon-MM.

* :class:`StreamReader` reads ``beats`` beats from byte address ``base`` into one of its
  output streams (``target`` 1 .. n), keeping up to ``fifo_depth`` reads in flight (a read
  is issued only while the word FIFO has room for every outstanding answer, so the slave's
  read latency may vary and ``readdatavalid`` is never refused).
* :class:`StreamWriter` writes the beats of one of its input streams (``target`` 1 .. n;
  0 disarms) to consecutive words from ``base``, at most ``limit`` beats: a beat beyond the
  limit is taken and discarded with the sticky ``overflow`` flag (never silently).

Both obey ``waitrequest`` (address and data held until accepted) and use single-word
transfers (no bursts). A start is refused, with a sticky flag cleared by the next accepted
start, while the engine is busy, for a base address not word-aligned, or for a bad target.
Word packing: :mod:`hw.avalon.bus`.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.wiring import In, Out
from amaranth.hdl import Shape

from hw.avalon.bus import read_master_signature, words_per_beat, write_master_signature

__all__ = ["StreamReader", "StreamWriter"]


def _start_members(targets, address_bits):
    return {"base": In(address_bits), "target": In(32), "start": In(1),
            "busy_refused": Out(1), "unaligned": Out(1), "bad_target": Out(1), "done": Out(1)}


def _check_start(m, engine, busy, data_bits, targets):
    """Decode ``start``: returns the signal that accepts it; sets the sticky refusal flags."""
    low = (data_bits // 8).bit_length() - 1
    aligned = engine.base[:low] == 0 if low else 1
    good_target = (engine.target >= 1) & (engine.target <= targets)
    accept = Signal()
    m.d.comb += accept.eq(engine.start & ~busy & aligned & good_target)
    with m.If(engine.start):
        m.d.sync += [engine.busy_refused.eq(busy), engine.unaligned.eq(~busy & ~aligned),
                     engine.bad_target.eq(~busy & aligned & ~good_target)]
    return accept


class StreamReader(wiring.Component):
    """Memory to streams: ``out1`` .. ``outN`` carry ``layouts[0]`` .. ``layouts[N-1]``.

    Ports: ``bus`` (Avalon-MM read master), ``base``, ``beats``, ``target``, ``start``;
    ``busy``, ``delivered`` (beats of the running or last job), ``done`` (one-cycle pulse),
    sticky ``busy_refused``, ``unaligned``, ``bad_target``.
    """

    def __init__(self, layouts, *, address_bits=32, data_bits=32, fifo_depth=8):
        self.layouts = list(layouts)
        self.data_bits = data_bits
        self.fifo_depth = fifo_depth
        self.words = [words_per_beat(layout, data_bits) for layout in self.layouts]
        members = {"bus": Out(read_master_signature(address_bits, data_bits)), "beats": In(32),
                   "busy": Out(1), "delivered": Out(32),
                   **_start_members(len(self.layouts), address_bits)}
        for index, layout in enumerate(self.layouts):
            members[f"out{index + 1}"] = Out(stream.Signature(layout))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        bus, data_bits, depth = self.bus, self.data_bits, self.fifo_depth
        # One word more than the reads in flight: the buffered FIFO's ``level`` counts its
        # output register, but it takes a word only while its inner FIFO (``depth`` words
        # here) has room. Built ``depth`` deep, with 2 reads in flight an answer arriving
        # while the inner word had not yet moved to the empty output register was dropped.
        m.submodules.fifo = fifo = SyncFIFOBuffered(width=data_bits, depth=depth + 1)
        most = max(self.words)
        target = Signal(range(len(self.layouts) + 1))
        to_issue = Signal(40)
        beats_left = Signal(32)
        outstanding = Signal(range(depth + 1))
        word = Signal(range(most + 1))
        words = Signal(range(most + 1))
        buffer = Signal(most * data_bits)
        full = Signal()                 # the beat in ``buffer`` is complete and offered

        accept = _check_start(m, self, self.busy, data_bits, len(self.layouts))
        with m.If(accept):
            m.d.sync += [bus.address.eq(self.base), target.eq(self.target), beats_left.eq(self.beats),
                         self.delivered.eq(0), word.eq(0), full.eq(0),
                         self.busy.eq(self.beats != 0), self.done.eq(self.beats == 0)]
            with m.Switch(self.target):
                for index, count in enumerate(self.words):
                    with m.Case(index + 1):
                        m.d.sync += [to_issue.eq(self.beats * count), words.eq(count)]
        with m.Else():
            m.d.sync += self.done.eq(0)

        # Reads: only while every answer in flight has a place in the FIFO.
        m.d.comb += bus.read.eq(self.busy & (to_issue != 0) & (outstanding + fifo.level < depth))
        issued = bus.read & ~bus.waitrequest
        answered = bus.readdatavalid & (outstanding != 0)
        with m.If(issued):
            m.d.sync += [bus.address.eq(bus.address + data_bits // 8), to_issue.eq(to_issue - 1)]
        m.d.sync += outstanding.eq(outstanding + issued - answered)
        m.d.comb += [fifo.w_en.eq(answered), fifo.w_data.eq(bus.readdata)]

        # Words to beats.
        m.d.comb += fifo.r_en.eq(self.busy & ~full)
        with m.If(fifo.r_en & fifo.r_rdy):
            with m.Switch(word):
                for index in range(most):
                    with m.Case(index):
                        m.d.sync += buffer[index * data_bits:(index + 1) * data_bits].eq(fifo.r_data)
            with m.If(word + 1 == words):
                m.d.sync += [word.eq(0), full.eq(1)]
            with m.Else():
                m.d.sync += word.eq(word + 1)
        for index, layout in enumerate(self.layouts):
            out = getattr(self, f"out{index + 1}")
            m.d.comb += [out.valid.eq(full & (target == index + 1)),
                         out.payload.eq(buffer[:Shape.cast(layout).width])]
            with m.If(out.valid & out.ready):
                m.d.sync += [full.eq(0), beats_left.eq(beats_left - 1),
                             self.delivered.eq(self.delivered + 1)]
                with m.If(beats_left == 1):
                    m.d.sync += [self.busy.eq(0), self.done.eq(1)]
        return m


class StreamWriter(wiring.Component):
    """Streams to memory: ``in1`` .. ``inN`` carry ``layouts[0]`` .. ``layouts[N-1]``.

    Ports: ``bus`` (Avalon-MM write master), ``base``, ``limit``, ``target`` (0 disarms),
    ``start``; ``armed`` (the target stream is taken), ``busy`` (a beat's words are being
    written), ``written`` (beats written in full), ``done`` (pulse: ``written`` reached
    ``limit``), sticky ``overflow``, ``busy_refused``, ``unaligned``, ``bad_target``.
    """

    def __init__(self, layouts, *, address_bits=32, data_bits=32):
        self.layouts = list(layouts)
        self.data_bits = data_bits
        self.words = [words_per_beat(layout, data_bits) for layout in self.layouts]
        members = {"bus": Out(write_master_signature(address_bits, data_bits)), "limit": In(32),
                   "armed": Out(1), "busy": Out(1), "written": Out(32), "overflow": Out(1),
                   **_start_members(len(self.layouts), address_bits)}
        for index, layout in enumerate(self.layouts):
            members[f"in{index + 1}"] = In(stream.Signature(layout))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        bus, data_bits = self.bus, self.data_bits
        most = max(self.words)
        target = Signal(range(len(self.layouts) + 1))
        taken = Signal(32)              # beats taken (written, being written or discarded)
        limit = Signal(32)
        left = Signal(range(most + 1))
        buffer = Signal(most * data_bits)

        disarm = self.start & (self.target == 0) & ~self.busy
        accept = _check_start(m, self, self.busy, data_bits, len(self.layouts))
        m.d.sync += self.done.eq(0)
        with m.If(disarm):
            m.d.sync += [self.armed.eq(0), target.eq(0), self.bad_target.eq(0)]
        with m.Elif(accept):
            m.d.sync += [bus.address.eq(self.base), target.eq(self.target), limit.eq(self.limit),
                         self.armed.eq(1), taken.eq(0), self.written.eq(0), self.overflow.eq(0)]

        m.d.comb += [bus.write.eq(self.busy), bus.writedata.eq(buffer[:data_bits])]
        with m.If(bus.write & ~bus.waitrequest):
            m.d.sync += [bus.address.eq(bus.address + data_bits // 8), buffer.eq(buffer >> data_bits),
                         left.eq(left - 1)]
            with m.If(left == 1):
                m.d.sync += [self.busy.eq(0), self.written.eq(self.written + 1)]
                with m.If(self.written + 1 == limit):
                    m.d.sync += self.done.eq(1)
        for index, (layout, count) in enumerate(zip(self.layouts, self.words)):
            source = getattr(self, f"in{index + 1}")
            m.d.comb += source.ready.eq(self.armed & (target == index + 1) & ~self.busy & ~self.start)
            with m.If(source.valid & source.ready):
                m.d.sync += taken.eq(taken + 1)
                with m.If(taken < limit):
                    m.d.sync += [buffer.eq(source.payload.as_value()), left.eq(count), self.busy.eq(1)]
                with m.Else():
                    m.d.sync += self.overflow.eq(1)
        return m
