"""Forest-mode trees of datasets larger than today's banks, grown on the simulated
histogram PE (issues #22 and #25): measured cycles beside the cost model's price, the
one-pass bound and one CPU core.

``python -m sw.experiments.histogram_pe_trees [--datasets random20k isolet] [--trees 1]
[--lanes 8] [--out results/histogram_pe_trees.md]``

Per dataset, coded at 8 bits as the out-of-core plan codes it
(``sw.experiments.out_of_core``: rank quantiser, forest mode, ``sqrt(F)`` features a
split, a full bootstrap, no depth limit), a ``HistogramPE`` build sized to it (its rows,
features, classes; node memory and depth limit from the model's own trees, so the limit
never cuts them) grows ``--trees`` trees (forest seed 7) in Verilator, node for node
against the golden model (``sim.tb_histogram_pe``, ``datasets_match_model``), and reports
the cycles from each tree's start to its last node. **The build holds the codes on the
chip** (the row gather's memory): the DDR4 code store of the plan is not built, so the
memory traffic the plan models is not in these cycles, and a real 10AX115 could hold
isolet's 4.8 MB of codes for one PE at most. The Verilator build of a large dataset takes
minutes (once per shape, cached).

Beside the measurement, in the same run: the cost model's price of the same trees
(``histogram_pe_cycles``), the one-pass bound (issue #25) and oneDAL's CPU time per tree on
one core (the fastest CPU trainer, ``sw.experiments.cpu_forests``), with the time of one PE
at the proxy clock (``hw.flows.fmax_record.proxy_clock``; the pass engine itself has not
closed it, ``docs/gateware.md``).
"""

import argparse
import statistics
import tempfile
from pathlib import Path

import numpy as np

from hw.checks import bits
from hw.flows.fmax_record import proxy_clock
from sim import backend
from sw.experiments.out_of_core import (CODE_BITS, coded, cpu_seconds_per_tree, forest_parameters,
                                        histogram_pe_cycles, raw_dataset)
from sw.experiments.report import pyplot, save_plot
from sw.methods.forest.histogram import train_tree_from_histograms

__all__ = ["FOREST_SEED", "STATE_GROUPS", "model_trees", "build_for", "state_names",
           "measure", "table", "profile_table", "plot", "main"]

#: The forest seed the testbench grows its dataset trees with (``sim.tb_histogram_pe``).
FOREST_SEED = 7
DEFAULT_DATASETS = ("random20k", "isolet")
#: The controller's states (``HistogramPE.controller_states``) grouped by what they wait for.
STATE_GROUPS = {
    "draws": ("Take the draw", "Swap"),
    "gather passes": ("Gather the pass", "Wait for the pass", "Gather the next pass"),
    "partitions": ("Partition", "Wait for the partition"),
    "node records": ("Read the node", "Decide", "Rewind", "Offer the node", "Write the left child",
                     "Write the right child", "Read the next node", "Decide the next node"),
    "bootstrap": ("Wait for the bootstrap",),
    "tree start": ("Wait for a tree", "Clear the permutation"),
}


def model_trees(codes, labels, trees, lanes):
    """The golden model's trees ``0..trees-1`` (forest seed :data:`FOREST_SEED`, no depth
    limit) and their work, as the PE's lanes draw: ``[(tree, work)]``."""
    params = forest_parameters(codes, labels)
    return [train_tree_from_histograms(codes, labels, params, FOREST_SEED, index, CODE_BITS, lanes)
            for index in range(trees)]


