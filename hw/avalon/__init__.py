"""Avalon-MM interfaces: bus signatures and the DMA engines that move streams to and from memory."""

from hw.avalon.bus import read_master_signature, slave_signature, words_per_beat, write_master_signature
from hw.avalon.dma import StreamReader, StreamWriter

__all__ = ["slave_signature", "read_master_signature", "write_master_signature", "words_per_beat",
           "StreamReader", "StreamWriter"]
