"""Trees grown from class histograms equal the golden model's, node for node."""

import numpy as np
import pytest

from sw.data.datasets import available, load
from sw.experiments.compare.hwtime import one_pass_bound_cycles
from sw.methods.forest.histogram import (
    best_split_of_histogram, class_histogram, histogram_cells, train_tree_from_histograms)
from sw.methods.forest.model import (
    NodeFeatureDrawer, TrainingParameters, best_split_of_segment, train_tree, trees_equal)
from sw.methods.forest.quantize import make_quantizer
from sw.methods.forest.rng import TreeRandom


def _random_case(rng):
    """Codes (with constant and few-valued columns), labels, parameters and code bits."""
    n, n_features, n_classes = int(rng.integers(2, 120)), int(rng.integers(1, 12)), int(rng.integers(2, 5))
    bits = int(rng.choice([1, 2, 3, 8]))
    codes = rng.integers(0, min(int(rng.choice([1, 2, 3, 1 << bits])), 1 << bits), size=(n, n_features))
    for column in range(n_features):
        if rng.random() < 0.3:
            codes[:, column] = rng.integers(0, 1 << bits)
    labels = rng.integers(0, n_classes, size=n)
    params = TrainingParameters(
        n_classes=n_classes, max_depth=int(rng.choice([1, 3, 40])) if rng.random() < 0.5 else None,
        max_samples=int(rng.integers(1, 2 * n)), bootstrap=bool(rng.random() < 0.8),
        features_per_split=int(rng.integers(1, n_features + 3)),
        thesis_mode=bool(rng.random() < 0.25), min_samples_split=int(rng.integers(2, 6)),
        min_samples_leaf=int(rng.integers(1, 4)))
    return codes, labels, params, bits


def test_a_histogram_scan_finds_the_sorted_scans_split():
    rng = np.random.default_rng(1)
    for case in range(400):
        n, n_classes = int(rng.integers(1, 60)), int(rng.integers(2, 6))
        n_bins = int(rng.choice([2, 4, 256]))
        codes = np.sort(rng.integers(0, int(rng.choice([1, 2, n_bins])), size=n))
        labels = rng.integers(0, int(rng.choice([1, n_classes])), size=n)
        weights = rng.integers(1, int(rng.choice([2, 4, 30])), size=n)
        leaf = int(rng.choice([1, 1, 2, 5]))
        expected = best_split_of_segment(codes, labels, weights, n_classes, leaf)
        got = best_split_of_histogram(*class_histogram(codes, labels, weights, n_bins, n_classes), leaf)
        assert got.valid == expected.valid, case
        if expected.valid:
            fields = ("threshold_code", "n_rows_left", "score_numerator", "score_denominator")
            assert [getattr(got, f) for f in fields] == [getattr(expected, f) for f in fields], case
            assert got.left_class_counts.tolist() == expected.left_class_counts.tolist(), case
            assert got.right_class_counts.tolist() == expected.right_class_counts.tolist(), case


def test_the_cells_scanned_as_entries_give_the_histograms_split():
    # The histogram unit hands a Gini scan the non-zero cells as entries. Scanned as a
    # sorted segment (min_samples_leaf 1: every boundary between codes counts), they give
    # the histogram's split, and the rows carried on the cells left of it are its rows left.
    rng = np.random.default_rng(2)
    for case in range(300):
        n, n_classes, n_bins = int(rng.integers(1, 80)), int(rng.integers(2, 6)), int(rng.choice([2, 8, 256]))
        codes = rng.integers(0, min(int(rng.choice([1, 3, n_bins])), n_bins), size=n)
        labels = rng.integers(0, n_classes, size=n)
        weights = rng.integers(1, int(rng.choice([2, 9])), size=n)
        counts, rows = class_histogram(codes, labels, weights, n_bins, n_classes)
        cells = histogram_cells(counts, rows)
        assert [cell[:2] for cell in cells] == sorted(set(zip(codes.tolist(), labels.tolist()))), case
        assert sum(cell[2] for cell in cells) == weights.sum() and sum(cell[3] for cell in cells) == n
        cell_codes, cell_labels, cell_weights, cell_rows = (np.array(column) for column in zip(*cells))
        expected = best_split_of_histogram(counts, rows)
        got = best_split_of_segment(cell_codes, cell_labels, cell_weights, n_classes, 1)
        assert got.valid == expected.valid, case
        if expected.valid:
            fields = ("threshold_code", "score_numerator", "score_denominator")
            assert [getattr(got, f) for f in fields] == [getattr(expected, f) for f in fields], case
            assert got.left_class_counts.tolist() == expected.left_class_counts.tolist(), case
            left_rows = int(cell_rows[cell_codes <= expected.threshold_code].sum())
            assert left_rows == expected.n_rows_left == np.count_nonzero(codes <= expected.threshold_code)


def test_equal_scores_go_to_the_lower_code():
    # Codes 0..3 with labels 0, 1, 1, 0: the boundaries after 0 and after 2 score the same.
    counts, rows = class_histogram([0, 1, 2, 3], [0, 1, 1, 0], [1, 1, 1, 1], 4, 2)
    found = best_split_of_histogram(counts, rows)
    assert (found.threshold_code, found.n_rows_left) == (0, 1)


