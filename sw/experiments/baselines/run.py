"""``python -m sw.experiments.baselines``: every method on the same folds, then the table,
CSV and plot.

Fold ``f`` of repeat ``r`` is :func:`sw.experiments.cv.splits`'s (stratified, shuffled with
seed + r) and every method on it is seeded with :func:`sw.experiments.cv.fold_seed`, as in
the main comparison. Fit times are the CPU time of one fit with BLAS and OpenMP held to
one thread, so they are one core's work whatever else runs; the folds themselves run in
``--jobs`` worker processes.
"""

import argparse
import concurrent.futures
import csv
import math
import multiprocessing
import os
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from sw.data import datasets
from sw.experiments import cv
from sw.experiments.baselines.methods import METHODS, REFERENCE, method
from sw.experiments.baselines.report import plot, render
from sw.experiments.report import results_dir, write_csv

__all__ = ["fit_fold", "summarise", "parse_arguments", "main"]


def fit_fold(name, train, test, seed, keys):
    """Accuracy and single-core CPU fit seconds of every method ``keys`` on one fold of
    dataset ``name``: ``{key: (accuracy, seconds)}``."""
    data = datasets.load(name)
    results = {}
    with threadpool_limits(1):
        for key in keys:
            estimator = method(key, seed)
            _, cpu, _ = cv.timed(lambda: estimator.fit(data.X[train], data.y[train]))
            results[key] = (estimator.score(data.X[test], data.y[test]), cpu)
    return results


def summarise(name, folds, keys, repeats, hardware_ms=None):
    """The rows of dataset ``name`` from its folds' :func:`fit_fold` results (split order,
    ``repeats`` repeats): per method the accuracy mean and standard deviation over all
    folds, the mean difference to :data:`REFERENCE` with its standard error (the standard
    deviation of the repeats' mean differences / sqrt(repeats); none with one repeat), and
    the mean fit time."""
    accuracy = {key: 100 * np.array([fold[key][0] for fold in folds]) for key in keys}
    seconds = {key: np.array([fold[key][1] for fold in folds]) for key in keys}
    rows = []
    for key in keys:
        difference = (accuracy[key] - accuracy[REFERENCE]).reshape(repeats, -1).mean(axis=1)
        se = difference.std(ddof=1) / math.sqrt(repeats) if repeats > 1 else None
        label, family, _ = METHODS[key]
        rows.append({"dataset": name, "method": key, "label": label, "family": family,
                     "accuracy": accuracy[key].mean(), "accuracy_sd": accuracy[key].std(),
                     "minus_hw_forest": difference.mean() if key != REFERENCE else 0.0,
                     "minus_hw_forest_se": se if key != REFERENCE else None,
                     "fit_ms": 1000 * seconds[key].mean(),
                     "hw_modelled_ms": hardware_ms if key == REFERENCE else None})
    return rows


def _hardware_times(path):
    """Dataset -> the main comparison's modelled hardware forest time (ms), if it has run."""
    path = Path(path)
    if not path.exists():
        return {}
    with open(path) as file:
        return {row["dataset"]: float(row["hw_forest_ms"]) for row in csv.DictReader(file)
                if row.get("hw_forest_ms")}


def parse_arguments(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m sw.experiments.baselines",
        description="The host library's methods beside the hardware forest on the same folds "
                    "(docs/baselines.md).")
    parser.add_argument("--datasets", nargs="+", metavar="NAME",
                        help="default: the six thesis datasets (those available)")
    parser.add_argument("--methods", nargs="+", metavar="KEY", default=list(METHODS),
                        help=f"default: all ({', '.join(METHODS)})")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", default="results")
    parser.add_argument("--compare-csv", default="results/compare.csv",
                        help="the main comparison's CSV, for the modelled hardware time")
    parser.add_argument("--quiet", action="store_true")
    arguments = parser.parse_args(argv)
    for option, low in (("folds", 2), ("repeats", 1), ("jobs", 1)):
        if getattr(arguments, option) < low:
            parser.error(f"--{option} must be at least {low}, not {getattr(arguments, option)}")
    unknown = [key for key in arguments.methods if key not in METHODS]
    if unknown:
        parser.error(f"unknown methods {unknown}; known: {', '.join(METHODS)}")
    if REFERENCE not in arguments.methods:
        arguments.methods = [REFERENCE, *arguments.methods]
    if arguments.datasets is None:
        arguments.datasets = [name for name in datasets.THESIS_HARDWARE_DATASETS
                              if datasets.available(name)]
        if not arguments.datasets:
            parser.error("none of the thesis datasets is available: set HWFOREST_DATA_DIR "
                         "(docs/running.md) or name bundled ones with --datasets iris wine")
    for name in arguments.datasets:
        if name not in datasets.REGISTRY:
            parser.error(f"unknown dataset {name!r}; known: {', '.join(datasets.REGISTRY)}")
        if not datasets.available(name):
            parser.error(f"dataset {name!r} is not available: set HWFOREST_DATA_DIR to the folder "
                         f"holding it (docs/running.md)")
    return arguments


def main(argv=None):
    arguments = parse_arguments(argv)
    started = time.perf_counter()
    seeds = range(arguments.seed, arguments.seed + arguments.repeats)
    tasks = []
    for name in arguments.datasets:
        data = datasets.load(name)
        for repeat, fold, train, test in cv.splits(data.X, data.y, arguments.folds, seeds):
            tasks.append((name, train, test, cv.fold_seed(seeds[repeat], fold), arguments.methods))
    context = multiprocessing.get_context("spawn")
    with tqdm(total=len(tasks), disable=arguments.quiet, unit="fold") as bar, \
            concurrent.futures.ProcessPoolExecutor(arguments.jobs, mp_context=context) as pool:
        futures = [pool.submit(fit_fold, *task) for task in tasks]
        for future in concurrent.futures.as_completed(futures):
            future.result()
            bar.update(1)
        results = [future.result() for future in futures]
    hardware = _hardware_times(arguments.compare_csv)
    rows = []
    for name in arguments.datasets:
        folds = [result for task, result in zip(tasks, results) if task[0] == name]
        rows += summarise(name, folds, arguments.methods, arguments.repeats, hardware.get(name))
    out = results_dir(arguments.out)
    text = render(rows, arguments, time.perf_counter() - started)
    (out / "baselines.md").write_text(text)
    write_csv(rows, out / "baselines.csv")
    plot(rows, out / "baselines.png")
    print(text)
    print(f"wrote {out / 'baselines.md'}, {out / 'baselines.csv'}, {out / 'baselines.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
