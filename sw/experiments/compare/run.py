"""The cross-validation of the comparison: the five models' scores on every fold (in a
process pool, beside the Verilator builds and the simulated samples), then the CPU forests'
fit times measured with none of the comparison's own work beside them (and the load of
other processes meanwhile), and each dataset's accuracy columns.
"""

import concurrent.futures
import math
import multiprocessing

import numpy as np
from sw.data import datasets
from sw.experiments import cv
from sw.experiments.compare import builds, histogram
from sw.experiments.compare.simulate import build, output_to, simulate_samples
from sw.experiments.cpu_forests import cpu_forest
from sw.experiments.thesis_tables import thesis_row
from sw.methods.forest.estimator import HardwareForestClassifier


#: The CPU forests fitted on every fold (all timed on one core and on all cores): forest
#: mode's two trainers (:mod:`sw.experiments.cpu_forests`) and scikit-learn's thesis set-up.
CPU_MODELS = ("sk_forest", "dal_forest", "sk_thesis")
#: The CPU forests the forest mode is compared with.
FOREST_BASELINES = ("sk", "dal")
#: The CPU forests already fitted once in this process (:func:`cpu_times`).
_WARMED = set()


def _estimators(arguments, fold_seed, code_bits=None):
    """The five fitted-per-fold models: name -> estimator factory (the CPU forests' take
    ``n_jobs``); ``code_bits``: forest mode's codes (None: the estimator's default)."""
    codes = {} if code_bits is None else {"code_bits": code_bits}
    return {
        "hw_forest": lambda: HardwareForestClassifier(arguments.trees, max_depth=arguments.depth,
                                                      random_state=fold_seed, n_jobs=1, **codes),
        "hw_thesis": lambda: HardwareForestClassifier(mode="thesis", random_state=fold_seed,
                                                      n_jobs=1),
        "sk_forest": lambda jobs: cpu_forest("sk", arguments.trees, max_depth=arguments.depth,
                                             random_state=fold_seed, n_jobs=jobs),
        "dal_forest": lambda jobs: cpu_forest("dal", arguments.trees, max_depth=arguments.depth,
                                              random_state=fold_seed, n_jobs=jobs),
        "sk_thesis": lambda jobs: cpu_forest("sk", **builds.THESIS_SKLEARN,
                                             random_state=fold_seed, n_jobs=jobs),
    }


def _splits(data, arguments):
    """(repeat, fold, train, test) of every repeat's stratified k-fold split (repeat r
    shuffles with seed + r)."""
    seeds = range(arguments.seed, arguments.seed + arguments.repeats)
    return cv.splits(data.X, data.y, arguments.folds, seeds)


def score_fold(X_train, y_train, X_test, y_test, arguments, fold_seed, keep=False, code_bits=None):
    """Test accuracy of the five models on one fold: the accelerator's two modes from the
    golden model (forest mode's codes ``code_bits`` bits, None: the estimator's default)
    and the CPU forests (:data:`CPU_MODELS`) fitted on one core.
    Deterministic, so it may run in a worker process beside other work; nothing here is a
    timing (:func:`cpu_times` measures the CPU forests alone). Returns the scores, the CPU seconds
    of the two golden-model fits, and the fitted golden-model forests when ``keep``."""
    make = _estimators(arguments, fold_seed, code_bits)
    scores, times, fitted = {}, {}, {}
    for name in ("hw_forest", "hw_thesis"):
        _, cpu, fitted[name] = cv.timed(lambda: make[name]().fit(X_train, y_train))
        times[name] = cpu
        scores[name] = fitted[name].score(X_test, y_test)
    for name in CPU_MODELS:
        scores[name] = make[name](1).fit(X_train, y_train).score(X_test, y_test)
    return scores, times, fitted if keep else None


