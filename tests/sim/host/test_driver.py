"""The host driver over a transport that is not the simulation: what a board's link plugs into.

A scripted accelerator in plain Python (asyncio, no simulator) stands in for a board's
transport; the driver must reach it only through the :class:`sim.host.transport.Transport`
methods, follow the register sequences of ``docs/registers.md`` and turn the STATUS flags
into :class:`sim.host.errors.AcceleratorError` naming the flag, its meaning and the limit.
"""

import asyncio

import numpy as np
import pytest

from hw.system import IDENTIFIER, REGISTERS
from sim.host.driver import HostDriver
from sim.host.errors import AcceleratorError
from sim.host.transport import Transport
from sw.methods.forest.model import TrainingParameters, train_forest

DESIGN = {"pe_count": 2, "max_trees": 8, "radix_bits": 4, "traversal_stages": 1, "max_rows": 48,
          "max_samples": 48, "feature_capacity": 4, "feature_lanes": 2, "code_bits": 8, "classes": 4,
          "max_depth": 4}
ADDRESS = {address: name for name, (address, *_) in REGISTERS.items()}


class ScriptedBoard(Transport):
    """Registers in a dict, buffers in lists; a start finishes at once with the STATUS word
    ``status_after_start`` and the node beats ``trees_out``."""

    def __init__(self, status_after_start, trees_out=()):
        self.registers = {"ID": IDENTIFIER, "STATUS": 0}
        self.writes, self.dataset, self.forest, self.rows = [], [], [], []
        self.status_after_start, self.trees_out, self.cycles = status_after_start, list(trees_out), 0

    async def write_register(self, address, value):
        name = ADDRESS[address]
        self.writes.append(name)
        self.registers[name] = value
        if name == "CONTROL" and value == 1:
            self.registers["STATUS"] = self.status_after_start
            self.registers["TREES_DONE"] = 1

    async def read_register(self, address):
        return self.registers.get(ADDRESS[address], 0)

    async def send_dataset(self, beats):
        self.dataset += list(beats)

    async def send_forest(self, nodes):
        self.forest += list(nodes)

    def send_rows(self, beats):
        self.rows += list(beats)

    def received_trees(self):
        return self.trees_out

    def clear_trees(self):
        pass

    def received_predictions(self):
        return []

    def clear_predictions(self):
        pass

    async def wait_cycles(self, count):
        self.cycles += count
        await asyncio.sleep(0)

    def cycle_count(self):
        return self.cycles


def _job():
    codes = np.arange(40).reshape(10, 4) % 5
    labels = np.arange(10) % 2
    return codes, labels, TrainingParameters(n_classes=2, max_depth=None, max_samples=10, features_per_split=2)


def test_training_through_a_board_transport_follows_the_documented_sequence():
    codes, labels, params = _job()
    board = ScriptedBoard(status_after_start=1 << 1)           # done, no error
    host = HostDriver(None, DESIGN, transport=board)
    seen = []

    async def run():
        await host.load_dataset(codes, labels)
        return await host.train(params, 5, 0, poll=8, progress=seen.append)

    trees, _, _ = asyncio.run(run())
    assert trees == [] and seen == [1]
    # docs/registers.md, "Sequences": N_FEATURES, the dataset, N_ROWS, the configuration, start.
    assert board.writes == ["N_FEATURES", "N_ROWS", "SEED", "N_TREES", "N_SAMPLES", "FLAGS",
                            "FEATURES_PER_SPLIT", "DEPTH_LIMIT", "MIN_SAMPLES_SPLIT",
                            "MIN_SAMPLES_LEAF", "CONTROL"]
    assert len(board.dataset) == 10 * 2                         # 4 features on 2 lanes
    assert board.registers["N_FEATURES"] == 4 and board.registers["N_ROWS"] == 10


def test_a_tree_error_names_the_flag_its_meaning_and_the_builds_depth():
    codes, labels, params = _job()
    board = ScriptedBoard(status_after_start=1 << 1 | 1 << 5)  # done, tree_error (bit 5)
    host = HostDriver(None, DESIGN, transport=board)
    with pytest.raises(AcceleratorError) as caught:
        asyncio.run(host.train(params, 5, 3, poll=8))
    text = str(caught.value)
    assert caught.value.flags == ("tree_error",)
    assert "STATUS.tree_error (a tree needed more levels than MAX_DEPTH" in text
    assert "max_depth = 4 levels" in text and "refit with max_depth <= 4" in text


def test_a_bad_configuration_and_a_training_that_never_ends_are_named():
    codes, labels, params = _job()
    host = HostDriver(None, DESIGN, transport=ScriptedBoard(status_after_start=1 << 1 | 1 << 2))
    with pytest.raises(AcceleratorError, match=r"STATUS\.bad_config \(the training configuration"):
        asyncio.run(host.train(params, 5, 3, poll=8))
    host = HostDriver(None, DESIGN, transport=ScriptedBoard(status_after_start=1))    # busy forever
    with pytest.raises(AcceleratorError, match="did not finish within 64 cycles"):
        asyncio.run(host.train(params, 5, 3, budget=64, poll=8))


def test_a_forest_goes_to_the_board_as_node_beats():
    codes, labels, params = _job()
    trees = train_forest(codes, labels, params, 5, 2)
    board = ScriptedBoard(status_after_start=0)
    asyncio.run(HostDriver(None, DESIGN, transport=board).load_forest(trees))
    assert len(board.forest) == sum(tree.n_nodes for tree in trees)
    assert [beat["tree"] for beat in board.forest] == [t for t, tree in enumerate(trees)
                                                       for _ in range(tree.n_nodes)]
    assert board.registers["N_TREES"] == 2
