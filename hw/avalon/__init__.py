"""Avalon-MM interfaces: bus signatures, the DMA engines that move streams to and from memory,
and the clock-domain crossings for a core on a clock of its own."""

from hw.avalon.bus import read_master_signature, slave_signature, words_per_beat, write_master_signature
from hw.avalon.crossing import RegisterCrossing, StreamCrossing
from hw.avalon.dma import StreamReader, StreamWriter

__all__ = ["slave_signature", "read_master_signature", "write_master_signature", "words_per_beat",
           "StreamReader", "StreamWriter", "RegisterCrossing", "StreamCrossing"]
