"""The scikit-learn estimator of the hardware random forest.

``HardwareForestClassifier`` quantises the features (see :mod:`sw.methods.forest.quantize`), trains the
forest with a backend (the golden model :mod:`sw.methods.forest.model`, or the Verilator simulation of
the whole accelerator, :mod:`sim.backend`) and predicts by majority vote of the trees. ``to_sklearn()`` exports a real
``sklearn.ensemble.RandomForestClassifier`` built from the node arrays, with real-valued
thresholds, whose ``predict`` and ``predict_proba`` equal the model's on every input.
"""

import copy
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.ensemble import RandomForestClassifier
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from sw.methods.forest import model
from sw.methods.forest.quantize import MAX_CODE_BITS, QUANTIZER_KINDS, make_quantizer
from sw.methods.params import (Boolean, Instance, Integer, Options, Real,
                              classification_data, validate_parameters)

__all__ = ["HardwareForestClassifier", "MODE_DEFAULTS", "MODES", "BACKENDS", "SIM_ENGINES"]

MODES = ("forest", "thesis")
BACKENDS = ("model", "sim")
#: What ``backend="sim"`` simulates: the ``ForestSystem`` (sorted lists, inference engine)
#: or the histogram system (the histogram PE: larger datasets, forest mode, codes of at
#: most 10 bits); "auto": the system when a build of it can hold the job, else the
#: histogram system.
SIM_ENGINES = ("auto", "system", "histogram")
#: The value of a parameter that takes its mode's default (:data:`MODE_DEFAULTS`).
AUTO = "auto"
#: Per mode, the values that parameters left at ``"auto"`` take. Thesis mode is the
#: thesis design (ch. 4) as parameter values of the same algorithm; forest mode is
#: scikit-learn's ``RandomForestClassifier`` defaults.
MODE_DEFAULTS = {
    "forest": {"n_estimators": 100, "max_samples": None, "max_depth": None, "quantizer": "rank"},
    "thesis": {"n_estimators": 250, "max_samples": 16, "max_depth": 4, "quantizer": "fixed"},
}