def build_for(codes, labels, grown, lanes):
    """The ``HistogramPE`` parameters that hold the dataset and the trees ``grown``
    (:func:`model_trees`): its rows, features and classes; counts as wide as the rows; the
    passes a node needs to draw every feature; a node memory of the largest tree rounded
    up to a power of two; a depth limit one past the deepest node."""
    n_rows, n_features = codes.shape
    return {"max_rows": n_rows, "features": n_features, "lanes": lanes, "code_bits": CODE_BITS,
            "classes": int(labels.max()) + 1, "count_bits": bits(n_rows),
            "pass_bits": max(1, bits(-(-n_features // lanes) - 1)),
            "max_nodes": 1 << bits(max(tree.n_nodes for tree, _ in grown) - 1),
            "max_depth": int(max(tree.depth.max() for tree, _ in grown)) + 1}


def state_names():
    """The controller's state encoding (value -> name), from an elaborated HistogramPE (the
    same at every size)."""
    from amaranth.hdl import Fragment
    from hw.histogram_pe import HistogramPE
    pe = HistogramPE()
    Fragment.get(pe, None)
    return pe.controller_states


def _grouped(records):
    """Mean cycles a tree per :data:`STATE_GROUPS` group over ``records``; a state outside
    every group is an error (a state added to the controller must be placed)."""
    names = state_names()
    group_of = {state: group for group, states in STATE_GROUPS.items() for state in states}
    totals = dict.fromkeys(STATE_GROUPS, 0)
    for record in records:
        for value, cycles in record["states"].items():
            totals[group_of[names[int(value)]]] += cycles
    return {group: total / len(records) for group, total in totals.items()}


def _holds(build, needed, name):
    """Refuse a named build that cannot hold the dataset and its trees (value and limit)."""
    for key in ("max_rows", "features", "classes", "max_nodes", "max_depth"):
        if needed[key] > build[key]:
            raise ValueError(f"{name} needs {key} = {needed[key]}, more than the build's {build[key]}")
    if build["features"] > build["lanes"] << build["pass_bits"] or needed["count_bits"] > build["count_bits"]:
        raise ValueError(f"{name}: the build's passes or counts are too narrow for it")


def measure(name, trees, lanes, clock_hz, cpu_trees=(10, 30), folder=None, log=print, build=None,
            code_store="chip"):
    """One dataset's row: the simulated trees' cycles, the model's price, bound and CPU;
    on ``build`` (parameters, e.g. a named build's, with its own lanes) if given, else on
    one sized to the dataset; with ``code_store="memory"`` the codes are read from the
    memory model :data:`sim.support.avalon.SIMULATED_DDR4` (``backend.SIMULATED_DDR4``)."""
    X, y = raw_dataset(name)
    codes, labels = coded(X, y)
    lanes = build["lanes"] if build else lanes
    grown = model_trees(codes, labels, trees, lanes)
    needed = build_for(codes, labels, grown, lanes)
    if build:
        _holds(build, needed, name)
    build = build or needed
    log_file = backend.BUILD_ROOT / "logs" / f"histogram_pe_trees_{name}_{code_store}.log"
    log_file.parent.mkdir(parents=True, exist_ok=True)
    where = "in memory" if code_store == "memory" else "on the chip"
    log(f"{name}: {codes.shape[0]:,} x {codes.shape[1]} codes, {needed['classes']} classes; build "
        f"{build}, codes {where}; simulating {trees} tree(s) (a new shape builds for minutes; "
        f"log: {log_file})", flush=True)
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        path = Path(scratch) / f"{name}.npz"
        np.savez(path, codes=codes.astype(np.uint8), labels=labels.astype(np.int64))
        records = backend.histogram_pe_report(build, {name: path}, trees, log_file=log_file,
                                              code_store=code_store)
    model = [histogram_pe_cycles(work, lanes) for _, work in grown]
    measured = [record["cycles"] for record in records]
    assert [record["nodes"] for record in records] == [tree.n_nodes for tree, _ in grown]
    dal_ms = cpu_seconds_per_tree("dal", X, y, cpu_trees) * 1e3
    cycles = statistics.mean(measured)
    row = {"dataset": name, "rows": codes.shape[0], "features": codes.shape[1],
           "classes": needed["classes"], "lanes": lanes, "trees": trees, "build": build,
           "nodes": statistics.mean(r["nodes"] for r in records), "cycles": cycles,
           "model_cycles": statistics.mean(model),
           "bound": statistics.mean(r["one_pass_bound"] for r in records),
           "ms": cycles / clock_hz * 1e3, "dal_ms": dal_ms, "states": _grouped(records),
           "code_store": code_store,
           "mb_read": statistics.mean(r.get("words_read", 0) for r in records) * backend.SIMULATED_DDR4["word_bits"] / 8e6}
    log(f"{name}: {row['nodes']:,.0f} nodes, {cycles:,.0f} cycles a tree (model {row['model_cycles']:,.0f}, "
        f"bound {row['bound']:,.0f}); oneDAL {dal_ms:.2f} ms a tree on one core", flush=True)
    return row


def table(rows, clock_mhz):
    lines = ["| dataset | rows x features (classes) | codes | lanes | nodes a tree | cycles a tree, measured "
             "| the cost model's price | measured / model | one-pass bound | measured / bound "
             f"| one PE at {clock_mhz} MHz: ms | oneDAL, 1 core: ms | one PE / one core |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        store = "on the chip" if row["code_store"] == "chip" else f"in memory, {row['mb_read']:.1f} MB read"
        lines.append(
            f"| {row['dataset']} | {row['rows']:,} x {row['features']} ({row['classes']}) | {store} | {row['lanes']} | "
            f"{row['nodes']:,.0f} | {row['cycles']:,.0f} | {row['model_cycles']:,.0f} | "
            f"{row['cycles'] / row['model_cycles']:.2f} | {row['bound']:,.0f} | "
            f"{row['cycles'] / row['bound']:.2f} | {row['ms']:.2f} | {row['dal_ms']:.2f} | "
            f"{row['dal_ms'] / row['ms']:.2f}x |")
    return "\n".join(lines)


def profile_table(rows):
    """Where the measured cycles go: the controller's states by group, per tree."""
    lines = ["| dataset | " + " | ".join(STATE_GROUPS) + " | cycles a tree |",
             "|---|" + "---|" * (len(STATE_GROUPS) + 1)]
    for row in rows:
        cells = [f"{row['states'][group]:,.0f} ({row['states'][group] / row['cycles']:.0%})"
                 for group in STATE_GROUPS]
        lines.append(f"| {row['dataset']} | " + " | ".join(cells) + f" | {row['cycles']:,.0f} |")
    return "\n".join(lines)


def plot(rows, path):
    """Per dataset, cycles a tree relative to the one-pass bound: the measured cycles split
    by the controller's state groups, beside the cost model's price."""
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(9, 2.6 + 0.8 * len(rows)))
    positions = range(len(rows))
    left = [0.0] * len(rows)
    for group in STATE_GROUPS:
        widths = [row["states"][group] / row["bound"] for row in rows]
        axis.barh([k - 0.2 for k in positions], widths, 0.4, left=left, label=f"measured: {group}")
        left = [a + b for a, b in zip(left, widths)]
    axis.barh([k + 0.2 for k in positions], [row["model_cycles"] / row["bound"] for row in rows], 0.4,
              color="0.7", label="the cost model's price")
    axis.axvline(1.0, color="black", linewidth=1, label="one-pass bound (#25)")
    axis.axvline(1.5, color="black", linestyle="--", linewidth=1, label="1.5 x bound (#25's aim)")
    axis.set_yticks(list(positions), [f"{row['dataset']} ({row['lanes']} lanes)" for row in rows])
    axis.invert_yaxis()
    axis.set_xlabel("cycles per forest-mode tree / one-pass bound")
    where = {"chip": "codes on the chip", "memory": "codes read from the simulated DDR4"}
    axis.set_title(f"Histogram PE in Verilator ({where[rows[0]['code_store']]}): where a tree's cycles go")
    axis.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3)
    figure.tight_layout()
    save_plot(figure, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DEFAULT_DATASETS))
    parser.add_argument("--trees", type=int, default=1, help="trees simulated per dataset")
    parser.add_argument("--lanes", type=int, default=8)
    parser.add_argument("--build", help="a named build (hw.designs.BUILDS) for every dataset, its "
                        "lanes replacing --lanes (default: a build sized to each dataset)")
    parser.add_argument("--code-store", choices=("chip", "memory"), default="chip",
                        help="codes on the chip, or read from the simulated DDR4 (sim.support.avalon.SIMULATED_DDR4)")
    parser.add_argument("--out", default="results/histogram_pe_trees.md")
    arguments = parser.parse_args(argv)
    clock = proxy_clock()["clock_mhz"]
    build = None
    if arguments.build:
        from hw.designs import build_parameters
        build = build_parameters(arguments.build)
    rows = [measure(name, arguments.trees, arguments.lanes, clock * 1e6, build=build,
                    code_store=arguments.code_store)
            for name in arguments.datasets]
    text = table(rows, clock) + "\n\n" + profile_table(rows)
    print(text)
    out = Path(arguments.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")
    plot(rows, out.with_suffix(".png"))
    print(f"wrote {out} and {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
