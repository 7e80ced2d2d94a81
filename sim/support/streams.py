"""cocotb drivers for ``amaranth.lib.stream`` ports, with random valid/ready stalls.

A stream port ``name`` of an Amaranth component appears in its Verilog as
``name__valid``, ``name__ready`` and ``name__payload`` (the struct payload flattened,
first field in the low bits). :class:`StreamSource` drives such an input,
:class:`StreamSink` consumes such an output; both take the payload's
``amaranth.lib.data.StructLayout`` so tests speak in field names.

Timing discipline (the same for every driver):

* inputs (a source's valid and payload, a sink's ready) are changed only in the time step
  of a rising edge of the clock, after it (never in the read-only phase);
* the handshake is sampled in the read-only phase of that same time step, when every
  combinational path (ready may depend on valid) has settled: what is sampled there is
  what the next rising edge registers, as nothing changes the inputs in between;
* a transfer is counted at the rising edge that registers it.

A driver with nothing to do sleeps instead of waking twice per cycle: a source with an
empty queue waits for :meth:`StreamSource.send` (it then drives in the same time step
when woken right after a rising edge, else from the next edge); a sink that sampled
valid low waits for valid to rise (a value-change callback in the simulator), holding
ready at its last value. A stalled stream keeps the sink awake, so its
:class:`sim.support.monitors.StreamMonitor` sees every cycle in which a rule applies.
Random idle and stall cycles are drawn per cycle while a stream moves, as before.

Counters kept for coverage (valid at any time): ``transfers``; ``stall_cycles`` (cycles
with valid high and ready low); ``idle_cycles`` (a source: cycles it held valid low with
data waiting; a sink: cycles it held ready low, asleep or not).
"""

import random
from collections import deque

from amaranth.hdl import Shape
from amaranth.lib import data
from cocotb._gpi_triggers import current_gpi_trigger
from cocotb.triggers import ClockCycles, Event, ReadOnly, RisingEdge, Timer
from cocotb.utils import get_sim_time

from sim.support.monitors import StreamMonitor, resolved

__all__ = ["pack", "unpack", "StreamSource", "StreamSink", "clock_cycles"]


def _plan(layout):
    """(name, offset, width, sub-layout or None, split further on unpacking) per field of
    ``layout``, computed once per layout: packing and unpacking a beat is on the
    simulation's hot path (every beat of every stream)."""
    plan = _PLANS.get(id(layout))
    if plan is None or plan[0] is not layout:
        fields = []
        for name, field in layout:
            shape = field.shape
            sub = shape if isinstance(shape, data.Layout) else None
            fields.append((name, field.offset, Shape.cast(shape).width, sub,
                           sub is not None and _structured(sub)))
        plan = _PLANS[id(layout)] = (layout, tuple(fields))
    return plan[1]


_PLANS = {}


def pack(layout, fields):
    """Flatten a dict of field values into the integer of a struct payload. A field whose
    shape is itself a layout takes a dict (struct) or a list (array) of its fields, or its
    packed integer."""
    value = 0
    for name, offset, width, sub, _ in _plan(layout):
        field_value = fields[name]
        if sub is not None and isinstance(field_value, (dict, list, tuple)):
            value |= pack(sub, field_value) << offset
            continue
        field_value = int(field_value)
        if not 0 <= field_value < (1 << width):
            raise ValueError(f"field {name!r} value {field_value} does not fit in {width} bits")
        value |= field_value << offset
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
    for name, offset, width, sub, split in _plan(layout):
        bits = (value >> offset) & ((1 << width) - 1)
        fields[name] = unpack(sub, bits) if split else bits
    if isinstance(layout, data.ArrayLayout):
        return [fields[index] for index in range(layout.length)]
    return fields


def _now_ns():
    return get_sim_time("ns")


def _after_edge(clock):
    """Whether the running coroutine was woken by a rising edge of ``clock`` (so inputs
    may change now under the timing discipline)."""
    trigger = current_gpi_trigger()
    return isinstance(trigger, RisingEdge) and trigger.signal is clock


