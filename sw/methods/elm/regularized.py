"""Regularised extreme learning machines with the seed's fast model selection
(seed 002, Kokkinos 2016, ch. 3) as scikit-learn estimators.

A model is: inputs scaled to [-1, 1] by their training range, a random sigmoid hidden layer
of L neurons (:mod:`sw.methods.elm.hidden`), and ridge output weights
beta = (H^T H + I/C)^-1 H^T Y. ``n_hidden="auto"`` and/or ``C="auto"`` choose L and/or C
over the seed's grid by one of the chapter's algorithms (``selection``, see
:mod:`sw.methods.elm.selection`): L from L_max / 40 to L_max = a sqrt(N) (a =
``l_max_factor``), C = 2^-14 .. 2^15. The classifier regresses one-hot (0/1) targets and
predicts the arg-max output; its selection score is the mean squared error of those
outputs (the seed's regression criterion applied per output).
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from sw.methods.elm.hidden import MinMaxInputs, RandomHiddenLayer
from sw.methods.elm.selection import (ALGORITHMS, C_GRID, DEFAULT_FOLDS,
                                      DEFAULT_L_MAX_FACTOR, DEFAULT_L_STEPS, l_grid,
                                      make_folds, output_weights, select)
from sw.methods.params import (Instance, Integer, Options, Real,
                              classification_data, validate_parameters)

__all__ = ["RegularizedELMClassifier", "RegularizedELMRegressor", "AUTO"]

#: The value of ``n_hidden`` or ``C`` that is chosen by model selection.
AUTO = "auto"

_COMMON_DOC = """
    Parameters
    ----------
    n_hidden : int or "auto", default "auto"
        Number of hidden neurons L; "auto": chosen over the seed's grid, the sizes
        round(j L_max / n_l_steps), j = 1..n_l_steps, L_max = l_max_factor sqrt(N).
    C : float or "auto", default "auto"
        Regularisation (beta = (H^T H + I/C)^-1 H^T Y, larger C = weaker); "auto": chosen
        from 2^-14 .. 2^15 (:data:`sw.methods.elm.selection.C_GRID`).
    selection : str, default "cv_evd"
        The model-selection algorithm, one of
        :data:`sw.methods.elm.selection.ALGORITHMS`: "cv_cholesky", "cv_svd", "cv_evd"
        (the seed's Algorithms 1, 3, 7, k-fold cross-validation), "hat_cholesky",
        "hat_svd", "hat_qr_svd", "hat_evd" (Algorithms 2, 4, 5, 6, leave-one-out PRESS
        through the HAT matrix), "naive_cv" and "naive_loo" (the refit references; the
        latter costs N refits per pair, for small N only). Unused when neither
        ``n_hidden`` nor ``C`` is "auto".
    l_max_factor : float, default 2.0
        a in L_max = a sqrt(N) (the seed's experiments use 2, 4, 6).
    n_l_steps : int, default 40
        Number of L values of the grid (the seed's L_max / delta L = 40).
    n_folds : int, default 10
        k of the k-fold algorithms (at most the number of samples).
    random_state : int, RandomState or None, default None
        Seed of the hidden layer and of the fold split; an int in [0, 2**32) is used as is.

    Attributes
    ----------
    n_hidden_, C_ : int, float
        The hidden size and regularisation of the fitted model.
    selection_scores_ : array (len(l_grid_), len(c_grid_)) or None
        Validation mean squared error of every pair (None when nothing was selected).
    l_grid_, c_grid_ : arrays
        The grid that was searched (the fixed value alone for a parameter given).
    hidden_ : sw.methods.elm.hidden.RandomHiddenLayer
        The fitted model's n_hidden_ neurons.
    coef_ : array (n_hidden_, n_outputs)
        Output weights beta.
    n_features_in_ : int
    """


class _RegularizedELM(BaseEstimator):
    _parameter_constraints = {
        "n_hidden": [Integer(1), Options(AUTO)],
        "C": [Real(0, np.inf, low_open=True), Options(AUTO)],
        "selection": [Options(*ALGORITHMS)],
        "l_max_factor": [Real(0, np.inf, low_open=True)],
        "n_l_steps": [Integer(1)],
        "n_folds": [Integer(2)],
        "random_state": [Integer(0, (1 << 32) - 1), Options(None),
                         Instance(np.random.RandomState, "a numpy RandomState")],
    }

    def __init__(self, n_hidden=AUTO, C=AUTO, *, selection="cv_evd",
                 l_max_factor=DEFAULT_L_MAX_FACTOR, n_l_steps=DEFAULT_L_STEPS,
                 n_folds=DEFAULT_FOLDS, random_state=None):
        self.n_hidden = n_hidden
        self.C = C
        self.selection = selection
        self.l_max_factor = l_max_factor
        self.n_l_steps = n_l_steps
        self.n_folds = n_folds
        self.random_state = random_state

    def _seed(self):
        if isinstance(self.random_state, (int, np.integer)):
            return int(self.random_state)
        return int(check_random_state(self.random_state).randint(0, 1 << 31))

    def _fit_targets(self, X, Y):
        """Scale X, draw the layer, select (L, C) when asked and solve beta; Y is N x m."""
        n_samples = X.shape[0]
        selecting = self.n_hidden == AUTO or self.C == AUTO
        if selecting and self.selection in ("hat_cholesky", "hat_svd", "hat_qr_svd",
                                            "hat_evd", "naive_loo") and n_samples < 2:
            raise ValueError("leave-one-out selection needs at least 2 samples; X has 1 sample")
        self.input_scaler_ = MinMaxInputs().fit(X)
        Z = self.input_scaler_.transform(X)
        seed = self._seed()
        self.l_grid_ = (l_grid(n_samples, self.l_max_factor, self.n_l_steps)
                        if self.n_hidden == AUTO else np.array([self.n_hidden]))
        self.c_grid_ = C_GRID.copy() if self.C == AUTO else np.array([float(self.C)])
        layer = RandomHiddenLayer(X.shape[1], int(self.l_grid_[-1]), seed)
        H = layer.transform(Z)
        if selecting:
            folds = None
            if self.selection.startswith(("cv_", "naive_cv")):
                folds = make_folds(n_samples, self.n_folds, seed + 1)
            result = select(H, Y, self.l_grid_, self.c_grid_, self.selection, folds)
            self.selection_scores_ = result.scores
            self.n_hidden_, self.C_ = result.n_hidden, result.C
        else:
            self.selection_scores_ = None
            self.n_hidden_, self.C_ = int(self.n_hidden), float(self.C)
        method = self.selection if selecting else "hat_evd"
        self.coef_ = output_weights(H, Y, self.n_hidden_, self.C_, method)
        self.hidden_ = layer.truncated(self.n_hidden_)
        return self

    def _outputs(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64, ensure_all_finite=True)
        return self.hidden_.transform(self.input_scaler_.transform(X)) @ self.coef_


class RegularizedELMRegressor(RegressorMixin, _RegularizedELM):
    __doc__ = ("Regularised ELM regressor with the seed's model selection (seed 002 ch. 3)."
               "\n" + _COMMON_DOC)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def fit(self, X, y):
        """Fit on X (N x d) and real targets y (N or N x m); returns self."""
        validate_parameters(self)
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite=True,
                             multi_output=True, y_numeric=True)
        self._single_output = y.ndim == 1
        return self._fit_targets(X, y[:, None] if y.ndim == 1 else y)

    def predict(self, X):
        """h(x) beta, (n_samples,) for a 1-D training y, else (n_samples, m)."""
        out = self._outputs(X)
        return out[:, 0] if self._single_output else out


class RegularizedELMClassifier(ClassifierMixin, _RegularizedELM):
    __doc__ = ("Regularised ELM classifier (one-hot 0/1 targets, arg-max output) with the "
               "seed's model selection (seed 002 ch. 3).\n" + _COMMON_DOC +
               "classes_ : array\n        The class labels.\n")

    def fit(self, X, y):
        """Fit on X (N x d) and class labels y (N); returns self."""
        validate_parameters(self)
        X, labels = classification_data(self, X, y)
        return self._fit_targets(X, np.eye(len(self.classes_))[labels])

    def decision_function(self, X):
        """The network outputs h(x) beta, one column per class (n_samples, n_classes); for
        two classes the difference of the second output and the first (n_samples,),
        positive for ``classes_[1]``, as scikit-learn's binary convention."""
        out = self._outputs(X)
        return out[:, 1] - out[:, 0] if out.shape[1] == 2 else out

    def predict(self, X):
        """The class of the largest output (ties: the first)."""
        outputs = self._outputs(X)
        return self.classes_[np.argmax(outputs, axis=1)]
