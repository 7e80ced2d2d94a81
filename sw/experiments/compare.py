"""The main job: the accelerator against scikit-learn and the thesis (``make``).

``python -m sw.experiments.compare [--datasets ...] [--trees 100] [--depth none] [--folds 5]
[--repeats 10] [--seed 0] [--pe-count auto] [--clock-mhz 100] [--out results]``

For every dataset, stratified k-fold cross-validation repeated ``--repeats`` times (repeat
r shuffles with seed + r; the same folds for all methods):

* the accelerator in **forest mode** (``HardwareForestClassifier``: ``--trees`` trees,
  ``max_features="sqrt"`` per node, full bootstrap, depth ``--depth``) and in **thesis
  mode** (``mode="thesis"``: 250 trees, 16-row bootstrap, depth 4, one feature per tree,
  fixed-point codes). Accuracy comes from the golden model (``backend="model"``), which
  the test suite shows to be bit-exact with the RTL;
* scikit-learn's ``RandomForestClassifier`` with the same hyper-parameters as forest mode,
  and with the thesis's software set-up (250 trees of depth 4): accuracy on every fold
  (``n_jobs=1``), fit time with ``n_jobs=1`` and ``n_jobs=-1`` on the folds of the first
  repeat, measured in this run after everything else, so that nothing competes with it;
* the thesis's reported Table 4.2 numbers (:mod:`sw.experiments.thesis_tables`).

Hardware time: per dataset and mode, the first trees of fold 0 are trained in the
Verilator simulation of the whole accelerator (``sim.backend.train`` on one fixed build,
:data:`SIM_DESIGN`, with one PE), checked equal to the golden model's trees ("RTL =
model"), and their cycles give

    modelled time = (load + presort + trees x mean cycles per tree / P) / clock

with load = rows x ceil(features / lanes) stream beats (a beat carries one code per
lane), presort and cycles per tree simulated, P the
estimated number of PEs that fit a 10AX115 (:data:`PE_FIT`) and the clock 100 MHz (the
thesis's). ``docs/compare.md`` explains the method and its assumptions.

The accuracy folds (golden model and scikit-learn alike), the Verilator builds and the
simulated samples run first, on every core (``--jobs`` processes); then scikit-learn is
timed with nothing else running.

Writes ``results/compare.md``, ``compare.csv`` and ``compare.png``.
"""

import argparse
import csv
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

__all__ = ["SIM_DESIGN", "PE_FIT", "PE_LANES", "sim_design", "THESIS_SKLEARN", "default_datasets", "parse_arguments",
           "accuracy_row", "simulate_samples", "hardware_columns", "modelled_seconds", "main"]

#: The one accelerator build every simulated sample runs on (built once by Verilator):
#: large enough for the folds of every thesis dataset (CTG: 1,701 rows; sonar: 60
#: features) and for up to 32 trees per run. Cycles per tree do not depend on P, so it has
#: one PE; the modelled time divides by the P of :data:`PE_FIT`. Thesis-mode trees (16
#: draws) take the sparse fill and, queued back to back, the serialised pipeline; the fill
#: adds about 1,000 ALMs to a PE and no M20K or DSP block, which leaves every P of
#: :data:`PE_FIT` unchanged (they are DSP- or M20K-bound; ``docs/compare.md``). Its in-bag
#: lists hold 1,280 rows, as ctg's estimated PE does (a 1,701-draw bootstrap holds about
#: 1,075 distinct rows); a bootstrap that overflowed them would stop the run.
SIM_DESIGN = {"pe_count": 1, "max_trees": 32, "radix_bits": 8, "traversal_stages": 1,
              "max_rows": 2048, "max_samples": 2048, "feature_capacity": 64, "feature_lanes": 8,
              "code_bits": 16, "classes": 4, "max_depth": 64, "sparse_rows": 16,
              "max_inbag_rows": 1280}

#: PEs that fit a 10AX115 with each dataset's PE (``python -m sw.experiments.pe_fit``: a Yosys
#: ``synth_intel_alm`` estimate of a PE sized for the dataset's 5-fold training set, with
#: 8 and with 4 lanes; the trainer's banks, sorters and list rotor counted once; inference
#: engine, host interface and routing not counted). ESTIMATES, not Quartus. Since the list
#: rotor (no presorted copy per PE) and in-bag lists sized by distinct rows (cmc 1,024,
#: ctg 1,280 rows), every dataset is bound by DSP blocks except ctg (M20K and DSP: 20).
PE_FIT = {"iris": 56, "sonar": 56, "breast_cancer_coimbra": 56, "heart_failure": 56, "cmc": 37,
          "ctg": 20, "wine": 56, "breast_cancer_wisconsin": 42}

#: Feature lanes of each dataset's estimated PE (``python -m sw.experiments.pe_fit``: the lanes,
#: 8 or 4, with more PEs per pass of a tree level; fewer lanes take more cycles per tree
#: but fewer DSP blocks). The simulated samples run on :data:`SIM_DESIGN` with these lanes.
PE_LANES = {"iris": 4, "sonar": 4, "breast_cancer_coimbra": 4, "heart_failure": 4, "cmc": 4,
            "ctg": 8, "wine": 4, "breast_cancer_wisconsin": 4}


def sim_design(name):
    """The simulated build for dataset ``name``: :data:`SIM_DESIGN` with its PE's lanes."""
    return {**SIM_DESIGN, "feature_lanes": PE_LANES.get(name, SIM_DESIGN["feature_lanes"])}


