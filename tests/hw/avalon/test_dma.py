"""The DMA engines (``hw/avalon/dma.py``) in Amaranth's simulator, against a memory modelled
here: random waitrequest, random in-order read latency, random stream stalls."""

import random
from collections import deque

import pytest
from amaranth.lib import data
from amaranth.sim import Simulator

from hw.avalon import StreamReader, StreamWriter, words_per_beat

LAYOUTS = [data.StructLayout({"a": 40, "b": 3}), data.StructLayout({"c": 20})]


def _run(dut, bench, cycles=20_000):
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run_until(cycles * 1e-8)


async def _start(ctx, dut, base, target, **values):
    for name, value in {"base": base, "target": target, **values}.items():
        ctx.set(getattr(dut, name), value)
    ctx.set(dut.start, 1)
    await ctx.tick()
    ctx.set(dut.start, 0)


# Reads in flight 1 to 4: at 2 a word arriving while the buffered FIFO's inner part was
# full and its output register empty was dropped (the reader counted the register too).
@pytest.mark.parametrize("target, seed, depth", [(1, 1, 4), (2, 2, 4), (1, 3, 4), (1, 4, 1), (2, 5, 2), (1, 6, 2),
                                                 (2, 7, 3)])
def test_reader_delivers_memory_words_as_beats(target, seed, depth):
    rng = random.Random(seed)
    layout = LAYOUTS[target - 1]
    width = data.Layout.cast(layout).size
    beats = [rng.getrandbits(width) for _ in range(40)]
    count = words_per_beat(layout)
    words = [(beat >> (32 * k)) & 0xFFFF_FFFF for beat in beats for k in range(count)]
    base = 0x1000
    memory = {base + 4 * index: word for index, word in enumerate(words)}
    dut = StreamReader(LAYOUTS, fifo_depth=depth)
    got, done = [], []

    async def bench(ctx):
        await _start(ctx, dut, base, target, beats=len(beats))
        answers, cycle, bus = deque(), 0, dut.bus
        out = getattr(dut, f"out{target}")
        while not done:
            wait = rng.random() < 0.3
            ctx.set(bus.waitrequest, wait)
            due = answers and answers[0][0] <= cycle
            ctx.set(bus.readdatavalid, bool(due))
            ctx.set(bus.readdata, answers.popleft()[1] if due else 0)
            ctx.set(out.ready, rng.random() < 0.7)
            if ctx.get(bus.read) and not wait:
                address = ctx.get(bus.address)
                later = max([cycle + rng.randint(1, 6)] + [c + 1 for c, _ in answers])
                answers.append((later, memory[address]))
            if ctx.get(out.valid) and ctx.get(out.ready):
                got.append(ctx.get(out.payload.as_value()))
            if ctx.get(dut.done):
                done.append(cycle)
            await ctx.tick()
            cycle += 1
        assert not ctx.get(dut.busy) and ctx.get(dut.delivered) == len(beats)

    _run(dut, bench)
    assert done and got == beats


def test_reader_refuses_bad_starts():
    dut = StreamReader(LAYOUTS)

    async def bench(ctx):
        await _start(ctx, dut, 0x1002, 1, beats=3)
        assert ctx.get(dut.unaligned) and not ctx.get(dut.busy)
        await _start(ctx, dut, 0x1000, 3, beats=3)
        assert ctx.get(dut.bad_target) and not ctx.get(dut.unaligned) and not ctx.get(dut.busy)
        ctx.set(dut.bus.waitrequest, 1)
        await _start(ctx, dut, 0x1000, 1, beats=3)
        assert ctx.get(dut.busy) and not ctx.get(dut.bad_target)
        await _start(ctx, dut, 0x1000, 1, beats=3)
        assert ctx.get(dut.busy_refused)

    _run(dut, bench, 100)


@pytest.mark.parametrize("target, seed", [(1, 4), (2, 5)])
def test_writer_writes_beats_and_flags_overflow(target, seed):
    rng = random.Random(seed)
    layout = LAYOUTS[target - 1]
    width = data.Layout.cast(layout).size
    beats = [rng.getrandbits(width) for _ in range(30)]
    limit, base = 25, 0x2000
    memory, done = {}, []
    dut = StreamWriter(LAYOUTS)

    async def bench(ctx):
        await _start(ctx, dut, base, target, limit=limit)
        source, bus, sent, cycle = getattr(dut, f"in{target}"), dut.bus, 0, 0
        other = getattr(dut, f"in{3 - target}")
        ctx.set(other.valid, 1)
        while cycle < 5000:
            wait = rng.random() < 0.3
            ctx.set(bus.waitrequest, wait)
            offer = sent < len(beats) and rng.random() < 0.7
            ctx.set(source.valid, offer)
            ctx.set(source.payload.as_value(), beats[sent] if offer else 0)
            assert not ctx.get(other.ready), "a stream not armed was taken"
            if ctx.get(bus.write) and not wait:
                memory[ctx.get(bus.address)] = ctx.get(bus.writedata)
            if offer and ctx.get(source.ready):
                sent += 1
            if ctx.get(dut.done):
                done.append(cycle)
            await ctx.tick()
            cycle += 1
        assert ctx.get(dut.written) == limit and ctx.get(dut.overflow) and not ctx.get(dut.busy)

    _run(dut, bench)
    count = words_per_beat(layout)
    assert len(done) == 1 and len(memory) == limit * count
    written = [sum(memory[base + 4 * (beat * count + k)] << (32 * k) for k in range(count))
               for beat in range(limit)]
    assert written == beats[:limit]


def test_writer_disarms():
    dut = StreamWriter(LAYOUTS)

    async def bench(ctx):
        await _start(ctx, dut, 0x2000, 2, limit=4)
        assert ctx.get(dut.armed)
        await _start(ctx, dut, 0x2000, 0)
        assert not ctx.get(dut.armed) and not ctx.get(dut.bad_target)
        ctx.set(dut.in2.valid, 1)
        assert not ctx.get(dut.in2.ready)

    _run(dut, bench, 50)
