"""``HardwareForestClassifier(backend="sim")`` on datasets larger than the ``ForestSystem``'s
builds (issue #22): random20k (20,000 x 100), isolet (7,797 x 617) and mnist_test10k
(10,000 x 784) trained on the simulated histogram system, tree for tree against
``backend="model"``.

``python -m sw.experiments.histogram_fits [--datasets random20k isolet mnist_test10k] [--trees 2]
[--out results/histogram_fits.md]``

Per dataset: the estimator as a user calls it (``backend="sim"``, ``sim_engine="auto"``,
``code_bits=8``, forest mode, ``--trees`` trees, ``random_state=7``), which picks the
histogram system because no ``ForestSystem`` build holds the data, builds one sized to it
(or reuses one already made) and trains; then a second fit of the same shape
(``random_state=8``, one tree) must reuse that build. Both are compared node for node with
``backend="model"``. Reported: the build (and where it keeps the codes: isolet's and
MNIST's are read from the simulated DDR4, ``sim.histogram_backend``), nodes and simulated
cycles a tree, wall times of
both fits (the first includes the build: Verilog written, Verilator compiled), and whether
the trees are equal. The wall times are this 2-core machine's, for orientation only.
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from sim.histogram_backend import built_at
from sw.experiments.out_of_core import raw_dataset
from sw.methods.forest.estimator import HardwareForestClassifier

__all__ = ["fit_both", "measure", "table", "main"]

DEFAULT_DATASETS = ("random20k", "isolet", "mnist_test10k")
SETTINGS = {"code_bits": 8, "verbose": 1}
TREE_FIELDS = ("feature", "threshold_code", "left_child", "right_child", "class_counts", "majority_class",
               "n_samples", "n_rows", "depth")


def _equal(a, b):
    return len(a) == len(b) and all(
        x.n_nodes == y.n_nodes and all(np.array_equal(getattr(x, f), getattr(y, f)) for f in TREE_FIELDS)
        for x, y in zip(a, b))


def fit_both(X, y, n_trees, seed):
    """The simulated fit (timed) and the model's; returns (sim estimator, seconds, equal)."""
    settings = {**SETTINGS, "n_estimators": n_trees, "random_state": seed}
    started = time.monotonic()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "backend='sim' trained this forest on the histogram system")
        simulated = HardwareForestClassifier(backend="sim", **settings).fit(X, y)
    seconds = time.monotonic() - started
    model = HardwareForestClassifier(**settings).fit(X, y)
    return simulated, seconds, _equal(simulated.trees_, model.trees_)


def measure(name, n_trees, log=print):
    X, y = raw_dataset(name)
    log(f"{name}: {X.shape[0]:,} x {X.shape[1]}, {len(np.unique(y))} classes: fitting {n_trees} tree(s) with "
        f"backend='sim' (a new shape builds for minutes)", flush=True)
    first, first_seconds, first_equal = fit_both(X, y, n_trees, 7)
    built = built_at(first.sim_design_)
    second, second_seconds, second_equal = fit_both(X, y, 1, 8)
    reused = (second.sim_design_ == first.sim_design_ and built is not None
              and built_at(first.sim_design_) == built)
    row = {"dataset": name, "shape": X.shape, "classes": len(np.unique(y)), "engine": first.sim_engine_,
           "design": first.sim_design_, "trees": n_trees,
           "nodes": np.mean([tree.n_nodes for tree in first.trees_]),
           "cycles": first.train_cycles_ / n_trees, "first_seconds": first_seconds,
           "second_seconds": second_seconds, "equal": first_equal and second_equal, "reused": reused}
    log(f"{name}: engine {row['engine']}, {row['nodes']:,.0f} nodes and {row['cycles']:,.0f} cycles a tree; "
        f"fits {first_seconds:.0f} s (with the build) and {second_seconds:.0f} s; equal to the model: "
        f"{row['equal']}; build reused: {reused}", flush=True)
    return row


def _codes(design):
    """Where a build keeps the codes (``sim.histogram_backend``'s choice)."""
    if design.get("code_store", "chip") == "memory":
        return f"in memory ({design['code_word_bits']}-bit words)"
    return "on the chip"


def table(rows):
    lines = ["| dataset | rows x features (classes) | engine (build: rows x features, lanes, classes, nodes) | "
             "codes | trees | nodes a tree | cycles a tree | first fit, build included: s | second fit (1 tree): s | "
             "build reused | trees equal to backend='model' |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        d = row["design"]
        lines.append(f"| {row['dataset']} | {row['shape'][0]:,} x {row['shape'][1]} ({row['classes']}) | "
                     f"{row['engine']} ({d['max_rows']:,} x {d['features']}, {d['lanes']}, {d['classes']}, "
                     f"{d['max_nodes']:,}) | {_codes(d)} | {row['trees']} | {row['nodes']:,.0f} | {row['cycles']:,.0f} | "
                     f"{row['first_seconds']:.0f} | {row['second_seconds']:.0f} | "
                     f"{'yes' if row['reused'] else 'no'} | {'yes' if row['equal'] else 'NO'} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DEFAULT_DATASETS))
    parser.add_argument("--trees", type=int, default=2, help="trees of the first fit")
    parser.add_argument("--out", default="results/histogram_fits.md")
    arguments = parser.parse_args(argv)
    rows = [measure(name, arguments.trees) for name in arguments.datasets]
    text = table(rows)
    print(text)
    out = Path(arguments.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")
    print(f"wrote {out}")
    if not all(row["equal"] and row["reused"] for row in rows):
        raise SystemExit("a simulated forest differs from the model's, or a build was not reused")


if __name__ == "__main__":
    main()
