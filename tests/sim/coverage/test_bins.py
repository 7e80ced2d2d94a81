"""The case-bin classifiers, on cases worked out by hand."""

import numpy as np

from sim.coverage import bins
from sim.support.trees import PECapacity
from sw.methods.forest.model import TrainingParameters, Tree


def test_a_segment_of_one_entry_has_no_boundary():
    hits = bins.gini_segment([5], [1], [3], 1, classes=4, row_bits=4)
    assert hits == sorted([("segment length", "1"), ("classes present", "one"), ("outcome", "no valid split")])


def test_a_tie_for_the_best_boundary_is_found():
    # Boundaries after entries 1, 2, 3: scores 1 + 5/3, 1 + 1, 5/3 + 1: the first and last tie.
    hits = bins.gini_segment([0, 1, 2, 3], [0, 1, 1, 0], [1, 1, 1, 1], 1, classes=2, row_bits=4)
    assert ("score ties", "tie for the best") in hits
    assert ("classes present", "every class") in hits
    assert ("outcome", "split found") in hits


def test_no_tie_when_one_boundary_is_best():
    hits = bins.gini_segment([0, 1, 2, 3], [0, 0, 1, 1], [1, 1, 1, 1], 1, classes=2, row_bits=4)
    assert ("score ties", "tie for the best") not in hits


def test_min_samples_leaf_boundaries_count_entries_on_the_smaller_side():
    # Four distinct codes: smaller sides 1, 2, 1. With a limit of 2: one below (1) and at (2).
    hits = bins.gini_segment([0, 1, 2, 3], [0, 1, 0, 1], [1, 1, 1, 1], 2, classes=2, row_bits=4)
    assert ("min_samples_leaf", "boundary exactly at") in hits
    assert ("min_samples_leaf", "boundary one below") in hits
    assert ("min_samples_leaf", "boundary one above") not in hits
    # Equal codes are no boundary: [0, 0, 1, 1] has one boundary, two entries a side.
    hits = bins.gini_segment([0, 0, 1, 1], [0, 1, 0, 1], [1, 1, 1, 1], 1, classes=2, row_bits=4)
    assert [label for group, label in hits if group == "min_samples_leaf"] == ["boundary one above"]


def test_the_longest_segment_is_the_largest_count_of_row_bits():
    hits = bins.gini_segment(np.arange(15), np.zeros(15, int), np.ones(15, int), 1, classes=2, row_bits=4)
    assert ("segment length", "maximum") in hits
    hits = bins.gini_segment(np.arange(14), np.zeros(14, int), np.ones(14, int), 1, classes=2, row_bits=4)
    assert ("segment length", "maximum") not in hits


def _stump(left_rows, right_rows):
    """A root split into two leaves, with two classes in the root."""
    n = left_rows + right_rows
    return Tree(feature=np.array([0, -1, -1]), threshold_code=np.array([4, -1, -1]),
                left_child=np.array([1, -1, -1]), right_child=np.array([2, -1, -1]),
                class_counts=np.array([[left_rows, right_rows], [left_rows, 0], [0, right_rows]]),
                majority_class=np.array([0, 0, 1]), n_samples=np.array([n, left_rows, right_rows]),
                n_rows=np.array([n, left_rows, right_rows]), depth=np.array([0, 1, 1]))


def test_pe_tree_boundaries_capacities_and_depth_limit():
    # Seven rows split 3 + 4: at min_samples_split 7, one above 2 * min_samples_leaf 3, and the
    # smaller child exactly at min_samples_leaf; a PE of 7 rows and depth 1 holds 3 nodes.
    capacity = PECapacity({"max_rows": 7, "max_samples": 7, "feature_capacity": 2, "feature_lanes": 2,
                           "code_bits": 4, "classes": 2, "max_depth": 1})
    params = TrainingParameters(n_classes=2, max_samples=7, min_samples_split=7, min_samples_leaf=3)
    hits = bins.pe_tree(_stump(3, 4), params, 7, 2, "done", capacity, sparse=False)
    for expected in [("min_samples_split", "node exactly at"), ("min_samples_leaf", "node one above"),
                     ("min_samples_leaf", "child exactly at"), ("classes present", "every class"),
                     ("capacity", "rows"), ("capacity", "features"), ("capacity", "nodes"),
                     ("capacity", "in-bag rows"), ("depth", "capacity reached"), ("outcome", "done"),
                     ("mode", "forest")]:
        assert expected in hits, expected
    assert ("depth", "limit reached") not in hits            # no max_depth given
    limited = TrainingParameters(n_classes=2, max_samples=7, max_depth=0)
    tree = _stump(3, 4)
    root_only = Tree(*(getattr(tree, name)[:1] for name in ("feature", "threshold_code", "left_child",
                                                             "right_child", "class_counts", "majority_class",
                                                             "n_samples", "n_rows", "depth")))
    hits = bins.pe_tree(root_only, limited, 7, 1, "done", capacity, sparse=False)
    assert ("depth", "limit reached") in hits and ("capacity", "features") not in hits


def test_an_overflowing_tree_samples_its_outcome_only():
    capacity = PECapacity({"max_rows": 8, "max_samples": 8, "feature_capacity": 2, "feature_lanes": 2,
                           "code_bits": 4, "classes": 2, "max_depth": 3})
    params = TrainingParameters(n_classes=2, max_samples=8, thesis_mode=True)
    hits = bins.pe_tree(None, params, 5, 1, "depth_overflow", capacity, sparse=True)
    assert hits == sorted([("outcome", "depth_overflow"), ("mode", "thesis"), ("mode", "sparse fill"),
                           ("depth", "capacity reached")])


def test_every_case_bin_a_classifier_returns_is_declared():
    cases = [("gini_scanner", bins.gini_segment([0, 1, 2, 3], [0, 1, 1, 0], [1, 1, 1, 1], 2, 2, 4)),
             ("radix_sorter", bins.sorter_list([3], 8) + bins.sorter_list([1, 2, 3, 4], 4)),
             ("inbag_builder", bins.inbag_tree(1, 1, 1, 8, 4) + bins.inbag_tree(8, 4, 0, 8, 4)),
             ("partition_unit", bins.partition_job(np.array([1]), np.ones(4, bool), 1))]
    for design, hits in cases:
        for group, label in hits:
            assert label in bins.CASE_BINS[design][group], (design, group, label)


def test_forest_cases_count_pes_only_for_the_trainer():
    assert sorted(bins.forest_case(2, 2, [], False)) == [("forest", "every PE busy"), ("forest", "forest mode"),
                                                        ("outcome", "done")]
    assert sorted(bins.forest_case(1, 2, [1], True)) == [("forest", "fewer trees than PEs"), ("forest", "thesis mode"),
                                                        ("outcome", "tree error")]
    assert sorted(bins.forest_case(5, None, True, False)) == [("forest", "forest mode"), ("outcome", "tree error")]
    for design in ("forest_trainer", "forest_system"):
        for group, label in bins.forest_case(1, 2 if design == "forest_trainer" else None, [], True):
            assert label in bins.CASE_BINS[design][group], (design, group, label)
