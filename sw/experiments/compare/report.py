"""The comparison's outputs: the Markdown report (accuracy and training-time tables), and
the plot of accuracy and speed-up per dataset; the CSV is :func:`sw.experiments.report.write_csv`
of the rows.
"""

import math
import os

import numpy as np

from sw.experiments import cpu_forests
from sw.experiments.compare import builds
from sw.experiments.cpu_forests import ONEDAL_BINS
from sw.experiments.pe_fit import P_RULE
from sw.experiments.report import markdown, pyplot, save_plot
from sw.experiments.thesis_tables import CITATION, SETUP


def _number(value, digits=1):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _seed_range(arguments):
    last = arguments.seed + arguments.repeats - 1
    return str(arguments.seed) if last == arguments.seed else f"{arguments.seed}-{last}"


def _mean_sd(row, key):
    return f"{row[key]:.1f} ± {row[key + '_sd']:.1f}"


def _speedup(value):
    return "-" if value is None else f"{value:,.0f}x" if value >= 10 else f"{value:.1f}x"


def _cycles(row, mode):
    spread = row[f"sim_{mode}_cycles_per_tree_sd"]
    spread = "" if spread is None else f" ± {spread:,.0f}"
    return f"{row[f'sim_{mode}_cycles_per_tree']:,.0f}{spread} ({row[f'sim_{mode}_trees']})"


def _difference(row, trainer):
    key = f"acc_forest_minus_{trainer}"
    return f"{row[key]:+.2f} ({_number(row[key + '_se'], 2)})"


def _background(rows):
    """What else ran while the CPU forests were timed, from the rows' measurements."""
    measured = [row["cpu_timing_background_cores"] for row in rows
                if row.get("cpu_timing_background_cores") is not None]
    if not measured:
        return " (the load of other processes was not measured: no /proc/stat)"
    return (f" (other processes kept at most {max(measured):.2f} of the {os.cpu_count()} cores busy "
            f"while they were timed: `cpu_timing_background_cores`; well above 0 means the timing "
            f"shared the machine)")


def accuracy_table(rows):
    """Header and rows of the accuracy table (strings)."""
    header = ["dataset", "rows x feat", "HW forest % (code bits)", "sklearn %", "oneDAL %",
              "HW - sklearn pp (s.e.)", "HW - oneDAL pp (s.e.)", "HW - sklearn per repeat pp",
              "HW thesis mode %", "sklearn 250xd4 %", "thesis HW % (rep.)",
              "thesis sklearn % (rep.)"]
    body = [[row["dataset"], f"{row['rows']} x {row['features']}",
             f"{_mean_sd(row, 'acc_hw_forest')} ({row['hw_forest_code_bits']})",
             _mean_sd(row, "acc_sk_forest"), _mean_sd(row, "acc_dal_forest"),
             _difference(row, "sk"), _difference(row, "dal"),
             " ".join(f"{float(value):+.1f}"
                      for value in row["acc_forest_minus_sk_repeats"].split()),
             _mean_sd(row, "acc_hw_thesis"), _mean_sd(row, "acc_sk_thesis"),
             _number(row["thesis_hw_acc"]), _number(row["thesis_sk_acc"], 2)] for row in rows]
    return header, body


def _timed(rows, engine):
    """The rows with a modelled time that ``engine`` trained ("system" or "histogram")."""
    return [row for row in rows if "hw_forest_ms" in row and row.get("hw_engine", "system") == engine]


