"""Run ``metric-learn``'s LMNN, the established peer, under current scikit-learn.

``metric-learn`` 0.7.0 (the latest release) validates its input with scikit-learn's
``check_array(..., force_all_finite=...)`` and ``check_X_y(..., force_all_finite=...)``.
scikit-learn 1.6 renamed that keyword to ``ensure_all_finite`` and 1.8 removed the old
name, so ``LMNN.fit`` raises ``TypeError`` under the scikit-learn this project uses.

Rather than downgrading scikit-learn, :func:`lmnn_compatibility` is a context manager
that, only while it is active, replaces the two names *inside* ``metric_learn._util``
(the only module that passes the keyword) by thin wrappers that translate
``force_all_finite`` into ``ensure_all_finite`` (same meaning, values ``True``, ``False``
and ``"allow-nan"``).  scikit-learn itself is untouched, nothing else sees the wrappers,
and the originals are restored on exit, even after an exception.  When ``metric-learn``
releases a fixed version, the wrappers become no-ops (they only act on the old keyword).
"""

import contextlib
import functools
import threading
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

__all__ = ["lmnn_compatibility", "fit_lmnn", "lmnn_transform"]

_LOCK = threading.Lock()


def _translate_keyword(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if "force_all_finite" in kwargs:
            kwargs["ensure_all_finite"] = kwargs.pop("force_all_finite")
        return function(*args, **kwargs)
    return wrapper


@contextlib.contextmanager
def lmnn_compatibility():
    """Let ``metric_learn`` 0.7 run under scikit-learn >= 1.8 inside this block.

    Raises
    ------
    ImportError
        If ``metric-learn`` is not installed (``pip install metric-learn``).
    """
    import metric_learn._util as util

    with _LOCK:
        originals = {"check_array": util.check_array, "check_X_y": util.check_X_y}
        try:
            for name, function in originals.items():
                setattr(util, name, _translate_keyword(function))
            yield
        finally:
            for name, function in originals.items():
                setattr(util, name, function)


def fit_lmnn(X, y, n_neighbors=3, random_state=0, max_iter=1000, **parameters):
    """Fit ``metric_learn.LMNN`` through :func:`lmnn_compatibility`.

    Fitting runs with one BLAS thread, like :class:`LargeMarginMetricLearning`.

    Returns
    -------
    model : metric_learn.LMNN
        The fitted model.
    seconds : float
        Wall-clock time of ``fit``.
    converged : bool
        False when LMNN stopped at ``max_iter`` (its ConvergenceWarning is caught here
        and reported through this flag instead).
    """
    from metric_learn import LMNN
    from sklearn.exceptions import ConvergenceWarning

    model = LMNN(n_neighbors=n_neighbors, random_state=random_state, max_iter=max_iter,
                 **parameters)
    # Same BLAS threading as our estimator (one thread), so fit times compare fairly.
    with lmnn_compatibility(), threadpool_limits(limits=1, user_api="blas"), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = time.perf_counter()
        model.fit(np.asarray(X, dtype=float), np.asarray(y))
        seconds = time.perf_counter() - start
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    for w in caught:  # anything else is not ours to swallow
        if not issubclass(w.category, ConvergenceWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return model, seconds, converged


def lmnn_transform(model, X):
    """``model.transform(X)`` for a fitted LMNN (its input check needs the adapter too)."""
    with lmnn_compatibility():
        return model.transform(np.asarray(X, dtype=float))