def cpu_times(X_train, y_train, arguments, fold_seed):
    """The CPU forests' fit times on one fold (seconds). Run it with nothing else running:
    one core is timed by CPU time (and wall time), all cores by wall time;
    ``background_cores`` is how many cores other processes kept busy meanwhile
    (:func:`cv.background_cores`). Each forest is fitted once untimed before its first
    timing in the process: a library's first fit loads and initialises it (oneDAL's first
    fit on iris took twice its later ones), which is not training. Every fit is then timed
    ``arguments.cpu_timings`` times and the least time of each kind kept: a CPU forest's
    time on this machine varies by tens of per cent from run to run, and the fastest run
    is what the CPU can do."""
    make = _estimators(arguments, fold_seed)
    times = {}
    for name in CPU_MODELS:
        if name not in _WARMED:
            make[name](1).fit(X_train, y_train)
            _WARMED.add(name)

    def least(key, value):
        times[key] = min(times.get(key, value), value)

    def time_all():
        for _ in range(arguments.cpu_timings):
            for name in CPU_MODELS:
                wall, cpu, _ = cv.timed(lambda: make[name](1).fit(X_train, y_train))
                least(f"{name}_1_wall", wall)
                least(f"{name}_1", cpu)
                least(f"{name}_all", cv.timed(lambda: make[name](-1).fit(X_train, y_train))[0])
    times["background_cores"], _ = cv.background_cores(time_all)
    return times


def _fold_data(data, train, test):
    return data.X[train], data.y[train], data.X[test], data.y[test]


def scoring_tasks(data, arguments, code_bits=None):
    """The arguments of :func:`score_fold` for every split of ``data``, in split order;
    the first keeps its fitted models."""
    return [(*_fold_data(data, train, test), arguments, cv.fold_seed(arguments.seed + repeat, fold),
             index == 0, code_bits)
            for index, (repeat, fold, train, test) in enumerate(_splits(data, arguments))]


def _first_fold(data, arguments, scored_first):
    """Fold 0 of the first repeat: its training rows and, from its :func:`score_fold`
    result, the fitted golden-model forests (the simulated samples train their first
    trees again in Verilator)."""
    _, _, train, _ = next(_splits(data, arguments))
    return {"train": train, "X": data.X[train], "y": data.y[train], **scored_first[2]}


def cross_validate(data, arguments, tick=lambda: None, scored=None, code_bits=None):
    """Per-fold accuracies (repeats after each other: shape repeats x folds flattened),
    fit times and repeat 0's fold-0 fitted hardware models.

    ``scored``: the results of :func:`score_fold` for every split (e.g. computed in worker
    processes); computed here when not given. The CPU forests' fit times are then measured
    here on the folds of the first repeat (``tick()`` after each): timing every repeat
    would only add runs of the same fits.
    """
    splits = list(_splits(data, arguments))
    if scored is None:
        scored = [score_fold(*task) for task in scoring_tasks(data, arguments, code_bits)]
    scores = {key: np.array([fold[0][key] for fold in scored])
              for key in ("hw_forest", "hw_thesis", *CPU_MODELS)}
    times = {key: [fold[1][key] for fold in scored] for key in ("hw_forest", "hw_thesis")}
    for repeat, fold, train, test in splits:
        if repeat == 0:
            measured = cpu_times(data.X[train], data.y[train], arguments,
                                     cv.fold_seed(arguments.seed, fold))
            for key, value in measured.items():
                times.setdefault(key, []).append(value)
            tick()
    return (scores, {key: np.array(value) for key, value in times.items()},
            _first_fold(data, arguments, scored[0]))


def _difference(ours, theirs, key, arguments):
    """Columns ``key``, ``key_sd``, ``key_repeats``, ``key_repeat_sd``, ``key_se`` of the
    per-fold accuracy difference ``ours - theirs`` in points."""
    difference = 100 * (ours - theirs)
    # Each repeat's k-fold mean difference: how much one k-fold run moves by its seed.
    per_repeat = difference.reshape(arguments.repeats, arguments.folds).mean(axis=1)
    repeat_sd = per_repeat.std(ddof=1) if len(per_repeat) > 1 else 0.0
    # Standard error of the mean difference, from the spread of the repeats' means (none
    # with one repeat: the folds of one split are not independent draws).
    return {key: difference.mean(), f"{key}_sd": difference.std(),
            f"{key}_repeats": " ".join(f"{value:+.2f}" for value in per_repeat),
            f"{key}_repeat_sd": repeat_sd,
            f"{key}_se": repeat_sd / math.sqrt(len(per_repeat)) if len(per_repeat) > 1 else None}