async def clock_cycles(clock, count, period_ns=10):
    """Wait ``count`` rising edges of ``clock`` with two wake-ups instead of ``count``
    (a timer to half a period before the last edge, then the edge). Called right after
    a rising edge (as :class:`cocotb.triggers.ClockCycles` would end); anywhere else it
    falls back to counting edges."""
    if count > 2 and _after_edge(clock):
        await Timer(count * period_ns - period_ns // 2, unit="ns")
        await RisingEdge(clock)
    elif count > 0:
        await ClockCycles(clock, count)


class StreamSource:
    """Drives a stream input of the DUT from a queue of payload dicts.

    ``idle_probability`` is the chance, each cycle, of holding valid low although data
    is waiting (valid never depends on ready; payload is held until the transfer).
    """

    def __init__(self, dut, name, layout, clock, rng=None, idle_probability=0.0, period_ns=10):
        self.name = name
        self.valid = getattr(dut, f"{name}__valid")
        self.ready = getattr(dut, f"{name}__ready")
        self.payload = getattr(dut, f"{name}__payload")
        self.layout = layout
        self.clock = clock
        self.period_ns = period_ns
        self.rng = rng or random.Random()
        self.idle_probability = idle_probability
        self.queue = deque()
        self.transfers = self.stall_cycles = self.idle_cycles = 0
        self._busy = False
        self._epoch = 0                 # counts clear(): a beat in flight is dropped
        self._data = Event()            # set while the queue has data
        self._drained = Event()         # set while idle
        self._drained.set()
        self._valid = 0                 # the value last written to valid
        self.valid.value = 0

    def _drive_valid(self, value):
        if value != self._valid:
            self.valid.value = self._valid = value

    @property
    def sent(self):
        """Completed transfers (the old name of ``transfers``)."""
        return self.transfers

    def send(self, fields):
        self.queue.append(fields)
        self._data.set()
        self._drained.clear()

    def clear(self):
        """Forget queued data and drop valid (used around a reset)."""
        self.queue.clear()
        self._epoch += 1
        self._busy = False
        self._data.clear()
        self._drained.set()
        self._drive_valid(0)

    @property
    def idle(self):
        return not self.queue and not self._busy

    async def wait_idle(self):
        """Return once every queued payload has been transferred (right after the edge
        that registered the last one)."""
        while not self.idle:
            await self._drained.wait()

    async def _wait_for_data(self):
        self._data.clear()
        await self._data.wait()
        if not _after_edge(self.clock):
            await RisingEdge(self.clock)

    async def run(self):
        edge = RisingEdge(self.clock)
        while True:
            if not self.queue:
                self._drive_valid(0)
                self._drained.set()
                await self._wait_for_data()
                continue
            if self.idle_probability and self.rng.random() < self.idle_probability:
                self._drive_valid(0)
                self.idle_cycles += 1
                await edge
                continue
            epoch = self._epoch
            self.payload.value = pack(self.layout, self.queue[0])
            self._drive_valid(1)
            self._busy = True
            while True:
                await ReadOnly()
                fired = int(self.ready.value)
                await edge
                if epoch != self._epoch or fired:
                    break
                self.stall_cycles += 1
            if epoch == self._epoch:
                self.queue.popleft()
                self.transfers += 1
                self._busy = False


class StreamSink:
    """Consumes a stream output of the DUT into ``received`` (a list of payload dicts),
    checking the stream rules with a :class:`~sim.support.monitors.StreamMonitor`.

    ``stall_probability`` is the chance, each cycle, of holding ready low. ``reset`` (the
    design's reset signal, optional) excuses a stream dropped by a reset. ``cycles`` holds
    the cycle (simulated time / period) of each transfer, beside ``received``.
    """

    def __init__(self, dut, name, layout, clock, rng=None, stall_probability=0.0, period_ns=10,
                 reset=None):
        self.name = name
        self.valid = getattr(dut, f"{name}__valid")
        self.ready = getattr(dut, f"{name}__ready")
        self.payload = getattr(dut, f"{name}__payload")
        self.layout = layout
        self.clock = clock
        self.period_ns = period_ns
        self.reset = reset
        self.rng = rng or random.Random()
        self.stall_probability = stall_probability
        self.monitor = StreamMonitor(name, period_ns)
        self.received, self.cycles = [], []
        self.transfers = self.stall_cycles = self._idle_cycles = 0
        self._asleep_since = None       # time of the last sample before sleeping
        self._ready = 0
        self.ready.value = 0

    def clear(self):
        """Forget what was received, and the monitor's history: the testbench calls this
        when it has aborted the stream (a reset, or a restart input of the design), after
        which a beat in flight may legally vanish."""
        self.received.clear()
        self.cycles.clear()
        self.monitor.forget()

    @property
    def idle_cycles(self):
        """Cycles in which ready was low (including the ones slept through)."""
        return self._idle_cycles + self._slept_so_far()

    @idle_cycles.setter
    def idle_cycles(self, value):
        self._idle_cycles = value - self._slept_so_far()

    def _slept_so_far(self):
        return self._slept(_now_ns()) if self._asleep_since is not None else 0

    def _slept(self, now_ns):
        """Cycles since falling asleep in which ready was held low."""
        if self._ready:
            return 0
        return max(0, round((now_ns - self._asleep_since) / self.period_ns) - 1)

    def _drive_ready(self):
        ready = int(not self.stall_probability or self.rng.random() >= self.stall_probability)
        if ready != self._ready:
            self.ready.value = self._ready = ready

    async def run(self):
        edge = RisingEdge(self.clock)
        valid_rises = RisingEdge(self.valid)
        while True:
            self._drive_ready()
            await ReadOnly()
            now = _now_ns()
            monitor = self.monitor
            in_reset = monitor.pending and self.reset is not None and int(self.reset.value) == 1
            valid_value = self.valid.value
            payload = self.payload.value if resolved(valid_value) != 0 else None
            valid, word = monitor.sample(now, valid_value, self._ready, payload, in_reset)
            if not self._ready:
                self._idle_cycles += 1
            if valid and self._ready and word is not None:
                self.received.append(unpack(self.layout, word))
                self.cycles.append(int(now // self.period_ns))
                self.transfers += 1
            elif valid:
                self.stall_cycles += 1
            if valid or monitor.pending:
                await edge
                continue
            self._asleep_since = now
            await valid_rises
            self._idle_cycles += self._slept(_now_ns())
            self._asleep_since = None
