"""The out-of-core plan's cost model (issue #22): what a histogram PE would read, scan and
take per tree, beside today's PE's cycle model and the CPU forests on one core.

``python -m sw.experiments.out_of_core [--datasets isolet mnist_test10k random20k ctg cmc]
[--trees 3] [--cpu-trees 20] [--lanes 8] [--out results/out_of_core.md]``

Per dataset, coded at 8 bits (``RankQuantizer``), forest mode as the comparison trains it
(bootstrap of ``n`` draws, ``sqrt(F)`` features per split, no depth limit). The plan is
``sw/methods/forest/histogram.py``; its trees are the golden model's, and the tests hold
them equal. Each tree's :class:`~sw.methods.forest.histogram.HistogramWork` is priced by
the model below. **It is a model, not a measurement**: the histogram PE is built with the
dataset on the chip (``hw/histogram_pe.py`` on ``hw/pass_engine.py``, whose measured
cycles a pass the model uses), and on the thesis datasets it takes 0.2 % fewer (ctg) to 16 % more cycles
than this model prices its trees (``docs/gateware.md``); the DDR4 code store is not built,
and no P stands behind the figures. What it prices:

* per searched node with ``r`` rows, ``d`` features drawn (``L`` at a time: the lanes of
  the pass that finds the last feature needed draw past it, and those draws are gathered
  and rewound, ``train_tree_from_histograms``) and ``s`` histograms scanned:
  ``ceil(d / L) r`` cycles to gather (one row per cycle, the codes of ``L`` drawn
  features at once, one lane each), ``ceil(s / L) b`` cycles to scan the bins and
  :data:`NODE_CYCLES`. ``b`` is the most non-zero (bin, class) cells of the node's
  histograms: each lane steps from one such cell to the next in code order (an occupancy
  bitmap and a priority encoder) and feeds it to today's Gini scanner as one entry, its
  weight the cell's weighted count and its distinct rows with it, so a small node scans
  its few cells, not 256 bins. The variant that scans all 256 bins, one a cycle, is
  priced too (``full_scan_cycles``). Each gather pass adds the built pass engine's
  overhead (``hw.pass_engine.pass_overhead_cycles``, measured in its testbench: 24
  cycles, and 2 + 3 more for each split it combines after the first: the row gather's
  pipeline, the histogram unit's turnaround, the scanner's last compare, the combiner),
  the node's ``s`` splits taken by its passes in order;
* one cycle per row of a node split into searched children (its go-left bit and partition);
* the code store in external memory, in one of two layouts. **Row-major** (a row's
  ``F`` one-byte codes contiguous): each gather pass reads, per row, the 64-byte bursts
  its ``L`` codes lie in, at most ``min(L, ceil(F / 64))``. **Feature-major** (a
  feature's ``n`` codes contiguous, 64 rows a burst): each drawn feature reads the
  bursts of the 64-row blocks the node's rows lie in, so a node near the root reads its
  columns nearly sequentially, and a deep node reads one burst a row and feature. The
  memory is one DDR4-2400 x64 interface: :data:`DDR4_PEAK_GBPS` at
  :data:`RANDOM_BURST_EFFICIENCY`, the share assumed for 64-byte bursts at random
  addresses. Latency is assumed hidden by enough reads in flight. The go-left reads of
  the partition (one feature per split node) are not counted.

Today's PE is priced by its own cycle model (``sw.experiments.pe_cycles.cycle_model``: it
reads every feature's list at every level), on the same trees. The CPU forests are
measured in the same run: CPU time of ``n_jobs=1`` fits on the whole dataset, per tree
as the slope between a 20-tree and a 100-tree fit (a fit's fixed cost left out).
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import make_classification

from hw.flows.fmax_record import proxy_clock
from hw.pass_engine import pass_overhead_cycles
from sw.data.datasets import available, load
from sw.experiments.cpu_forests import CPU_FORESTS, cpu_forest
from sw.experiments.pe_cycles import cycle_model
from sw.experiments.report import pyplot, save_plot
from sw.methods.forest.histogram import train_tree_from_histograms
from sw.methods.forest.model import TrainingParameters
from sw.methods.forest.quantize import make_quantizer

__all__ = ["CODE_BITS", "NODE_CYCLES", "DDR4_PEAK_GBPS", "RANDOM_BURST_EFFICIENCY", "BURST_BYTES",
           "histogram_pe_cycles", "cycle_parts", "external_bytes", "todays_pe_cycles", "raw_dataset",
           "coded", "forest_parameters", "cpu_seconds_per_tree", "measure",
           "table", "parts_table", "plot", "main"]

CODE_BITS = 8
#: Cycles a searched node costs besides its gathers and scans (assumed: its record read,
#: the decision, the children's records), as today's PE's review and decide states.
NODE_CYCLES = 8
#: One DDR4-2400 interface, 64 data bits: peak bytes per second (2400 MT/s x 8 bytes).
DDR4_PEAK_GBPS = 19.2
#: Share of the peak assumed for 64-byte reads at random rows (row misses, refresh).
RANDOM_BURST_EFFICIENCY = 0.5
BURST_BYTES = 64
#: Synthetic set larger than the default build (issue #22's 20,000 x 100, 20 classes).
SYNTHETIC = {"random20k": dict(n_samples=20_000, n_features=100, n_informative=40,
                               n_classes=20, n_clusters_per_class=1, random_state=0)}
DEFAULT_DATASETS = ("isolet", "mnist_test10k", "random20k", "ctg", "cmc", "sonar")


def cycle_parts(work, lanes, full_scan=False, bins=1 << CODE_BITS):
    """Where one tree's planned cycles go on the histogram PE (see the module docstring):
    ``{"gather", "pass_overhead", "scan", "nodes", "partition"}``, beside its one-pass bound
    (``bound``: the rows of the searched nodes, issue #25); with ``full_scan``, every
    histogram's scan takes all ``bins``."""
    return {"bound": work.searched_rows,
            "gather": sum(-(-drawn // lanes) * len(rows) for rows, drawn, _, _ in work.nodes),
            "pass_overhead": sum(_passes_overhead(drawn, scanned, lanes) for _, drawn, scanned, _ in work.nodes),
            "scan": sum(-(-scanned // lanes) * (bins if full_scan else cells)
                        for _, _, scanned, cells in work.nodes),
            "nodes": NODE_CYCLES * len(work.nodes), "partition": work.partitioned_rows}


def _passes_overhead(drawn, scanned, lanes):
    """The built pass engine's cycles beyond rows and cells over a node's gather passes
    (``hw.pass_engine.pass_overhead_cycles``), its ``scanned`` splits taken by the passes in
    order, a pass's lanes at a time."""
    passes = -(-drawn // lanes)
    return sum(pass_overhead_cycles(min(lanes, max(0, scanned - lanes * index))) for index in range(passes))


def _in_sequence(parts):
    """The cycles of :func:`cycle_parts` one after the other (the bound is no part)."""
    return sum(cycles for key, cycles in parts.items() if key != "bound")


def histogram_pe_cycles(work, lanes, full_scan=False):
    """Cycles of one tree on the planned histogram PE: the sum of its :func:`cycle_parts`."""
    return _in_sequence(cycle_parts(work, lanes, full_scan))


def external_bytes(work, lanes, n_features, layout):
    """Bytes one tree's gathers read from the code store in external memory, ``layout``
    ``"row-major"`` or ``"feature-major"`` (see the module docstring)."""
    if layout == "row-major":
        # Each gather pass reads a row's bursts once: the gather's row-cycles times those.
        bursts = cycle_parts(work, lanes)["gather"] * min(lanes, -(-n_features // BURST_BYTES))
    elif layout == "feature-major":
        bursts = sum(drawn * len(np.unique(rows // BURST_BYTES)) for rows, drawn, _, _ in work.nodes)
    else:
        raise ValueError(f"layout must be 'row-major' or 'feature-major', not {layout!r}")
    return bursts * BURST_BYTES


def todays_pe_cycles(tree, n_rows, n_features, lanes):
    """Today's PE's cycle model for the same tree (forest mode, its lists filled)."""
    record = {"n_rows": n_rows, "inbag": int(tree.n_rows[0]), "depth": int(tree.depth.max()),
              "mode": "forest", "n_features": n_features, "n_samples": n_rows,
              "lists": -(-n_features // lanes)}
    return cycle_model(record, lanes)


def raw_dataset(name):
    """A dataset's features and labels: a :data:`SYNTHETIC` set made here, else ``sw.data``'s."""
    if name in SYNTHETIC:
        return make_classification(**SYNTHETIC[name])
    data = load(name)
    return data.X, data.y


def _cpu_seconds(trainer, X, y, trees):
    forest = cpu_forest(trainer, trees, max_features="sqrt", random_state=0, n_jobs=1)
    started = time.process_time()
    forest.fit(X, y)
    return time.process_time() - started


def cpu_seconds_per_tree(trainer, X, y, counts):
    """CPU seconds per tree of one core: the slope between fits of ``counts`` (fewer, more)
    trees, so that a fit's fixed cost (oneDAL bins every feature first) is not spread over
    the trees."""
    fewer, more = counts
    return (_cpu_seconds(trainer, X, y, more) - _cpu_seconds(trainer, X, y, fewer)) / (more - fewer)


def coded(X, y):
    """``(codes, labels)``: ``X`` rank-quantised to :data:`CODE_BITS` bits, ``y`` as 0..k-1."""
    return make_quantizer("rank", CODE_BITS).fit_transform(X), np.unique(y, return_inverse=True)[1]


def forest_parameters(codes, labels):
    """Forest mode as the comparison trains it: a full bootstrap, ``sqrt(F)`` features a
    split, no depth limit."""
    n_rows, n_features = codes.shape
    return TrainingParameters(n_classes=int(labels.max()) + 1, max_samples=n_rows,
                              features_per_split=max(1, int(np.sqrt(n_features))))


def measure(name, trees, cpu_trees, lanes, clock_hz, log=print):
    """One dataset's row of the table (a dict)."""
    X, y = raw_dataset(name)
    codes, labels = coded(X, y)
    n_rows, n_features = codes.shape
    params = forest_parameters(codes, labels)
    cycles, full, row_major, feature_major, today, works, tree_parts = [], [], [], [], [], [], []
    for index in range(trees):
        tree, work = train_tree_from_histograms(codes, labels, params, 1, index, CODE_BITS, lanes)
        works.append(work)
        tree_parts.append(cycle_parts(work, lanes))
        cycles.append(_in_sequence(tree_parts[-1]))
        full.append(histogram_pe_cycles(work, lanes, full_scan=True))
        row_major.append(external_bytes(work, lanes, n_features, "row-major"))
        feature_major.append(external_bytes(work, lanes, n_features, "feature-major"))
        today.append(todays_pe_cycles(tree, n_rows, n_features, lanes))
        log(f"{name}: tree {index + 1}/{trees}: {cycles[-1]:,} cycles planned, "
            f"{row_major[-1] / 1e6:.1f} / {feature_major[-1] / 1e6:.1f} MB, today's PE {today[-1]:,}",
            flush=True)
    parts = {key: statistics.mean(part[key] for part in tree_parts) for key in tree_parts[0]}
    cpu = {key: cpu_seconds_per_tree(key, X, y, cpu_trees) for key in CPU_FORESTS}
    bandwidth = DDR4_PEAK_GBPS * 1e9 * RANDOM_BURST_EFFICIENCY
    return {
        "dataset": name, "rows": n_rows, "features": n_features, "classes": params.n_classes,
        "searched_rows": statistics.mean(w.searched_rows for w in works),
        "gathered_codes": statistics.mean(w.gathered_codes for w in works),
        "histograms": statistics.mean(w.full_scans for w in works),
        "cycles": statistics.mean(cycles), "full_scan_cycles": statistics.mean(full),
        "today_cycles": statistics.mean(today),
        "row_major_mb": statistics.mean(row_major) / 1e6,
        "feature_major_mb": statistics.mean(feature_major) / 1e6,
        "compute_ms": statistics.mean(cycles) / clock_hz * 1e3,
        "row_major_ms": statistics.mean(row_major) / bandwidth * 1e3,
        "feature_major_ms": statistics.mean(feature_major) / bandwidth * 1e3,
        "today_ms": statistics.mean(today) / clock_hz * 1e3,
        "cpu_ms": {key: seconds * 1e3 for key, seconds in cpu.items()},
        "parts": parts,
    }


def table(rows, lanes, clock_mhz):
    lines = [f"| dataset | rows x features (classes) | rows searched / codes gathered / histograms per tree "
             f"| planned PE, {lanes} lanes: cycles (ms at {clock_mhz} MHz) | the same, 256-bin scans: cycles "
             f"| code reads from DDR4, row-major: MB (ms) | feature-major: MB (ms) "
             f"| today's PE, cycle model: cycles (ms) | oneDAL, 1 core: ms | scikit-learn, 1 core: ms |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(
            f"| {row['dataset']} | {row['rows']:,} x {row['features']} ({row['classes']}) | "
            f"{row['searched_rows']:,.0f} / {row['gathered_codes']:,.0f} / {row['histograms']:,.0f} | "
            f"{row['cycles']:,.0f} ({row['compute_ms']:.2f}) | {row['full_scan_cycles']:,.0f} | "
            f"{row['row_major_mb']:.1f} ({row['row_major_ms']:.2f}) | "
            f"{row['feature_major_mb']:.1f} ({row['feature_major_ms']:.2f}) | "
            f"{row['today_cycles']:,.0f} ({row['today_ms']:.2f}) | {row['cpu_ms']['dal']:.2f} | "
            f"{row['cpu_ms']['sk']:.2f} |")
    return "\n".join(lines)


def parts_table(rows):
    """Where the planned cycles go, against the one-pass bound: in sequence, and with the
    three passes overlapped (the next node's gather during a node's scan and partition,
    the go-left bits taken from the codes gathered: an estimate of a pipelined PE; a
    pass's overhead stays on the scan's side)."""
    lines = ["| dataset | one-pass bound | gather | pass overhead | scan | nodes | partition "
             "| in sequence / bound | overlapped / bound |", "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        part = row["parts"]
        sequence = _in_sequence(part)
        overlapped = max(part["gather"], part["pass_overhead"] + part["scan"], part["partition"]) + part["nodes"]
        lines.append(f"| {row['dataset']} | {part['bound']:,.0f} | {part['gather']:,.0f} | "
                     f"{part['pass_overhead']:,.0f} | "
                     f"{part['scan']:,.0f} | {part['nodes']:,.0f} | {part['partition']:,.0f} | "
                     f"{sequence / part['bound']:.2f} | {overlapped / part['bound']:.2f} |")
    return "\n".join(lines)


def plot(rows, lanes, clock_mhz, path):
    """Per dataset, milliseconds per tree on a log axis: the planned PE, the DDR4 floor of
    the whole chip (the better layout), today's PE and the CPU forests on one core."""
    plt = pyplot()
    series = [
        (f"planned histogram PE, one PE ({lanes} lanes, {clock_mhz} MHz, model)", "compute_ms"),
        ("DDR4 reads per tree, the whole chip's floor (better layout, model)", None),
        ("today's PE, one PE (its cycle model)", "today_ms"),
        ("oneDAL, 1 core (measured)", "dal"),
        ("scikit-learn, 1 core (measured)", "sk"),
    ]
    figure, axis = plt.subplots(figsize=(9, 1.2 + 1.1 * len(rows)))
    height = 0.8 / len(series)
    for index, (label, key) in enumerate(series):
        values = [min(row["row_major_ms"], row["feature_major_ms"]) if key is None
                  else row["cpu_ms"][key] if key in ("dal", "sk") else row[key] for row in rows]
        axis.barh([k + index * height for k in range(len(rows))], values, height, label=label)
    axis.set_yticks([k + 0.4 - height / 2 for k in range(len(rows))],
                    [row["dataset"] for row in rows])
    axis.invert_yaxis()
    axis.set_xscale("log")
    axis.set_xlabel("milliseconds per tree (log scale)")
    axis.set_title("Out-of-core plan: a histogram PE per tree against today's PE and one CPU core")
    axis.legend(fontsize=7, loc="lower right")
    figure.tight_layout()
    save_plot(figure, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DEFAULT_DATASETS))
    parser.add_argument("--trees", type=int, default=3, help="trees priced per dataset")
    parser.add_argument("--cpu-trees", type=int, nargs=2, default=[20, 100],
                        help="the two forest sizes whose fit times give the CPU's time per tree")
    parser.add_argument("--lanes", type=int, default=8)
    parser.add_argument("--out", default="results/out_of_core.md")
    arguments = parser.parse_args(argv)
    clock = proxy_clock()["clock_mhz"]
    rows = []
    for name in arguments.datasets:
        if name not in SYNTHETIC and not available(name):
            print(f"{name}: not available (set HWFOREST_DATA_DIR), skipped", file=sys.stderr)
            continue
        rows.append(measure(name, arguments.trees, arguments.cpu_trees, arguments.lanes, clock * 1e6))
    text = table(rows, arguments.lanes, clock) + "\n\n" + parts_table(rows)
    print(text)
    out = Path(arguments.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")
    plot(rows, arguments.lanes, clock, out.with_suffix(".png"))
    print(f"wrote {out} and {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
