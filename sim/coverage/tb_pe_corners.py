"""cocotb tests that add the processing element's capacity and boundary corners to the
random cases of ``sim.tb_pe`` (run by ``python -m sim.coverage``; checked against the
golden model by ``PETestbench.check_tree`` like every other tree).

The dataset: 2**b rows whose features are the bits of the row index and whose label is
the parity of the index. Every boundary splits a node's rows into two halves of equal
parity mix, so every node above single rows is impure and splits: without limits the
tree is complete, 2**(b+1) - 1 nodes b levels deep, which fills the node memory when b
is the PE's depth or its lists' length (the rows, in-bag rows and node capacities at
once). Node sizes are powers of two, so min_samples_split 2**k, 2**k + 1 and 2**k - 1
put a node exactly at, one below and one above the limit; min_samples_leaf 2**(k-1)
puts one at twice the leaf limit and its children exactly at it.

A start (re)begins a tree from any state of the controller, and of the sparse fill's
prologue: to a bad configuration (``Idle``), a sparse thesis tree (``Wait for the
prologue``) or a list-filled tree (``Draw the bootstrap``). :func:`restart_from_every_state`
takes each of these from every state: it starts a tree (list-filled in forest or thesis
mode, or sparse), restarts it in the first cycle its FSM is in the state, and checks a tree
against the model afterwards.
"""

import dataclasses
import math

import cocotb
import numpy as np
from cocotb.triggers import ReadOnly, RisingEdge, Timer

from sim.coverage.fsm import state_machines
from sim.tb_pe import FLAGS, PETestbench
from sw.methods.forest.model import TrainingParameters


def parity_dataset(tb):
    """(codes, labels, b) of the largest complete tree this PE holds."""
    b = min(int(math.log2(tb.max_rows)), int(math.log2(tb.max_inbag_rows)), tb.max_depth,
            tb.feature_capacity, tb.code_bits * tb.feature_capacity)
    rows = np.arange(1 << b)
    codes = np.zeros((rows.size, tb.feature_capacity), dtype=np.int64)
    for bit in range(b):
        codes[:, bit] = (rows >> bit) & 1
    labels = np.array([bin(row).count("1") & 1 for row in rows], dtype=np.int64)
    return codes, labels, b


@cocotb.test()
async def capacity_and_boundary_corners_match_model(dut):
    tb = PETestbench(dut)
    await tb.begin()
    codes, labels, b = parity_dataset(tb)
    k = max(2, b - 2)
    limits = [(2, 1), (1 << k, 1), ((1 << k) + 1, 1), ((1 << k) - 1, 1), (2, 1 << (k - 1)),
              (2, (1 << (k - 1)) + 1)]
    for split, leaf in limits:
        params = TrainingParameters(n_classes=2, bootstrap=False, max_samples=1,
                                    features_per_split=tb.feature_capacity, min_samples_split=split,
                                    min_samples_leaf=leaf)
        await tb.check_tree(codes, labels, params, 5, 3, f"parity tree of {codes.shape[0]} rows, "
                                                         f"min_samples_split {split}, min_samples_leaf {leaf}")
    limited = TrainingParameters(n_classes=2, bootstrap=False, max_samples=1, max_depth=b - 1,
                                 features_per_split=tb.feature_capacity)
    await tb.check_tree(codes, labels, limited, 5, 3, f"parity tree limited to depth {b - 1}")


def _trees(tb):
    """The trees a restart test runs: list-filled in forest and thesis mode, sparse (thesis mode)."""
    forest = TrainingParameters(n_classes=2, bootstrap=False, max_samples=1, features_per_split=tb.feature_capacity)
    sparse = TrainingParameters(n_classes=2, max_samples=max(1, min(16, tb.design.get("sparse_rows", 0))),
                                max_depth=4, thesis_mode=True)
    thesis = TrainingParameters(n_classes=2, bootstrap=False, max_samples=1, max_depth=4, thesis_mode=True)
    return {"forest": forest, "sparse": sparse, "thesis": thesis}


async def _restart_in(tb, handle, tree, encoding, restart, limit=20_000):
    """Start ``tree`` and, in the first cycle its FSM is in ``encoding``, start ``restart``
    (params, bad configuration); return whether that happened. The state register's value
    for a cycle is read 1 ns after the edge that begins it (in the edge's own time step,
    cocotb still shows the value before the edge), and start is raised then, for the next
    edge; the read-only phase of the same cycle confirms the state."""
    codes, labels, _ = parity_dataset(tb)
    tb.prepare_lists(codes, labels)
    tb.configure(*codes.shape, tree, 5, 3)
    await tb.start()
    finished = None
    for cycle in range(limit):
        await RisingEdge(tb.dut.clk)
        await Timer(1, "ns")            # the edge's register updates are visible from here
        if handle.value.is_resolvable and int(handle.value) == encoding:
            params, bad = restart
            tb.configure(*codes.shape, params, 6, 4)
            if bad:
                tb.dut.min_samples_split.value = 1
            tb.dut.start.value = 1
            await ReadOnly()
            confirmed = int(handle.value) == encoding
            await RisingEdge(tb.dut.clk)
            tb.dut.start.value = 0
            return confirmed
        if finished is None and any(int(getattr(tb.dut, flag).value) for flag in FLAGS):
            finished = cycle
        if finished is not None and cycle > finished + 8:
            return False
    return False


@cocotb.test()
async def restart_from_every_state(dut):
    tb = PETestbench(dut)
    await tb.begin()
    trees = _trees(tb)
    restarts = {"bad configuration": (trees["forest"], True), "sparse": (trees["sparse"], False),
                "list-filled": (trees["forest"], False)}
    missed = []
    for machine in state_machines("processing_element", tb.design):
        if machine.path not in ((), ("sparse",)):
            continue
        handle = dut
        for part in (*machine.path, machine.signal):
            handle = getattr(handle, part)
        for encoding, name in machine.states.items():
            for kind, restart in restarts.items():
                for tree in trees.values():
                    if await _restart_in(tb, handle, tree, encoding, restart):
                        break
                else:
                    missed.append((machine.label, name, kind))
    dut._log.info(f"restarts not placed: {missed}")
    codes, labels, _ = parity_dataset(tb)
    await tb.check_tree(codes, labels, dataclasses.replace(trees["forest"], max_depth=3), 5, 3, "after the restarts")
