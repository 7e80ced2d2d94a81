"""``hw.banked.BankedMemory`` and ``hw.pe.node_memory.TransparentBankedMemory`` against a
dictionary: random writes, reads and read stalls.

A read's word is on ``read_data`` after the second cycle with ``read_en`` that follows it
(its own included), and held while ``read_en`` is low; it is the memory as it was before
the writes of its own cycle, or, for the transparent one, after them. Addresses are drawn
from a few so that reads often meet a write of their own cycle, and the depths span one
bank, a short last bank and several banks.
"""

import random

import pytest
from amaranth.sim import Simulator

from hw.banked import BankedMemory
from hw.pe.node_memory import TransparentBankedMemory


def _run(depth, bank_depth, transparent, seed, cycles=600, model_transparent=None):
    """Mismatches of the memory against the model (of ``model_transparent`` reads,
    default ``transparent``) and the cycles checked."""
    memory = TransparentBankedMemory if transparent else BankedMemory
    dut = memory(shape=8, depth=depth, bank_depth=bank_depth)
    model_transparent = transparent if model_transparent is None else model_transparent
    rng = random.Random(seed)
    hot = [rng.randrange(depth) for _ in range(4)]      # a few addresses, so reads meet writes
    mismatches, checked = [], []

    async def bench(ctx):
        memory = {}                      # written words (block RAM contents are unknown before)
        issued = []                      # per read: the word it must give, None if unknown
        for cycle in range(cycles):
            read_addr = rng.choice(hot) if rng.random() < 0.7 else rng.randrange(depth)
            write_addr = rng.choice(hot) if rng.random() < 0.7 else rng.randrange(depth)
            write_en, read_en = rng.random() < 0.5, rng.random() < 0.75
            word = rng.randrange(256)
            ctx.set(dut.read_addr, read_addr)
            ctx.set(dut.read_en, read_en)
            ctx.set(dut.write_addr, write_addr)
            ctx.set(dut.write_data, word)
            ctx.set(dut.write_en, write_en)
            before = memory.get(read_addr)
            if write_en:
                memory[write_addr] = word
            if read_en:
                issued.append(memory.get(read_addr) if model_transparent else before)
            await ctx.tick()
            if read_en and len(issued) >= 2 and issued[-2] is not None:
                got = ctx.get(dut.read_data)
                checked.append(cycle)
                if got != issued[-2]:
                    mismatches.append((cycle, got, issued[-2]))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return mismatches, checked


@pytest.mark.parametrize("transparent", [False, True])
@pytest.mark.parametrize("depth, bank_depth", [(16, 16), (40, 16), (64, 8)])
def test_reads_give_the_words_written_before_them(depth, bank_depth, transparent):
    mismatches, checked = _run(depth, bank_depth, transparent, seed=depth * 7 + transparent)
    assert len(checked) > 200
    assert mismatches == []


def test_without_transparency_a_read_misses_the_write_of_its_own_cycle():
    # The check above can fail: the plain memory, taken for a transparent one, differs.
    mismatches = [_run(16, 16, False, seed, model_transparent=True)[0] for seed in range(3)]
    assert sum(map(len, mismatches)) > 0
