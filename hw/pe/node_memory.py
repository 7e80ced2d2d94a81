"""The processing element's node memory: a banked memory whose reads see the write of
their own cycle.

``hw.banked.BankedMemory`` reads in two registered cycles, so no read ends in the
multiplexer over its block RAMs (in a one-cycle read that multiplexer fed the review's
registers: the system's path, 97.1 MHz). The PE reviews a child two cycles after the
level that wrote it (thesis mode) and reads the root right after its write, so a read must
see the write of its own cycle, as a transparent read port does: here the write's address,
enable and data are registered beside the read's address, their match is decided in the
next cycle from those registers, and the written word is taken instead of the bank's after
the banks' registers (no logic between a block RAM and its register).
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hw.banked import READ_LATENCY, BankedMemory

__all__ = ["TransparentBankedMemory", "READ_LATENCY"]


class TransparentBankedMemory(wiring.Component):
    """``BankedMemory``'s members and timing; a read also sees the write of its cycle."""

    def __init__(self, *, shape, depth, bank_depth=2048):
        self._banked = BankedMemory(shape=shape, depth=depth, bank_depth=bank_depth)
        self.shape, self.depth, self.banks = shape, depth, self._banked.banks
        super().__init__(self._banked.signature)

    def elaborate(self, platform):
        m = Module()
        m.submodules.banked = banked = self._banked
        m.d.comb += [banked.write_addr.eq(self.write_addr), banked.write_data.eq(self.write_data),
                     banked.write_en.eq(self.write_en), banked.read_addr.eq(self.read_addr),
                     banked.read_en.eq(self.read_en)]
        # The read of cycle 1 and the write of that cycle, registered together; their
        # match decided in cycle 2 (from registers) and taken with the banks' words.
        read_addr = Signal.like(self.read_addr, name="read_addr_held")
        written = Signal(self.shape, name="written")
        written_addr = Signal.like(self.write_addr, name="written_addr")
        written_en = Signal(name="written_en")
        bypass_valid = Signal(name="bypass_valid")
        bypass = Signal(self.shape, name="bypass")
        with m.If(self.read_en):
            m.d.sync += [read_addr.eq(self.read_addr), written.eq(self.write_data),
                         written_addr.eq(self.write_addr), written_en.eq(self.write_en),
                         bypass_valid.eq(written_en & (written_addr == read_addr)), bypass.eq(written)]
        m.d.comb += self.read_data.eq(Mux(bypass_valid, bypass, banked.read_data))
        return m
