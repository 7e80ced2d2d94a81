"""``sw.methods`` exports every estimator of every method family."""

import importlib
import inspect
import pkgutil

from sklearn.base import BaseEstimator

import sw.methods


def test_every_estimator_is_exported():
    defined = set()
    for info in pkgutil.walk_packages(sw.methods.__path__, "sw.methods."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (inspect.isclass(value) and issubclass(value, BaseEstimator)
                    and value.__module__ == info.name and not name.startswith("_")):
                defined.add(name)
    assert defined and set(sw.methods.__all__) == defined
    for name in sw.methods.__all__:
        assert issubclass(getattr(sw.methods, name), BaseEstimator)
