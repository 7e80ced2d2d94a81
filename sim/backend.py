"""Train and predict on the simulated accelerator from plain Python (``backend="sim"``).

::

    result = train(codes, labels, params, seed, n_trees)        # trees + cycle counts
    result = predict(result["trees"], codes, result["design"])   # classes, votes, counts

What a call does, in order:

1. Refuses at once a job no build can serve (:func:`check_job`: the value and the limit,
   in the user's terms), before anything is elaborated.
2. Picks the build (:func:`sim.host.builds.choose_design`): one already made that holds
   the data (so a new dataset size or depth does not rebuild), else a new one sized for
   it (rows, features, classes and trees rounded up to powers of two). A new build
   elaborates the whole ``ForestSystem`` and compiles it with Verilator (minutes; cached
   under ``$HWFOREST_BUILD_DIR/sim/``, with only the top module's signals visible to VPI,
   ``docs/simulation.md``).
3. Runs one host session (:mod:`sim.host.session`, the host driver over the cocotb
   transport) in a simulator subprocess, showing progress on a terminal (the build, then
   the trees done of ``n_trees`` from the host's polls). The simulator's log goes to a file
   under ``$HWFOREST_BUILD_DIR/logs/`` (on the terminal with ``show_log=True`` or
   ``HWFOREST_SIM_LOG=1``); every failure names it.
4. An error flag the accelerator raises comes back as
   :class:`sim.host.errors.AcceleratorError`, naming the flag, its meaning and the
   build's limit.

:func:`predict` loads a trained forest through ``trees_in`` and streams the rows: it never
trains again.
"""

import concurrent.futures
import itertools
import json
import os
import pickle
import tempfile
import time

from sim import runner
from sim.host.builds import (LIMITS, build_folder, check_capacity, check_job, choose_design,
                             design_for, record_build, shortfall)
from sim.host.errors import AcceleratorError
from sim.support.avalon import SIMULATED_DDR4   # (the memory experiments read codes from)
from sim.runner import BUILD_ROOT, PROJECT_ROOT, simulate

__all__ = ["LIMITS", "AcceleratorError", "check_capacity", "check_job", "choose_design", "design_for",
           "train", "train_batch", "predict", "pe_report", "histogram_pe_report", "PROJECT_ROOT", "BUILD_ROOT",
           "SIMULATED_DDR4"]

#: Simulator logs kept under ``$HWFOREST_BUILD_DIR/logs/`` (older ones are removed once
#: an hour old).
KEPT_LOGS = 20
_SESSIONS = itertools.count()


def _check_holds(design, codes, params, n_trees, seed):
    """Refuse a ``design`` too small for the job, naming the parameter."""
    reason = shortfall(design, codes, params, n_trees, seed)
    if reason is not None:
        raise ValueError(reason)


def build(design):
    """Build the Verilator model of ``design`` (a dict of ``ForestSystem`` parameters)
    without running it, so that a later :func:`train_batch` on it starts at once."""
    runner.build("forest_system", parameters=dict(design), visibility="ports")
    record_build(design)


def _flag(value, variable):
    """``value`` if given, else the environment variable's truth (unset: None)."""
    if value is not None:
        return bool(value)
    text = os.environ.get(variable)
    return None if text is None else text.strip().lower() not in ("", "0", "no", "false", "off")


