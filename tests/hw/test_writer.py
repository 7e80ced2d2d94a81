"""``hw.pe.writer.NodeFormatter``: the node's majority class against the golden model's.

The model's ``majority_class`` is the first of the largest counts. Ties are the case a
formatter gets wrong, so the counts are drawn from a few values. The size test guards the
elaboration: a running maximum written as one expression doubles with every class (a PE
with 16 classes did not convert to RTLIL in minutes).
"""

import random

import numpy as np
import pytest
from amaranth.back import rtlil
from amaranth.sim import Simulator

from hw.pe.layouts import PEGeometry
from hw.pe.writer import NodeFormatter
from sw.methods.forest.model import majority_class


def geometry(classes, code_bits=8):
    return PEGeometry(max_rows=256, max_samples=256, max_inbag_rows=None, feature_capacity=8,
                      feature_lanes=2, code_bits=code_bits, classes=classes, max_depth=8,
                      max_nodes=None, tree_index_bits=4, sparse_rows=0)


@pytest.mark.parametrize("classes", [2, 3, 5, 8, 13, 64])
def test_majority_is_the_first_of_the_largest_counts(classes):
    g = geometry(classes)
    assert g.max_samples == 256
    dut = NodeFormatter(g)
    rng = random.Random(classes)
    top = g.max_samples // classes                  # a node's counts sum to at most max_samples
    cases = [[rng.choice([0, 1, 2, 3, top]) for _ in range(classes)] for _ in range(150)]
    cases += [[0] * classes, [top] * classes, [top if c == classes - 1 else 0 for c in range(classes)]]
    seen = []

    async def bench(ctx):
        ctx.set(dut.record.split, 0)
        for counts in cases:
            for c, count in enumerate(counts):
                ctx.set(dut.record.counts[c], count)
            await ctx.delay(1e-9)
            seen.append((ctx.get(dut.node.majority), ctx.get(dut.node.n_samples)))

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()
    expected = majority_class(np.array(cases))
    assert [majority for majority, _ in seen] == expected.tolist()
    assert [n for _, n in seen] == [sum(counts) for counts in cases]


def test_elaboration_grows_linearly_with_classes():
    size = {classes: len(rtlil.convert(NodeFormatter(geometry(classes)))) for classes in (8, 16, 32)}
    assert size[16] < 3 * size[8] and size[32] < 3 * size[16], size