class HardwareForestClassifier(ClassifierMixin, BaseEstimator):
    """Random forest trained as the hardware trains it (bit-exact golden model backend).

    Parameters
    ----------
    n_estimators : int or "auto", default "auto"
        Number of trees; "auto": 100 in forest mode, 250 in thesis mode.
    mode : {"forest", "thesis"}, default "forest"
        "forest": a fresh random subset of features at every split, as scikit-learn.
        "thesis": one feature drawn per tree and used at every split, as the thesis's
        hardware. The parameters left at "auto" take the mode's values
        (:data:`MODE_DEFAULTS`: thesis mode 250 trees, bootstrap of 16 rows, depth 4,
        fixed-point codes); a value passed explicitly always wins, so ``get_params()``
        with ``mode`` describes the model that is trained.
    max_depth : int, None or "auto", default "auto"
        Depth limit (root = 0); None grows until the leaves are pure or too small;
        "auto": None in forest mode, 4 in thesis mode.
    max_samples : int, float, None or "auto", default "auto"
        Bootstrap draws per tree: an int (at most the training rows), a fraction of the
        rows (at least 1), or None for as many as there are rows (as scikit-learn);
        "auto": None in forest mode, 16 in thesis mode.
    bootstrap : bool, default True
        False trains every tree on every row once.
    max_features : {"sqrt", "log2"}, int, float or None, default "sqrt"
        Non-constant features examined per node, resolved as scikit-learn does.
    min_samples_split : int, default 2
        Nodes with fewer distinct in-bag rows are leaves.
    min_samples_leaf : int, default 1
        Each child must keep at least this many distinct in-bag rows.
    quantizer : {"rank", "fixed", "auto"}, default "auto"
        Feature-to-code map, see :mod:`sw.methods.forest.quantize`; "auto": "rank" in
        forest mode, "fixed" in thesis mode.
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
        of the whole accelerator (``hw.system.ForestSystem``): a build already made that
        holds the data is reused, else one is built for the data's size, which takes
        minutes (``docs/running.md``). Both give the same trees and predictions; an error
        flag of the accelerator is raised as ``sim.host.errors.AcceleratorError``.
    sim_engine : {"auto", "system", "histogram"}, default "auto"
        ``backend="sim"`` only: "system" simulates the ``ForestSystem`` (above);
        "histogram" the histogram system (``hw.histogram_system``: one histogram PE with
        its dataset on the chip, up to 65,536 rows x 1,024 features, forest mode,
        ``min_samples_leaf=1``, ``code_bits`` at most 10), which has no inference engine:
        a forest trained there is predicted by the golden model's inference (the same
        votes; a ``UserWarning`` at fit says so); "auto": the system when one of its
        builds can hold the job, else the histogram system. The same trees either way.
    pe_count : int, default 2
        Processing elements of the simulated accelerator (``backend="sim"``, at most
        ``sim.backend.LIMITS["pe_count"]``); the trees do not depend on it, the cycle
        counts do.
    verbose : int or None, default None
        ``backend="sim"`` only: None shows progress bars (the simulator's build, the trees
        trained) when stderr is a terminal; 0 shows nothing; 1 always shows the bars; 2
        also prints the simulator's log, which otherwise goes to a file under
        ``$HWFOREST_BUILD_DIR/logs/`` named in every error.
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
    effective_params_ : dict
        ``get_params()`` with every "auto" replaced by the mode's value.
    feature_importances_ : array
        Mean decrease in Gini impurity per feature, computed by scikit-learn on
        :meth:`to_sklearn`'s export (so equal to scikit-learn's definition).
    train_cycles_, sort_cycles_ : int
        ``backend="sim"`` only: simulated cycles of the training (presort included) and of
        the presort (0 on the histogram system, which has none).
    sim_engine_ : str
        ``backend="sim"`` only: "system" or "histogram", what trained the forest.
    sim_design_ : dict
        ``backend="sim"`` only: the build's parameters (on the system, predictions run on
        the same build, loading the trained trees: nothing is trained again; the last
        inference is kept, so ``predict`` then ``predict_proba`` on the same rows simulate
        once).

    Not supported: ``sample_weight`` (the bootstrap's integer weights are the only
    weights) and ``warm_start``.
    """

    _parameter_constraints = {
        "n_estimators": [Integer(1), Options(AUTO)],
        "mode": [Options(*MODES)],
        "max_depth": [Integer(0), Options(None, AUTO)],
        "max_samples": [Integer(1), Real(0, 1, low_open=True), Options(None, AUTO)],
        "bootstrap": [Boolean()],
        "max_features": [Options("sqrt", "log2", None), Integer(1), Real(0, 1, low_open=True)],
        "min_samples_split": [Integer(2)],
        "min_samples_leaf": [Integer(1)],
        "quantizer": [Options(*QUANTIZER_KINDS, AUTO)],
        "code_bits": [Integer(1, MAX_CODE_BITS)],
        "max_classes": [Integer(2)],
        "max_features_supported": [Integer(1)],
        "max_rows_supported": [Integer(1)],
        "backend": [Options(*BACKENDS)],
        "sim_engine": [Options(*SIM_ENGINES)],
        "pe_count": [Integer(1)],
        "verbose": [Options(None), Integer(0, 2)],
        "n_jobs": [Options(None), Integer(1), Integer(-(1 << 16), -1)],
        "random_state": [Integer(0, (1 << 32) - 1), Options(None),
                         Instance(np.random.RandomState, "a numpy RandomState")],
    }

    def __init__(self, n_estimators=AUTO, *, mode="forest", max_depth=AUTO, max_samples=AUTO,
                 bootstrap=True, max_features="sqrt",
                 min_samples_split=2, min_samples_leaf=1, quantizer=AUTO, code_bits=16,
                 max_classes=256, max_features_supported=16384,
                 max_rows_supported=1 << 20, backend="model", sim_engine="auto", pe_count=2,
                 verbose=None, n_jobs=None, random_state=None):
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
        self.sim_engine = sim_engine
        self.pe_count = pe_count
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.random_state = random_state

    # ------------------------------------------------------------------------------
    def effective_params(self):
        """The hyper-parameters with every "auto" replaced by the mode's value (a dict),
        after checking each against :attr:`_parameter_constraints`."""
        validate_parameters(self)
        params = self.get_params()
        for name, value in MODE_DEFAULTS[params["mode"]].items():
            if params[name] == AUTO:
                params[name] = value
        return params

    def _resolve(self, n_rows, n_features, n_classes):
        params = self.effective_params()
        limits = {"classes": (n_classes, "max_classes", "y has"),
                  "features": (n_features, "max_features_supported", "X has"),
                  "rows": (n_rows, "max_rows_supported", "X has")}
        for what, (value, name, subject) in limits.items():
            if value > params[name]:
                raise ValueError(f"{subject} {value} {what}, more than {name} = {params[name]}"
                                 f" the hardware is configured for")
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
        X, labels = classification_data(self, X, y)
        self.n_classes_ = len(self.classes_)
        params, self.training_parameters_ = self._resolve(X.shape[0], X.shape[1],
                                                          self.n_classes_)
        self.effective_params_ = params
        if params["backend"] == "sim":
            # Refused at once, before quantising or elaborating anything.
            self.sim_engine_ = _sim_engine(X.shape, self.n_classes_, self.training_parameters_, params)
        self.quantizer_ = make_quantizer(params["quantizer"], params["code_bits"])
        codes = self.quantizer_.fit_transform(X)
        self.seed_ = _resolve_seed(params["random_state"])
        self._sim_last = None
        if params["backend"] == "sim":
            self._sim_train(codes, labels, params)
        else:
            self.trees_ = model.train_forest(codes, labels, self.training_parameters_,
                                             self.seed_, params["n_estimators"],
                                             n_jobs=params["n_jobs"])
        return self

    def _sim_train(self, codes, labels, params):
        """Train on the simulated engine :attr:`sim_engine_` chose."""
        if self.sim_engine_ == "histogram":
            from sim import histogram_backend       # (loads cocotb)
            result = histogram_backend.train(codes, labels, self.training_parameters_, self.seed_,
                                             params["n_estimators"], code_bits=params["code_bits"],
                                             **self._sim_output())
            result["sort_cycles"] = 0
            warnings.warn("backend='sim' trained this forest on the histogram system, which has no "
                          "inference engine: predict, predict_proba and predict_votes use the golden "
                          "model's inference (the same votes as the system's engine)", UserWarning,
                          stacklevel=3)
        else:
            from sim import backend                 # (loads cocotb)
            result = backend.train(codes, labels, self.training_parameters_, self.seed_,
                                   params["n_estimators"], pe_count=params["pe_count"],
                                   code_bits=params["code_bits"], **self._sim_output())
        self.trees_ = result["trees"]
        self.train_cycles_, self.sort_cycles_ = result["train_cycles"], result["sort_cycles"]
        self.sim_design_ = result["design"]

    def _simulated_inference(self):
        """Whether predictions run in the simulation (the system's inference engine)."""
        params = self.effective_params_
        return params["backend"] == "sim" and getattr(self, "sim_engine_", "system") == "system"

    def _sim_output(self):
        """``backend``'s progress and log options for ``verbose``."""
        verbose = self.effective_params_["verbose"]
        return {"progress": None if verbose is None else verbose > 0,
                "show_log": True if verbose == 2 else None}

    def _sim_inference(self, codes):
        """The simulated inference of ``codes`` (the last one kept: same rows, one run)."""
        key = (codes.shape, codes.tobytes())
        if getattr(self, "_sim_last", None) is None or self._sim_last[0] != key:
            from sim import backend     # (loads cocotb)
            result = backend.predict(self.trees_, codes, self.sim_design_, **self._sim_output())
            self._sim_last = (key, result)
        return self._sim_last[1]

    def _codes(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64, ensure_all_finite=True)
        return self.quantizer_.transform(X)

    def predict_votes(self, X):
        """Number of trees voting for each class, int64 array (n_samples, n_classes)."""
        codes = self._codes(X)
        if self._simulated_inference():
            return self._sim_inference(codes)["votes"][:, :self.n_classes_]
        return model.forest_votes(self.trees_, codes, self.n_classes_)

    def predict_class_counts(self, X):
        """Sum of the reached leaves' weighted class counts (the hardware's optional output)."""
        codes = self._codes(X)
        if self._simulated_inference():
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

    @property
    def feature_importances_(self):
        """Mean decrease in Gini impurity per feature (scikit-learn's definition, computed
        on :meth:`to_sklearn`'s export of the trees)."""
        return self.to_sklearn().feature_importances_


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


