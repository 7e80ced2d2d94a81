"""The comparison's outputs: the Markdown report (accuracy and training-time tables), and
the plot of accuracy and speed-up per dataset; the CSV is :func:`sw.experiments.report.write_csv`
of the rows.
"""

import math
import os

import numpy as np

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
    return (f"{row[f'sim_{mode}_cycles_per_tree']:,.0f} ± {row[f'sim_{mode}_cycles_per_tree_sd']:,.0f}"
            f" ({row[f'sim_{mode}_trees']})")


def accuracy_table(rows):
    """Header and rows of the accuracy table (strings)."""
    header = ["dataset", "rows x feat", "HW forest %", "sklearn %", "HW - sklearn pp (s.e.)",
              "per repeat pp", "HW thesis mode %", "sklearn 250xd4 %", "thesis HW % (rep.)",
              "thesis sklearn % (rep.)"]
    body = [[row["dataset"], f"{row['rows']} x {row['features']}", _mean_sd(row, "acc_hw_forest"),
             _mean_sd(row, "acc_sk_forest"),
             f"{row['acc_forest_minus_sk']:+.2f} ({_number(row['acc_forest_minus_sk_se'], 2)})",
             " ".join(f"{float(value):+.1f}"
                      for value in row["acc_forest_minus_sk_repeats"].split()),
             _mean_sd(row, "acc_hw_thesis"), _mean_sd(row, "acc_sk_thesis"),
             _number(row["thesis_hw_acc"]), _number(row["thesis_sk_acc"], 2)] for row in rows]
    return header, body


def time_table(rows):
    """Header and rows of the training-time table (strings); empty without simulation."""
    rows = [row for row in rows if "hw_forest_ms" in row]
    header = ["dataset", "P", "HW forest ms", "sklearn 1 core ms", "sklearn all cores ms",
              "speed-up 1 / all", "HW thesis ms", "sklearn 250xd4 1 core ms", "speed-up 1 / all",
              "thesis rep. HW / sklearn ms", "rep. speed-up", "cycles/tree forest ± sd (k)",
              "cycles/tree thesis ± sd (k)", "RTL = model"]
    body = []
    for row in rows:
        thesis = ("-" if row["thesis_hw_ms"] is None else
                  f"{row['thesis_hw_ms']:.1f} / {row['thesis_sk_ms']:,.0f}")
        body.append([
            row["dataset"], str(row["pe_count"]), f"{row['hw_forest_ms']:.2f}",
            f"{row['fit_sk_forest_1_ms']:.0f}", f"{row['fit_sk_forest_all_ms']:.0f}",
            f"{_speedup(row['speedup_forest_1'])} / {_speedup(row['speedup_forest_all'])}",
            f"{row['hw_thesis_ms']:.2f}", f"{row['fit_sk_thesis_1_ms']:.0f}",
            f"{_speedup(row['speedup_thesis_1'])} / {_speedup(row['speedup_thesis_all'])}",
            thesis, _speedup(row["thesis_speedup"]),
            _cycles(row, "forest"), _cycles(row, "thesis"),
            "yes" if row["rtl_equals_model"] else "NO"])
    return header, body


def render(rows, arguments, seconds):
    """The Markdown report (``results/compare.md``)."""
    depth = "unlimited" if arguments.depth is None else arguments.depth
    lines = [
        "# Accelerator vs scikit-learn vs the thesis",
        "",
        f"Stratified {arguments.folds}-fold CV repeated {arguments.repeats} times (shuffle and "
        f"forest seeds {_seed_range(arguments)}; the same folds for every method); accuracy "
        f"mean ± standard deviation over all {arguments.repeats * arguments.folds} folds; "
        f"HW - sklearn: mean difference and its standard error (s.e. = standard deviation of "
        f"the repeats' {arguments.folds}-fold means / sqrt(repeats)), with each repeat's "
        f"mean beside it. Forest mode: {arguments.trees} trees, sqrt features per node, full "
        f"bootstrap, depth {depth}; "
        f"scikit-learn `RandomForestClassifier` with the same. Thesis mode: 250 trees, 16-row "
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
                  "estimated per dataset (sw/experiments/pe_fit.py, Yosys proxy, not Quartus)")
        lines += [
            f"Modelled HW training time = (load + presort + trees x cycles per tree / P) / "
            f"{clock:g} MHz; cycles simulated in Verilator on a sample of k trees of fold 0 "
            f"(first repeat) "
            f"(one PE), P {source}, {clock:g} MHz is the thesis's clock, not a timing result. "
            f"scikit-learn: mean fit time over the {arguments.folds} folds of the first repeat, "
            f"measured in this run with nothing else running (1 core: CPU "
            f"time of `n_jobs=1`; all cores: wall time of `n_jobs=-1`, {os.cpu_count()} cores). "
            f"Speed-up = scikit-learn time / modelled HW time.",
            "",
            markdown(header, body),
            "",
        ]
    lines += [f"Thesis columns (rep. = reported): {CITATION}; {SETUP}.", "",
              f"Run time: {seconds:.0f} s. Method and assumptions: docs/compare.md."]
    return "\n".join(lines) + "\n"