def test_trees_equal_the_models_on_random_data_and_the_draw_rewinds():
    rng = np.random.default_rng(2)
    rewinds = 0
    for case in range(250):
        codes, labels, params, bits = _random_case(rng)
        tree, work = train_tree_from_histograms(codes, labels, params, 7, case, bits)
        assert trees_equal(tree, train_tree(codes, labels, params, 7, case)), (case, params)
        rewinds += work.rewinds
    assert rewinds > 0, "no draw ran out of features: the rewind was not exercised"


@pytest.mark.parametrize("lanes", [2, 3, 8])
def test_lanes_drawing_a_pass_at_once_grow_the_models_trees(lanes):
    # A pass of lanes draws past the model's stop whenever the last feature needed is not
    # on its last lane: those draws are rewound, their histograms gathered and not used.
    rng = np.random.default_rng(2)
    overdrawn = 0
    for case in range(150):
        codes, labels, params, bits = _random_case(rng)
        tree, work = train_tree_from_histograms(codes, labels, params, 7, case, bits, lanes)
        assert trees_equal(tree, train_tree(codes, labels, params, 7, case)), (case, lanes, params)
        one, one_work = train_tree_from_histograms(codes, labels, params, 7, case, bits)
        assert work.searched_rows == one_work.searched_rows
        assert work.full_scans == one_work.full_scans
        overdrawn += work.drawn_features - one_work.drawn_features
        assert work.drawn_features >= one_work.drawn_features
    assert overdrawn > 0, "no pass drew past the model's stop: the overdraw was not exercised"


def test_without_the_rewind_the_trees_differ(monkeypatch):
    """The rewind is what keeps the later nodes' draws on the model's stream."""
    monkeypatch.setattr(NodeFeatureDrawer, "rewind", lambda self, position: None)
    rng = np.random.default_rng(2)
    differing = 0
    for case in range(250):
        codes, labels, params, bits = _random_case(rng)
        tree, _ = train_tree_from_histograms(codes, labels, params, 7, case, bits)
        differing += not trees_equal(tree, train_tree(codes, labels, params, 7, case))
    assert differing > 0


@pytest.mark.parametrize("name", ["iris", "sonar", "ctg"])
@pytest.mark.parametrize("thesis_mode", [False, True])
def test_trees_equal_the_models_on_datasets(name, thesis_mode):
    if not available(name):
        pytest.skip(f"{name} not found: set HWFOREST_DATA_DIR (e.g. ../shared/datasets)")
    data = load(name)
    codes = make_quantizer("rank", 8).fit_transform(data.X)
    labels = np.unique(data.y, return_inverse=True)[1]
    n_features = codes.shape[1]
    params = TrainingParameters(
        n_classes=int(labels.max()) + 1, max_samples=len(labels) if not thesis_mode else 16,
        features_per_split=max(1, int(np.sqrt(n_features))), thesis_mode=thesis_mode)
    for index in range(3):
        tree, _ = train_tree_from_histograms(codes, labels, params, 11, index, 8)
        assert trees_equal(tree, train_tree(codes, labels, params, 11, index)), (name, index)


def test_one_pass_over_the_rows_per_node_is_the_one_pass_bound():
    """With every searched node split (distinct codes, every feature drawn), the rows read
    once per searched node sum to the bound computed from the tree alone."""
    rng = np.random.default_rng(3)
    codes = np.stack([rng.permutation(200) for _ in range(5)], axis=1)
    labels = rng.integers(0, 3, size=200)
    params = TrainingParameters(n_classes=3, max_samples=200, features_per_split=5)
    tree, work = train_tree_from_histograms(codes, labels, params, 5, 0, 8)
    assert work.searched_rows == one_pass_bound_cycles(tree) > 0
    assert work.gathered_codes == 5 * work.searched_rows
    assert work.constant_draws == work.rewinds == 0


def test_the_stream_rewinds_to_a_position_seen():
    drawer = NodeFeatureDrawer(TreeRandom(3, 4))
    start = drawer.position
    first = [drawer.integer(10) for _ in range(300)]       # past a block of raw words
    drawer.rewind(start)
    assert [drawer.integer(10) for _ in range(300)] == first
    with pytest.raises(ValueError, match="at least 0, not -1"):
        drawer.rewind(-1)


def test_codes_beyond_the_bins_are_refused():
    with pytest.raises(ValueError, match=r"codes must lie in 0..3, not 0..4"):
        class_histogram([0, 4], [0, 1], [1, 1], 4, 2)



def test_the_work_per_node_adds_up_to_the_tree_totals():
    rng = np.random.default_rng(4)
    for case in range(60):
        codes, labels, params, bits = _random_case(rng)
        _, work = train_tree_from_histograms(codes, labels, params, 9, case, bits)
        rows, drawn, scanned, cells = np.array(
            [(len(ids), *rest) for ids, *rest in work.nodes], dtype=np.int64).reshape(-1, 4).T
        assert all(np.all(np.diff(ids) > 0) for ids, *_ in work.nodes)
        # A cell holds at least one row; a scanned histogram has two occupied bins at least.
        assert np.all((cells <= rows) & ((cells >= 2) == (scanned > 0)))
        assert int(np.sum(rows)) == work.searched_rows
        assert int(np.sum(drawn)) == work.drawn_features
        assert int(np.sum(scanned)) == work.full_scans == work.drawn_features - work.constant_draws
        assert int(np.sum(rows * drawn)) == work.gathered_codes
