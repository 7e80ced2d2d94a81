"""Clock-domain crossings of ``forest_top`` when its core runs on a clock of its own.

The bus side is the domain ``sync`` (the Avalon interfaces' clock), the core side the
domain ``core``; the two clocks are unrelated.

* :class:`RegisterCrossing`: register accesses from the bus to the system's register bus,
  by a two-phase (toggle) handshake: the bus side latches address, data and kind, then
  toggles ``request``; the core side sees the toggle through a two-flip-flop synchroniser,
  performs the access on its ``csr`` (read data the core cycle after), keeps the answer in a
  register and toggles ``answer`` back; the bus side sees that toggle through its own
  synchroniser and only then ends the access (``done``). Address, data and answer are
  stable while the other side samples them (they change only before their toggle).
* :class:`StreamCrossing`: a stream through an ``AsyncFIFO`` (first word fall-through), with
  the write side's ``level`` (entries not yet taken by the reader, as the write side sees
  it: 0 only once the reader has taken every entry).
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.fifo import AsyncFIFO
from amaranth.lib.wiring import In, Out

__all__ = ["RegisterCrossing", "StreamCrossing"]


class RegisterCrossing(wiring.Component):
    """Register accesses from domain ``sync`` to the register bus ``csr`` in domain ``core``.

    Bus side (``sync``): ``address``, ``write``, ``write_data``, ``read`` held until ``done``
    (a one-cycle pulse: the access is performed, a read's word is in ``read_data`` until the
    next access). Core side (``core``): ``csr``, a register bus with read data the cycle after
    ``read`` (``hw.system.csr_signature``), given as ``csr_signature``.
    """

    def __init__(self, csr_signature, address_bits=8, data_bits=32):
        self.data_bits = data_bits
        super().__init__({
            "address": In(address_bits), "read": In(1), "write": In(1), "write_data": In(data_bits),
            "read_data": Out(data_bits), "done": Out(1), "csr": Out(csr_signature),
        })

    def elaborate(self, platform):
        m = Module()
        # Bus side: latch the access, toggle the request, wait for the answer's toggle.
        address = Signal.like(self.address)
        write_data = Signal.like(self.write_data)
        is_read = Signal()
        request = Signal()
        pending = Signal()
        answer = Signal()               # core side: toggled once the access is performed
        answer_seen = Signal()
        m.submodules.answer_sync = FFSynchronizer(answer, answer_seen, o_domain="sync")
        m.d.comb += self.done.eq(pending & (answer_seen == request))
        with m.If(self.done):
            m.d.sync += pending.eq(0)
        with m.Elif(~pending & (self.read | self.write)):
            m.d.sync += [address.eq(self.address), write_data.eq(self.write_data), is_read.eq(self.read),
                         request.eq(~request), pending.eq(1)]

        # Core side: one access per toggle, the answer kept, the toggle returned a cycle later.
        request_seen = Signal()
        m.submodules.request_sync = FFSynchronizer(request, request_seen, o_domain="core")
        handled = Signal()
        reading = Signal()
        csr = self.csr
        start = Signal()
        m.d.comb += [start.eq((request_seen != handled) & ~reading),
                     csr.address.eq(address), csr.write_data.eq(write_data),
                     csr.read.eq(start & is_read), csr.write.eq(start & ~is_read)]
        with m.If(start):
            m.d.core += [handled.eq(request_seen), reading.eq(1)]
        with m.If(reading):
            m.d.core += [self.read_data.eq(csr.read_data), answer.eq(handled), reading.eq(0)]
        return m


class StreamCrossing(wiring.Component):
    """A stream from domain ``w_domain`` to ``r_domain`` through an ``AsyncFIFO`` of
    ``depth`` entries; ``level`` (in ``w_domain``) counts the entries not yet taken."""

    def __init__(self, layout, *, w_domain, r_domain, depth=8):
        self.w_domain, self.r_domain, self.depth = w_domain, r_domain, depth
        super().__init__({"i": In(stream.Signature(layout)), "o": Out(stream.Signature(layout)),
                          "level": Out(range(depth + 1))})

    def elaborate(self, platform):
        m = Module()
        width = len(self.i.payload.as_value())
        m.submodules.fifo = fifo = AsyncFIFO(width=width, depth=self.depth, w_domain=self.w_domain,
                                             r_domain=self.r_domain)
        m.d.comb += [fifo.w_data.eq(self.i.payload), fifo.w_en.eq(self.i.valid), self.i.ready.eq(fifo.w_rdy),
                     self.o.payload.eq(fifo.r_data), self.o.valid.eq(fifo.r_rdy), fifo.r_en.eq(self.o.ready),
                     self.level.eq(fifo.w_level)]
        return m
