"""The CPU random forests the accelerator is measured against, in one place: scikit-learn's
``RandomForestClassifier`` and Intel oneDAL's random forest (``scikit-learn-intelex``,
``sklearnex.ensemble.RandomForestClassifier``), with the same trees, depth, features per
split and bootstrap.

oneDAL differs from scikit-learn in two ways a reader should know: it bins every feature
into at most ``max_bins`` histogram bins before training (:data:`ONEDAL_BINS`, its default),
and it draws its own random numbers, so its trees differ from scikit-learn's for the same
seed. Its accuracy is measured on the same folds beside the others, not assumed.

``n_jobs=1`` runs one thread in both (measured: process CPU time equals wall time); the
comparison times one core by the CPU time of ``n_jobs=1`` and all cores by the wall time of
``n_jobs=-1``.
"""

import importlib.metadata

from sklearn.ensemble import RandomForestClassifier

__all__ = ["CPU_FORESTS", "ONEDAL_BINS", "cpu_forest", "versions"]

#: Trainer key -> (name in reports, distribution whose version is reported).
CPU_FORESTS = {
    "sk": ("scikit-learn", "scikit-learn"),
    "dal": ("oneDAL (scikit-learn-intelex)", "scikit-learn-intelex"),
}

#: oneDAL's histogram bins per feature (its default ``max_bins``), passed explicitly so the
#: report names what ran.
ONEDAL_BINS = 256


def cpu_forest(trainer, n_estimators, *, max_depth=None, random_state=None, n_jobs=1, **options):
    """A fresh, unfitted CPU forest: ``trainer`` is ``"sk"`` or ``"dal"`` (:data:`CPU_FORESTS`);
    ``options`` go to both (``max_samples``, ``max_features``, ...)."""
    if trainer == "sk":
        return RandomForestClassifier(n_estimators, max_depth=max_depth, random_state=random_state,
                                      n_jobs=n_jobs, **options)
    if trainer == "dal":
        # Imported here: sklearnex loads oneDAL's native libraries (about a second).
        from sklearnex.ensemble import RandomForestClassifier as OneDALForest
        return OneDALForest(n_estimators, max_depth=max_depth, random_state=random_state,
                            n_jobs=n_jobs, max_bins=ONEDAL_BINS, **options)
    raise ValueError(f"unknown CPU forest {trainer!r}; known: {', '.join(CPU_FORESTS)}")


def versions():
    """Trainer key -> installed version of its distribution."""
    return {key: importlib.metadata.version(distribution)
            for key, (_, distribution) in CPU_FORESTS.items()}
