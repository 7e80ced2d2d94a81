"""Cycles per tree of the processing element, simulated without stalls, against the cycle model:
single-tree latency and the steady state of the serialised pipeline.

``python -m sw.experiments.pe_cycles [--trees N] [--datasets iris sonar ctg] [--states] [--out results/pe_cycles.md]``

Trains trees on real datasets in the Verilator simulation of the PE (every tree also
checked against the golden model by the testbench), with no idle or stall cycle on any
stream and the lists served as soon as they are requested, and writes a table of the
measured cycles beside the analytical model of ``docs/gateware.md``:

    model = start-up + inbag * depth * (2 + ceil(features / lanes))
    start-up = n_samples (draws) + lists * n_rows (lists filtered, lanes at a time)
             = n_samples (draws) + 3 * inbag (sparse fill: thesis mode, <= 32 draws)

where ``lists`` is the number of slots whose lists are filled, ``lanes`` lists side by
side: ``ceil(features / lanes)`` in forest mode, 1 in thesis mode. Per level, each lane
streams its in-bag entries once for the Gini scans, once for the go-left bits and once
per list it holds for the partition.

Per dataset and mode, ``--trees`` trees are first trained one at a time (each started from
idle: its ``cycles`` is the latency), then the same trees back to back, each queued while
the one before trains (the serialised pipeline): the interval between the ends of
consecutive trees is the steady-state time per tree.
"""

import argparse
import statistics
import sys
from pathlib import Path

from hw.designs import build_parameters
from sim import backend

__all__ = ["BUILD", "cycle_model", "measure", "latency_and_steady_state", "measure_states",
           "state_table", "main"]

#: The PE the measurements are taken on (the catalogue's ``pe_datasets`` build).
BUILD = build_parameters("pe_datasets")