def plot(rows, path):
    """Accuracy and speed-up per dataset: hardware vs scikit-learn vs the thesis."""
    plt = pyplot()
    names = [row["dataset"] for row in rows]
    x = np.arange(len(rows))
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(max(8, 1.6 * len(rows) + 3), 9))
    bars = [("HW forest mode", "acc_hw_forest", "tab:blue"),
            ("scikit-learn (same params)", "acc_sk_forest", "tab:orange"),
            ("HW thesis mode", "acc_hw_thesis", "tab:green"),
            ("scikit-learn 250 x depth 4", "acc_sk_thesis", "tab:olive"),
            ("thesis HW (reported)", "thesis_hw_acc", "tab:red"),
            ("thesis scikit-learn (reported)", "thesis_sk_acc", "tab:pink")]
    width = 0.8 / len(bars)
    for index, (label, key, colour) in enumerate(bars):
        values = [np.nan if row.get(key) is None else row[key] for row in rows]
        errors = [row[key + "_sd"] for row in rows] if key + "_sd" in rows[0] else None
        top.bar(x + (index - (len(bars) - 1) / 2) * width, values, width, yerr=errors,
                label=label, color=colour, capsize=2)
    top.set_xticks(x, names)
    top.set_ylabel("accuracy % (mean ± sd over all folds)")
    top.set_ylim(0, 128)
    top.set_yticks(range(0, 101, 20))
    top.legend(fontsize=8, ncol=3, loc="upper center")
    top.set_title(f"Accuracy, stratified {rows[0]['folds']}-fold CV x {rows[0]['repeats']} repeats "
                  f"(reported: thesis Table 4.2)")
    speed = [("HW forest vs scikit-learn 1 core", "speedup_forest_1", "tab:blue"),
             ("HW forest vs scikit-learn all cores", "speedup_forest_all", "tab:cyan"),
             ("HW thesis mode vs scikit-learn 250 x d4, 1 core", "speedup_thesis_1", "tab:green"),
             ("thesis (reported)", "thesis_speedup", "tab:red")]
    width = 0.8 / len(speed)
    highest = 50
    for index, (label, key, colour) in enumerate(speed):
        values = [np.nan if row.get(key) is None else row[key] for row in rows]
        positions = x + (index - (len(speed) - 1) / 2) * width
        bottom.bar(positions, values, width, label=label, color=colour)
        for position, value in zip(positions, values):
            if not np.isnan(value):
                highest = max(highest, value)
                bottom.text(position, value * 1.08, f"{value:,.0f}", ha="center", va="bottom",
                            fontsize=6.5, rotation=90)
    bottom.axhline(50, color="black", linestyle="--", linewidth=1)
    bottom.text(x[0] - 0.45, 50, "50x", va="bottom", ha="left", fontsize=8)
    bottom.set_yscale("log")
    bottom.set_ylim(top=highest * 15)
    bottom.set_xticks(x, [f"{row['dataset']}\nP = {row.get('pe_count', '-')}" for row in rows])
    bottom.set_ylabel("training speed-up (log)")
    bottom.legend(fontsize=8, ncol=2, loc="upper center")
    bottom.set_title("Modelled HW training time vs scikit-learn fit time (measured here)")
    figure.tight_layout()
    save_plot(figure, path, dpi=110)
