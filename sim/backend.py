"""Train and predict on the simulated accelerator from plain Python (``backend="sim"``).

::

    result = train(codes, labels, params, seed, n_trees)        # trees + cycle counts
    result = predict(result["trees"], codes, result["design"])   # classes, votes, counts

Each call elaborates (once per size) the whole ``ForestSystem``, builds it with Verilator
(cached under ``build/sim/``), and runs one host session (:mod:`sim.session`) in a
subprocess. The accelerator is built for the data: rows, features, classes and trees
rounded up to powers of two (so a handful of builds serve every dataset), ``pe_count``
PEs, ``feature_lanes`` lanes.
"""

import os
import pickle
import tempfile

from sim.runner import simulate

__all__ = ["design_for", "train", "predict", "CLOCK_HZ"]

#: The clock the modelled times assume (the thesis's Arria 10 design ran at 100 MHz).
CLOCK_HZ = 100_000_000


def _power_of_two(value, minimum):
    return max(minimum, 1 << max(0, int(value) - 1).bit_length())


def design_for(n_rows, n_features, n_classes, n_trees, params, *, pe_count=2, feature_lanes=8,
               code_bits=16):
    """The ForestSystem parameters for a dataset of this size (a dict for ``simulate``)."""
    max_rows = _power_of_two(n_rows, 64)
    max_features = _power_of_two(n_features, 4)
    depth = params.max_depth if params.max_depth is not None else 48
    return {
        "pe_count": pe_count, "max_trees": _power_of_two(n_trees, 16), "radix_bits": 8,
        "traversal_stages": 1, "max_rows": max_rows, "max_samples": max_rows,
        "max_features": max_features, "feature_lanes": min(feature_lanes, max_features),
        "code_bits": code_bits, "classes": _power_of_two(n_classes, 2),
        "max_depth": _power_of_two(depth, 4),
    }


def _session(design, job):
    with tempfile.TemporaryDirectory(prefix="hwforest-") as folder:
        job_path, result_path = os.path.join(folder, "job.pkl"), os.path.join(folder, "result.pkl")
        with open(job_path, "wb") as file:
            pickle.dump(job, file)
        simulate("forest_system", "sim.session", parameters=design,
                 testbench={"job": job_path, "result": result_path})
        with open(result_path, "rb") as file:
            return pickle.load(file)


def train(codes, labels, params, seed, n_trees, *, pe_count=2, feature_lanes=8, code_bits=16,
          predict_codes=None, predict_labels=None):
    """Train ``n_trees`` trees in the simulated accelerator (and optionally predict rows).

    Returns a dict: ``trees`` (list of ``sw.model.Tree``), ``train_cycles``,
    ``sort_cycles``, ``design``, and with ``predict_codes`` the keys of :func:`predict`.
    """
    n_rows, n_features = codes.shape
    design = design_for(n_rows, n_features, params.n_classes, n_trees, params, pe_count=pe_count,
                        feature_lanes=feature_lanes, code_bits=code_bits)
    job = {"train": {"codes": codes, "labels": labels, "params": params, "seed": seed,
                     "n_trees": n_trees}}
    if predict_codes is not None:
        job["predict"] = {"codes": predict_codes, "labels": predict_labels}
    result = _session(design, job)
    result["design"] = design
    return result


def predict(trees, codes, design, *, labels=None):
    """Stream ``codes`` through ``trees`` in the inference engine of the accelerator ``design``
    (the dict :func:`train` returned under ``"design"``, so the same build is reused).

    Returns a dict: ``predicted``, ``votes``, ``class_count_sums``, ``predict_cycles``,
    ``rows_seen``, ``rows_labelled``, ``rows_correct``.
    """
    return _session(design, {"forest": list(trees), "predict": {"codes": codes, "labels": labels}})
