"""Cross-validation shared by the experiments: repeated stratified k-fold splits and the
timing of a fit.

Repeat ``r`` of a run is an ordinary stratified k-fold split shuffled with ``seeds[r]``;
every method of an experiment sees the same folds. :func:`timed` measures one call by
wall time and by the CPU time of this process (one core's work); :func:`background_cores`
how busy the rest of the machine was meanwhile.
"""

import os
import time

import numpy as np
from sklearn.model_selection import StratifiedKFold


def splits(X, y, folds, seeds):
    """(repeat, fold, train, test) of every repeat's stratified ``folds``-fold split; repeat
    ``r`` shuffles with ``seeds[r]``."""
    for repeat, seed in enumerate(seeds):
        split = StratifiedKFold(folds, shuffle=True, random_state=seed)
        for fold, (train, test) in enumerate(split.split(X, y)):
            yield repeat, fold, train, test


def fold_seed(seed, fold, stride=1000):
    """The estimators' seed on fold ``fold`` of the repeat shuffled with ``seed``."""
    return seed * stride + fold


def timed(function):
    """(wall seconds, CPU seconds of this process, result) of ``function()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = function()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def _busy_seconds():
    """CPU seconds all processes have run since boot (``/proc/stat``), or None off Linux."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(value) for value in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def background_cores(function):
    """(cores, result) of ``function()``: ``cores`` is the mean number of cores other
    processes kept busy while it ran (the machine's busy CPU time less this process's, per
    wall second), None where ``/proc/stat`` is not available. A CPU timing taken while
    ``cores`` is well above 0 shared the machine."""
    busy, own, wall = _busy_seconds(), time.process_time(), time.perf_counter()
    result = function()
    after = _busy_seconds()
    if busy is None or after is None:
        return None, result
    elapsed = time.perf_counter() - wall
    others = (after - busy) - (time.process_time() - own)
    return max(0.0, others / elapsed) if elapsed > 0 else 0.0, result


def fold_scores(make_models, X, y, folds, seeds, stride=1000):
    """Test accuracy per (model, repeat, fold), repeats after each other: model name ->
    array. ``make_models(fold_seed)`` returns a dict of fresh estimators for one fold,
    ``fold_seed`` being :func:`fold_seed` of the repeat's seed, the fold and ``stride``."""
    scores = {}
    for repeat, fold, train, test in splits(X, y, folds, seeds):
        for name, estimator in make_models(fold_seed(seeds[repeat], fold, stride)).items():
            estimator.fit(X[train], y[train])
            scores.setdefault(name, []).append(estimator.score(X[test], y[test]))
    return {name: np.array(values) for name, values in scores.items()}
