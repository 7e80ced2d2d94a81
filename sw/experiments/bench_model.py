"""Benchmark: golden-model fit time against scikit-learn's, measured in the same run.

100 trees on ctg (2126 x 21, 3 classes), both single-threaded (the model with n_jobs=1,
``RandomForestClassifier(n_jobs=1)``), same hyper-parameters. Runs alternate between the
two and the best of ``--repeats`` is kept for each, in wall-clock and in CPU time (CPU
time is the fairer figure on a shared machine). Writes ``results/bench_model.md``.

Run ``python -m sw.experiments.bench_model [--dataset ctg] [--trees 100] [--repeats 3]``.
"""

import argparse
import pathlib
import platform

import numpy as np
import sklearn
from sklearn.ensemble import RandomForestClassifier

from sw.data.datasets import load
from sw.experiments.cv import timed
from sw.methods.forest.estimator import HardwareForestClassifier


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="ctg")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default="results/bench_model.md")
    arguments = parser.parse_args()
    data = load(arguments.dataset)
    runs = {"model": [], "sklearn": []}
    for repeat in range(arguments.repeats):
        runs["sklearn"].append(timed(lambda: RandomForestClassifier(
            arguments.trees, n_jobs=1, random_state=repeat).fit(data.X, data.y)))
        runs["model"].append(timed(lambda: HardwareForestClassifier(
            arguments.trees, n_jobs=1, random_state=repeat).fit(data.X, data.y)))
    best = {name: (min(r[0] for r in values), min(r[1] for r in values))
            for name, values in runs.items()}
    nodes = np.mean([tree.n_nodes for tree in runs["model"][-1][2].trees_])
    sk_nodes = np.mean([e.tree_.node_count for e in runs["sklearn"][-1][2].estimators_])
    lines = [
        f"# Golden model fit time vs scikit-learn ({arguments.dataset}, "
        f"{data.X.shape[0]} x {data.X.shape[1]}, {arguments.trees} trees, single-threaded)",
        "",
        f"Best of {arguments.repeats} runs each; Python {platform.python_version()}, "
        f"NumPy {np.__version__}, scikit-learn {sklearn.__version__}, "
        f"{platform.processor() or platform.machine()}.",
        "",
        "| fit | wall s | CPU s | mean nodes per tree |",
        "|---|---|---|---|",
        f"| golden model (sw.methods.forest.estimator, backend=model) | {best['model'][0]:.3f} | "
        f"{best['model'][1]:.3f} | {nodes:.1f} |",
        f"| scikit-learn RandomForestClassifier | {best['sklearn'][0]:.3f} | "
        f"{best['sklearn'][1]:.3f} | {sk_nodes:.1f} |",
        f"| ratio model / scikit-learn | {best['model'][0] / best['sklearn'][0]:.2f} | "
        f"{best['model'][1] / best['sklearn'][1]:.2f} | |",
        "",
        "Target: ratio <= 3.",
    ]
    out = pathlib.Path(arguments.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
