"""The PE corner dataset: the golden model grows it into a complete tree that fills the PE."""

import types

import numpy as np

from sim.coverage.tb_pe_corners import parity_dataset
from sim.support.trees import PECapacity
from sw.methods.forest.model import TrainingParameters, train_tree


def test_parity_dataset_fills_the_node_memory():
    capacity = PECapacity({"max_rows": 64, "max_samples": 64, "feature_capacity": 8, "feature_lanes": 4,
                           "code_bits": 8, "classes": 4, "max_depth": 8})
    codes, labels, b = parity_dataset(types.SimpleNamespace(**vars(capacity)))
    assert codes.shape == (64, 8) and b == 6
    params = TrainingParameters(n_classes=2, bootstrap=False, max_samples=1, features_per_split=8)
    tree = train_tree(codes, labels, params, 5, 3)
    assert tree.n_nodes == capacity.max_nodes == 127
    assert int(tree.depth.max()) == 6 and np.all(tree.n_rows[tree.is_leaf] == 1)
