"""cocotb drivers for ``amaranth.lib.stream`` ports, with random valid/ready stalls.

A stream port ``name`` of an Amaranth component appears in its Verilog as
``name__valid``, ``name__ready`` and ``name__payload`` (the struct payload flattened,
first field in the low bits). :class:`StreamSource` drives such an input,
:class:`StreamSink` consumes such an output; both take the payload's
``amaranth.lib.data.StructLayout`` so tests speak in field names.

Timing discipline (the same for every driver): inputs are changed right after a rising
edge, and the handshake is sampled in the read-only phase before the next edge, when all
combinational paths (ready may depend on valid) have settled.
"""

import random
from collections import deque

from amaranth.hdl import Shape
from amaranth.lib import data
from cocotb.triggers import ReadOnly, RisingEdge

__all__ = ["pack", "unpack", "StreamSource", "StreamSink"]


def pack(layout, fields):
    """Flatten a dict of field values into the integer of a struct payload. A field whose
    shape is itself a layout takes a dict (struct) or a list (array) of its fields, or its
    packed integer."""
    value = 0
    for name, field in layout:
        width = Shape.cast(field.shape).width
        if isinstance(field.shape, data.Layout) and isinstance(fields[name], (dict, list, tuple)):
            value |= pack(field.shape, fields[name]) << field.offset
            continue
        field_value = int(fields[name])
        if not 0 <= field_value < (1 << width):
            raise ValueError(f"field {name!r} value {field_value} does not fit in {width} bits")
        value |= field_value << field.offset
    return value


def _structured(shape):
    """Whether a field is split further: a struct, or an array of structs (an array of
    plain numbers, like class counts, stays one integer)."""
    return isinstance(shape, data.StructLayout) or (
        isinstance(shape, data.ArrayLayout) and isinstance(shape.elem_shape, data.Layout))


def unpack(layout, value):
    """Split the integer of a struct payload into a dict of field values (a struct field
    into a dict of its own, an array of structs into a list of dicts)."""
    value = int(value)
    fields = {}
    for name, field in layout:
        bits = (value >> field.offset) & ((1 << Shape.cast(field.shape).width) - 1)
        fields[name] = unpack(field.shape, bits) if _structured(field.shape) else bits
    if isinstance(layout, data.ArrayLayout):
        return [fields[index] for index in range(layout.length)]
    return fields


class StreamSource:
    """Drives a stream input of the DUT from a queue of payload dicts.

    ``idle_probability`` is the chance, each cycle, of holding valid low although data
    is waiting (valid never depends on ready; payload is held until the transfer).
    """

    def __init__(self, dut, name, layout, clock, rng=None, idle_probability=0.0):
        self.valid = getattr(dut, f"{name}__valid")
        self.ready = getattr(dut, f"{name}__ready")
        self.payload = getattr(dut, f"{name}__payload")
        self.layout = layout
        self.clock = clock
        self.rng = rng or random.Random()
        self.idle_probability = idle_probability
        self.queue = deque()
        self.sent = 0
        self._busy = False
        self.valid.value = 0

    def send(self, fields):
        self.queue.append(fields)

    def clear(self):
        """Forget queued data and drop valid (used around a reset)."""
        self.queue.clear()
        self._busy = False
        self.valid.value = 0

    @property
    def idle(self):
        return not self.queue and not self._busy

    async def run(self):
        while True:
            if not self._busy and self.queue and self.rng.random() >= self.idle_probability:
                self.payload.value = pack(self.layout, self.queue[0])
                self.valid.value = 1
                self._busy = True
            await ReadOnly()
            fired = self._busy and int(self.valid.value) and int(self.ready.value)
            await RisingEdge(self.clock)
            if fired and self._busy:
                self.queue.popleft()
                self.sent += 1
                self._busy = False
                self.valid.value = 0


class StreamSink:
    """Consumes a stream output of the DUT into ``received`` (a list of payload dicts).

    ``stall_probability`` is the chance, each cycle, of holding ready low.
    """

    def __init__(self, dut, name, layout, clock, rng=None, stall_probability=0.0):
        self.valid = getattr(dut, f"{name}__valid")
        self.ready = getattr(dut, f"{name}__ready")
        self.payload = getattr(dut, f"{name}__payload")
        self.layout = layout
        self.clock = clock
        self.rng = rng or random.Random()
        self.stall_probability = stall_probability
        self.received = []
        self.ready.value = 0

    def clear(self):
        self.received.clear()

    async def run(self):
        while True:
            self.ready.value = int(self.rng.random() >= self.stall_probability)
            await ReadOnly()
            if int(self.valid.value) and int(self.ready.value):
                self.received.append(unpack(self.layout, self.payload.value))
            await RisingEdge(self.clock)