def _log_path(module):
    folder = runner.BUILD_ROOT / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    logs = sorted(folder.glob("*.log"), key=lambda path: path.stat().st_mtime)
    for old in logs[:max(0, len(logs) - KEPT_LOGS + 1)]:
        if old.stat().st_mtime < time.time() - 3600:      # never a log another run still writes
            old.unlink(missing_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return folder / f"{module.rsplit('.', 1)[-1]}-{stamp}-{os.getpid()}-{next(_SESSIONS)}.log"


class _Progress:
    """tqdm bars of a session, from the file the session writes: the build (shown after a
    second, until the simulator starts), then the trees done of ``n_trees``.
    ``enabled`` None: only on a terminal."""

    def __init__(self, enabled, n_trees, design, toplevel="forest_system"):
        self.disable = None if enabled is None else not enabled
        self.n_trees, self.design = n_trees, design
        self.started, self.bar, self.phase = time.monotonic(), None, "build"
        self.built = (build_folder(design, toplevel) / "verilog.sha1").exists()

    def _bar(self, **options):
        from tqdm import tqdm
        return tqdm(disable=self.disable, **options)

    def update(self, text):
        if self.phase == "build" and text:
            self.close()
            self.phase = "run"
            if self.n_trees:
                self.bar = self._bar(desc="backend='sim': training", total=self.n_trees, unit="tree")
        elif self.phase == "build" and self.bar is None and time.monotonic() > self.started + 1:
            design = self.design
            features = design.get("feature_capacity", design.get("features"))
            what = (f"{design['max_rows']} rows x {features} features, "
                    f"{design['classes']} classes, depth {design['max_depth']}"
                    + (", codes read from memory" if design.get("code_store") == "memory" else ""))
            self.bar = self._bar(bar_format="{desc}: {elapsed}", desc=(
                f"backend='sim': elaborating the build of {what} (Verilator model already built)"
                if self.built else
                f"backend='sim': elaborating and building with Verilator the simulator of {what} "
                f"(once per build; minutes)"))
        elif self.phase == "build" and self.bar is not None:
            self.bar.refresh()
        if self.phase == "run" and self.bar is not None and text.isdigit():
            self.bar.update(int(text) - self.bar.n)

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _read(path):
    try:
        with open(path) as file:
            return file.read().strip()
    except OSError:
        return ""


def _log_tail(log, lines=25):
    """The end of the log ``log`` (where a failed cocotb test's traceback is), for a message."""
    if log is None or not os.path.exists(log):
        return ""
    with open(log, errors="replace") as file:
        tail = file.read().splitlines()[-lines:]
    return "\n--- end of the simulation log ---\n" + "\n".join(tail)


def _session(design, job, *, module="sim.host.session", setting="job", n_trees=0, progress=None,
             show_log=None, watch=None, toplevel="forest_system", **settings):
    """Run one host session on the build ``design`` (of the top-level design ``toplevel``)
    and return its result.

    Progress bars (:class:`_Progress`; ``progress`` None: on a terminal unless
    ``HWFOREST_PROGRESS=0``) follow the session's progress file, which ``watch(text)`` (if
    given) also sees. The log goes to a file unless ``show_log`` (or ``HWFOREST_SIM_LOG``).
    Raises :class:`AcceleratorError` for an error the accelerator reported, and
    ``sim.runner.SimulationFailed`` (naming the log) when the simulation itself failed.
    """
    log = None if _flag(show_log, "HWFOREST_SIM_LOG") else _log_path(module)
    with tempfile.TemporaryDirectory(prefix="hwforest-") as folder:
        job_path, result_path, progress_path = (os.path.join(folder, name) for name in
                                                ("job.pkl", "result.pkl", "progress.txt"))
        with open(job_path, "wb") as file:
            pickle.dump(job, file)
        bar = _Progress(_flag(progress, "HWFOREST_PROGRESS"), n_trees, design, toplevel)
        run = concurrent.futures.ThreadPoolExecutor(1)
        future = run.submit(simulate, toplevel, module, parameters=design, visibility="ports",
                            log_file=log, testbench={setting: job_path, "result": result_path,
                                                     "progress": progress_path, **settings})
        run.shutdown(wait=False)
        try:
            while not future.done():
                concurrent.futures.wait([future], timeout=0.5)
                text = _read(progress_path)
                bar.update(text)
                if watch is not None:
                    watch(text)
            try:
                future.result()
            except runner.SimulationFailed as error:
                raise runner.SimulationFailed(f"{error}{_log_tail(log)}") from None
        finally:
            bar.close()
        with open(result_path, "rb") as file:
            result = pickle.load(file)
    record_build(design, toplevel)
    if isinstance(result, dict) and "error" in result:
        raise AcceleratorError(result["error"]["message"], result["error"]["flags"], log=log)
    return result


def train(codes, labels, params, seed, n_trees, *, pe_count=2, feature_lanes=8, code_bits=16,
          predict_codes=None, predict_labels=None, design=None, progress=None, show_log=None):
    """Train ``n_trees`` trees in the simulated accelerator (and optionally predict rows).

    ``design`` (a dict of ``ForestSystem`` parameters) replaces the choice of
    :func:`choose_design` (a build already made that holds the data, else a new one); it must
    hold the data (``ValueError`` naming the parameter otherwise), and ``pe_count``,
    ``feature_lanes`` and ``code_bits`` are then ignored. ``progress``: show progress bars
    (None: on a terminal); ``show_log``: the simulator's log on the terminal instead of a file.

    Returns a dict: ``trees`` (list of ``sw.methods.forest.model.Tree``), ``train_cycles``,
    ``sort_cycles``, ``design``, and with ``predict_codes`` the keys of :func:`predict`.
    Raises ``ValueError`` for a job no build can serve (before any elaboration) and
    :class:`AcceleratorError` for an error flag of the accelerator.
    """
    n_rows, n_features = codes.shape
    if design is None:
        check_job(n_rows, n_features, params.n_classes, n_trees, params, pe_count=pe_count,
                  code_bits=code_bits)
        design, _ = choose_design(codes, params, n_trees, seed, pe_count=pe_count,
                                  feature_lanes=feature_lanes, code_bits=code_bits)
    else:
        design = dict(design)
        _check_holds(design, codes, params, n_trees, seed)
    job = {"train": {"codes": codes, "labels": labels, "params": params, "seed": seed,
                     "n_trees": n_trees}}
    if predict_codes is not None:
        job["predict"] = {"codes": predict_codes, "labels": predict_labels}
    try:
        result = _session(design, job, n_trees=n_trees, progress=progress, show_log=show_log)
    except AcceleratorError as error:
        if "tree_error" not in error.flags:
            raise
        cause = _tree_error_cause(design, codes, labels, params, seed, n_trees)
        raise AcceleratorError(f"{cause}. {error.reason}", error.flags, log=error.log) from None
    result["design"] = design
    return result


def _tree_error_cause(design, codes, labels, params, seed, n_trees):
    """Which tree hit which limit of the build, found with the golden model."""
    from sim.support.trees import PECapacity, depth_overflow_expected, inbag_overflow_expected
    capacity = PECapacity(design)
    for tree in range(n_trees):
        if inbag_overflow_expected(len(codes), params, seed, tree, capacity.max_inbag_rows):
            return (f"tree {tree} draws more distinct rows than the build's max_inbag_rows = "
                    f"{capacity.max_inbag_rows}: use a smaller max_samples or a build with longer lists")
        if depth_overflow_expected(codes, labels, params, seed, tree, capacity.max_depth):
            return (f"tree {tree} needs more than the build's {capacity.max_depth} levels "
                    f"(STATUS.tree_error): refit with max_depth <= {capacity.max_depth}, or on a "
                    f"deeper build")
    return "a tree exceeded the build's limits (STATUS.tree_error)"


def train_batch(jobs, design, *, watch_cycles=16, progress=None, show_log=None):
    """Run several training jobs on one build ``design`` in a single simulator run.

    ``jobs`` is a list of dicts ``{"codes", "labels", "params", "seed", "n_trees"}``
    (the arguments of :func:`train`). One elaboration and one simulator start serve them
    all (:mod:`sim.host.batch_session`). Returns one dict per job: ``trees``, ``train_cycles``,
    ``sort_cycles`` and ``tree_cycles``, the cycles each tree took (from when each tree's
    last node left the accelerator, to within ``watch_cycles``; per tree only when
    ``design["pe_count"]`` is 1; what ``train_cycles - sort_cycles`` holds beyond their sum
    is the run's fixed start and finish), and ``wall_seconds``.
    ``progress(jobs_done)`` is called (from this thread) as jobs finish. The simulator's
    log goes to a file under ``$HWFOREST_BUILD_DIR/logs/`` unless ``show_log``.
    """
    design = dict(design)
    for job in jobs:
        _check_holds(design, job["codes"], job["params"], job["n_trees"], job["seed"])
    done = [0]

    def watch(text):
        now = len(text.split())
        if progress is not None and now > done[0]:
            done[0] = now
            progress(now)

    results = _session(design, [dict(job) for job in jobs], module="sim.host.batch_session",
                       setting="jobs", progress=False, show_log=show_log, watch=watch,
                       watch_cycles=watch_cycles)
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


def predict(trees, codes, design, *, labels=None, progress=None, show_log=None):
    """Stream ``codes`` through ``trees`` in the inference engine of the accelerator ``design``
    (the dict :func:`train` returned under ``"design"``, so the same build is reused). The
    trees are loaded through ``trees_in``: nothing is trained again.

    Returns a dict: ``predicted``, ``votes``, ``class_count_sums``, ``predict_cycles``,
    ``rows_seen``, ``rows_labelled``, ``rows_correct``.
    """
    _check_forest(trees, codes, design)
    return _session(design, {"forest": list(trees), "predict": {"codes": codes, "labels": labels}},
                    progress=progress, show_log=show_log)


def _check_forest(trees, codes, design):
    """Refuse, before any simulation, a forest or rows the build ``design`` cannot hold."""
    from sim.support.trees import PECapacity
    capacity = PECapacity(design)
    if len(trees) > design["max_trees"]:
        raise ValueError(f"{len(trees)} trees are more than the build's max_trees = {design['max_trees']}")
    for index, tree in enumerate(trees):
        if tree.n_nodes > capacity.max_nodes:
            raise ValueError(f"tree {index} has {tree.n_nodes} nodes, more than the build's "
                             f"{capacity.max_nodes} per tree (max_depth = {capacity.max_depth})")
    if codes.shape[1] > capacity.feature_capacity:
        raise ValueError(f"the rows have {codes.shape[1]} features, more than the build's "
                         f"feature_capacity = {capacity.feature_capacity}")
    if int(codes.max(initial=0)).bit_length() > capacity.code_bits:
        raise ValueError(f"a code of {int(codes.max())} is wider than the build's "
                         f"code_bits = {capacity.code_bits}")


def _reported(design, module, build, testcase, testbench, log_file=None):
    """Run one cocotb test of ``design`` at ``build`` (seed 1) with the ``testbench``
    settings; return the JSON report the testbench writes."""
    with tempfile.TemporaryDirectory() as folder:
        report = os.path.join(folder, "report.json")
        simulate(design, module, parameters=build, testcase=testcase, log_file=log_file, seed=1,
                 testbench={**testbench, "report": report})
        with open(report) as file:
            return json.load(file)


def pe_report(testcase, build, testbench, *, profile=False):
    """Run one cocotb test of the processing element ``build`` (``sim.tb_pe``, or
    ``sim.tb_pe_profile`` with ``profile``) with the ``testbench`` settings; return the
    JSON report the testbench writes (the measurements of ``sw.experiments.pe_cycles``)."""
    return _reported("processing_element", "sim.tb_pe_profile" if profile else "sim.tb_pe", build, testcase,
                     testbench)


def histogram_pe_report(build, arrays, trees, *, log_file=None, code_store="chip"):
    """Grow ``trees`` forest-mode trees (forest seed 7) on each dataset of ``arrays``
    (``{name: .npz path}`` of ``codes`` and ``labels``) on the histogram PE ``build``
    (``sim.tb_histogram_pe``, ``datasets_match_model``: node for node against the model,
    no stalls); return the report's records, one per tree (cycles, nodes, one-pass bound).
    With ``code_store="memory"`` the build reads its codes from the simulated DDR4
    (:data:`SIMULATED_DDR4`: its word width, latency and waitrequest)."""
    memory = {}
    if code_store == "memory":
        build = {**build, "code_store": "memory", "code_word_bits": SIMULATED_DDR4["word_bits"]}
        memory = {key: SIMULATED_DDR4[key] for key in ("memory_latency", "waitrequest_probability")}
    return _reported("histogram_pe", "sim.tb_histogram_pe", build, "datasets_match_model",
                     {"arrays": {name: str(path) for name, path in arrays.items()}, "dataset_trees": trees,
                      **memory},
                     log_file)
