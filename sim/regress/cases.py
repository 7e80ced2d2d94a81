"""The random cases of the regression: build shapes, drawing, and a case's dataset.

A case is a small JSON-able dict drawn from one 32-bit *case seed* and the name of the
build shape it runs on; everything else (dataset shape and contents, training
parameters, forest seed, number of trees, stall pattern) follows from the two, so a case
is rerun from its seed alone (``python -m sim.regress --case SEED --shape SHAPE``).
A run of N cases from a run seed S takes case *i*'s seed and shape from
``numpy.random.SeedSequence([S, i])``: the same N cases for the same S on any cluster.

Values are drawn over the whole range the build and the configuration ports accept, each
end of a range with a raised probability (:func:`_edge`): one row, all of the build's
rows, one feature and ``feature_capacity``, two classes and ``classes``, a single class
present, constant features, codes of one or all ``code_bits`` bits, depth limits 0, 1
and ``max_depth`` or none, ``features_per_split`` 1 and all features, bootstraps of one
draw, of ``sparse_rows`` and one more (thesis mode), of ``max_samples``, no bootstrap,
``min_samples_split`` and ``min_samples_leaf`` at the node sizes where they start to
bite and at the largest value their ports hold, one tree and ``max_trees``, stalls from
none to 90 % of the cycles on both streams.
"""

import random

import numpy as np

from hw.checks import bits
from hw.designs import DESIGNS
from sw.methods.forest.model import TrainingParameters

__all__ = ["SHAPES", "shape_parameters", "case_seed_and_shape", "draw_case", "draw_cases",
           "materialise", "describe"]

#: The build shapes of the regression: name -> (design, parameters over its defaults).
#: ``small`` is the forest trainer of ``tests/sim/test_tb_trainer.py`` with one PE (so the
#: test suite builds it once for both); ``medium`` has two PEs, 256 rows, 16 features,
#: 8 classes, 12-bit codes and 32 trees.
SHAPES = {
    "small": ("forest_trainer", {
        "pe_count": 1, "max_trees": 16, "radix_bits": 4, "max_rows": 64, "max_samples": 64,
        "feature_capacity": 8, "feature_lanes": 4, "code_bits": 8, "classes": 4, "max_depth": 8,
        "sparse_rows": 16}),
    "medium": ("forest_trainer", {
        "pe_count": 2, "max_trees": 32, "radix_bits": 6, "max_rows": 256, "max_samples": 256,
        "feature_capacity": 16, "feature_lanes": 4, "code_bits": 12, "classes": 8, "max_depth": 12,
        "sparse_rows": 16}),
}

#: Most trees of a case that does not draw ``max_trees`` (keeps cases short).
FEW_TREES = 6


def shape_parameters(shape):
    """The complete design parameters of build shape ``shape`` (defaults included)."""
    design, parameters = SHAPES[shape]
    return {**DESIGNS[design][1], **parameters}


def case_seed_and_shape(run_seed, index, shapes):
    """Case ``index`` of the run ``run_seed``: its 32-bit seed and its shape (one of ``shapes``)."""
    seed, pick = np.random.SeedSequence([int(run_seed), int(index)]).generate_state(2)
    return int(seed), shapes[int(pick) % len(shapes)]


def draw_cases(run_seed, count, shapes=tuple(SHAPES)):
    """The ``count`` cases of run ``run_seed`` over the build shapes ``shapes``, each with its ``index``."""
    shapes = list(shapes)
    cases = []
    for index in range(count):
        case = draw_case(*case_seed_and_shape(run_seed, index, shapes))
        cases.append({"index": index, **case})
    return cases


def _edge(rng, low, high, p_edge=0.15):
    """An integer in [low, high], each end with probability ``p_edge`` (else uniform)."""
    draw = rng.random()
    if draw < p_edge:
        return low
    if draw < 2 * p_edge:
        return high
    return rng.randint(low, high)


def _port_max(width):
    return (1 << width) - 1


