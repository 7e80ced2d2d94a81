"""Cross-validation shared by the experiments: repeated stratified k-fold splits and the
timing of a fit.

Repeat ``r`` of a run is an ordinary stratified k-fold split shuffled with ``seeds[r]``;
every method of an experiment sees the same folds. :func:`timed` measures one call by
wall time and by the CPU time of this process (one core's work).
"""

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