def time_table(rows, engine="system"):
    """Header and rows of the forest-mode training-time table (strings) of the datasets
    trained on ``engine`` ("system": the ``ForestSystem``, "histogram": the histogram
    system); empty without simulation."""
    rows = _timed(rows, engine)
    header = ["dataset", "P", "clock MHz", "HW forest ms", "sklearn 1 core / all ms",
              "oneDAL 1 core / all ms", "speed-up vs sklearn 1 core / all",
              "speed-up vs oneDAL 1 core / all", "fastest CPU (1 core)", "CPU cores replaced",
              "cycles/tree ± sd (k)", "one-pass bound (cycles/tree: bound)", "RTL = model"]
    body = []
    for row in rows:
        body.append([
            row["dataset"], str(row["pe_count"]), f"{row['clock_mhz']:g}", f"{row['hw_forest_ms']:.2f}",
            f"{row['fit_sk_forest_1_ms']:.0f} / {row['fit_sk_forest_all_ms']:.0f}",
            f"{row['fit_dal_forest_1_ms']:.0f} / {row['fit_dal_forest_all_ms']:.0f}",
            f"{_speedup(row['speedup_vs_sklearn_1core'])} / {_speedup(row['speedup_vs_sklearn_allcores'])}",
            f"{_speedup(row['speedup_vs_onedal_1core'])} / {_speedup(row['speedup_vs_onedal_allcores'])}",
            row["fastest_cpu_trainer"], f"{row['cpu_cores_replaced']:,.1f}",
            _cycles(row, "forest"),
            f"{row['one_pass_bound_cycles']:,.0f} ({row['cycles_over_one_pass_bound']:.1f}x)",
            "yes" if row["rtl_equals_model"] else "NO"])
    return header, body


def thesis_time_table(rows):
    """Header and rows of the thesis-mode training-time table (strings)."""
    rows = [row for row in rows if "hw_thesis_ms" in row]
    header = ["dataset", "P", "HW thesis ms", "sklearn 250xd4 1 core ms", "speed-up 1 / all",
              "thesis rep. HW / sklearn ms", "rep. speed-up", "cycles/tree ± sd (k)"]
    body = []
    for row in rows:
        thesis = ("-" if row["thesis_hw_ms"] is None else
                  f"{row['thesis_hw_ms']:.1f} / {row['thesis_sk_ms']:,.0f}")
        body.append([
            row["dataset"], str(row["pe_count"]), f"{row['hw_thesis_ms']:.2f}",
            f"{row['fit_sk_thesis_1_ms']:.0f}",
            f"{_speedup(row['speedup_thesis_1'])} / {_speedup(row['speedup_thesis_all'])}",
            thesis, _speedup(row["thesis_speedup"]), _cycles(row, "thesis")])
    return header, body


def _histogram_section(rows):
    """The forest-mode time table of the datasets trained on the histogram system, with
    where its clock, P, memory and load come from."""
    header, body = time_table(rows, "histogram")
    if not body:
        return []
    from sim.backend import SIMULATED_DDR4 as memory    # (loads cocotb)
    histogram_rows = _timed(rows, "histogram")
    header.append("codes read: MB/tree (GB/s)")
    for line, row in zip(body, histogram_rows):
        megabytes = row["sim_forest_mb_read_per_tree"]
        seconds = row["sim_forest_cycles_per_tree"] / (row["clock_mhz"] * 1e6)
        line.append(f"{megabytes:,.1f} ({megabytes / 1e3 / seconds:.2f})" if megabytes else "- (on the chip)")
    first = histogram_rows[0]
    stores = sorted({f"{row['dataset']}: {'simulated DDR4' if row['sim_forest_code_store'] == 'memory' else 'the chip'}"
                     for row in histogram_rows})
    return [
        "## Forest mode on datasets larger than the simulated build: the histogram PE",
        "",
        f"These datasets' folds do not fit the simulated `ForestSystem` build, so forest mode trains "
        f"them on the simulated histogram system (one histogram PE, `hw/histogram_pe.py`; "
        f"`docs/out_of_core.md`), with {first['code_bits']}-bit codes (256 bins, as oneDAL's): their "
        f"accuracy above is the golden model's at that width, which the histogram system equals node "
        f"for node (column RTL = model). Where the codes live ({'; '.join(stores)}): a build keeps them "
        f"on the chip only while they take at most half the 10AX115's M20K. The simulated DDR4 "
        f"returns one {memory['word_bits']}-bit word a cycle at most, {memory['memory_latency'][0]} to "
        f"{memory['memory_latency'][1]} cycles after the read (an assumption, not a board's "
        f"measurement); the cycles per tree include those waits, and the last column gives the "
        f"reads' volume and the bandwidth they take at the clock. Modelled HW training time = (load + "
        f"trees x cycles per tree / P) / clock, load = the code store written one word a cycle plus "
        f"a beat a row. **P = {first['pe_count']}: {first['pe_count_source']}** (several side by side "
        f"are not built, so no P of the chip). **Clock {first['clock_mhz']:g} MHz: "
        f"{first['clock_source']}.** The CPU forests timed in this run as the other datasets' "
        f"(docs/compare.md){_background(histogram_rows)}. cycles/tree: the simulated "
        f"training's cycles over its k trees (the system reports no per-tree cycles). No thesis-mode "
        f"time: the thesis-mode PE is the `ForestSystem`'s.",
        "",
        markdown(header, body),
        "",
    ]


