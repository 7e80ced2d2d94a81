"""Train and predict on the simulated accelerator from plain Python (``backend="sim"``).

::

    result = train(codes, labels, params, seed, n_trees)        # trees + cycle counts
    result = predict(result["trees"], codes, result["design"])   # classes, votes, counts

Each call elaborates (once per size) the whole ``ForestSystem``, builds it with Verilator
(cached under ``build/sim/``, with only the top module's signals visible to VPI, which
makes the model several times faster: ``docs/simulation.md``), and runs one host session
(:mod:`sim.host.session`) in a subprocess. The accelerator is built for the data: rows, features, classes and trees
rounded up to powers of two (so a handful of builds serve every dataset), ``pe_count``
PEs, ``feature_lanes`` lanes.
"""

import concurrent.futures
import json
import os
import pickle
import tempfile
import time

from hw.designs import system_for_dataset
from hw.pe import LIMITS as PE_LIMITS
from hw.trainer import LIMITS as TRAINER_LIMITS
from sim import runner
from sim.runner import BUILD_ROOT, PROJECT_ROOT, simulate
from sw.methods.forest.model import inbag_row_count

__all__ = ["LIMITS", "check_capacity", "design_for", "train", "train_batch", "predict",
           "pe_report", "PROJECT_ROOT", "BUILD_ROOT"]

#: What the simulated accelerator can be built for, in the user's terms: the upper ends of
#: the processing element's and forest trainer's parameter ranges.
LIMITS = {"rows": PE_LIMITS["max_rows"][1], "features": PE_LIMITS["feature_capacity"][1],
          "classes": PE_LIMITS["classes"][1], "trees": TRAINER_LIMITS["max_trees"][1],
          "code_bits": PE_LIMITS["code_bits"][1], "pe_count": TRAINER_LIMITS["pe_count"][1]}


def check_capacity(**wanted):
    """Refuse, by name and limit, a job the simulated accelerator cannot be built for
    (keys of :data:`LIMITS`: rows, features, classes, trees, code_bits, pe_count)."""
    for name, value in wanted.items():
        if value > LIMITS[name]:
            raise ValueError(f"backend='sim': {value} {name.replace('_', ' ')} is more than the "
                             f"accelerator can be built for ({LIMITS[name]})")


def design_for(n_rows, n_features, n_classes, n_trees, params, *, pe_count=2, feature_lanes=8,
               code_bits=16):
    """The ForestSystem parameters for a dataset of this size (a dict for ``simulate``;
    the rule is :func:`hw.designs.system_for_dataset`)."""
    return system_for_dataset(n_rows, n_features, n_classes, n_trees, params.max_depth,
                              pe_count=pe_count, feature_lanes=feature_lanes, code_bits=code_bits)


def _check_holds(design, codes, params, n_trees, seed):
    """Refuse a ``design`` too small for the job, naming the parameter (for lists shorter
    than the rows, ``max_inbag_rows``: the first tree whose bootstrap does not fit)."""
    n_rows, n_features = codes.shape
    lists = design.get("max_inbag_rows") or design.get("max_rows", n_rows)
    could_draw = min(n_rows, params.max_samples) if params.bootstrap else n_rows
    for tree in range(n_trees if could_draw > lists else 0):
        distinct = inbag_row_count(n_rows, params, seed, tree)
        if distinct > lists:
            raise ValueError(f"design max_inbag_rows = {lists} is too small: tree {tree} of seed "
                             f"{seed} draws {distinct} distinct rows")
    needed = {"max_rows": n_rows, "max_samples": params.max_samples, "feature_capacity": n_features,
              "classes": params.n_classes, "max_trees": n_trees,
              "code_bits": max(1, int(codes.max(initial=0)).bit_length())}
    if params.max_depth is not None:
        needed["max_depth"] = params.max_depth
    for name, value in needed.items():
        if name not in design:
            raise ValueError(f"design has no {name!r} (needed: {value})")
        if value > design[name]:
            raise ValueError(f"design {name} = {design[name]} is too small: the job needs {value}")


def build(design):
    """Build the Verilator model of ``design`` (a dict of ``ForestSystem`` parameters)
    without running it, so that a later :func:`train_batch` on it starts at once."""
    runner.build("forest_system", parameters=dict(design), visibility="ports")


def _session(design, job, module="sim.host.session", setting="job", **settings):
    with tempfile.TemporaryDirectory(prefix="hwforest-") as folder:
        job_path, result_path = os.path.join(folder, "job.pkl"), os.path.join(folder, "result.pkl")
        with open(job_path, "wb") as file:
            pickle.dump(job, file)
        simulate("forest_system", module, parameters=design, visibility="ports",
                 testbench={setting: job_path, "result": result_path, **settings})
        with open(result_path, "rb") as file:
            return pickle.load(file)


