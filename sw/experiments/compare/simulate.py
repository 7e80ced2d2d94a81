"""The simulated samples: the first trees of a fold trained again in the Verilator
simulation of the whole accelerator (through :mod:`sim.backend`), their cycles, and
whether every tree equals the golden model's.
"""

import concurrent.futures
import os
import statistics
import sys
import threading

import numpy as np

from sw.experiments.compare import builds
from sw.experiments.compare.hwtime import load_cycles, one_pass_bound_cycles, rotor_wait_cycles
from sw.methods.forest import model


def sample_job(estimator, X_train, y_train, n_trees):
    """The simulation job that trains the first ``n_trees`` trees of a fitted estimator."""
    return {"codes": estimator.quantizer_.transform(X_train),
            "labels": np.searchsorted(estimator.classes_, y_train),
            "params": estimator.training_parameters_, "seed": estimator.seed_, "n_trees": n_trees}


def tree_columns(trees, estimator, n_trees):
    """Of a sample of ``n_trees`` simulated ``trees``: whether each equals the golden model's
    (``estimator.trees_``), the nodes per tree of the sample and of the whole forest, and the
    sample's mean one-pass bound."""
    equal = [model.trees_equal(got, expected) for got, expected in zip(trees, estimator.trees_[:n_trees])]
    return {"equal": len(equal) == n_trees and all(equal),
            "nodes_per_tree": statistics.mean(t.n_nodes for t in estimator.trees_[:n_trees]),
            "nodes_per_tree_forest": statistics.mean(t.n_nodes for t in estimator.trees_),
            "one_pass_bound_cycles": statistics.mean(
                one_pass_bound_cycles(t) for t in estimator.trees_[:n_trees])}


def sample_summary(result, job, estimator):
    """Cycles of a simulated sample, and whether every tree equals the golden model's."""
    n_trees = job["n_trees"]
    tree_cycles = np.array(result["tree_cycles"], dtype=float)
    if result["design"]["pe_count"] > 1:   # trees overlapped: only the mean is known
        tree_cycles = np.full(n_trees, (result["train_cycles"] - result["sort_cycles"])
                              * result["design"]["pe_count"] / n_trees)
    overhead = result["train_cycles"] - result["sort_cycles"] - tree_cycles.sum()
    return {"trees": n_trees, **tree_columns(result["trees"], estimator, n_trees),
            "sort_cycles": result["sort_cycles"], "train_cycles": result["train_cycles"],
            "overhead_cycles": max(0.0, float(overhead)),
            "cycles_per_tree": tree_cycles.mean(), "cycles_per_tree_sd": tree_cycles.std(),
            "cycles_per_tree_min": tree_cycles.min(), "cycles_per_tree_max": tree_cycles.max(),
            "tree_cycles": ";".join(f"{value:.0f}" for value in tree_cycles),
            "load_cycles": load_cycles(job["codes"].shape, result["design"]),
            "rotor_wait_cycles": rotor_wait_cycles(job, result["design"]),
            "wall_seconds": result["wall_seconds"],
            # Distinct in-bag rows (the root's rows) of every tree of the modelled forest.
            "inbag_rows_max": max(int(t.n_rows[0]) for t in estimator.trees_)}


def design_key(design):
    """Designs with equal keys are one Verilator build."""
    return tuple(sorted(design.items()))


def train_by_design(jobs, designs, progress=lambda done: None, parallel=True):
    """``sim.backend.train_batch`` once per distinct build of ``designs`` (one per job),
    with ``parallel`` the builds' simulators side by side (each a process of its own,
    driven from a thread), else one after the other (for measuring simulation speed);
    the results in the jobs' order. ``progress(jobs_done)`` counts over all builds."""
    # Imported here: sim.backend pulls in the gateware (hw, Amaranth) and the simulator
    # runner, not needed without simulation (--no-sim, --help, the worker processes).
    from sim import backend
    groups = {}
    for index, design in enumerate(designs):
        groups.setdefault(design_key(design), (design, []))[1].append(index)
    finished, lock = {}, threading.Lock()

    def run(key, design, indices):
        def report(count):
            with lock:
                finished[key] = count
                progress(sum(finished.values()))
        # The simulator's output goes where this process's goes (the comparison sends it
        # to its own log, results/compare_sim.log), not to the backend's log folder.
        return backend.train_batch([jobs[index] for index in indices], design, progress=report,
                                   show_log=True)

    results = [None] * len(jobs)
    with concurrent.futures.ThreadPoolExecutor(len(groups) if parallel else 1) as pool:
        futures = {pool.submit(run, key, design, indices): indices
                   for key, (design, indices) in groups.items()}
        for future, indices in futures.items():
            for index, result in zip(indices, future.result()):
                results[index] = result
    return results


def simulate_samples(firsts, arguments, progress=lambda done: None, log=None):
    """Simulate every dataset's samples (both modes) in one run of one build.

    ``firsts``: dataset name -> fold-0 data and fitted models (from
    :func:`sw.experiments.compare.run.accuracy_row`). Returns dataset name ->
    {"forest": summary, "thesis": summary}. The simulator's own output goes to the file
    ``log`` (if given) instead of the terminal.
    """
    plan = [(name, mode, size) for name in firsts
            for mode, size in (("forest", arguments.sim_trees), ("thesis", arguments.sim_thesis_trees))]
    jobs = [sample_job(firsts[name][f"hw_{mode}"], firsts[name]["X"], firsts[name]["y"], size)
            for name, mode, size in plan]
    with output_to(log):
        results = train_by_design(jobs, [builds.sim_design(name) for name, _, _ in plan], progress)
    samples = {}
    for (name, mode, _), job, result in zip(plan, jobs, results):
        samples.setdefault(name, {})[mode] = sample_summary(result, job, firsts[name][f"hw_{mode}"])
    return samples


def build(design, log=None):
    """Build the Verilator model of ``design`` (also a worker process's task), its output
    to ``log``."""
    # Imported here: see train_by_design.
    from sim import backend
    with output_to(log):
        backend.build(design)


class output_to:
    """Send this process's (and its children's) stdout and stderr to a file for a while."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        if self.path is None:
            return self
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = [os.dup(1), os.dup(2)]
        self.file = open(self.path, "ab")
        os.dup2(self.file.fileno(), 1)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        if self.path is None:
            return False
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, saved in zip((1, 2), self.saved):
            os.dup2(saved, fd)
            os.close(saved)
        self.file.close()
        return False