def render(rows, arguments, seconds):
    """The Markdown report (``results/compare.md``)."""
    depth = "unlimited" if arguments.depth is None else arguments.depth
    lines = [
        "# Accelerator vs the CPU forests (scikit-learn, oneDAL) vs the thesis",
        "",
        f"Stratified {arguments.folds}-fold CV repeated {arguments.repeats} times (shuffle and "
        f"forest seeds {_seed_range(arguments)}; the same folds for every method); accuracy "
        f"mean ± standard deviation over all {arguments.repeats * arguments.folds} folds; "
        f"HW - CPU forest: mean difference and its standard error (s.e. = standard deviation of "
        f"the repeats' {arguments.folds}-fold means / sqrt(repeats)), with each repeat's "
        f"mean beside it. Forest mode: {arguments.trees} trees, sqrt features per node, full "
        f"bootstrap, depth {depth}; "
        f"scikit-learn's and oneDAL's random forests with the same. Thesis mode: 250 trees, 16-row "
        f"bootstrap, depth 4, one feature per tree; scikit-learn 250 trees of depth 4 beside it. "
        f"HW accuracy from the golden model (bit-exact with the RTL).",
        "",
        markdown(*accuracy_table(rows)),
        "",
    ]
    header, body = time_table(rows)
    if body:
        clock = arguments.clock_mhz
        source = ("given with --pe-count" if arguments.pe_count else
                  f"estimated per dataset ({P_RULE}; sw/experiments/pe_fit.py, Yosys proxy, not Quartus)")
        stale = None if arguments.pe_count else builds.pe_fit_staleness()
        if stale:
            source += f"; {stale}"
        versions = cpu_forests.versions()
        lines += [
            "## Forest mode: training time",
            "",
            f"Modelled HW training time = (load + presort + trees x cycles per tree / P) / "
            f"clock; cycles simulated in Verilator on a sample of k trees of fold 0 (first "
            f"repeat, one PE). **Clock {clock:g} MHz: {arguments.clock_source}.** **P "
            f"{source}.** CPU forests, measured in this run on the same folds{_background(rows)}: scikit-learn {versions['sk']} `RandomForestClassifier` and oneDAL "
            f"(scikit-learn-intelex {versions['dal']}, {ONEDAL_BINS} histogram bins per "
            f"feature) with the same trees, depth, features per split and bootstrap; mean fit "
            f"time over the {arguments.folds} folds of the first repeat, each the least of "
            f"{arguments.cpu_timings} timed fits (1 core: CPU time of "
            f"`n_jobs=1`; all: wall time of `n_jobs=-1` on this machine's {os.cpu_count()} "
            f"cores). Speed-up = CPU time / modelled HW time; CPU cores replaced = the fastest "
            f"single-core time / modelled HW time.",
            "",
            markdown(header, body),
            "",
            "## Thesis mode: training time (same clock and P)",
            "",
            markdown(*thesis_time_table(rows)),
            "",
        ]
    lines += _histogram_section(rows)
    lines += [f"Thesis columns (rep. = reported): {CITATION}; {SETUP}.", "",
              f"Run time: {seconds:.0f} s. Method and assumptions: docs/compare.md."]
    return "\n".join(lines) + "\n"


