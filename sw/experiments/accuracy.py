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

from sklearn.ensemble import RandomForestClassifier

from sw.data.datasets import load
from sw.experiments import cv
from sw.experiments.report import RESULTS, markdown, results_dir
from sw.methods.forest.estimator import HardwareForestClassifier

FOREST_DATASETS = ("iris", "sonar", "breast_cancer_coimbra", "heart_failure", "cmc", "ctg",
                   "wine", "breast_cancer_wisconsin")
THESIS_DATASETS = ("iris", "sonar", "breast_cancer_coimbra", "heart_failure", "cmc", "ctg")
#: Table 4.2 of the thesis (HW accuracy %, scikit-learn accuracy %).
THESIS_TABLE_4_2 = {"iris": (86, 96.25), "sonar": (53, 71.25),
                    "breast_cancer_coimbra": (59, 76.25), "heart_failure": (75, 86.25),
                    "cmc": (49, 51.25), "ctg": (74, 98.75)}


#: Estimator seed of a fold: seed x 10 + fold (:func:`sw.experiments.cv.fold_seed`).
SEED_STRIDE = 10


def cross_validated(make_models, X, y, seeds):
    """Accuracy per (model, seed, fold); ``make_models(seed)`` returns a dict of estimators."""
    return cv.fold_scores(make_models, X, y, 5, seeds, stride=SEED_STRIDE)


def forest_study(seeds):
    """The forest-mode table (a Markdown string); prints each row when done."""
    header = ["dataset", "rows x features", "model % (mean ± sd)", "scikit-learn %",
              "difference pp (mean ± sd over seeds)"]
    body = []
    for name in FOREST_DATASETS:
        data = load(name)
        seconds, _, scores = cv.timed(lambda: cross_validated(lambda seed: {
            "model": HardwareForestClassifier(100, random_state=seed),
            "sklearn": RandomForestClassifier(100, random_state=seed, n_jobs=1)},
            data.X, data.y, seeds))
        per_seed = (scores["model"] - scores["sklearn"]).reshape(len(seeds), 5).mean(axis=1)
        body.append([
            name, f"{data.X.shape[0]} x {data.X.shape[1]}",
            f"{100 * scores['model'].mean():.2f} ± {100 * scores['model'].std():.2f}",
            f"{100 * scores['sklearn'].mean():.2f} ± {100 * scores['sklearn'].std():.2f}",
            f"{100 * per_seed.mean():+.2f} ± {100 * per_seed.std():.2f}"])
        print(markdown(header, body[-1:], pad=False).splitlines()[-1], f"({seconds:.0f} s)",
              flush=True)
    return markdown(header, body, pad=False)


def thesis_study(seeds):
    """The thesis-mode table (a Markdown string); prints each row when done."""
    header = ["dataset", "thesis mode (model) %", "scikit-learn 250 trees depth 4 %",
              "thesis HW % (Table 4.2)", "thesis scikit-learn % (Table 4.2)"]
    body = []
    for name in THESIS_DATASETS:
        data = load(name)
        scores = cross_validated(lambda seed: {
            "thesis": HardwareForestClassifier(mode="thesis", random_state=seed),
            "sklearn": RandomForestClassifier(250, max_depth=4, random_state=seed, n_jobs=1)},
            data.X, data.y, seeds)
        hardware, software = THESIS_TABLE_4_2[name]
        body.append([
            name, f"{100 * scores['thesis'].mean():.2f} ± {100 * scores['thesis'].std():.2f}",
            f"{100 * scores['sklearn'].mean():.2f} ± {100 * scores['sklearn'].std():.2f}",
            str(hardware), str(software)])
        print(markdown(header, body[-1:], pad=False).splitlines()[-1], flush=True)
    return markdown(header, body, pad=False)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="CV repetitions (default 3)")
    parser.add_argument("--only", choices=("forest", "thesis"), default=None)
    parser.add_argument("--out", default=RESULTS, help="output folder")
    arguments = parser.parse_args()
    out = results_dir(arguments.out)
    seeds = list(range(arguments.seeds))
    header = (f"Stratified 5-fold CV x {len(seeds)} seeds (seeds {seeds}); accuracy mean ± "
              f"standard deviation over the {5 * len(seeds)} folds.\n\n")
    if arguments.only in (None, "forest"):
        (out / "accuracy_forest.md").write_text(header + forest_study(seeds) + "\n")
    if arguments.only in (None, "thesis"):
        (out / "accuracy_thesis.md").write_text(header + thesis_study(seeds) + "\n")


if __name__ == "__main__":
    main()
