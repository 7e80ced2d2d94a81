"""Benchmarks behind the comparison (``make bench``): cycles, speed-ups, fit and simulation speed.

``python -m sw.experiments.bench [--datasets ...] [--trees 4] [--thesis-trees 16] [--compare
results/compare.csv] [--out results/bench.md]``

1. **Cycles per tree against the analytical model**: a few trees per dataset and mode
   of fold 0 trained in the Verilator simulation of the whole accelerator (the
   comparison's builds, :func:`sw.experiments.compare.sim_design`, one PE), each checked equal to the
   golden model's, beside ``sw.experiments.pe_cycles.cycle_model`` for the same trees (its start-up
   plus, per level, a pass over the in-bag rows for the scans, one for the go-left bits and
   one per list a lane holds for the partition); and the presort
   beside the radix sorter's formula ``features x (n (passes + 2) + passes 2^radix)``.
2. **Speed-up against the fastest CPU forest per dataset** (from ``results/compare.csv``,
   the comparison ``make`` writes, at its clock): where the modelled time goes (load and
   presort vs trees) and the P that a 50x and a 100x speed-up over one core of the fastest
   CPU trainer would need.
3. **Golden model against scikit-learn fit time**, single-threaded CPU time, best of 3.
4. **Simulation speed**: simulated cycles per wall-clock second of each job (as the
   host session measures them), split into the dataset load and the training, and the
   time to elaborate and build the simulator (``docs/simulation.md``).
"""

import argparse
import csv
import math
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import sklearn
from sklearn.ensemble import RandomForestClassifier

from sw.data.datasets import REGISTRY, available, load
from sw.experiments import cv
from sw.experiments.compare import (SIM_DESIGN, default_datasets, sample_job, sim_design,
                                    train_by_design)
from sw.experiments.pe_cycles import cycle_model
from sw.methods.forest import model
from sw.methods.forest.estimator import HardwareForestClassifier

__all__ = ["cycles_section", "speedup_section", "fit_section", "main"]


def _tree_record(tree, n_rows, n_features, params):
    """The record ``sw.experiments.pe_cycles.cycle_model`` takes, for a golden-model tree."""
    thesis_mode = params.thesis_mode
    return {"n_rows": n_rows, "n_features": n_features, "inbag": int(tree.n_rows[0]),
            "depth": int(tree.depth.max()), "nodes": int(tree.n_nodes), "mode": "thesis" if thesis_mode else "forest",
            "n_samples": params.max_samples if params.bootstrap else 0,
            "lists": 1 if thesis_mode else n_features}


