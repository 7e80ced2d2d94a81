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

Two starts in consecutive cycles, the first a sparse tree's: the first start's registered
``start_prologue`` pulse comes in the cycle of the second start, and the start wins, so
the prologue runs for no abandoned tree (it once did: coverage found the bug).
:func:`start_on_consecutive_cycles`, :func:`abandoned_prologue_is_not_restarted` and
:func:`stale_prologue_is_not_taken` queue a sparse tree behind and check both trees, and
that the abandoned prologue asks for no code.
:func:`stale_code_answer_is_held_off` offers a code answer nobody asked for.
"""

import dataclasses
import math

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge, Timer

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


@cocotb.test()
async def start_on_consecutive_cycles(dut):
    """A sparse-fill tree started and, in the very next cycle, replaced by a list-filled
    thesis tree, with a sparse tree queued behind it (at once or after a random delay), on
    datasets of several sizes: both trees must match the model. The first start's
    prologue pulse comes while the second start is taken and must start nothing."""
    tb = PETestbench(dut)
    await tb.begin()
    all_codes, all_labels, _ = parity_dataset(tb)
    trees = _trees(tb)
    started = tb.start
    for rows in (8, 16, 32, 64):
        for delay in (0, 60):
            codes, labels = all_codes[:rows], all_labels[:rows]
            sequence = [(trees["thesis"], 7, rows), (trees["sparse"], 7, rows + 1)]

            tb.start = lambda codes=codes, sequence=sequence: _double_start(tb, codes, trees["sparse"], sequence[0])
            try:
                await tb.check_sequence(codes, labels, sequence, f"{rows} rows: thesis tree started over a "
                                        f"sparse one, sparse queued after up to {delay} cycles", max_delay=delay)
            finally:
                tb.start = started
    # The abandoned prologue asks for nothing: a sparse tree replaced in the next cycle by a
    # list-filled thesis tree that draws more rows than the sparse fill holds (before the
    # fix, the first start's pulse ran the prologue beside it and its look-ups went out).
    drawn = TrainingParameters(n_classes=2, max_samples=tb.design["sparse_rows"] + 8, max_depth=4, thesis_mode=True)
    tb.start = lambda: _double_start(tb, all_codes, trees["sparse"], (drawn, 8, 16))
    try:
        await tb.check_sequence(all_codes, all_labels, [(drawn, 8, 16)], "a sparse tree abandoned at once")
    finally:
        tb.start = started
    requests = len(tb.code_requests.received)
    assert requests == 0, f"the abandoned sparse tree's prologue asked for {requests} codes"


async def _double_start(tb, codes, first, second):
    """Start tree ``first`` (params) and, in the next cycle, ``second`` (params, seed, tree index)."""
    dut = tb.dut
    tb.forget()
    await RisingEdge(dut.clk)
    tb.configure(*codes.shape, first, 9, 2)
    dut.start.value = 1
    await RisingEdge(dut.clk)
    tb.configure(*codes.shape, *second)
    await RisingEdge(dut.clk)
    dut.start.value = 0
    tb.forget()


async def _leaf_over_sparse_then_sparse(tb, rows):
    """A sparse tree, replaced in the next cycle by a forest-mode tree on ``rows`` rows of
    one class (a root leaf, done at once), with a sparse tree queued behind: the trace
    SymbiYosys found for 'Draw the tree's feature -> Draw the bootstrap' (4 rows)."""
    all_codes, _, _ = parity_dataset(tb)
    trees = _trees(tb)
    codes, labels = all_codes[:rows], np.zeros(rows, dtype=np.int64)
    sequence = [(trees["forest"], 6, 3), (trees["sparse"], 6, 4)]
    started = tb.start
    tb.start = lambda: _double_start(tb, codes, trees["sparse"], sequence[0])
    try:
        await tb.check_sequence(codes, labels, sequence, f"a root leaf of {rows} rows started over a sparse "
                                                         f"tree, a sparse tree queued")
    finally:
        tb.start = started


@cocotb.test()
async def abandoned_prologue_is_not_restarted(dut):
    """The trace SymbiYosys found for 'Draw the tree's feature -> Draw the bootstrap' before
    the fix (a sparse tree replaced by a root leaf of 4 rows, a sparse tree queued behind,
    no random stalls): the prologue now begins only from 'Idle' (proved in
    sim.coverage.proofs); both trees must match the model."""
    tb = PETestbench(dut)
    await tb.begin()
    tb.without_stalls()
    seen = []
    watcher = cocotb.start_soon(_watch_prologue(tb, "Draw the tree's feature", "Draw the bootstrap", seen))
    await _leaf_over_sparse_then_sparse(tb, 4)
    watcher.cancel()
    assert not seen, f"the prologue was restarted while waiting for its draw at cycles {seen}"


async def _watch_prologue(tb, source, target, seen):
    """Append the cycle count to ``seen`` whenever the prologue goes from ``source`` to ``target``."""
    prologue = next(m for m in state_machines("processing_element", tb.design) if m.group == "sparse/prologue_state")
    encoding = {name: value for value, name in prologue.states.items()}
    handle, previous, cycle = tb.dut.sparse.prologue_state, None, 0
    while True:
        await RisingEdge(tb.dut.clk)
        await Timer(1, "ns")
        state, cycle = int(handle.value), cycle + 1
        if previous == encoding[source] and state == encoding[target]:
            seen.append(cycle)
        previous = state


@cocotb.test()
async def stale_prologue_is_not_taken(dut):
    """The design bug found by coverage (fixed in hw/pe/sparse.py and controller.py): with
    16 rows, the abandoned prologue reached 'Ready' before the queued sparse tree was
    promoted, and the controller took its stale results (root counts 0). Both trees must
    match the model."""
    tb = PETestbench(dut)
    await tb.begin()
    await _leaf_over_sparse_then_sparse(tb, 16)


@cocotb.test()
async def stale_code_answer_is_held_off(dut):
    """A code answer offered while the sparse fill asks for none (its prologue is still
    drawing the bootstrap) must wait: the PE holds codes.ready low; the answer is then
    withdrawn (as after a restart) and the tree still matches the model."""
    tb = PETestbench(dut)
    await tb.begin()
    codes, labels, _ = parity_dataset(tb)
    sparse = _trees(tb)["sparse"]
    tb.prepare_lists(codes, labels)
    tb.configure(*codes.shape, sparse, 5, 3)
    await tb.start()
    before = (tb.codes.stall_cycles, tb.codes.transfers)
    tb.codes.send({"code": 0, "label": 0})
    await ClockCycles(dut.clk, 6)
    await ReadOnly()
    state = int(dut.sparse.prologue_state.value)
    stalls, transfers = tb.codes.stall_cycles - before[0], tb.codes.transfers - before[1]
    await RisingEdge(dut.clk)
    tb.codes.clear()
    assert transfers == 0 and stalls > 0, f"the stale answer: {transfers} transfers, {stalls} stall cycles"
    prologue = next(m for m in state_machines("processing_element", tb.design) if m.group == "sparse/prologue_state")
    drawing = next(e for e, name in prologue.states.items() if name == "Draw the bootstrap")
    assert state == drawing, f"the prologue left 'Draw the bootstrap' ({state}) before the answer was withdrawn"
    await tb.check_tree(codes, labels, sparse, 5, 3, "sparse tree after a withdrawn code answer")
