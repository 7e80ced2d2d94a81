"""The scikit-learn estimator of the hardware random forest.

``HardwareForestClassifier`` quantises the features (see :mod:`sw.methods.forest.quantize`), trains the
forest with a backend (the golden model :mod:`sw.methods.forest.model`, or the Verilator simulation of
the whole accelerator, :mod:`sim.backend`) and predicts by majority vote of the trees. ``to_sklearn()`` exports a real
``sklearn.ensemble.RandomForestClassifier`` built from the node arrays, with real-valued
thresholds, whose ``predict`` and ``predict_proba`` equal the model's on every input.
"""

import copy
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from sw.methods.forest import model
from sw.methods.forest.quantize import MAX_CODE_BITS, QUANTIZER_KINDS, make_quantizer

__all__ = ["HardwareForestClassifier", "THESIS_PRESET", "MODES", "BACKENDS"]

MODES = ("forest", "thesis")
BACKENDS = ("model", "sim")
#: What the simulated accelerator can be built for (``hw.pe.ProcessingElement``'s limits).
SIM_LIMITS = {"rows": 1 << 20, "features": 4096, "classes": 64, "trees": 1 << 16, "code_bits": 24}
#: The thesis design (ch. 4) as parameter values of the same algorithm.
THESIS_PRESET = {
    "n_estimators": 250,
    "max_samples": 16,
    "max_depth": 4,
    "quantizer": "fixed",
}