def plot(rows, path):
    """What a reader compares, per dataset: forest mode's accuracy difference to each CPU
    forest with its standard error, and its speed-ups against each at the clock and P of
    the row."""
    plt = pyplot()
    names = [row["dataset"] for row in rows]
    x = np.arange(len(rows))
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(max(8, 1.6 * len(rows) + 3), 9))
    bars = [("HW forest - scikit-learn", "sk", "tab:orange"),
            ("HW forest - oneDAL", "dal", "tab:purple")]
    width = 0.8 / len(bars)
    for index, (label, trainer, colour) in enumerate(bars):
        key = f"acc_forest_minus_{trainer}"
        values = [row[key] for row in rows]
        errors = [np.nan if row[key + "_se"] is None else row[key + "_se"] for row in rows]
        top.bar(x + (index - (len(bars) - 1) / 2) * width, values, width, yerr=errors,
                label=label, color=colour, capsize=3)
    top.axhline(0, color="black", linewidth=1)
    top.set_xticks(x, names)
    top.set_ylabel("accuracy difference, points\n(mean, error bar: 1 s.e.)")
    top.legend(fontsize=8, loc="best")
    top.set_title(f"Forest-mode accuracy against the CPU forests,\nstratified {rows[0]['folds']}-fold "
                  f"CV x {rows[0]['repeats']} repeats, same folds"
                  + ("" if rows[0]["repeats"] > 1 else " (one repeat: no standard error)"))
    timed = [row for row in rows if "hw_forest_ms" in row]
    if not timed:
        bottom.set_axis_off()
    else:
        speed = [("vs scikit-learn, 1 core", "speedup_vs_sklearn_1core", "tab:orange"),
                 ("vs oneDAL, 1 core", "speedup_vs_onedal_1core", "tab:purple"),
                 ("vs the fastest CPU forest, all cores", "speedup_vs_fastest_cpu_allcores", "tab:gray"),
                 ("thesis (reported, vs scikit-learn)", "thesis_speedup", "tab:red")]
        width = 0.8 / len(speed)
        xt = np.arange(len(timed))
        for index, (label, key, colour) in enumerate(speed):
            values = [np.nan if row.get(key) is None else row[key] for row in timed]
            positions = xt + (index - (len(speed) - 1) / 2) * width
            bottom.bar(positions, values, width, label=label, color=colour)
            for position, value in zip(positions, values):
                if not np.isnan(value):
                    bottom.text(position, value * 1.08, f"{value:,.1f}" if value < 10 else f"{value:,.0f}",
                                ha="center", va="bottom", fontsize=6.5, rotation=90)
        bottom.axhline(1, color="black", linewidth=1)
        bottom.set_yscale("log")
        highest = max(max(row.get(key) or 1 for row in timed) for _, key, _ in speed)
        bottom.set_ylim(top=highest * 15)
        bottom.set_xticks(xt, [f"{row['dataset']}\nP = {row['pe_count']}, {row['clock_mhz']:g} MHz"
                               + ("\nhistogram PE" if row.get("hw_engine") == "histogram" else "")
                               for row in timed])
        bottom.set_ylabel("training speed-up (log; 1 = as fast)")
        bottom.legend(fontsize=8, ncol=2, loc="upper center")
        bottom.set_title("Forest mode: modelled HW time vs CPU fit times measured in this run")
    figure.tight_layout()
    save_plot(figure, path, dpi=110)