#: scikit-learn set-up of the thesis's software column (Table 4.2: 250 trees, depth 4).
THESIS_SKLEARN = {"n_estimators": 250, "max_depth": 4}

DEFAULT_CLOCK_MHZ = 100.0
BUNDLED_DATASETS = ("iris", "wine", "breast_cancer_wisconsin")


# ------------------------------------------------------------------------------ options
def default_datasets():
    """The six thesis datasets when all are available, else those found plus the bundled."""
    from sw.data.datasets import THESIS_HARDWARE_DATASETS, available
    found = [name for name in THESIS_HARDWARE_DATASETS if available(name)]
    if len(found) == len(THESIS_HARDWARE_DATASETS):
        return found
    return list(dict.fromkeys(found + [n for n in BUNDLED_DATASETS if available(n)]))


def _depth(text):
    if text.lower() in ("none", "unlimited"):
        return None
    value = _positive_int(text)
    if value > SIM_DESIGN["max_depth"]:
        raise argparse.ArgumentTypeError(
            f"depth {value} is deeper than the simulated build holds ({SIM_DESIGN['max_depth']})")
    return value


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {value}")
    return value


def _pe_count(text):
    if text == "auto":
        return None
    value = _positive_int(text)
    if value > 1024:
        raise argparse.ArgumentTypeError(f"{value} PEs is far beyond any Arria 10 (at most 1024)")
    return value


