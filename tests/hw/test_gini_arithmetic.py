"""The exact-arithmetic helpers of the Gini scanner and the lane combiner (hw/arith.py),
simulated by Amaranth's simulator against Python's integers: the scan's products in
logic, and the carry-save sum they are added with."""

import itertools
import random

import pytest
from amaranth.hdl import Const, Module, Signal
from amaranth.sim import Simulator

from hw.arith import carry_save_sum, logic_product_rows


def products_in_logic(a_bits, b_bits, pairs, *, shared=False, plus=None):
    """``a x b`` (plus the terms ``plus(a, b)`` gives, if given) for every pair, as the sum
    of the registered rows a cycle later, modulo the rows' width (at least ``a_bits +
    b_bits``, the product's own width: nothing may spill into it)."""
    m = Module()
    a = Signal(a_bits)
    b = a if shared else Signal(b_bits)
    rows = logic_product_rows(m, "product", a, b, plus=plus(a, b) if plus else ())
    got = []

    async def bench(ctx):
        for x, y in pairs:
            ctx.set(a, x)
            if not shared:
                ctx.set(b, y)
            await ctx.tick()
            got.append(sum(ctx.get(row) << shift for shift, row in rows))

    simulator = Simulator(m)
    simulator.add_clock(1e-8)
    simulator.add_testbench(bench)
    simulator.run()
    width = min(len(row) for _, row in rows)
    assert width >= a_bits + b_bits
    return [value % (1 << width) for value in got]


@pytest.mark.parametrize("a_bits, b_bits", [(1, 1), (4, 3), (3, 5), (5, 5)])
def test_logic_products_are_exact_for_every_operand(a_bits, b_bits):
    pairs = list(itertools.product(range(1 << a_bits), range(1 << b_bits)))
    assert products_in_logic(a_bits, b_bits, pairs) == [x * y for x, y in pairs]


def test_logic_products_at_count_widths():
    rng = random.Random(5)
    for bits in (12, 13, 24):
        top = (1 << bits) - 1
        pairs = [(top, top), (top, 1), (0, top)] + [(rng.randrange(1 << bits), rng.randrange(1 << bits))
                                                    for _ in range(200)]
        assert products_in_logic(bits, bits, pairs) == [x * y for x, y in pairs]
        squares = products_in_logic(bits, bits, [(x, x) for x, _ in pairs], shared=True)
        assert squares == [x * x for x, _ in pairs]


@pytest.mark.parametrize("a_bits, b_bits", [(1, 1), (4, 3), (3, 5)])
def test_products_of_a_weight_less_one_are_the_weights(a_bits, b_bits):
    """The scanner's forms: (w - 1) x + x = w x and (w - 1)^2 + 2 (w - 1) + 1 = w^2, for
    every x and every w - 1 (the largest w, 2**b_bits, included)."""
    pairs = list(itertools.product(range(1 << a_bits), range(1 << b_bits)))
    products = products_in_logic(a_bits, b_bits, pairs, plus=lambda x, less: [(0, x)])
    assert products == [x * (less + 1) for x, less in pairs]
    lesses = [(less, less) for less in range(1 << b_bits)]
    squares = products_in_logic(b_bits, b_bits, lesses, shared=True,
                                plus=lambda less, _: [(1, less), (0, Const(1, 1))])
    assert squares == [(less + 1) ** 2 for less, _ in lesses]


def test_carry_save_sum_signs_a_difference():
    m = Module()
    x, y, z = Signal(6), Signal(7), Signal(5)
    result = carry_save_sum(m, [(0, x), (2, y)], [(1, z), (0, x)])
    rng = random.Random(6)
    cases = [(63, 0, 31), (0, 0, 31), (0, 127, 0)] + [(rng.randrange(64), rng.randrange(128), rng.randrange(32))
                                                     for _ in range(200)]
    got = []

    async def bench(ctx):
        for values in cases:
            for signal, value in zip((x, y, z), values):
                ctx.set(signal, value)
            got.append(ctx.get(result))

    simulator = Simulator(m)
    simulator.add_testbench(bench)
    simulator.run()
    width = len(result)
    for (a, b, c), value in zip(cases, got):
        signed = value - (1 << width) if value >> (width - 1) else value
        assert signed == a + 4 * b - 2 * c - a