def cycle_model(record, lanes):
    """The analytical cycle count of one tree (``record`` from the testbench's report)."""
    n_rows, inbag, depth = record["n_rows"], record["inbag"], max(1, record["depth"])
    features = 1 if record["mode"] == "thesis" else record["n_features"]
    draws = record.get("n_samples", n_rows)
    sparse = record["mode"] == "thesis" and 0 < draws <= BUILD.get("sparse_rows", 0)
    start_up = draws + (3 * inbag if sparse else record["lists"] * n_rows)
    return start_up + inbag * depth * (2 + -(-features // lanes))


def measure(datasets, trees, build=BUILD):
    """Simulate ``trees`` trees per dataset and mode; return the testbench's records."""
    return backend.pe_report("queued_dataset_trees_latency_and_steady_state", build,
                             _no_stalls(datasets, trees))


def _no_stalls(datasets, trees):
    """The testbench settings of a measurement: ``trees`` trees per dataset, no stalls."""
    return {"datasets": list(datasets), "dataset_trees": trees, "idle_probability": 0.0,
            "stall_probability": 0.0}


def latency_and_steady_state(records, lanes):
    """Per (dataset, mode): mean latency of the trees trained alone (leaving out the very
    first tree after the reset, which alone clears the weight tags of all ``max_rows`` rows,
    ``docs/gateware.md``), mean steady-state interval of the queued trees, and the model."""
    groups = {}
    for record in records[1:]:
        groups.setdefault((record["label"].split(" tree")[0], record["mode"]), []).append(record)
    summary = {}
    for key, group in groups.items():
        alone = [r for r in group if r["handover"] == "alone"]
        queued = [r for r in group if r["handover"] == "queued"]
        summary[key] = {
            "n_rows": group[0]["n_rows"],
            "inbag": statistics.mean(r["inbag"] for r in alone),
            "depth": statistics.mean(r["depth"] for r in alone),
            "nodes": statistics.mean(r["nodes"] for r in alone),
            "latency": statistics.mean(r["cycles"] for r in alone),
            "model": statistics.mean(cycle_model(r, lanes) for r in alone),
            "steady": statistics.mean(r["interval"] for r in queued) if queued else None,
        }
    return summary


def table(records, lanes):
    """Markdown table of :func:`latency_and_steady_state`."""
    lines = ["| dataset | mode | rows | in-bag | depth | nodes | latency (cycles) | model | ratio "
             "| steady state (cycles/tree, queued) | steady / latency |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (name, mode), row in latency_and_steady_state(records, lanes).items():
        steady = row["steady"]
        lines.append(f"| {name} | {mode} | {row['n_rows']} "
                     f"| {row['inbag']:.0f} | {row['depth']:.1f} | {row['nodes']:.0f} | {row['latency']:,.0f} "
                     f"| {row['model']:,.0f} | {row['latency'] / row['model']:.2f} "
                     f"| {'-' if steady is None else f'{steady:,.0f}'} "
                     f"| {'-' if steady is None else format(steady / row['latency'], '.2f')} |")
    return "\n".join(lines)


def state_names(build=BUILD):
    """Encoding of the PE controller's states (``fsm_state`` value -> name), as the
    elaborated design records it."""
    from amaranth.hdl import Fragment
    from hw.pe import ProcessingElement
    pe = ProcessingElement(**build)
    Fragment.get(pe, None)
    return pe.controller_states


def measure_states(datasets, trees, build=BUILD):
    """Simulate ``trees`` trees per dataset and mode alone; per (dataset, mode) the mean
    cycles per tree spent in each controller state (leaving out the very first tree)."""
    records = backend.pe_report("cycles_by_state", build, _no_stalls(datasets, trees),
                                profile=True)[1:]
    names = state_names(build)
    summary = {}
    for record in records:
        entry = summary.setdefault((record["dataset"], record["mode"]), {"trees": 0, "cycles": 0, "states": {}})
        entry["trees"] += 1
        entry["cycles"] += record["cycles"]
        for value, count in record["states"].items():
            name = names[int(value)]
            entry["states"][name] = entry["states"].get(name, 0) + count
    return summary


def state_table(summary, shown=6):
    """Markdown: per (dataset, mode), mean cycles per tree and the states that take most."""
    lines = ["| dataset | mode | cycles/tree | where they go (mean cycles per tree) |", "|---|---|---|---|"]
    for (name, mode), entry in summary.items():
        trees = entry["trees"]
        ranked = sorted(entry["states"].items(), key=lambda item: -item[1])
        parts = [f"{state} {count / trees:,.0f}" for state, count in ranked[:shown]]
        rest = sum(count for _, count in ranked[shown:]) / trees
        if rest:
            parts.append(f"other {rest:,.0f}")
        lines.append(f"| {name} | {mode} "
                     f"| {entry['cycles'] / trees:,.0f} | {'; '.join(parts)} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["iris", "sonar", "ctg"])
    parser.add_argument("--trees", type=int, default=3, help="trees per dataset and mode")
    parser.add_argument("--out", default=str(backend.PROJECT_ROOT / "results" / "pe_cycles.md"))
    parser.add_argument("--states", action="store_true",
                        help="also simulate the trees alone once more and show the cycles per "
                             "controller state (where the cycles go)")
    arguments = parser.parse_args(argv)
    if arguments.trees < 2:
        parser.error(f"--trees must be at least 2, not {arguments.trees}: the first tree after "
                     f"the reset is left out of every mean")
    records = measure(arguments.datasets, arguments.trees)
    text = table(records, BUILD["feature_lanes"])
    if arguments.states:
        text += "\n\nWhere the cycles go (trees alone, controller state per busy cycle):\n\n"
        text += state_table(measure_states(arguments.datasets, arguments.trees))
    build = ", ".join(f"{key}={value}" for key, value in BUILD.items())
    out = Path(arguments.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(f"# PE cycles per tree (Verilator, no stalls)\n\nBuild: {build}\n\n{text}\n")
    print(text)
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