def _clock(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a clock in MHz, not {text!r}") from None
    if not 0 < value <= 1000:
        raise argparse.ArgumentTypeError(f"clock must be in (0, 1000] MHz, not {value}")
    return value


def parse_arguments(argv=None):
    """Parse and check the options (``argparse`` exits with a message on a bad one)."""
    parser = argparse.ArgumentParser(
        prog="python -m sw.experiments.compare",
        description="Accelerator (forest and thesis mode) vs scikit-learn vs the thesis: "
                    "k-fold accuracy and modelled training time (docs/compare.md).")
    parser.add_argument("--datasets", nargs="+", metavar="NAME",
                        help="datasets (default: the six thesis datasets if HWFOREST_DATA_DIR "
                             "holds them, else iris, wine, breast_cancer_wisconsin)")
    parser.add_argument("--trees", type=_positive_int, default=100,
                        help="forest-mode trees, also scikit-learn's (default 100)")
    parser.add_argument("--depth", type=_depth, default=None,
                        help="forest-mode max_depth, 'none' for unlimited (default none)")
    parser.add_argument("--folds", type=_positive_int, default=5,
                        help="stratified CV folds (default 5, as the thesis)")
    parser.add_argument("--repeats", type=_positive_int, default=10,
                        help="repeat the k-fold CV with seeds seed, seed+1, ... (default 10: one "
                             "5-fold run's forest-vs-scikit-learn difference moves by 1 to 3 "
                             "points from seed to seed on cmc and sonar)")
    parser.add_argument("--seed", type=int, default=0,
                        help="CV shuffle and forest seeds of the first repeat (default 0)")
    parser.add_argument("--pe-count", type=_pe_count, default=None, metavar="P",
                        help="PEs for the modelled time; 'auto' (default) = the estimate per "
                             "dataset (PE_FIT)")
    parser.add_argument("--clock-mhz", type=_clock, default=DEFAULT_CLOCK_MHZ,
                        help="clock for the modelled time (default 100, the thesis's)")
    parser.add_argument("--sim-trees", type=_positive_int, default=8, metavar="K",
                        help="forest-mode trees simulated per dataset (default 8)")
    parser.add_argument("--sim-thesis-trees", type=_positive_int, default=32, metavar="K",
                        help="thesis-mode trees simulated per dataset (default 32)")
    parser.add_argument("--no-sim", action="store_true",
                        help="skip the Verilator runs (no hardware time; accuracy only)")
    parser.add_argument("--jobs", type=_positive_int, default=os.cpu_count() or 1, metavar="N",
                        help="processes for the accuracy folds and the Verilator builds, "
                             "beside which the samples are simulated (default: the machine's "
                             "cores, %(default)s); scikit-learn is timed afterwards with nothing "
                             "else running")
    parser.add_argument("--out", default="results", help="output folder (default results)")
    parser.add_argument("--no-plot", action="store_true", help="do not draw compare.png")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    arguments = parser.parse_args(argv)
    if arguments.folds < 2:
        parser.error(f"--folds must be at least 2, not {arguments.folds}")
    if not 0 <= arguments.seed < 1 << 31:
        parser.error(f"--seed must be in [0, 2**31), not {arguments.seed}")
    if arguments.seed + arguments.repeats > 1 << 31:
        parser.error(f"--seed + --repeats must be at most 2**31 (the last repeat's seed is "
                     f"seed + repeats - 1), not {arguments.seed + arguments.repeats}")
    for option in ("sim_trees", "sim_thesis_trees"):
        if getattr(arguments, option) > SIM_DESIGN["max_trees"]:
            parser.error(f"--{option.replace('_', '-')} must be at most {SIM_DESIGN['max_trees']} "
                         f"(the simulated build's max_trees), not {getattr(arguments, option)}")
    if arguments.sim_trees > arguments.trees:
        parser.error(f"--sim-trees ({arguments.sim_trees}) must not exceed --trees "
                     f"({arguments.trees})")
    from sw.data.datasets import REGISTRY, available
    if arguments.datasets is None:
        arguments.datasets = default_datasets()
    for name in arguments.datasets:
        if name not in REGISTRY:
            parser.error(f"unknown dataset {name!r}; known: {', '.join(REGISTRY)}")
        if not available(name):
            parser.error(f"dataset {name!r} is not available: set HWFOREST_DATA_DIR to the folder "
                         f"holding it (see docs/running.md)")
    if len(set(arguments.datasets)) != len(arguments.datasets):
        parser.error("a dataset is named twice in --datasets")
    if not arguments.no_sim:
        for name in arguments.datasets:
            info = REGISTRY[name]
            rows = info.n_samples - info.n_samples // arguments.folds
            needed = {"max_rows": rows, "feature_capacity": info.n_features, "classes": info.n_classes}
            too_big = [f"{key} {value} > {SIM_DESIGN[key]}" for key, value in needed.items()
                       if value > SIM_DESIGN[key]]
            if too_big:
                parser.error(f"{name}'s training folds do not fit the simulated build "
                             f"({', '.join(too_big)}): use --no-sim for accuracy only")
    if arguments.pe_count is None and not arguments.no_sim:
        missing = [name for name in arguments.datasets if name not in PE_FIT]
        if missing:
            parser.error(f"no PE estimate for {', '.join(missing)} (PE_FIT has "
                         f"{', '.join(PE_FIT)}): pass --pe-count P, or run "
                         f"'python -m sw.experiments.pe_fit --datasets {' '.join(missing)}'")
    return arguments


# ------------------------------------------------------------------------------ measuring
def _timed(function):
    """(wall seconds, CPU seconds of this process, result)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = function()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def _fold_seed(seed, fold):
    return seed * 1000 + fold


def _estimators(arguments, fold_seed):
    """The four fitted-per-fold models: name -> estimator factory."""
    from sklearn.ensemble import RandomForestClassifier

    from sw.methods.forest.estimator import HardwareForestClassifier
    return {
        "hw_forest": lambda: HardwareForestClassifier(arguments.trees, max_depth=arguments.depth,
                                                      random_state=fold_seed, n_jobs=1),
        "hw_thesis": lambda: HardwareForestClassifier(mode="thesis", random_state=fold_seed,
                                                      n_jobs=1),
        "sk_forest": lambda jobs: RandomForestClassifier(arguments.trees, max_depth=arguments.depth,
                                                         random_state=fold_seed, n_jobs=jobs),
        "sk_thesis": lambda jobs: RandomForestClassifier(**THESIS_SKLEARN, random_state=fold_seed,
                                                         n_jobs=jobs),
    }


def _splits(data, arguments):
    """(repeat, fold, train, test) of every repeat's stratified k-fold split."""
    from sklearn.model_selection import StratifiedKFold
    for repeat in range(arguments.repeats):
        folds = StratifiedKFold(arguments.folds, shuffle=True, random_state=arguments.seed + repeat)
        for fold, (train, test) in enumerate(folds.split(data.X, data.y)):
            yield repeat, fold, train, test


def score_fold(X_train, y_train, X_test, y_test, arguments, fold_seed, keep=False):
    """Test accuracy of the four models on one fold: the accelerator's two modes from the
    golden model and scikit-learn's two set-ups fitted on one core. Deterministic, so it
    may run in a worker process beside other work; nothing here is a timing
    (:func:`sklearn_times` measures scikit-learn alone). Returns the scores, the CPU seconds
    of the two golden-model fits, and the fitted golden-model forests when ``keep``."""
    make = _estimators(arguments, fold_seed)
    scores, times, fitted = {}, {}, {}
    for name in ("hw_forest", "hw_thesis"):
        _, cpu, fitted[name] = _timed(lambda: make[name]().fit(X_train, y_train))
        times[name] = cpu
        scores[name] = fitted[name].score(X_test, y_test)
    for name in ("sk_forest", "sk_thesis"):
        scores[name] = make[name](1).fit(X_train, y_train).score(X_test, y_test)
    return scores, times, fitted if keep else None


def sklearn_times(X_train, y_train, arguments, fold_seed):
    """scikit-learn's fit times on one fold (seconds). Run it with nothing else running:
    one core is timed by CPU time (and wall time), all cores by wall time."""
    make = _estimators(arguments, fold_seed)
    times = {}
    for name in ("sk_forest", "sk_thesis"):
        times[f"{name}_1_wall"], times[f"{name}_1"], _ = _timed(
            lambda: make[name](1).fit(X_train, y_train))
        times[f"{name}_all"], _, _ = _timed(lambda: make[name](-1).fit(X_train, y_train))
    return times


def _fold_data(data, train, test):
    return data.X[train], data.y[train], data.X[test], data.y[test]


def scoring_tasks(data, arguments):
    """The arguments of :func:`score_fold` for every split of ``data``, in split order;
    the first keeps its fitted models."""
    return [(*_fold_data(data, train, test), arguments, _fold_seed(arguments.seed + repeat, fold),
             index == 0)
            for index, (repeat, fold, train, test) in enumerate(_splits(data, arguments))]


def _first_fold(data, arguments, scored_first):
    """Fold 0 of the first repeat: its training rows and, from its :func:`score_fold`
    result, the fitted golden-model forests (the simulated samples train their first
    trees again in Verilator)."""
    _, _, train, _ = next(_splits(data, arguments))
    return {"train": train, "X": data.X[train], "y": data.y[train], **scored_first[2]}


def cross_validate(data, arguments, tick=lambda: None, scored=None):
    """Per-fold accuracies (repeats after each other: shape repeats x folds flattened),
    fit times and repeat 0's fold-0 fitted hardware models.

    ``scored``: the results of :func:`score_fold` for every split (e.g. computed in worker
    processes); computed here when not given. scikit-learn's fit times are then measured
    here on the folds of the first repeat (``tick()`` after each): timing every repeat
    would only add runs of the same fits.
    """
    splits = list(_splits(data, arguments))
    if scored is None:
        scored = [score_fold(*task) for task in scoring_tasks(data, arguments)]
    scores = {key: np.array([fold[0][key] for fold in scored])
              for key in ("hw_forest", "hw_thesis", "sk_forest", "sk_thesis")}
    times = {key: [fold[1][key] for fold in scored] for key in ("hw_forest", "hw_thesis")}
    for repeat, fold, train, test in splits:
        if repeat == 0:
            measured = sklearn_times(data.X[train], data.y[train], arguments,
                                     _fold_seed(arguments.seed, fold))
            for key, value in measured.items():
                times.setdefault(key, []).append(value)
            tick()
    return (scores, {key: np.array(value) for key, value in times.items()},
            _first_fold(data, arguments, scored[0]))


def accuracy_row(name, arguments, tick=lambda: None, scored=None):
    """The cross-validation part of a dataset's row, and its fold-0 training set and models
    (``scored``: see :func:`cross_validate`)."""
    from sw.data.datasets import load
    from sw.experiments.thesis_tables import thesis_row
    data = load(name)
    scores, times, first = cross_validate(data, arguments, tick, scored)
    row = {"dataset": name, "rows": data.X.shape[0], "features": data.X.shape[1],
           "classes": len(np.unique(data.y)), "folds": arguments.folds,
           "repeats": arguments.repeats, "seed": arguments.seed,
           "trees": arguments.trees, "depth": "none" if arguments.depth is None else arguments.depth}
    for key, values in scores.items():
        row[f"acc_{key}"] = 100 * values.mean()
        row[f"acc_{key}_sd"] = 100 * values.std()
    difference = 100 * (scores["hw_forest"] - scores["sk_forest"])
    row["acc_forest_minus_sk"] = difference.mean()
    row["acc_forest_minus_sk_sd"] = difference.std()
    # Each repeat's k-fold mean difference: how much one k-fold run moves by its seed.
    per_repeat = difference.reshape(arguments.repeats, arguments.folds).mean(axis=1)
    row["acc_forest_minus_sk_repeats"] = " ".join(f"{value:+.2f}" for value in per_repeat)
    row["acc_forest_minus_sk_repeat_sd"] = per_repeat.std(ddof=1) if len(per_repeat) > 1 else 0.0
    # Standard error of the mean difference, from the spread of the repeats' means (none
    # with one repeat: the folds of one split are not independent draws).
    row["acc_forest_minus_sk_se"] = (
        row["acc_forest_minus_sk_repeat_sd"] / math.sqrt(len(per_repeat)) if len(per_repeat) > 1
        else None)
    for key, values in times.items():
        row[f"fit_{key}_ms"] = 1000 * values.mean()
    thesis = thesis_row(name) or {}
    row.update({"thesis_hw_acc": thesis.get("hw_accuracy"), "thesis_sk_acc": thesis.get("sklearn_accuracy"),
                "thesis_hw_ms": thesis.get("hw_ms"), "thesis_sk_ms": thesis.get("sklearn_ms"),
                "thesis_speedup": thesis.get("speedup")})
    return row, first


def sample_job(estimator, X_train, y_train, n_trees):
    """The simulation job that trains the first ``n_trees`` trees of a fitted estimator."""
    return {"codes": estimator.quantizer_.transform(X_train),
            "labels": np.searchsorted(estimator.classes_, y_train),
            "params": estimator.training_parameters_, "seed": estimator.seed_, "n_trees": n_trees}


def sample_summary(result, job, estimator):
    """Cycles of a simulated sample, and whether every tree equals the golden model's."""
    from sw.methods.forest import model
    n_trees = job["n_trees"]
    equal = [model.trees_equal(got, expected)
             for got, expected in zip(result["trees"], estimator.trees_[:n_trees])]
    tree_cycles = np.array(result["tree_cycles"], dtype=float)
    if result["design"]["pe_count"] > 1:   # trees overlapped: only the mean is known
        tree_cycles = np.full(n_trees, (result["train_cycles"] - result["sort_cycles"])
                              * result["design"]["pe_count"] / n_trees)
    overhead = result["train_cycles"] - result["sort_cycles"] - tree_cycles.sum()
    return {"trees": n_trees, "equal": len(equal) == n_trees and all(equal),
            "sort_cycles": result["sort_cycles"], "train_cycles": result["train_cycles"],
            "overhead_cycles": max(0.0, float(overhead)),
            "cycles_per_tree": tree_cycles.mean(), "cycles_per_tree_sd": tree_cycles.std(),
            "cycles_per_tree_min": tree_cycles.min(), "cycles_per_tree_max": tree_cycles.max(),
            "tree_cycles": ";".join(f"{value:.0f}" for value in tree_cycles),
            "load_cycles": load_cycles(job["codes"].shape, result["design"]),
            "rotor_wait_cycles": rotor_wait_cycles(job, result["design"]),
            "wall_seconds": result["wall_seconds"],
            "nodes_per_tree": statistics.mean(t.n_nodes for t in estimator.trees_[:n_trees]),
            "nodes_per_tree_forest": statistics.mean(t.n_nodes for t in estimator.trees_),
            # Distinct in-bag rows (the root's rows) of every tree of the modelled forest.
            "inbag_rows_max": max(int(t.n_rows[0]) for t in estimator.trees_)}


def load_cycles(shape, design):
    """Cycles of the dataset stream: one beat per row and slot of ``feature_lanes``
    features, taken one per cycle (the trainer is always ready while not busy)."""
    n_rows, n_features = shape
    return n_rows * -(-n_features // design["feature_lanes"])


def rotor_wait_cycles(job, design):
    """Most cycles a tree waits for its lists in a trainer of several PEs: the list rotor
    serves the PEs from one copy of the presorted bank, so a tree's first list may come
    round only after ``ceil(F / lanes)`` other lists; a tree that takes the sparse fill
    reads no list. (A lone PE never waits: the rotor jumps to its list.)"""
    params = job["params"]
    n_rows, n_features = job["codes"].shape
    sparse = (params.thesis_mode and params.bootstrap
              and params.max_samples <= design.get("sparse_rows", 0))
    return 0 if sparse else -(-n_features // design["feature_lanes"]) * n_rows


def modelled_seconds(sample, n_trees, pe_count, clock_hz):
    """(load + presort + start/finish + n_trees x (cycles per tree + the most it can wait
    for its lists, with P > 1) / P) / clock, in seconds."""
    wait = sample.get("rotor_wait_cycles", 0) if pe_count > 1 else 0
    cycles = (sample["load_cycles"] + sample["sort_cycles"] + sample.get("overhead_cycles", 0)
              + n_trees * (sample["cycles_per_tree"] + wait) / pe_count)
    return cycles / clock_hz


def hardware_columns(row, samples, arguments):
    """Add the simulated samples, modelled times and speed-ups to ``row``."""
    from sw.methods.forest.estimator import THESIS_PRESET
    from sw.experiments.pe_fit import pe_parameters
    pe_count = arguments.pe_count or PE_FIT[row["dataset"]]
    clock_hz = arguments.clock_mhz * 1e6
    # The estimate's PEs hold in-bag lists shorter than the rows (sw.experiments.pe_fit): every
    # tree of the modelled forests must fit them, or its P does not apply.
    lists = pe_parameters(row["rows"], row["features"], 2)["max_inbag_rows"]
    needed = max(samples[mode]["inbag_rows_max"] for mode in ("forest", "thesis"))
    if needed > lists and not arguments.pe_count:
        raise RuntimeError(f"{row['dataset']}: a tree's bootstrap holds {needed} distinct rows, more "
                           f"than the {lists} of the in-bag lists PE_FIT's estimate assumes; its "
                           f"P = {pe_count} does not apply (pass --pe-count)")
    row.update(pe_count=pe_count, pe_count_source="option" if arguments.pe_count else "estimate",
               clock_mhz=arguments.clock_mhz, pe_list_rows=lists, inbag_rows_max=needed)
    for mode, n_trees in (("forest", arguments.trees), ("thesis", THESIS_PRESET["n_estimators"])):
        sample = samples[mode]
        row.update({f"sim_{mode}_{key}": value for key, value in sample.items()})
        row[f"hw_{mode}_ms"] = 1000 * modelled_seconds(sample, n_trees, pe_count, clock_hz)
        for jobs in ("1", "all"):
            row[f"speedup_{mode}_{jobs}"] = row[f"fit_sk_{mode}_{jobs}_ms"] / row[f"hw_{mode}_ms"]
    row["rtl_equals_model"] = bool(samples["forest"]["equal"] and samples["thesis"]["equal"])
    return row


def _design_key(design):
    """Designs with equal keys are one Verilator build."""
    return tuple(sorted(design.items()))


def train_by_design(jobs, designs, progress=lambda done: None, parallel=True):
    """``sim.backend.train_batch`` once per distinct build of ``designs`` (one per job),
    with ``parallel`` the builds' simulators side by side (each a process of its own,
    driven from a thread), else one after the other (for measuring simulation speed);
    the results in the jobs' order. ``progress(jobs_done)`` counts over all builds."""
    import concurrent.futures
    import threading

    from sim import backend
    groups = {}
    for index, design in enumerate(designs):
        groups.setdefault(_design_key(design), (design, []))[1].append(index)
    finished, lock = {}, threading.Lock()

    def run(key, design, indices):
        def report(count):
            with lock:
                finished[key] = count
                progress(sum(finished.values()))
        return backend.train_batch([jobs[index] for index in indices], design, progress=report)

    results = [None] * len(jobs)
    with concurrent.futures.ThreadPoolExecutor(len(groups) if parallel else 1) as pool:
        futures = {pool.submit(run, key, design, indices): indices
                   for key, (design, indices) in groups.items()}
        for future, indices in futures.items():
            for index, result in zip(indices, future.result()):
                results[index] = result
    return results


def simulate_samples(firsts, arguments, progress=lambda done: None, log=None):
    """Simulate every dataset's samples (both modes) in one run of one build.

    ``firsts``: dataset name -> fold-0 data and fitted models (from :func:`accuracy_row`).
    Returns dataset name -> {"forest": summary, "thesis": summary}. The simulator's own
    output goes to the file ``log`` (if given) instead of the terminal.
    """
    plan = [(name, mode, size) for name in firsts
            for mode, size in (("forest", arguments.sim_trees), ("thesis", arguments.sim_thesis_trees))]
    jobs = [sample_job(firsts[name][f"hw_{mode}"], firsts[name]["X"], firsts[name]["y"], size)
            for name, mode, size in plan]
    with _output_to(log):
        results = train_by_design(jobs, [sim_design(name) for name, _, _ in plan], progress)
    samples = {}
    for (name, mode, _), job, result in zip(plan, jobs, results):
        samples.setdefault(name, {})[mode] = sample_summary(result, job, firsts[name][f"hw_{mode}"])
    return samples


class _output_to:
    """Send this process's (and its children's) stdout and stderr to a file for a while."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        if self.path is None:
            return self
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = [os.dup(1), os.dup(2)]
        self.file = open(self.path, "ab")
        os.dup2(self.file.fileno(), 1)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        if self.path is None:
            return False
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, saved in zip((1, 2), self.saved):
            os.dup2(saved, fd)
            os.close(saved)
        self.file.close()
        return False


# ------------------------------------------------------------------------------ reporting
def _number(value, digits=1):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _seed_range(arguments):
    last = arguments.seed + arguments.repeats - 1
    return str(arguments.seed) if last == arguments.seed else f"{arguments.seed}-{last}"


def _mean_sd(row, key):
    return f"{row[key]:.1f} ± {row[key + '_sd']:.1f}"


def _speedup(value):
    return "-" if value is None else f"{value:,.0f}x" if value >= 10 else f"{value:.1f}x"


def _cycles(row, mode):
    return (f"{row[f'sim_{mode}_cycles_per_tree']:,.0f} ± {row[f'sim_{mode}_cycles_per_tree_sd']:,.0f}"
            f" ({row[f'sim_{mode}_trees']})")


def accuracy_table(rows):
    """Header and rows of the accuracy table (strings)."""
    header = ["dataset", "rows x feat", "HW forest %", "sklearn %", "HW - sklearn pp (s.e.)",
              "per repeat pp", "HW thesis mode %", "sklearn 250xd4 %", "thesis HW % (rep.)",
              "thesis sklearn % (rep.)"]
    body = [[row["dataset"], f"{row['rows']} x {row['features']}", _mean_sd(row, "acc_hw_forest"),
             _mean_sd(row, "acc_sk_forest"),
             f"{row['acc_forest_minus_sk']:+.2f} ({_number(row['acc_forest_minus_sk_se'], 2)})",
             " ".join(f"{float(value):+.1f}"
                      for value in row["acc_forest_minus_sk_repeats"].split()),
             _mean_sd(row, "acc_hw_thesis"), _mean_sd(row, "acc_sk_thesis"),
             _number(row["thesis_hw_acc"]), _number(row["thesis_sk_acc"], 2)] for row in rows]
    return header, body


def time_table(rows):
    """Header and rows of the training-time table (strings); empty without simulation."""
    rows = [row for row in rows if "hw_forest_ms" in row]
    header = ["dataset", "P", "HW forest ms", "sklearn 1 core ms", "sklearn all cores ms",
              "speed-up 1 / all", "HW thesis ms", "sklearn 250xd4 1 core ms", "speed-up 1 / all",
              "thesis rep. HW / sklearn ms", "rep. speed-up", "cycles/tree forest ± sd (k)",
              "cycles/tree thesis ± sd (k)", "RTL = model"]
    body = []
    for row in rows:
        thesis = ("-" if row["thesis_hw_ms"] is None else
                  f"{row['thesis_hw_ms']:.1f} / {row['thesis_sk_ms']:,.0f}")
        body.append([
            row["dataset"], str(row["pe_count"]), f"{row['hw_forest_ms']:.2f}",
            f"{row['fit_sk_forest_1_ms']:.0f}", f"{row['fit_sk_forest_all_ms']:.0f}",
            f"{_speedup(row['speedup_forest_1'])} / {_speedup(row['speedup_forest_all'])}",
            f"{row['hw_thesis_ms']:.2f}", f"{row['fit_sk_thesis_1_ms']:.0f}",
            f"{_speedup(row['speedup_thesis_1'])} / {_speedup(row['speedup_thesis_all'])}",
            thesis, _speedup(row["thesis_speedup"]),
            _cycles(row, "forest"), _cycles(row, "thesis"),
            "yes" if row["rtl_equals_model"] else "NO"])
    return header, body


def markdown(header, body):
    """A Markdown table with padded columns (readable as plain text too)."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *body)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|",
                      *map(line, body)])


def report(rows, arguments, seconds):
    """The Markdown report (``results/compare.md``)."""
    from sw.experiments.thesis_tables import CITATION, SETUP
    depth = "unlimited" if arguments.depth is None else arguments.depth
    lines = [
        "# Accelerator vs scikit-learn vs the thesis",
        "",
        f"Stratified {arguments.folds}-fold CV repeated {arguments.repeats} times (shuffle and "
        f"forest seeds {_seed_range(arguments)}; the same folds for every method); accuracy "
        f"mean ± standard deviation over all {arguments.repeats * arguments.folds} folds; "
        f"HW - sklearn: mean difference and its standard error (s.e. = standard deviation of "
        f"the repeats' {arguments.folds}-fold means / sqrt(repeats)), with each repeat's "
        f"mean beside it. Forest mode: {arguments.trees} trees, sqrt features per node, full "
        f"bootstrap, depth {depth}; "
        f"scikit-learn `RandomForestClassifier` with the same. Thesis mode: 250 trees, 16-row "
        f"bootstrap, depth 4, one feature per tree; scikit-learn 250 trees of depth 4 beside it. "
        f"HW accuracy from the golden model (bit-exact with the RTL).",
        "",
        markdown(*accuracy_table(rows)),
        "",
    ]
    header, body = time_table(rows)
    if body:
        clock = arguments.clock_mhz
        source = ("given with --pe-count" if arguments.pe_count else
                  "estimated per dataset (sw/experiments/pe_fit.py, Yosys proxy, not Quartus)")
        lines += [
            f"Modelled HW training time = (load + presort + trees x cycles per tree / P) / "
            f"{clock:g} MHz; cycles simulated in Verilator on a sample of k trees of fold 0 "
            f"(first repeat) "
            f"(one PE), P {source}, {clock:g} MHz is the thesis's clock, not a timing result. "
            f"scikit-learn: mean fit time over the {arguments.folds} folds of the first repeat, "
            f"measured in this run with nothing else running (1 core: CPU "
            f"time of `n_jobs=1`; all cores: wall time of `n_jobs=-1`, {os.cpu_count()} cores). "
            f"Speed-up = scikit-learn time / modelled HW time.",
            "",
            markdown(header, body),
            "",
        ]
    lines += [f"Thesis columns (rep. = reported): {CITATION}; {SETUP}.", "",
              f"Run time: {seconds:.0f} s. Method and assumptions: docs/compare.md."]
    return "\n".join(lines) + "\n"


def write_csv(rows, path):
    columns = list(dict.fromkeys(key for row in rows for key in row))
    with open(path, "w", newline="") as file:
        writer = csv.DictWriter(file, columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({key: ("" if row.get(key) is None else
                                   f"{row[key]:.6g}" if isinstance(row.get(key), float) else row.get(key))
                             for key in columns})


def plot(rows, path):
    """Accuracy and speed-up per dataset: hardware vs scikit-learn vs the thesis."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = [row["dataset"] for row in rows]
    x = np.arange(len(rows))
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(max(8, 1.6 * len(rows) + 3), 9))
    bars = [("HW forest mode", "acc_hw_forest", "tab:blue"),
            ("scikit-learn (same params)", "acc_sk_forest", "tab:orange"),
            ("HW thesis mode", "acc_hw_thesis", "tab:green"),
            ("scikit-learn 250 x depth 4", "acc_sk_thesis", "tab:olive"),
            ("thesis HW (reported)", "thesis_hw_acc", "tab:red"),
            ("thesis scikit-learn (reported)", "thesis_sk_acc", "tab:pink")]
    width = 0.8 / len(bars)
    for index, (label, key, colour) in enumerate(bars):
        values = [np.nan if row.get(key) is None else row[key] for row in rows]
        errors = [row[key + "_sd"] for row in rows] if key + "_sd" in rows[0] else None
        top.bar(x + (index - (len(bars) - 1) / 2) * width, values, width, yerr=errors,
                label=label, color=colour, capsize=2)
    top.set_xticks(x, names)
    top.set_ylabel("accuracy % (mean ± sd over all folds)")
    top.set_ylim(0, 128)
    top.set_yticks(range(0, 101, 20))
    top.legend(fontsize=8, ncol=3, loc="upper center")
    top.set_title(f"Accuracy, stratified {rows[0]['folds']}-fold CV x {rows[0]['repeats']} repeats "
                  f"(reported: thesis Table 4.2)")
    speed = [("HW forest vs scikit-learn 1 core", "speedup_forest_1", "tab:blue"),
             ("HW forest vs scikit-learn all cores", "speedup_forest_all", "tab:cyan"),
             ("HW thesis mode vs scikit-learn 250 x d4, 1 core", "speedup_thesis_1", "tab:green"),
             ("thesis (reported)", "thesis_speedup", "tab:red")]
    width = 0.8 / len(speed)
    highest = 50
    for index, (label, key, colour) in enumerate(speed):
        values = [np.nan if row.get(key) is None else row[key] for row in rows]
        positions = x + (index - (len(speed) - 1) / 2) * width
        bottom.bar(positions, values, width, label=label, color=colour)
        for position, value in zip(positions, values):
            if not np.isnan(value):
                highest = max(highest, value)
                bottom.text(position, value * 1.08, f"{value:,.0f}", ha="center", va="bottom",
                            fontsize=6.5, rotation=90)
    bottom.axhline(50, color="black", linestyle="--", linewidth=1)
    bottom.text(x[0] - 0.45, 50, "50x", va="bottom", ha="left", fontsize=8)
    bottom.set_yscale("log")
    bottom.set_ylim(top=highest * 15)
    bottom.set_xticks(x, [f"{row['dataset']}\nP = {row.get('pe_count', '-')}" for row in rows])
    bottom.set_ylabel("training speed-up (log)")
    bottom.legend(fontsize=8, ncol=2, loc="upper center")
    bottom.set_title("Modelled HW training time vs scikit-learn fit time (measured here)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _untimed_phase(arguments, designs, log, bar):
    """Everything but scikit-learn's timing, on every core: the fold scores
    (:func:`score_fold`) and the Verilator builds in ``arguments.jobs`` processes, and the
    simulated samples (:func:`simulate_samples`, a simulator process driven from a thread
    of this one) as soon as the builds and every dataset's first fold are done. None of
    it is a timing that is compared: the golden model's fit times are CPU times, and
    simulated cycles do not depend on the load. Returns (dataset name -> list of
    :func:`score_fold` results in split order, dataset name -> simulated samples or None).
    """
    import concurrent.futures
    import multiprocessing

    from sw.data.datasets import load
    data = {name: load(name) for name in arguments.datasets}
    tasks = {name: scoring_tasks(data[name], arguments) for name in arguments.datasets}
    done = [0]

    def sim_progress(count):
        bar.update(count - done[0])
        done[0] = count

    def simulate(scored_first):
        firsts = {name: _first_fold(data[name], arguments, first) for name, first in scored_first.items()}
        samples = simulate_samples(firsts, arguments, sim_progress, log=log)
        sim_progress(2 * len(firsts))
        return samples

    from sim import backend
    if arguments.jobs == 1:
        results = {}
        for design in designs:
            bar.set_description("Verilator: build")
            with _output_to(log):
                backend.build(design)
            bar.update(1)
        for name, folds in tasks.items():
            bar.set_description(f"{name}: accuracy")
            results[name] = []
            for fold in folds:
                results[name].append(score_fold(*fold))
                bar.update(1)
        if not designs:
            return results, None
        bar.set_description("Verilator: simulated samples")
        return results, simulate({name: folds[0] for name, folds in results.items()})
    bar.set_description(f"accuracy folds, Verilator builds and samples ({arguments.jobs} processes)")
    # spawn: a fresh interpreter per worker, none of this process's threads or open files.
    context = multiprocessing.get_context("spawn")
    simulation = concurrent.futures.ThreadPoolExecutor(1)
    sim_future = None
    try:
        with concurrent.futures.ProcessPoolExecutor(arguments.jobs, mp_context=context) as pool:
            # The builds first: they are the longest tasks. (Worker processes, not threads:
            # a build sets environment variables for its make.)
            builds = [pool.submit(_build_quietly, design, log) for design in designs]
            scored = {name: [pool.submit(score_fold, *fold) for fold in folds]
                      for name, folds in tasks.items()}
            for future in concurrent.futures.as_completed(builds + [f for fs in scored.values() for f in fs]):
                future.result()
                bar.update(1)
                if (designs and sim_future is None and all(build.done() for build in builds)
                        and all(futures[0].done() for futures in scored.values())):
                    sim_future = simulation.submit(
                        simulate, {name: futures[0].result() for name, futures in scored.items()})
        results = {name: [future.result() for future in futures] for name, futures in scored.items()}
        if sim_future is None:
            return results, None
        bar.set_description("Verilator: simulated samples")
        try:
            return results, sim_future.result()
        except Exception as error:
            raise SystemExit(f"the simulation failed ({error}); its output is in {log}") from error
    finally:
        simulation.shutdown(wait=True)


def _build_quietly(design, log):
    """Build the Verilator model of ``design`` (a worker process's task), its output to ``log``."""
    from sim import backend
    with _output_to(log):
        backend.build(design)


def main(argv=None):
    arguments = parse_arguments(argv)
    from tqdm import tqdm
    started = time.perf_counter()
    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    sim_jobs = 0 if arguments.no_sim else 2 * len(arguments.datasets)
    designs = [] if arguments.no_sim else list(
        {_design_key(design): design for design in map(sim_design, arguments.datasets)}.values())
    log = out / "compare_sim.log"
    log.unlink(missing_ok=True)
    splits = len(arguments.datasets) * arguments.folds * arguments.repeats
    timed = len(arguments.datasets) * arguments.folds
    # The bar writes to a copy of the terminal's stderr, so that it keeps drawing while
    # the simulator's output is sent to a log file.
    terminal = os.fdopen(os.dup(2), "w")
    try:
        rows = []
        with tqdm(total=splits + len(designs) + sim_jobs + timed, disable=arguments.quiet,
                  unit="step", file=terminal, dynamic_ncols=True) as bar:
            try:
                scored, samples = _untimed_phase(arguments, designs, log, bar)
            except SystemExit:
                raise
            except Exception as error:
                where = f"; the Verilator builds' output is in {log}" if designs else ""
                raise SystemExit(f"the accuracy folds or the Verilator builds failed "
                                 f"({error!r}){where}") from error
            # Nothing else runs now: scikit-learn's fit times are measured alone.
            for name in arguments.datasets:
                bar.set_description(f"{name}: timing scikit-learn alone")
                row, _ = accuracy_row(name, arguments, tick=lambda: bar.update(1),
                                      scored=scored[name])
                if samples is not None:
                    hardware_columns(row, samples[name], arguments)
                rows.append(row)
            bar.set_description("done")
    finally:
        terminal.close()
    seconds = time.perf_counter() - started
    text = report(rows, arguments, seconds)
    (out / "compare.md").write_text(text)
    write_csv(rows, out / "compare.csv")
    written = [out / "compare.md", out / "compare.csv"]
    if not arguments.no_plot:
        plot(rows, out / "compare.png")
        written.append(out / "compare.png")
    print(text)
    print("wrote " + ", ".join(map(str, written)))
    failed = [row["dataset"] for row in rows if row.get("rtl_equals_model") is False]
    if failed:
        print(f"ERROR: the simulated RTL's trees differ from the golden model's on "
              f"{', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
