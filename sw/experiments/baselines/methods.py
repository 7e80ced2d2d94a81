"""The methods the side-by-side comparison fits on every fold: the hardware forest (golden
model, bit-exact with the RTL), the CPU random forests, and the host library's neural-network
and linear methods with their peer implementations.

Each entry is ``key -> (label, family, factory)``; ``factory(seed)`` returns a fresh
estimator. Methods that need standardised inputs (the ELMs and the logistic classifiers)
are a pipeline with scikit-learn's ``StandardScaler`` (fitted on the training fold only);
trees, forests and naive Bayes see the raw features, as in their seeds.
"""

import importlib

from sklearn.naive_bayes import GaussianNB
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from sw.experiments.cpu_forests import cpu_forest

__all__ = ["METHODS", "REFERENCE", "method", "FOREST_TREES"]

#: Trees of every forest here (as the comparison's forest mode).
FOREST_TREES = 100
#: The method every other is compared with (accuracy difference with its standard error).
REFERENCE = "hw_forest"


def _ours(module, name, **parameters):
    """A factory of the host library's estimator ``name`` (imported on first use)."""
    def make(seed):
        estimator = getattr(importlib.import_module(module), name)
        seeded = {"random_state": seed} if "random_state" in estimator().get_params() else {}
        return estimator(**parameters, **seeded)
    return make


def _scaled(factory):
    return lambda seed: make_pipeline(StandardScaler(), factory(seed))


def _scikit_elm(seed):
    # scikit-elm imports dask without declaring it; its in-memory classifier (its Dask one
    # fails to start its cluster here).
    from skelm import ELMClassifier
    return ELMClassifier(random_state=seed)


METHODS = {
    "hw_forest": ("HW forest (golden model = RTL)", "forest",
                  _ours("sw.methods.forest.estimator", "HardwareForestClassifier",
                        n_estimators=FOREST_TREES, n_jobs=1)),
    "sk_forest": ("scikit-learn random forest", "forest",
                  lambda seed: cpu_forest("sk", FOREST_TREES, random_state=seed, n_jobs=1)),
    "dal_forest": ("oneDAL random forest", "forest",
                   lambda seed: cpu_forest("dal", FOREST_TREES, random_state=seed, n_jobs=1)),
    "elm": ("regularised ELM (ours, seed 002 ch. 3)", "neural network",
            _scaled(_ours("sw.methods.elm.regularized", "RegularizedELMClassifier"))),
    "skelm": ("scikit-elm ELMClassifier (peer)", "neural network", _scaled(_scikit_elm)),
    "nb": ("Gaussian naive Bayes +0.01 (ours, seed 004)", "linear",
           _ours("sw.methods.linear.naive_bayes", "GaussianNaiveBayesClassifier")),
    "sk_nb": ("scikit-learn GaussianNB (peer)", "linear", lambda seed: GaussianNB()),
    "logistic": ("gradient-descent logistic (ours, seed 004)", "linear",
                 _scaled(_ours("sw.methods.linear.logistic", "GradientLogisticClassifier"))),
    "sk_logistic": ("scikit-learn LogisticRegression (peer)", "linear",
                    _scaled(lambda seed: LogisticRegression(max_iter=1000))),
    "entropy_tree": ("entropy tree (ours, seed 001)", "tree",
                     _ours("sw.methods.tree.entropy", "EntropyTreeClassifier")),
    "sk_entropy_tree": ("scikit-learn entropy tree (peer)", "tree",
                        lambda seed: DecisionTreeClassifier(criterion="entropy", random_state=seed)),
}


def method(key, seed):
    """A fresh estimator of method ``key`` seeded with ``seed``."""
    return METHODS[key][2](seed)
