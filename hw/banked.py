"""A deep memory split into banks, read in two registered cycles.

A memory of thousands of block RAMs (the inference engine's node memory: 128 trees of
2,559 ctg-sized nodes are about 1,000 M20K) read in one cycle ends in a wide multiplexer
over every block's output, spread across the chip: on the ECP5 proxy that read alone took
12 ns. Here the memory is cut into banks of ``bank_depth`` words; a read addresses every
bank (cycle 1), registers each bank's word as it leaves its RAM (cycle 2), and the word of
the addressed bank is selected from those registers (combinational, for the reader to
register). One write port writes one word per cycle.
"""

from amaranth.hdl import Array, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.checks import bits, check_integer

__all__ = ["BankedMemory", "READ_LATENCY"]

#: Cycles from ``read_addr`` to ``read_data``.
READ_LATENCY = 2


class BankedMemory(wiring.Component):
    """``depth`` words of ``shape`` in banks of ``bank_depth`` (a power of two).

    Members
    -------
    write_addr, write_data, write_en : In
        A write of ``write_data`` at ``write_addr`` when ``write_en`` (at the clock edge).
    read_addr : In(bits(depth - 1))
        The word read; its data is on ``read_data`` ``READ_LATENCY`` cycles later.
    read_en : In(1, init=1)
        The read moves on (both its stages, together) only in cycles it is high: the word
        read in a cycle with it is on ``read_data`` after the second such cycle, and held
        until the next (a two-stage pipeline that stalls as one).
    read_data : Out(shape)
    """

    def __init__(self, *, shape, depth, bank_depth=2048):
        check_integer("depth", depth, 1, 1 << 30)
        check_integer("bank_depth", bank_depth, 1, 1 << 30)
        if bank_depth & (bank_depth - 1):
            raise ValueError(f"bank_depth must be a power of two, not {bank_depth}")
        self.shape = shape
        self.depth = depth
        self.bank_bits = bits(min(bank_depth, depth) - 1) if depth > 1 else 0
        self.banks = -(-depth // (1 << self.bank_bits))
        address_bits = bits(depth - 1)
        super().__init__({
            "write_addr": In(address_bits), "write_data": In(shape), "write_en": In(1),
            "read_addr": In(address_bits), "read_en": In(1, init=1), "read_data": Out(shape),
        })

    def elaborate(self, platform):
        m = Module()
        bank_bits = self.bank_bits
        bank_words = 1 << bank_bits
        selected = Signal(range(self.banks) if self.banks > 1 else 1)     # cycle 1's bank
        held = Signal.like(selected)                                     # cycle 2's bank
        outputs = []
        for index in range(self.banks):
            words = min(bank_words, self.depth - index * bank_words)
            memory = Memory(shape=self.shape, depth=words, init=[])
            m.submodules[f"bank_{index}"] = memory
            write, read = memory.write_port(), memory.read_port()
            in_bank = (self.write_addr >> bank_bits) == index
            m.d.comb += [write.addr.eq(self.write_addr[:bank_bits] if bank_bits else 0),
                         write.data.eq(self.write_data), write.en.eq(self.write_en & in_bank),
                         read.addr.eq(self.read_addr[:bank_bits] if bank_bits else 0),
                         read.en.eq(self.read_en)]
            output = Signal(self.shape, name=f"bank_{index}_word")
            with m.If(self.read_en):
                m.d.sync += output.eq(read.data)
            outputs.append(Value.cast(output))
        if self.banks > 1:
            with m.If(self.read_en):
                m.d.sync += [selected.eq(self.read_addr >> bank_bits), held.eq(selected)]
        m.d.comb += self.read_data.eq(Array(outputs)[held])
        return m