def _sim_engine(shape, n_classes, training, params):
    """The engine ``backend="sim"`` trains on ("system" or "histogram"), after checking
    that it can serve the job (``ValueError`` naming the value and the limit otherwise)."""
    from sim import backend, histogram_backend      # (loads cocotb)
    (n_rows, n_features), n_trees, code_bits = shape, params["n_estimators"], params["code_bits"]
    engine = params["sim_engine"]
    if engine in ("auto", "system"):
        try:
            backend.check_job(n_rows, n_features, n_classes, n_trees, training, pe_count=params["pe_count"],
                              code_bits=code_bits)
            return "system"
        except ValueError as refusal:
            if engine == "system":
                raise
            system_refusal = refusal
    try:
        histogram_backend.check_job(n_rows, n_features, n_classes, n_trees, training, code_bits=code_bits)
    except ValueError as refusal:
        if engine == "histogram":
            raise
        raise ValueError(f"{system_refusal}; nor can the histogram system (sim_engine='histogram') "
                         f"train it: {refusal}") from None
    return "histogram"


def _resolve_max_samples(max_samples, n_rows):
    """Draws per tree; an integer above the training rows is refused (as scikit-learn)."""
    if max_samples is None:
        return n_rows
    if isinstance(max_samples, numbers.Integral):
        if max_samples > n_rows:
            raise ValueError(f"max_samples={max_samples} is more than the {n_rows} training "
                             f"rows: give at most {n_rows}, a fraction in (0, 1] or None")
        return int(max_samples)
    return max(round(n_rows * max_samples), 1)


def _resolve_max_features(max_features, n_features):
    """Features searched per split, resolved as scikit-learn does; an integer above the
    features is refused."""
    if max_features is None:
        return n_features
    if max_features == "sqrt":
        return max(1, int(np.sqrt(n_features)))
    if max_features == "log2":
        return max(1, int(np.log2(n_features)))
    if isinstance(max_features, numbers.Integral):
        if max_features > n_features:
            raise ValueError(f"max_features={max_features} is more than the {n_features} "
                             f"features of X: give at most {n_features}, a fraction in "
                             f"(0, 1], 'sqrt', 'log2' or None")
        return int(max_features)
    return max(1, int(max_features * n_features))


def _resolve_seed(random_state):
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    return int(check_random_state(random_state).randint(0, 1 << 32, dtype=np.int64))
