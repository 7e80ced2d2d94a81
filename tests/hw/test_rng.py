"""Quick unit tests of ``hw.rng.TreeRandom`` in Amaranth's own simulator.

The thorough check is the Verilator run in ``test_rng_sim.py``; these run in a second
and catch elaboration and handshake mistakes early.
"""

import random

import pytest
from amaranth.sim import Simulator

from hw.rng import TreeRandom
from sw.methods.forest.rng import TreeRandom as ReferenceRandom


def run_draws(dut, seed, tree_index, bounds, rng, stall=0.4):
    received = []

    async def producer(ctx):
        ctx.set(dut.seed, seed)
        ctx.set(dut.tree_index, tree_index)
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        for bound in bounds:
            while rng.random() < stall:
                await ctx.tick()
            ctx.set(dut.requests.valid, 1)
            ctx.set(dut.requests.p.bound, bound)
            await ctx.tick().until(dut.requests.ready)
            ctx.set(dut.requests.valid, 0)

    async def consumer(ctx):
        while len(received) < len(bounds):
            ctx.set(dut.draws.ready, rng.random() >= stall)
            _, _, valid, ready, value = await ctx.tick().sample(
                dut.draws.valid, dut.draws.ready, dut.draws.p.value)
            if valid and ready:
                received.append(value)

    simulator = Simulator(dut)
    simulator.add_clock(1e-8)
    simulator.add_testbench(producer, background=True)
    simulator.add_testbench(consumer)
    simulator.run()
    return received


def test_draws_match_model_with_stalls():
    rng = random.Random(3)
    dut = TreeRandom(bound_bits=12, tree_index_bits=8)
    for seed, tree in [(0, 0), (4242, 17), ((1 << 32) - 1, 255)]:
        bounds = [rng.choice([1, 2, 3, 5, 64, 65, 4095]) for _ in range(40)]
        reference = ReferenceRandom(seed, tree)
        assert run_draws(dut, seed, tree, bounds, rng) == [reference.integer(b) for b in bounds]


@pytest.mark.parametrize("arguments, error, text", [
    ({"bound_bits": 0}, ValueError, "bound_bits must be between 1 and 32, not 0"),
    ({"bound_bits": 33}, ValueError, "bound_bits must be between 1 and 32, not 33"),
    ({"tree_index_bits": 40}, ValueError, "tree_index_bits must be between 1 and 32, not 40"),
    ({"bound_bits": "16"}, TypeError, "bound_bits must be an integer, not '16'"),
])
def test_bad_parameters_are_refused(arguments, error, text):
    with pytest.raises(error, match=text):
        TreeRandom(**arguments)
