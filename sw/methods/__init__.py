"""Every learning method of the host library, one package per family, all of one shape
(estimator, its model, its helpers): ``forest`` (the hardware random forest), ``metric``
(large-margin metric learning, thesis ch. 3), ``elm`` (extreme learning machines, seed 002),
``linear`` (naive Bayes and logistic regression, seed 004) and ``tree`` (the entropy tree
and LDA features, seed 001). ``params`` holds the
parameter-constraint tables the estimators validate with.

Every estimator is exported here (``from sw.methods import HardwareForestClassifier``),
imported on first use so that the gateware, which needs only the forest's generator
constants, does not load every family's dependencies.
"""

import importlib

#: Estimator name -> module that defines it.
ESTIMATORS = {
    "HardwareForestClassifier": "sw.methods.forest.estimator",
    "LargeMarginMetricLearning": "sw.methods.metric.estimator",
    "RegularizedELMClassifier": "sw.methods.elm.regularized",
    "RegularizedELMRegressor": "sw.methods.elm.regularized",
    "IncrementalELMRegressor": "sw.methods.elm.incremental",
    "GaussianNaiveBayesClassifier": "sw.methods.linear.naive_bayes",
    "GradientLogisticClassifier": "sw.methods.linear.logistic",
    "EntropyTreeClassifier": "sw.methods.tree.entropy",
    "LDAFeatures": "sw.methods.tree.lda",
}

__all__ = list(ESTIMATORS)


def __getattr__(name):
    if name in ESTIMATORS:
        return getattr(importlib.import_module(ESTIMATORS[name]), name)
    raise AttributeError(f"module 'sw.methods' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