def accuracy_row(name, arguments, tick=lambda: None, scored=None):
    """The cross-validation part of a dataset's row, and its fold-0 training set and models
    (``scored``: see :func:`cross_validate`)."""
    data = datasets.load(name)
    code_bits = histogram.forest_code_bits(name, arguments)
    scores, times, first = cross_validate(data, arguments, tick, scored, code_bits)
    row = {"dataset": name, "rows": data.X.shape[0], "features": data.X.shape[1],
           "classes": len(np.unique(data.y)), "folds": arguments.folds,
           "hw_forest_code_bits": first["hw_forest"].code_bits,
           "repeats": arguments.repeats, "seed": arguments.seed,
           "trees": arguments.trees, "depth": "none" if arguments.depth is None else arguments.depth}
    for key, values in scores.items():
        row[f"acc_{key}"] = 100 * values.mean()
        row[f"acc_{key}_sd"] = 100 * values.std()
    for trainer in FOREST_BASELINES:
        row.update(_difference(scores["hw_forest"], scores[f"{trainer}_forest"],
                               f"acc_forest_minus_{trainer}", arguments))
    background = times.pop("background_cores", None)
    row["cpu_timing_background_cores"] = (None if background is None or any(value is None for value in background)
                                          else float(max(background)))
    for key, values in times.items():
        row[f"fit_{key}_ms"] = 1000 * values.mean()
    thesis = thesis_row(name) or {}
    row.update({"thesis_hw_acc": thesis.get("hw_accuracy"), "thesis_sk_acc": thesis.get("sklearn_accuracy"),
                "thesis_hw_ms": thesis.get("hw_ms"), "thesis_sk_ms": thesis.get("sklearn_ms"),
                "thesis_speedup": thesis.get("speedup")})
    return row, first


def untimed_phase(arguments, designs, log, bar):
    """Everything but scikit-learn's timing, on every core: the fold scores
    (:func:`score_fold`) and the Verilator builds in ``arguments.jobs`` processes, and the
    simulated samples (:func:`simulate_samples`, a simulator process driven from a thread
    of this one) as soon as the builds and every dataset's first fold are done. None of
    it is a timing that is compared: the golden model's fit times are CPU times, and
    simulated cycles do not depend on the load. Returns (dataset name -> list of
    :func:`score_fold` results in split order, dataset name -> simulated samples or None).
    """
    data = {name: datasets.load(name) for name in arguments.datasets}
    tasks = {name: scoring_tasks(data[name], arguments, histogram.forest_code_bits(name, arguments))
             for name in arguments.datasets}
    done = [0]

    def sim_progress(count):
        bar.update(count - done[0])
        done[0] = count

    def simulate(scored_first):
        firsts = {name: _first_fold(data[name], arguments, first) for name, first in scored_first.items()}
        on_system = {name: first for name, first in firsts.items() if name not in arguments.histogram}
        samples = simulate_samples(on_system, arguments, sim_progress, log=log) if on_system else {}
        sim_progress(2 * len(on_system))
        # Datasets larger than the simulated build: on the histogram system, one after the other.
        with output_to(log):
            samples.update(histogram.simulate({name: firsts[name] for name in arguments.histogram}, arguments,
                                              lambda name: sim_progress(done[0] + 1)))
        return samples

    if arguments.jobs == 1:
        results = {}
        for design in designs:
            bar.set_description("Verilator: build")
            build(design, log)
            bar.update(1)
        for name, folds in tasks.items():
            bar.set_description(f"{name}: accuracy")
            results[name] = []
            for fold in folds:
                results[name].append(score_fold(*fold))
                bar.update(1)
        if arguments.no_sim:
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
            building = [pool.submit(build, design, log) for design in designs]
            scored = {name: [pool.submit(score_fold, *fold) for fold in folds]
                      for name, folds in tasks.items()}
            for future in concurrent.futures.as_completed(
                    building + [f for fs in scored.values() for f in fs]):
                future.result()
                bar.update(1)
                if (not arguments.no_sim and sim_future is None and all(b.done() for b in building)
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