def train(codes, labels, params, seed, n_trees, *, pe_count=2, feature_lanes=8, code_bits=16,
          predict_codes=None, predict_labels=None, design=None):
    """Train ``n_trees`` trees in the simulated accelerator (and optionally predict rows).

    ``design`` (a dict of ``ForestSystem`` parameters) replaces :func:`design_for`'s
    choice, so that one Verilator build can serve many datasets; it must hold the data
    (``ValueError`` naming the parameter otherwise), and ``pe_count``, ``feature_lanes``
    and ``code_bits`` are then ignored.

    Returns a dict: ``trees`` (list of ``sw.methods.forest.model.Tree``), ``train_cycles``,
    ``sort_cycles``, ``design``, and with ``predict_codes`` the keys of :func:`predict`.
    """
    n_rows, n_features = codes.shape
    if design is None:
        design = design_for(n_rows, n_features, params.n_classes, n_trees, params,
                            pe_count=pe_count, feature_lanes=feature_lanes, code_bits=code_bits)
    else:
        design = dict(design)
        _check_holds(design, codes, params, n_trees, seed)
    job = {"train": {"codes": codes, "labels": labels, "params": params, "seed": seed,
                     "n_trees": n_trees}}
    if predict_codes is not None:
        job["predict"] = {"codes": predict_codes, "labels": predict_labels}
    result = _session(design, job)
    result["design"] = design
    return result


def train_batch(jobs, design, *, watch_cycles=16, progress=None):
    """Run several training jobs on one build ``design`` in a single simulator run.

    ``jobs`` is a list of dicts ``{"codes", "labels", "params", "seed", "n_trees"}``
    (the arguments of :func:`train`). One elaboration and one simulator start serve them
    all (:mod:`sim.host.batch_session`). Returns one dict per job: ``trees``, ``train_cycles``,
    ``sort_cycles`` and ``tree_cycles``, the cycles each tree took (from when each tree's
    last node left the accelerator, to within ``watch_cycles``; per tree only when
    ``design["pe_count"]`` is 1; what ``train_cycles - sort_cycles`` holds beyond their sum
    is the run's fixed start and finish), and ``wall_seconds``.
    ``progress(jobs_done)`` is called (from this thread) as jobs finish.
    """
    design = dict(design)
    for job in jobs:
        _check_holds(design, job["codes"], job["params"], job["n_trees"], job["seed"])
    settings = {"watch_cycles": watch_cycles}
    with tempfile.TemporaryDirectory(prefix="hwforest-") as folder:
        if progress is not None:
            settings["progress"] = os.path.join(folder, "progress.txt")
        run = concurrent.futures.ThreadPoolExecutor(1)
        future = run.submit(_session, design, [dict(job) for job in jobs],
                            module="sim.host.batch_session", setting="jobs", **settings)
        run.shutdown(wait=False)
        done = 0
        while progress is not None and not future.done():
            time.sleep(0.5)
            if os.path.exists(settings["progress"]):
                with open(settings["progress"]) as file:
                    now = len(file.read().split())
                if now > done:
                    done = now
                    progress(done)
        results = future.result()
    for job, result in zip(jobs, results):
        result["design"] = design
        result["tree_cycles"] = _tree_cycles(result, job["n_trees"])
    return results


def _tree_cycles(result, n_trees):
    """Cycles of each tree from the (cycle, trees finished) marks; they sum to the total."""
    marks = result["tree_end_cycles"]
    ends = []
    previous_cycle, previous_count = None, 0
    for cycle, count in marks:
        if previous_cycle is not None and count > previous_count + 1:
            # Several trees ended within one watch window: spread the window evenly.
            step = (cycle - previous_cycle) / (count - previous_count)
            ends += [previous_cycle + step * (i + 1) for i in range(count - previous_count)]
        else:
            ends += [cycle] * (count - previous_count)
        previous_cycle, previous_count = cycle, count
    if len(ends) != n_trees:
        total = result["train_cycles"] - result["sort_cycles"]
        return [total / n_trees] * n_trees
    # The first tree starts when the presort ends (the register writes before the start
    # and the watch window make this a few cycles long).
    first_start = result["started_cycle"] + result["sort_cycles"]
    return [b - a for a, b in zip([first_start, *ends], ends)]


def predict(trees, codes, design, *, labels=None):
    """Stream ``codes`` through ``trees`` in the inference engine of the accelerator ``design``
    (the dict :func:`train` returned under ``"design"``, so the same build is reused).

    Returns a dict: ``predicted``, ``votes``, ``class_count_sums``, ``predict_cycles``,
    ``rows_seen``, ``rows_labelled``, ``rows_correct``.
    """
    return _session(design, {"forest": list(trees), "predict": {"codes": codes, "labels": labels}})


def pe_report(testcase, build, testbench, *, profile=False):
    """Run one cocotb test of the processing element ``build`` (``sim.tb_pe``, or
    ``sim.tb_pe_profile`` with ``profile``) with the ``testbench`` settings; return the
    JSON report the testbench writes (the measurements of ``sw.experiments.pe_cycles``)."""
    with tempfile.TemporaryDirectory() as folder:
        report = os.path.join(folder, "report.json")
        simulate("processing_element", "sim.tb_pe_profile" if profile else "sim.tb_pe",
                 parameters=build, testcase=testcase,
                 testbench={**testbench, "report": report}, seed=1)
        with open(report) as file:
            return json.load(file)