class HardwareForestClassifier(ClassifierMixin, BaseEstimator):
    """Random forest trained as the hardware trains it (bit-exact golden model backend).

    Parameters
    ----------
    n_estimators : int, default 100
        Number of trees.
    mode : {"forest", "thesis"}, default "forest"
        "thesis" applies :data:`THESIS_PRESET` (250 trees, bootstrap of 16 rows, depth 4,
        one feature per tree, fixed-point codes) to every preset parameter still at its
        forest default; a parameter given another value is kept.
    max_depth : int or None, default None
        Depth limit (root = 0); None grows until the leaves are pure or too small.
    max_samples : int, float or None, default None
        Bootstrap draws per tree: an int, a fraction of the rows (at least 1), or None
        for as many as there are rows (as scikit-learn).
    bootstrap : bool, default True
        False trains every tree on every row once.
    max_features : {"sqrt", "log2"}, int, float or None, default "sqrt"
        Non-constant features examined per node, resolved as scikit-learn does.
    min_samples_split : int, default 2
        Nodes with fewer distinct in-bag rows are leaves.
    min_samples_leaf : int, default 1
        Each child must keep at least this many distinct in-bag rows.
    quantizer : {"rank", "fixed"}, default "rank"
        Feature-to-code map, see :mod:`sw.methods.forest.quantize`.
    code_bits : int, default 16
        Width of a feature code in the hardware.
    max_classes : int, default 256
        Hardware capacity: largest number of classes.
    max_features_supported : int, default 16384
        Hardware capacity: largest number of features.
    max_rows_supported : int, default 1048576
        Hardware capacity: largest number of training rows.
    backend : {"model", "sim"}, default "model"
        What trains the forest and predicts: the golden model, or the Verilator simulation
        of the whole accelerator (``hw.system.ForestSystem``, built for the data's size;
        the first fit of a size builds the simulator, which takes minutes). Both give the
        same trees and predictions.
    pe_count : int, default 2
        Processing elements of the simulated accelerator (``backend="sim"``); the trees do
        not depend on it, the cycle counts do.
    n_jobs : int or None, default None
        Parallel tree training (joblib); the trees do not depend on it.
    random_state : int, RandomState or None, default None
        An int in [0, 2**32) is the forest seed itself; otherwise a seed is drawn from it.

    Attributes
    ----------
    classes_ : array
        Class labels; the model's class i is ``classes_[i]``.
    n_classes_, n_features_in_ : int
    trees_ : list of sw.methods.forest.model.Tree
    quantizer_ : fitted quantiser
    seed_ : int
        Forest seed of the per-tree generators.
    training_parameters_ : sw.methods.forest.model.TrainingParameters
        The resolved parameters the backend used.
    train_cycles_, sort_cycles_ : int
        ``backend="sim"`` only: simulated cycles of the training (presort included) and of
        the presort.
    sim_design_ : dict
        ``backend="sim"`` only: the accelerator's build parameters.
    """

    def __init__(self, n_estimators=100, *, mode="forest", max_depth=None, max_samples=None,
                 bootstrap=True, max_features="sqrt",
                 min_samples_split=2, min_samples_leaf=1, quantizer="rank", code_bits=16,
                 max_classes=256, max_features_supported=16384,
                 max_rows_supported=1 << 20, backend="model", pe_count=2, n_jobs=None,
                 random_state=None):
        self.n_estimators = n_estimators
        self.mode = mode
        self.max_depth = max_depth
        self.max_samples = max_samples
        self.bootstrap = bootstrap
        self.max_features = max_features
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.quantizer = quantizer
        self.code_bits = code_bits
        self.max_classes = max_classes
        self.max_features_supported = max_features_supported
        self.max_rows_supported = max_rows_supported
        self.backend = backend
        self.pe_count = pe_count
        self.n_jobs = n_jobs
        self.random_state = random_state

    # ------------------------------------------------------------------------------
    def effective_params(self):
        """The hyper-parameters after applying the mode preset (a dict)."""
        params = self.get_params()
        if params["mode"] not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {params['mode']!r}")
        if params["mode"] == "thesis":
            defaults = type(self)().get_params()
            for name, value in THESIS_PRESET.items():
                if params[name] == defaults[name]:
                    params[name] = value
        return params

    def _resolve(self, n_rows, n_features, n_classes):
        params = self.effective_params()
        if params["backend"] not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, not {params['backend']!r}")
        if params["quantizer"] not in QUANTIZER_KINDS:
            raise ValueError(f"quantizer must be one of {QUANTIZER_KINDS}, "
                             f"not {params['quantizer']!r}")
        _check_integer("n_estimators", params["n_estimators"], 1)
        _check_integer("code_bits", params["code_bits"], 1, MAX_CODE_BITS)
        for name in ("max_classes", "max_features_supported", "max_rows_supported"):
            _check_integer(name, params[name], 1)
        if n_classes > params["max_classes"]:
            raise ValueError(f"y has {n_classes} classes, more than max_classes = "
                             f"{params['max_classes']} the hardware is configured for")
        if n_features > params["max_features_supported"]:
            raise ValueError(f"X has {n_features} features, more than max_features_supported"
                             f" = {params['max_features_supported']}")
        if n_rows > params["max_rows_supported"]:
            raise ValueError(f"X has {n_rows} rows, more than max_rows_supported = "
                             f"{params['max_rows_supported']}")
        return params, model.TrainingParameters(
            n_classes=n_classes,
            max_depth=params["max_depth"],
            max_samples=_resolve_max_samples(params["max_samples"], n_rows),
            bootstrap=params["bootstrap"],
            features_per_split=_resolve_max_features(params["max_features"], n_features),
            thesis_mode=params["mode"] == "thesis",
            min_samples_split=params["min_samples_split"],
            min_samples_leaf=params["min_samples_leaf"])

    def fit(self, X, y):
        """Quantise ``X``, train the forest; returns self."""
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite=True)
        check_classification_targets(y)
        self.classes_, labels = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"y has 1 class ({self.classes_[0]!r}); a classifier needs at "
                             f"least 2 classes")
        self.n_classes_ = len(self.classes_)
        params, self.training_parameters_ = self._resolve(X.shape[0], X.shape[1],
                                                          self.n_classes_)
        self.quantizer_ = make_quantizer(params["quantizer"], params["code_bits"])
        codes = self.quantizer_.fit_transform(X)
        self.seed_ = _resolve_seed(params["random_state"])
        if params["backend"] == "sim":
            self._check_sim_capacity(X.shape, params)
            from sim import backend
            result = backend.train(codes, labels, self.training_parameters_, self.seed_,
                                   params["n_estimators"], pe_count=params["pe_count"],
                                   code_bits=params["code_bits"])
            self.trees_ = result["trees"]
            self.train_cycles_, self.sort_cycles_ = result["train_cycles"], result["sort_cycles"]
            self.sim_design_ = result["design"]
        else:
            self.trees_ = model.train_forest(codes, labels, self.training_parameters_,
                                             self.seed_, params["n_estimators"],
                                             n_jobs=params["n_jobs"])
        return self

    def _check_sim_capacity(self, shape, params):
        """Refuse, by name and limit, what the simulated accelerator cannot be built for."""
        _check_integer("pe_count", params["pe_count"], 1, 64)
        wanted = {"rows": shape[0], "features": shape[1], "classes": self.n_classes_,
                  "trees": params["n_estimators"], "code_bits": params["code_bits"]}
        for name, value in wanted.items():
            if value > SIM_LIMITS[name]:
                raise ValueError(f"backend='sim': {value} {name} is more than the accelerator "
                                 f"can be built for ({SIM_LIMITS[name]})")

    def _sim_inference(self, codes):
        from sim import backend
        return backend.predict(self.trees_, codes, self.sim_design_)

    def _codes(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64, ensure_all_finite=True)
        return self.quantizer_.transform(X)

    def predict_votes(self, X):
        """Number of trees voting for each class, int64 array (n_samples, n_classes)."""
        codes = self._codes(X)
        if self.effective_params()["backend"] == "sim":
            return self._sim_inference(codes)["votes"][:, :self.n_classes_]
        return model.forest_votes(self.trees_, codes, self.n_classes_)

    def predict_class_counts(self, X):
        """Sum of the reached leaves' weighted class counts (the hardware's optional output)."""
        codes = self._codes(X)
        if self.effective_params()["backend"] == "sim":
            return self._sim_inference(codes)["class_count_sums"][:, :self.n_classes_]
        return model.forest_class_counts(self.trees_, codes, self.n_classes_)

    def predict_proba(self, X):
        """Fraction of the trees voting for each class; rows sum to 1."""
        return self.predict_votes(X) / len(self.trees_)

    def predict(self, X):
        """Majority vote of the trees (ties: the lowest class)."""
        votes = self.predict_votes(X)
        return self.classes_[np.argmax(votes, axis=1)]

    # ------------------------------------------------------------------------------
    def to_sklearn(self):
        """A fitted ``sklearn.ensemble.RandomForestClassifier`` with this forest's trees.

        Each tree's nodes, features and real-valued thresholds (the quantiser's edges)
        are copied; the leaf values are the one-hot majority class, so that scikit-learn's
        probability averaging gives exactly this model's vote fractions.
        """
        from sklearn.ensemble import RandomForestClassifier
        check_is_fitted(self)
        n_features = self.n_features_in_
        # Fitting a one-tree forest on a tiny dataset sets every attribute predict needs.
        template_X = np.zeros((self.n_classes_, n_features))
        template_X[:, 0] = np.arange(self.n_classes_)
        forest = RandomForestClassifier(n_estimators=1, bootstrap=False, max_features=None,
                                        random_state=0)
        forest.fit(template_X, self.classes_)
        template = forest.estimators_[0]
        node_dtype = template.tree_.__getstate__()["nodes"].dtype
        estimators = []
        for tree in self.trees_:
            estimator = copy.deepcopy(template)
            estimator.tree_ = _export_tree(tree, self.quantizer_, n_features,
                                           self.n_classes_, node_dtype, type(template.tree_))
            estimators.append(estimator)
        forest.estimators_ = estimators
        forest.n_estimators = len(estimators)
        return forest