def draw_case(seed, shape):
    """The case of ``seed`` on build shape ``shape`` (a dict of plain values)."""
    build = shape_parameters(shape)
    rng = random.Random(seed)
    rows = _edge(rng, 1, build["max_rows"])
    features = _edge(rng, 1, build["feature_capacity"])
    classes = _edge(rng, 2, build["classes"])
    code_top = rng.choice([0, 1, 3, 15, _port_max(build["code_bits"])])
    labels = rng.choices(["uniform", "one_class", "skewed"], weights=[0.8, 0.08, 0.12])[0]
    thesis = rng.random() < 0.3
    bootstrap = rng.random() >= 0.15
    if not bootstrap:
        max_samples = rows
    elif thesis:
        sparse = build.get("sparse_rows", 0)
        max_samples = rng.choice([16, sparse, sparse + 1, 1, build["max_samples"],
                                  rng.randint(1, build["max_samples"])])
        max_samples = max(1, min(max_samples, build["max_samples"]))
    else:
        max_samples = rng.choice([rows, _edge(rng, 1, build["max_samples"])])
    max_depth = rng.choice([None, 0, 1, build["max_depth"], rng.randint(1, build["max_depth"]),
                            4 if thesis else rng.randint(1, build["max_depth"])])
    row_bits = bits(build["max_rows"] - 1)
    min_split = max(2, rng.choice([2, 2, 2, 3, rows, rows + 1, rng.randint(2, rows + 2),
                                   _port_max(row_bits + 2)]))
    min_leaf = rng.choice([1, 1, 1, 2, max(1, rows // 2), rows // 2 + 1, rng.randint(1, rows + 1),
                           _port_max(row_bits + 1)])
    probabilities = [0.0, 0.1, 0.3, 0.5, 0.9]
    trees_cap = min(build["max_trees"], FEW_TREES)
    trees = build["max_trees"] if rng.random() < 0.04 else rng.randint(1, trees_cap)
    return {
        "seed": int(seed), "shape": shape, "rows": rows, "features": features, "classes": classes,
        "code_top": code_top, "labels": labels, "data_seed": rng.getrandbits(32),
        "params": {"n_classes": classes, "max_depth": max_depth, "max_samples": max_samples,
                   "bootstrap": bootstrap, "features_per_split": _edge(rng, 1, features),
                   "thesis_mode": thesis, "min_samples_split": min_split,
                   "min_samples_leaf": min_leaf},
        "forest_seed": rng.getrandbits(32), "trees": trees,
        "idle_probability": rng.choice(probabilities),
        "stall_probability": rng.choice(probabilities), "stall_seed": rng.getrandbits(32),
    }


def materialise(case):
    """(codes, labels, TrainingParameters, forest seed, trees) of a drawn ``case``."""
    rng = np.random.Generator(np.random.PCG64(case["data_seed"]))
    rows, features, classes = case["rows"], case["features"], case["classes"]
    codes = rng.integers(0, case["code_top"] + 1, size=(rows, features), dtype=np.int64)
    if case["labels"] == "one_class":
        labels = np.full(rows, rng.integers(0, classes), dtype=np.int64)
    elif case["labels"] == "skewed":
        weights = rng.dirichlet(np.full(classes, 0.3))
        labels = rng.choice(classes, size=rows, p=weights).astype(np.int64)
    else:
        labels = rng.integers(0, classes, size=rows, dtype=np.int64)
    params = TrainingParameters(**case["params"])
    return codes, labels, params, case["forest_seed"], case["trees"]


def describe(case):
    """One line naming what a case is (for reports and progress)."""
    p = case["params"]
    mode = "thesis" if p["thesis_mode"] else "forest"
    sampling = f"bootstrap {p['max_samples']}" if p["bootstrap"] else "no bootstrap"
    return (f"{case['shape']}: {case['rows']}x{case['features']} codes<={case['code_top']}, "
            f"{case['classes']} classes ({case['labels']}), {case['trees']} trees, {mode} mode, "
            f"{sampling}, depth {p['max_depth']}, {p['features_per_split']} features/split, "
            f"split>={p['min_samples_split']}, leaf>={p['min_samples_leaf']}, "
            f"idle {case['idle_probability']}, stall {case['stall_probability']}")
