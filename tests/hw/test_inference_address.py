"""The inference engine's node write address, tree x nodes-per-tree + node
(hw/inference.py), as signed digits summed by hw.arith.carry_save_sum (carry-save adders,
one carry chain): checked against Python's integers in Amaranth's simulator, over every
constant up to 300, the comparison's sizes and random ones up to the largest the engine
accepts."""

import random

import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from hw.inference import _times_constant_plus, signed_digits


@pytest.mark.parametrize("constant", list(range(0, 40)) + [255, 256, 2559, 65535, 65536] +
                         random.Random(7).sample(range(1, 1 << 16), 20))
def test_signed_digits_are_the_constant_and_never_adjacent(constant):
    digits = signed_digits(constant)
    assert sum(sign << shift for shift, sign in digits) == constant
    assert all(sign in (1, -1) for _, sign in digits)
    shifts = [shift for shift, _ in digits]
    assert all(later - earlier >= 2 for earlier, later in zip(shifts, shifts[1:]))
    # No representation has fewer nonzero digits than the non-adjacent form; for the
    # constants checked it is at most half their bits plus one.
    assert len(digits) <= constant.bit_length() // 2 + 1


def _addresses(constant, value_bits, addend_bits, pairs):
    m = Module()
    value, addend = Signal(value_bits), Signal(addend_bits)
    width = (((1 << value_bits) - 1) * constant + (1 << addend_bits) - 1).bit_length()
    result = Signal(max(width, 1))
    m.d.comb += result.eq(_times_constant_plus(m, value, constant, addend))
    got = []

    async def bench(ctx):
        for x, y in pairs:
            ctx.set(value, x)
            ctx.set(addend, y)
            got.append(ctx.get(result))

    simulator = Simulator(m)
    simulator.add_testbench(bench)
    simulator.run()
    return got


@pytest.mark.parametrize("constant,value_bits,addend_bits",
                         [(2559, 7, 12), (2559, 16, 12), (31, 6, 5), (201, 4, 8), (1, 1, 1),
                          (65536, 16, 16), (65535, 16, 16), (43690, 9, 16)] +
                         [(c, 5, 9) for c in range(0, 300, 7)])
def test_tree_times_nodes_plus_node(constant, value_bits, addend_bits):
    generator = random.Random(constant * 131 + value_bits)
    top_value, top_addend = (1 << value_bits) - 1, (1 << addend_bits) - 1
    pairs = [(0, 0), (top_value, top_addend), (top_value, 0), (0, top_addend)] + \
        [(generator.randrange(top_value + 1), generator.randrange(top_addend + 1))
         for _ in range(40)]
    assert _addresses(constant, value_bits, addend_bits, pairs) == \
        [x * constant + y for x, y in pairs]