def _export_tree(tree, quantizer, n_features, n_classes, node_dtype, tree_class):
    leaf = tree.is_leaf
    nodes = np.zeros(tree.n_nodes, dtype=node_dtype)
    nodes["left_child"] = tree.left_child
    nodes["right_child"] = tree.right_child
    nodes["feature"] = np.where(leaf, -2, tree.feature)  # scikit-learn's TREE_UNDEFINED
    thresholds = np.full(tree.n_nodes, -2.0)
    for index in np.flatnonzero(~leaf):
        thresholds[index] = quantizer.threshold_value(int(tree.feature[index]),
                                                      int(tree.threshold_code[index]))
    nodes["threshold"] = thresholds
    fractions = tree.class_counts / tree.n_samples[:, None]
    nodes["impurity"] = 1.0 - np.sum(fractions * fractions, axis=1)
    nodes["n_node_samples"] = tree.n_rows
    nodes["weighted_n_node_samples"] = tree.n_samples
    values = np.zeros((tree.n_nodes, 1, n_classes))
    values[np.arange(tree.n_nodes), 0, tree.majority_class] = 1.0
    exported = tree_class(n_features, np.array([n_classes], dtype=np.intp), 1)
    exported.__setstate__({"max_depth": int(tree.depth.max()), "node_count": tree.n_nodes,
                           "nodes": nodes, "values": values})
    return exported


def _check_integer(name, value, minimum, maximum=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, not {value!r}")
    if value < minimum or (maximum is not None and value > maximum):
        bound = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be {bound}, not {value}")


def _resolve_max_samples(max_samples, n_rows):
    if max_samples is None:
        return n_rows
    if isinstance(max_samples, numbers.Integral) and not isinstance(max_samples, bool):
        _check_integer("max_samples", max_samples, 1)
        return int(max_samples)
    if isinstance(max_samples, numbers.Real) and 0 < max_samples <= 1:
        return max(round(n_rows * max_samples), 1)
    raise ValueError(f"max_samples must be None, an integer >= 1 or a fraction in (0, 1], "
                     f"not {max_samples!r}")


def _resolve_max_features(max_features, n_features):
    if max_features is None:
        return n_features
    if max_features == "sqrt":
        return max(1, int(np.sqrt(n_features)))
    if max_features == "log2":
        return max(1, int(np.log2(n_features)))
    if isinstance(max_features, numbers.Integral) and not isinstance(max_features, bool):
        _check_integer("max_features", max_features, 1, n_features)
        return int(max_features)
    if isinstance(max_features, numbers.Real) and 0 < max_features <= 1:
        return max(1, int(max_features * n_features))
    raise ValueError(f"max_features must be 'sqrt', 'log2', None, an integer in "
                     f"[1, {n_features}] or a fraction in (0, 1], not {max_features!r}")


def _resolve_seed(random_state):
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        _check_integer("random_state", random_state, 0, (1 << 32) - 1)
        return int(random_state)
    return int(check_random_state(random_state).randint(0, 1 << 32, dtype=np.int64))
