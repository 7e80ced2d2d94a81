"""Parameter-constraint tables for the estimators, in the manner of scikit-learn's
``_parameter_constraints``: each estimator class lists, per constructor parameter, the
forms it accepts, and :func:`validate_parameters` checks them all at ``fit`` with an error
that names the parameter, the value given and every accepted form.

Unlike scikit-learn's own validation, booleans are never integers or reals here
(``max_features=True`` is refused, not read as 1.0), and the limits given in the user's
terms are the messages.
"""

import math
import numbers

import numpy as np

__all__ = ["Integer", "Real", "Options", "Boolean", "Instance", "validate_parameters",
           "check_integer", "classification_data"]


def _is_integer(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


class Integer:
    """An integer in [low, high] (``high`` None: no upper limit)."""

    def __init__(self, low, high=None):
        self.low, self.high = low, high

    def accepts(self, value):
        return (_is_integer(value) and value >= self.low
                and (self.high is None or value <= self.high))

    def __str__(self):
        if self.high is None:
            return f"an integer >= {self.low}"
        return f"an integer in [{self.low}, {self.high}]"


class Real:
    """A finite real number between ``low`` and ``high``, each end open or closed."""

    def __init__(self, low, high, *, low_open=False, high_open=False):
        self.low, self.high, self.low_open, self.high_open = low, high, low_open, high_open

    def accepts(self, value):
        if not _is_real(value) or not math.isfinite(value):
            return False
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below

    def __str__(self):
        if self.high == math.inf:
            return f"a finite number {'>' if self.low_open else '>='} {self.low}"
        return (f"a number in {'(' if self.low_open else '['}{self.low}, {self.high}"
                f"{')' if self.high_open else ']'}")


class Options:
    """One of the given values (strings, or None)."""

    def __init__(self, *values):
        self.values = values

    def accepts(self, value):
        return any(value is option if option is None else
                   (isinstance(value, str) and value == option) for option in self.values)

    def __str__(self):
        return _either([repr(option) for option in self.values])


class Boolean:
    """True or False (Python or NumPy booleans)."""

    def accepts(self, value):
        return isinstance(value, (bool, np.bool_))

    def __str__(self):
        return "True or False"


class Instance:
    """An instance of ``kind`` (e.g. a ``numpy.random.RandomState``)."""

    def __init__(self, kind, description):
        self.kind, self.description = kind, description

    def accepts(self, value):
        return isinstance(value, self.kind)

    def __str__(self):
        return self.description


def check_integer(name, value, minimum, maximum=None, *, allow_none=False):
    """``value`` as an int if it is an integer (not a boolean) in [minimum, maximum]
    (``maximum`` None: no upper limit), else ``TypeError`` (not an integer) or
    ``ValueError`` (out of range) naming ``name``, the value and the limit: the one
    integer check of the host library's models (the gateware's is ``hw.checks``)."""
    if value is None and allow_none:
        return None
    if not _is_integer(value):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    value = int(value)
    if value < minimum or (maximum is not None and value > maximum):
        limit = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be {limit}, not {value}")
    return value


def _either(forms):
    """'a', 'a or b', 'a, b or c'."""
    return forms[0] if len(forms) == 1 else ", ".join(forms[:-1]) + " or " + forms[-1]


def validate_parameters(estimator, constraints=None):
    """Check every parameter of ``estimator`` against its class's
    ``_parameter_constraints`` (or ``constraints``); raise ``ValueError`` naming the first
    parameter whose value no constraint accepts, the value and the accepted forms."""
    constraints = type(estimator)._parameter_constraints if constraints is None else constraints
    params = estimator.get_params(deep=False)
    for name, accepted in constraints.items():
        value = params[name]
        if not any(constraint.accepts(value) for constraint in accepted):
            forms = _either([form for constraint in accepted for form in
                             ([repr(option) for option in constraint.values]
                              if isinstance(constraint, Options) else [str(constraint)])])
            raise ValueError(f"{type(estimator).__name__}: {name}={value!r} must be {forms}")


def classification_data(estimator, X, y, learner="a classifier"):
    """The checks every classifier's ``fit`` starts with: ``X`` finite float64 of the
    shape scikit-learn expects (``validate_data``, which also records the features), ``y``
    class labels of at least two classes. Sets ``estimator.classes_`` and returns ``(X,
    labels)``, ``labels`` the index of each row's class; ``learner`` names what needs two
    classes in the error."""
    # Imported here: the parameter tables above need none of scikit-learn's validation.
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import validate_data
    X, y = validate_data(estimator, X, y, dtype=np.float64, ensure_all_finite=True)
    check_classification_targets(y)
    estimator.classes_, labels = np.unique(y, return_inverse=True)
    if len(estimator.classes_) < 2:
        raise ValueError(f"y has 1 class ({estimator.classes_.tolist()[0]!r}); {learner} "
                         f"needs at least 2 classes")
    return X, labels