def sorter_cycles(n_rows, n_features, code_bits, radix_bits):
    """The radix sorter's cycles (docs/gateware.md) for every feature of a dataset."""
    passes = -(-code_bits // radix_bits)
    return n_features * (n_rows * (passes + 2) + passes * (1 << radix_bits))


def _session_cycles(job, result):
    """Simulated cycles of a job: as measured by the session, else (older sessions) one
    cycle per code loaded plus the training."""
    return result.get("session_cycles", job["codes"].size + result["train_cycles"])


def _speed_row(name, mode, job, result):
    """A row of the simulation-speed table: cycles, wall and CPU time (the simulator
    process's, which other load on the machine does not inflate), whole job, load, training."""
    cycles, wall = _session_cycles(job, result), result["wall_seconds"]
    cpu = result.get("cpu_seconds", math.nan)
    load_cycles, load_wall = result.get("load_cycles"), result.get("load_wall_seconds")
    cells = [name, mode, f"{cycles:,}", "", f"{wall:.2f}", "", f"{cpu:.2f}", f"{cycles / wall:,.0f}",
             f"{cycles / cpu:,.0f}", "", ""]
    if load_cycles is not None and load_wall is not None:
        cells[3], cells[5] = f"{load_cycles:,}", f"{load_wall:.2f}"
        cells[9] = f"{load_cycles / max(load_wall, 1e-9):,.0f}"
        cells[10] = f"{(cycles - load_cycles) / max(wall - load_wall, 1e-9):,.0f}"
    return "| " + " | ".join(cells) + " |"


def cycles_section(datasets, n_forest, n_thesis, seed):
    """Simulate the samples; return (Markdown lines, simulation-speed lines)."""

    plan, jobs = [], []
    for name in datasets:
        data = load(name)
        _, _, train, _ = next(cv.splits(data.X, data.y, 5, [seed]))
        for mode, size in (("forest", n_forest), ("thesis", n_thesis)):
            estimator = HardwareForestClassifier(size, mode=mode, random_state=seed).fit(
                data.X[train], data.y[train])
            plan.append((name, mode, estimator, len(train), data.X.shape[1]))
            jobs.append(sample_job(estimator, data.X[train], data.y[train], size))
    started = time.perf_counter()
    # One simulator at a time: this measures simulation speed.
    results = train_by_design(jobs, [sim_design(name) for name, *_ in plan], parallel=False)
    total_wall = time.perf_counter() - started
    lines = ["| dataset | mode | rows | in-bag | depth | nodes | trees | cycles/tree simulated "
             "(mean ± sd) | cycle model | simulated / model | presort simulated | sorter formula "
             "| RTL = model |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    speed = ["| dataset | mode | simulated cycles (load + training) | of which load | wall s "
             "| of which load | CPU s | cycles / s | cycles / CPU s | load cycles / s | training cycles / s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    simulated_cycles = simulated_wall = simulated_cpu = 0
    for (name, mode, estimator, n_rows, n_features), job, result in zip(plan, jobs, results):
        trees = estimator.trees_[:job["n_trees"]]
        equal = all(model.trees_equal(a, b) for a, b in zip(result["trees"], trees))
        records = [_tree_record(tree, n_rows, n_features, estimator.training_parameters_)
                   for tree in trees]
        simulated = np.array(result["tree_cycles"], dtype=float)
        lanes = result["design"]["feature_lanes"]
        modelled = np.array([cycle_model(record, lanes) for record in records], dtype=float)
        formula = sorter_cycles(n_rows, n_features, SIM_DESIGN["code_bits"], SIM_DESIGN["radix_bits"])
        lines.append(
            f"| {name} | {mode} | {n_rows} | {statistics.mean(r['inbag'] for r in records):.0f} | "
            f"{statistics.mean(r['depth'] for r in records):.1f} | "
            f"{statistics.mean(r['nodes'] for r in records):.0f} | {len(trees)} | "
            f"{simulated.mean():,.0f} ± {simulated.std():,.0f} | {modelled.mean():,.0f} | "
            f"{simulated.mean() / modelled.mean():.2f} | {result['sort_cycles']:,} | {formula:,} | "
            f"{'yes' if equal else 'NO'} |")
        speed.append(_speed_row(name, mode, job, result))
        simulated_cycles += _session_cycles(job, result)
        simulated_wall += result["wall_seconds"]
        simulated_cpu += result.get("cpu_seconds", math.nan)
    speed.append(f"| all | | {simulated_cycles:,} | | {simulated_wall:.1f} | | {simulated_cpu:.2f} | "
                 f"{simulated_cycles / simulated_wall:,.0f} | {simulated_cycles / simulated_cpu:,.0f} | | |")
    speed += ["", f"The whole batch took {total_wall:.0f} s of wall time; the "
              f"{total_wall - simulated_wall:.0f} s beyond the jobs are elaborating the design "
              f"(Amaranth and Yosys, every run), Verilator's build check (or build), and the "
              f"simulator's start."]
    return lines, speed


def speedup_section(path):
    """Lines on the comparison's speed-ups, or a note when ``path`` does not exist."""
    if not Path(path).exists():
        return [f"`{path}` not found: run `make` (the comparison) first."]
    with open(path, newline="") as file:
        rows = list(csv.DictReader(file))
    rows = [row for row in rows if row.get("hw_forest_ms")]
    if not rows:
        return [f"`{path}` has no hardware columns (was it run with --no-sim?)."]
    lines = ["| dataset | P | trees | HW forest ms | of which load + presort | fastest CPU, 1 core ms | "
             "speed-up | P for 50x | P for 100x | HW thesis ms | of which load + presort | "
             "thesis speed-up |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        clock = float(row["clock_mhz"]) * 1e6
        cells = [row["dataset"], row["pe_count"], row["trees"]]
        for mode, trees in (("forest", int(row["trees"])), ("thesis", 250)):
            fixed = sum(float(row[f"sim_{mode}_{key}"]) for key in
                        ("load_cycles", "sort_cycles", "overhead_cycles"))
            hw_ms = float(row[f"hw_{mode}_ms"])
            fixed_share = 1000 * fixed / clock / hw_ms
            cells += [f"{hw_ms:.2f}", f"{100 * fixed_share:.0f} %"]
            if mode == "forest":
                speedup = float(row["speedup_vs_fastest_cpu_1core"])
                sk_ms = hw_ms * speedup         # the fastest CPU trainer's single-core time
                cells += [f"{sk_ms:.0f} ({row['fastest_cpu_trainer']})", f"{speedup:,.0f}x"]
                per_tree = float(row["sim_forest_cycles_per_tree"])
                for target in (50, 100):
                    budget = sk_ms / 1000 / target * clock - fixed
                    cells.append("unreachable (load + presort alone)" if budget <= 0
                                 else str(math.ceil(trees * per_tree / budget)))
            else:
                cells.append(f"{float(row['speedup_thesis_1']):,.0f}x")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def fit_section(datasets, n_trees, repeats=3):
    """Golden model vs scikit-learn fit time (single-threaded CPU seconds, best of ``repeats``)."""
    lines = ["| dataset | rows x features | golden model s | scikit-learn s | model / scikit-learn |",
             "|---|---|---|---|---|"]
    for name in datasets:
        data = load(name)
        best = {"model": math.inf, "sklearn": math.inf}
        for repeat in range(repeats):
            for label, make in (("sklearn", lambda: RandomForestClassifier(n_trees, n_jobs=1,
                                                                            random_state=repeat)),
                                ("model", lambda: HardwareForestClassifier(n_trees, n_jobs=1,
                                                                            random_state=repeat))):
                cpu = time.process_time()
                make().fit(data.X, data.y)
                best[label] = min(best[label], time.process_time() - cpu)
        lines.append(f"| {name} | {data.X.shape[0]} x {data.X.shape[1]} | {best['model']:.3f} | "
                     f"{best['sklearn']:.3f} | {best['model'] / best['sklearn']:.2f} |")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", metavar="NAME",
                        help="datasets (default: as the comparison)")
    parser.add_argument("--trees", type=int, default=4, help="forest-mode trees simulated (default 4)")
    parser.add_argument("--thesis-trees", type=int, default=16,
                        help="thesis-mode trees simulated (default 16)")
    parser.add_argument("--fit-trees", type=int, default=100,
                        help="trees for the model vs scikit-learn fit time (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compare", default="results/compare.csv",
                        help="the comparison's CSV (default results/compare.csv)")
    parser.add_argument("--out", default="results/bench.md")
    arguments = parser.parse_args(argv)
    datasets = arguments.datasets or default_datasets()
    for name in datasets:
        if name not in REGISTRY or not available(name):
            parser.error(f"dataset {name!r} is unknown or not available")
    for option in ("trees", "thesis_trees", "fit_trees"):
        if not 1 <= getattr(arguments, option) <= (32 if option != "fit_trees" else 10_000):
            parser.error(f"--{option.replace('_', '-')} is out of range: {getattr(arguments, option)}")
    started = time.perf_counter()
    cycles, speed = cycles_section(datasets, arguments.trees, arguments.thesis_trees, arguments.seed)
    fit = fit_section(datasets, arguments.fit_trees)
    text = "\n".join([
        "# Benchmarks behind the comparison", "",
        f"Python {platform.python_version()}, NumPy {np.__version__}, scikit-learn "
        f"{sklearn.__version__}, {platform.processor() or platform.machine()}; trees of fold 0 of "
        f"a stratified 5-fold split (seed {arguments.seed}).", "",
        "## Cycles per tree: simulated vs the analytical model", "",
        "Whole accelerator in Verilator (one PE, no stalls), the comparison's build; cycle "
        "model `sw.experiments.pe_cycles.cycle_model`; presort against the radix sorter's formula.", "",
        *cycles, "",
        "## Speed-up vs scikit-learn (from the comparison)", "",
        "Modelled HW time split into its fixed part (dataset load and presort, paid once per "
        "forest, not divided by P) and the trees; P needed = trees x cycles per tree / "
        "(scikit-learn time / target x clock - fixed).", "",
        *speedup_section(arguments.compare), "",
        f"## Golden model vs scikit-learn fit time ({arguments.fit_trees} trees, whole dataset, "
        f"single-threaded CPU time, best of 3)", "",
        *fit, "",
        "## Simulation speed", "",
        *speed, "",
        f"Run time: {time.perf_counter() - started:.0f} s.",
    ]) + "\n"
    out = Path(arguments.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
