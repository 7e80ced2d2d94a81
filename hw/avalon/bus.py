"""Avalon-MM signatures (seen from the master) and the packing of stream beats into memory words.

A stream beat of ``W`` payload bits occupies ``ceil(W / data_bits)`` consecutive memory words:
payload bit ``i`` is bit ``i % data_bits`` of word ``i // data_bits`` (words little-endian in
memory, the payload's fields at the offsets of its ``StructLayout``); unused high bits of the
last word are written as 0 and ignored when read. ``docs/registers.md`` has the field offsets.
"""

from amaranth.hdl import Shape
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["slave_signature", "read_master_signature", "write_master_signature", "words_per_beat"]


def slave_signature(address_bits=8, data_bits=32):
    """A register slave: word addresses, ``readdatavalid`` for its reads, ``waitrequest``."""
    return wiring.Signature({
        "address": Out(address_bits), "read": Out(1), "write": Out(1), "writedata": Out(data_bits),
        "readdata": In(data_bits), "readdatavalid": In(1), "waitrequest": In(1),
    })


def read_master_signature(address_bits=32, data_bits=32):
    """A pipelined read master: byte addresses, variable latency (``readdatavalid``)."""
    return wiring.Signature({
        "address": Out(address_bits), "read": Out(1), "readdata": In(data_bits),
        "readdatavalid": In(1), "waitrequest": In(1),
    })


def write_master_signature(address_bits=32, data_bits=32):
    """A write master: byte addresses, one word per transfer, held while ``waitrequest``."""
    return wiring.Signature({
        "address": Out(address_bits), "write": Out(1), "writedata": Out(data_bits),
        "waitrequest": In(1),
    })


def words_per_beat(layout, data_bits=32):
    """Memory words one beat of a stream with payload ``layout`` occupies."""
    return -(-Shape.cast(layout).width // data_bits)
