"""The large-dataset histogram PE experiment's build sizing, worked out by hand, and the
builds it sizes accepted by the hardware's constructor."""

from types import SimpleNamespace

import numpy as np
import pytest
from amaranth.hdl import Fragment

from hw.histogram_pe import HistogramPE
from sw.experiments.histogram_pe_trees import STATE_GROUPS, build_for, model_trees, state_names, table


def _tree(nodes, deepest):
    return SimpleNamespace(n_nodes=nodes, depth=np.array([0, deepest])), None


def test_a_build_holds_the_rows_features_and_the_largest_deepest_tree():
    codes, labels = np.zeros((10, 5), dtype=np.int64), np.array([0, 1, 2] * 3 + [0])
    build = build_for(codes, labels, [_tree(5, 2), _tree(9, 3)], lanes=2)
    # 5 features on 2 lanes: 3 passes, so 2 pass bits (4 passes); counts up to 10 rows: 4
    # bits; 9 nodes round up to 16; the deepest node at 3, so a limit of 4 never cuts it.
    assert build == {"max_rows": 10, "features": 5, "lanes": 2, "code_bits": 8, "classes": 3,
                     "count_bits": 4, "pass_bits": 2, "max_nodes": 16, "max_depth": 4}
    # One pass of 8 lanes: still one pass bit, the narrowest the engine has.
    assert build_for(codes, labels, [_tree(16, 1)], lanes=8)["pass_bits"] == 1
    assert build_for(codes, labels, [_tree(16, 1)], lanes=8)["max_nodes"] == 16
    assert build_for(codes, labels, [_tree(17, 1)], lanes=8)["max_nodes"] == 32


@pytest.mark.parametrize("n_rows, n_features, n_classes", [(40, 3, 2), (300, 70, 5)])
def test_the_sized_build_is_one_the_hardware_accepts(n_rows, n_features, n_classes):
    rng = np.random.default_rng(n_rows)
    codes = rng.integers(0, 256, (n_rows, n_features))
    labels = rng.integers(0, n_classes, n_rows)
    labels[:n_classes] = np.arange(n_classes)
    grown = model_trees(codes, labels, 2, lanes=4)
    build = build_for(codes, labels, grown, lanes=4)
    pe = HistogramPE(**build)
    Fragment.get(pe, None)                       # and it elaborates
    assert pe.max_nodes >= max(tree.n_nodes for tree, _ in grown)
    assert pe.features <= pe.lanes << pe.pass_bits


def test_the_table_names_the_clock_and_the_ratios():
    row = {"dataset": "d", "rows": 20000, "features": 100, "classes": 20, "lanes": 8, "nodes": 3000,
           "cycles": 1500, "model_cycles": 1000, "bound": 500, "ms": 2.0, "dal_ms": 5.0, "code_store": "chip",
           "mb_read": 0.0}
    text = table([row, {**row, "dataset": "e", "code_store": "memory", "mb_read": 22.04}], 99)
    assert "one PE at 99 MHz: ms" in text
    assert "| d | 20,000 x 100 (20) | on the chip | 8 | 3,000 | 1,500 | 1,000 | 1.50 | 500 | 3.00 | 2.00 | 5.00 | " \
           "2.50x |" in text
    assert "| e | 20,000 x 100 (20) | in memory, 22.0 MB read | 8 |" in text


def test_every_controller_state_is_in_one_group():
    grouped = [state for states in STATE_GROUPS.values() for state in states]
    assert sorted(grouped) == sorted(state_names().values())
