"""The side-by-side comparison's outputs: the Markdown tables and the plot."""

import numpy as np

from sw.experiments.baselines.methods import FOREST_TREES, METHODS
from sw.experiments.report import markdown, pyplot, save_plot

__all__ = ["accuracy_table", "time_table", "render", "plot"]


def _cell(row):
    if row["minus_hw_forest_se"] is None:
        return f"{row['accuracy']:.1f}" if row["method"] == "hw_forest" else f"{row['minus_hw_forest']:+.2f}"
    return f"{row['minus_hw_forest']:+.2f} ({row['minus_hw_forest_se']:.2f})"


def _grid(rows):
    names = list(dict.fromkeys(row["dataset"] for row in rows))
    keys = list(dict.fromkeys(row["method"] for row in rows))
    return names, keys, {(row["dataset"], row["method"]): row for row in rows}


def _table(rows, cell):
    """Methods x datasets, each cell ``cell(row)`` of that method's row on that dataset."""
    names, keys, cells = _grid(rows)
    return (["method", *names],
            [[METHODS[key][0], *(cell(cells[(name, key)]) for name in names)] for key in keys])


def _accuracy_cell(row):
    text = f"{row['accuracy']:.1f} ± {row['accuracy_sd']:.1f}"
    return text if row["method"] == "hw_forest" else f"{text}; {_cell(row)}"


def _time_cell(row):
    if row["hw_modelled_ms"] is not None:
        return f"{row['hw_modelled_ms']:.2f} modelled HW (golden model on the CPU {row['fit_ms']:,.0f})"
    return f"{row['fit_ms']:,.1f}"


def accuracy_table(rows):
    """Methods x datasets: accuracy mean ± sd, and the difference to the hardware forest in
    points with its standard error."""
    return _table(rows, _accuracy_cell)


def time_table(rows):
    """Methods x datasets: mean single-core fit time (ms); the hardware forest's modelled
    training time beside its golden model's CPU time where the main comparison has run."""
    return _table(rows, _time_cell)


def render(rows, arguments, seconds):
    lines = [
        "# The host library's methods beside the hardware forest",
        "",
        f"Stratified {arguments.folds}-fold CV repeated {arguments.repeats} times (seeds "
        f"{arguments.seed}-{arguments.seed + arguments.repeats - 1}), the same folds and "
        f"per-fold seeds for every method. Forests: {FOREST_TREES} trees. ELMs and logistic "
        f"classifiers see standardised features (scaler fitted on the training fold); trees, "
        f"forests and naive Bayes the raw features. Each cell: accuracy % mean ± sd over all "
        f"folds; then the difference to the hardware forest in points and its standard error "
        f"(sd of the repeats' mean differences / sqrt(repeats)).",
        "",
        markdown(*accuracy_table(rows)),
        "",
        "Mean fit time per fold, ms: CPU time of one fit held to one thread. The hardware "
        "forest's cell gives the main comparison's modelled training time on the "
        "accelerator (`results/compare.csv`, at its clock and P) where it has run, beside "
        "the golden model's CPU time (a simulation of the hardware, not a trainer).",
        "",
        markdown(*time_table(rows)),
        "",
        f"Run time: {seconds:.0f} s. Method and reading: docs/baselines.md.",
    ]
    return "\n".join(lines) + "\n"


def plot(rows, path):
    """Per dataset: every method's accuracy difference to the hardware forest (error bar:
    one standard error), and its fit time (log); one colour per method in both."""
    plt = pyplot()
    names, keys, cells = _grid(rows)
    others = [key for key in keys if key != "hw_forest"]
    palette = plt.get_cmap("tab20")
    colour = {key: "black" if key == "hw_forest" else palette(index % 20)
              for index, key in enumerate(keys)}
    x = np.arange(len(names))
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(max(9, 1.9 * len(names) + 4), 10))
    width = 0.85 / max(1, len(others))
    for index, key in enumerate(others):
        positions = x + (index - (len(others) - 1) / 2) * width
        values = [cells[(name, key)]["minus_hw_forest"] for name in names]
        errors = [np.nan if cells[(name, key)]["minus_hw_forest_se"] is None
                  else cells[(name, key)]["minus_hw_forest_se"] for name in names]
        top.bar(positions, values, width, yerr=errors, capsize=2, color=colour[key])
    top.axhline(0, color="black", linewidth=1)
    top.set_xticks(x, names)
    top.set_ylabel("accuracy - HW forest, points\n(error bar: 1 s.e.)")
    top.set_title("Accuracy difference to the hardware forest (same folds)")
    width = 0.85 / len(keys)
    for index, key in enumerate(keys):
        positions = x + (index - (len(keys) - 1) / 2) * width
        values = [cells[(name, key)]["fit_ms"] for name in names]
        label = METHODS[key][0] + (" (its golden model on the CPU)" if key == "hw_forest" else "")
        bottom.bar(positions, values, width, color=colour[key], label=label)
        modelled = [cells[(name, key)]["hw_modelled_ms"] for name in names]
        if key == "hw_forest" and any(value is not None for value in modelled):
            bottom.scatter(positions, [np.nan if value is None else value for value in modelled],
                           marker="*", s=110, color="red", zorder=3,
                           label="HW forest, modelled training time on the accelerator")
    bottom.set_yscale("log")
    bottom.set_xticks(x, names)
    bottom.set_ylabel("fit time per fold, ms (log; one core)")
    bottom.set_title("Fit time")
    figure.legend(*bottom.get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=8)
    figure.tight_layout(rect=(0, 0.09, 1, 1))
    save_plot(figure, path)
