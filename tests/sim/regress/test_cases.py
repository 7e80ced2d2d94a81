"""The regression's case drawing, without Verilator: determinism, ranges, limits reached."""

import json

import numpy as np
import pytest

from hw.trainer import ForestTrainer
from sim.regress.cases import SHAPES, case_seed_and_shape, draw_case, draw_cases, materialise, shape_parameters
from sim.regress.report import corners


def test_the_same_run_seed_draws_the_same_cases():
    first, again = draw_cases(7, 50), draw_cases(7, 50)
    assert first == again
    assert json.loads(json.dumps(first)) == first, "cases must survive JSON (they travel to workers)"
    other = draw_cases(8, 50)
    assert [case["seed"] for case in other] != [case["seed"] for case in first]
    # A run's first cases do not depend on how many cases it has.
    assert draw_cases(7, 10) == first[:10]


def test_a_case_is_rebuilt_from_its_seed_and_shape_alone():
    for case in draw_cases(11, 30):
        alone = draw_case(case["seed"], case["shape"])
        assert {**alone, "index": case["index"]} == case
        codes, labels, params, seed, trees = materialise(case)
        again = materialise(alone)
        assert np.array_equal(codes, again[0]) and np.array_equal(labels, again[1])
        assert (params, seed, trees) == again[2:]


def test_shapes_are_spread_over_the_cases():
    shapes = [case_seed_and_shape(3, index, ["small", "medium"])[1] for index in range(400)]
    assert 120 < shapes.count("small") < 280
    assert {case["shape"] for case in draw_cases(3, 40, ["small"])} == {"small"}


def _ports(build):
    """Port widths of the trainer the shape builds (from the component itself)."""
    trainer = ForestTrainer(**{key: value for key, value in build.items()})
    trainer._MustUse__silence = True         # built to read its ports, not elaborated
    return {name: len(getattr(trainer, name)) for name in
            ("seed", "n_rows", "n_features", "n_trees", "n_samples", "features_per_split", "depth_limit",
             "min_samples_split", "min_samples_leaf")}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_cases_stay_within_the_build_and_reach_its_limits(shape):
    build = shape_parameters(shape)
    ports = _ports(build)
    cases = draw_cases(2026, 1500, [shape])
    rows, features, classes, trees, depths = set(), set(), set(), set(), set()
    for case in cases:
        codes, labels, params, seed, n_trees = materialise(case)
        n_rows, n_features = codes.shape
        # Within what the trainer's configuration ports hold (the component built, not the
        # drawing's own bounds: a value wider than a port is refused by the hardware); the
        # ranges of rows, features and trees are checked whole below.
        assert n_rows < 1 << ports["n_rows"] and n_features < 1 << ports["n_features"]
        assert n_trees < 1 << ports["n_trees"] and seed < 1 << ports["seed"]
        assert 2 <= params.n_classes <= build["classes"] and labels.max() < params.n_classes
        assert 0 <= codes.min() and codes.max() < 1 << build["code_bits"]
        assert params.features_per_split <= n_features
        assert params.max_samples <= build["max_samples"]
        assert params.max_depth is None or params.max_depth <= build["max_depth"]
        assert params.min_samples_split < 1 << ports["min_samples_split"]
        assert params.min_samples_leaf < 1 << ports["min_samples_leaf"]
        assert 0 <= case["idle_probability"] < 1 and 0 <= case["stall_probability"] < 1
        rows.add(n_rows), features.add(n_features), classes.add(params.n_classes)
        trees.add(n_trees), depths.add(params.max_depth)
    # Every case in range, and both ends of each range reached.
    assert (min(rows), max(rows)) == (1, build["max_rows"])
    assert (min(features), max(features)) == (1, build["feature_capacity"])
    assert (min(trees), max(trees)) == (1, build["max_trees"])
    assert {2, build["classes"]} <= classes
    assert {None, 0, 1, build["max_depth"]} <= depths
    reached = corners(cases)
    missing = [name for name in ("one class present", "constant features", "codes of all code_bits",
                                 "no bootstrap", "bootstrap of one draw", "bootstrap of max_samples",
                                 "thesis sparse fill full", "thesis one draw past the sparse fill",
                                 "min_samples_split = rows", "min_samples_leaf = rows/2 + 1",
                                 "no stalls", "90 % idle input", "90 % stalled output")
               if not reached.get(name)]
    assert not missing, f"never drawn in 1,500 cases: {missing}"


def test_corners_count_what_the_cases_are():
    case = draw_case(5, "small")
    build = shape_parameters("small")
    one_row = {**case, "rows": 1, "features": build["feature_capacity"], "trees": 1,
               "params": {**case["params"], "max_depth": None, "thesis_mode": False}}
    counted = corners([one_row, one_row])
    assert counted["one row"] == 2 and counted["all features of the build"] == 2
    assert counted["no depth limit"] == 2 and counted["one tree"] == 2 and counted["shape small"] == 2
    assert "all rows of the build" not in counted and "thesis mode" not in counted
