"""Accuracy study: the model's forest and thesis modes against scikit-learn (slow; a script).

Forest mode against ``RandomForestClassifier`` with the same hyper-parameters (100 trees,
sqrt features per node, full bootstrap, unlimited depth), and thesis mode (250 trees,
16-row bootstrap, depth 4, one feature per tree, fixed-point codes) next to the thesis's
Table 4.2 and scikit-learn with 250 trees of depth 4. Stratified 5-fold CV repeated with
several seeds, identical folds for every method.

Run ``python -m sw.experiments.accuracy [--seeds 3]``; writes ``results/accuracy_forest.md`` and
``results/accuracy_thesis.md`` (set HWFOREST_DATA_DIR for the non-bundled datasets).
"""

import argparse
import pathlib
import time

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import StratifiedKFold

from sw.data.datasets import load
from sw.methods.forest.estimator import HardwareForestClassifier

FOREST_DATASETS = ("iris", "sonar", "breast_cancer_coimbra", "heart_failure", "cmc", "ctg",
                   "wine", "breast_cancer_wisconsin")
THESIS_DATASETS = ("iris", "sonar", "breast_cancer_coimbra", "heart_failure", "cmc", "ctg")
#: Table 4.2 of the thesis (HW accuracy %, scikit-learn accuracy %).
THESIS_TABLE_4_2 = {"iris": (86, 96.25), "sonar": (53, 71.25),
                    "breast_cancer_coimbra": (59, 76.25), "heart_failure": (75, 86.25),
                    "cmc": (49, 51.25), "ctg": (74, 98.75)}


def cross_validated(make_models, X, y, seeds):
    """Accuracy per (model, seed, fold); ``make_models(seed)`` returns a dict of estimators."""
    scores = {}
    for seed in seeds:
        folds = StratifiedKFold(5, shuffle=True, random_state=seed)
        for fold, (train, test) in enumerate(folds.split(X, y)):
            for name, estimator in make_models(seed * 10 + fold).items():
                estimator.fit(X[train], y[train])
                scores.setdefault(name, []).append(estimator.score(X[test], y[test]))
    return {name: np.array(values) for name, values in scores.items()}


def forest_study(seeds):
    lines = ["| dataset | rows x features | model % (mean ± sd) | scikit-learn % | "
             "difference pp (mean ± sd over seeds) |", "|---|---|---|---|---|"]
    for name in FOREST_DATASETS:
        data = load(name)
        started = time.perf_counter()
        scores = cross_validated(lambda seed: {
            "model": HardwareForestClassifier(100, random_state=seed),
            "sklearn": RandomForestClassifier(100, random_state=seed, n_jobs=1)},
            data.X, data.y, seeds)
        per_seed = (scores["model"] - scores["sklearn"]).reshape(len(seeds), 5).mean(axis=1)
        lines.append(
            f"| {name} | {data.X.shape[0]} x {data.X.shape[1]} | "
            f"{100 * scores['model'].mean():.2f} ± {100 * scores['model'].std():.2f} | "
            f"{100 * scores['sklearn'].mean():.2f} ± {100 * scores['sklearn'].std():.2f} | "
            f"{100 * per_seed.mean():+.2f} ± {100 * per_seed.std():.2f} |")
        print(lines[-1], f"({time.perf_counter() - started:.0f} s)", flush=True)
    return lines


def thesis_study(seeds):
    lines = ["| dataset | thesis mode (model) % | scikit-learn 250 trees depth 4 % | "
             "thesis HW % (Table 4.2) | thesis scikit-learn % (Table 4.2) |",
             "|---|---|---|---|---|"]
    for name in THESIS_DATASETS:
        data = load(name)
        scores = cross_validated(lambda seed: {
            "thesis": HardwareForestClassifier(mode="thesis", random_state=seed),
            "sklearn": RandomForestClassifier(250, max_depth=4, random_state=seed, n_jobs=1)},
            data.X, data.y, seeds)
        hardware, software = THESIS_TABLE_4_2[name]
        lines.append(
            f"| {name} | {100 * scores['thesis'].mean():.2f} ± "
            f"{100 * scores['thesis'].std():.2f} | {100 * scores['sklearn'].mean():.2f} ± "
            f"{100 * scores['sklearn'].std():.2f} | {hardware} | {software} |")
        print(lines[-1], flush=True)
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="CV repetitions (default 3)")
    parser.add_argument("--only", choices=("forest", "thesis"), default=None)
    parser.add_argument("--out", default="results", help="output folder")
    arguments = parser.parse_args()
    out = pathlib.Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    seeds = list(range(arguments.seeds))
    header = (f"Stratified 5-fold CV x {len(seeds)} seeds (seeds {seeds}); accuracy mean ± "
              f"standard deviation over the {5 * len(seeds)} folds.\n\n")
    if arguments.only in (None, "forest"):
        lines = forest_study(seeds)
        (out / "accuracy_forest.md").write_text(header + "\n".join(lines) + "\n")
    if arguments.only in (None, "thesis"):
        lines = thesis_study(seeds)
        (out / "accuracy_thesis.md").write_text(header + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
