"""What 8-bit codes cost in accuracy: the out-of-core plan's histograms hold 256 bins
(``docs/out_of_core.md``), the comparison codes at 16 bits.

``python -m sw.experiments.eight_bit_codes [--datasets ...] [--seeds 2] [--trees 100]
[--out results/eight_bit_codes.md]``

Per dataset, stratified 5-fold CV repeated with ``--seeds`` shuffles, the same folds for
every method: the golden model's forest (forest mode, ``--trees`` trees) at 16-bit and at
8-bit codes, scikit-learn's ``RandomForestClassifier`` and oneDAL's forest (256 bins),
all with the same trees, ``sqrt`` features per split and full bootstrap. The difference
8-bit - 16-bit is paired by fold; its standard error is over the folds.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

from sw.data.datasets import available, load
from sw.experiments import cv
from sw.experiments.cpu_forests import cpu_forest
from sw.methods.forest.estimator import HardwareForestClassifier

__all__ = ["DATASETS", "study", "main"]

DATASETS = ("iris", "sonar", "breast_cancer_coimbra", "heart_failure", "cmc", "ctg", "wine",
            "breast_cancer_wisconsin")


def _models(trees):
    def make(seed):
        return {"16-bit": HardwareForestClassifier(trees, code_bits=16, random_state=seed),
                "8-bit": HardwareForestClassifier(trees, code_bits=8, random_state=seed),
                "sklearn": cpu_forest("sk", trees, max_features="sqrt", random_state=seed),
                "oneDAL": cpu_forest("dal", trees, max_features="sqrt", random_state=seed)}
    return make


def study(names, seeds, trees, log=print):
    """The table's rows: per dataset, the mean accuracy of each method and the paired
    difference 8-bit - 16-bit with its standard error (percentage points)."""
    rows = []
    for name in names:
        data = load(name)
        scores = cv.fold_scores(_models(trees), data.X, data.y, 5, list(range(seeds)))
        difference = 100 * (scores["8-bit"] - scores["16-bit"])
        row = {"dataset": name, "shape": f"{data.X.shape[0]:,} x {data.X.shape[1]}",
               **{key: 100 * values.mean() for key, values in scores.items()},
               "difference": difference.mean(),
               "error": difference.std(ddof=1) / np.sqrt(len(difference))}
        rows.append(row)
        log(f"{name}: 16-bit {row['16-bit']:.2f} %, 8-bit {row['8-bit']:.2f} % "
            f"({row['difference']:+.2f} pp, s.e. {row['error']:.2f})", flush=True)
    return rows


def table(rows, seeds, trees):
    lines = [f"| dataset | rows x features | model, 16-bit % | model, 8-bit % | 8-bit - 16-bit pp (s.e.) "
             f"| scikit-learn % | oneDAL % |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {row['dataset']} | {row['shape']} | {row['16-bit']:.2f} | {row['8-bit']:.2f} | "
              f"{row['difference']:+.2f} ({row['error']:.2f}) | {row['sklearn']:.2f} | "
              f"{row['oneDAL']:.2f} |" for row in rows]
    return "\n".join(lines) + f"\n\n{trees} trees, 5-fold CV x {seeds} shuffles, the same folds for all."


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--out", default="results/eight_bit_codes.md")
    arguments = parser.parse_args(argv)
    names = []
    for name in arguments.datasets:
        if available(name):
            names.append(name)
        else:
            print(f"{name}: not available (set HWFOREST_DATA_DIR), skipped", file=sys.stderr)
    text = table(study(names, arguments.seeds, arguments.trees), arguments.seeds, arguments.trees)
    print(text)
    out = Path(arguments.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
