"""Avalon-MM models for cocotb: a memory with random waitrequest and random read latency,
and the packing of stream beats into memory words (``hw.avalon.bus``).

The bus functional models are those of ``cocotbext-avalon`` (PyPI): its master drives the
register slave, its memory model answers the DMA masters. :class:`RandomMemory` only
replaces the memory model's fixed read latency by a random one (answers stay in order)
and draws ``waitrequest`` from the testbench's generator, so a failing run is reproduced
with cocotb's seed.
"""

from amaranth.hdl import Shape
from cocotbext.avalon import AvalonMMBus, AvalonMMMemoryBFM

from hw.avalon.bus import words_per_beat
from sim.support.streams import pack, unpack

__all__ = ["SparseMemory", "RandomMemory", "beats_to_words", "words_to_beats", "SIMULATED_DDR4"]

#: The memory the simulated code store reads (``hw.code_reader``; ``make histpe``, the
#: histogram backend): 512-bit words (the Arria 10 DDR4 interface's width), at most one a
#: core cycle (6.4 GB/s at 100 MHz: a third of one DDR4-2400 x64 interface's 19.2 GB/s peak,
#: below the half of it ``sw.experiments.out_of_core`` assumes for random bursts), each
#: answered 20 to 30 core cycles after its read (200 to 300 ns at 100 MHz: an assumed
#: controller latency and clock crossing; no board has measured it).
SIMULATED_DDR4 = {"word_bits": 512, "memory_latency": (20, 30), "waitrequest_probability": 0.0}


class SparseMemory:
    """Byte-addressed memory (``read(address, length)``, ``write(address, data)``); unwritten
    bytes read as 0. Large images go in as regions (:meth:`write_region`), read whole."""

    def __init__(self):
        self.bytes = {}
        self.regions = []

    def write_region(self, address, data):
        """``data`` at ``address`` as one block (reads inside it are fast); replaces any
        region at the same address."""
        self.regions = [(base, block) for base, block in self.regions if base != address]
        self.regions.append((address, bytes(data)))

    def read(self, address, length):
        for base, block in self.regions:
            if base <= address and address + length <= base + len(block):
                return block[address - base:address - base + length]
        return bytes(self.bytes.get(address + offset, 0) for offset in range(length))

    def write(self, address, data):
        for offset, byte in enumerate(data):
            self.bytes[address + offset] = byte

    def write_words(self, address, words, word_bytes=4):
        for index, word in enumerate(words):
            self.write(address + index * word_bytes, int(word).to_bytes(word_bytes, "little"))

    def read_words(self, address, count, word_bytes=4):
        return [int.from_bytes(self.read(address + index * word_bytes, word_bytes), "little")
                for index in range(count)]


class RandomMemory(AvalonMMMemoryBFM):
    """The memory model on the master ports ``prefix`` of ``dut`` (on ``clock`` and ``reset``,
    by default ``dut.clk`` and ``dut.rst``): each cycle holds ``waitrequest`` with
    ``waitrequest_probability``; each read is answered after a latency drawn from
    ``latency`` (inclusive range, cycles), in order."""

    def __init__(self, dut, prefix, memory, rng, *, waitrequest_probability=0.3, latency=(1, 8),
                 clock=None, reset=None):
        super().__init__(AvalonMMBus.from_prefix(dut, f"{prefix}_"), dut.clk if clock is None else clock,
                         dut.rst if reset is None else reset, memory=memory)
        self.rng = rng
        self.latency = latency
        self.waitrequest_probability = waitrequest_probability
        self.set_pause_generator(iter(lambda: rng.random() < self.waitrequest_probability, None))
        self.accepted_reads = 0
        self.accepted_writes = 0
        self.waitrequest_cycles = 0

    def _queue_read_data(self, data):
        # In order: an answer comes no earlier than the one before it.
        delay = self.rng.randint(*self.latency)
        if self._read_queue:
            delay = max(1, delay - sum(entry[0] for entry in self._read_queue))
        self._read_queue.append([delay, data])
        self.accepted_reads += 1

    def write_word(self, address, data, byteenable):
        self.accepted_writes += 1
        super().write_word(address, data, byteenable)

    def _next_waitrequest(self):
        value = super()._next_waitrequest()
        self.waitrequest_cycles += int(value)
        return value


def beats_to_words(layout, beats, data_bits=32):
    """The memory words of stream beats (dicts of fields) in the format of ``hw.avalon.bus``."""
    count = words_per_beat(layout, data_bits)
    mask = (1 << data_bits) - 1
    words = []
    for beat in beats:
        value = pack(layout, beat)
        words.extend((value >> (index * data_bits)) & mask for index in range(count))
    return words


def words_to_beats(layout, words, data_bits=32):
    """Stream beats (dicts of fields) from memory words; the padding bits must be 0."""
    count = words_per_beat(layout, data_bits)
    width = Shape.cast(layout).width
    beats = []
    for start in range(0, len(words), count):
        value = sum(int(word) << (index * data_bits) for index, word in enumerate(words[start:start + count]))
        if value >> width:
            raise AssertionError(f"beat {start // count}: padding bits above bit {width} are not 0")
        beats.append(unpack(layout, value))
    return beats
