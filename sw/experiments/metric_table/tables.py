"""Output of the Table 3.1 run: the CSV and Markdown tables of one run, and the summary
over repeated seeds."""

import csv
from pathlib import Path

import numpy as np

from sw.experiments.metric_table.thesis import APPROACHES, DATASET_TITLES, THESIS_TABLE_3_1
from sw.methods.metric.mining import MINERS, THESIS_NAMES

__all__ = ["write_csv", "write_markdown", "summarise_seeds", "write_seed_summary"]


def _same_kc_ratio(non, hier):
    """Non-hierarchical fit time at the hierarchical model's (k, c) / hierarchical time."""
    if not (non and hier and non.grid_seconds and hier.fit_seconds):
        return None
    seconds = non.grid_seconds.get((hier.k, hier.c))
    return seconds / hier.fit_seconds if seconds else None


def _fmt(value, digits=2):
    return "–" if value is None else f"{value:.{digits}f}"


def _solver_mark(result):
    if result.model is None:
        return ""
    return {"sdp": "", "projected_gradient": "†"}.get(result.solver, "‡")


def write_csv(results, path):
    """One row per (dataset, approach, method) with ours, thesis, kNN and LMNN numbers."""
    by_dataset = {}
    for result in results:
        by_dataset.setdefault(result.dataset, []).append(result)
    fields = ["dataset", "approach", "method", "thesis_name", "accuracy_percent",
              "thesis_accuracy_percent", "fit_seconds", "thesis_seconds",
              "validation_accuracy_percent", "k", "c", "solver", "n_triplets",
              "knn_accuracy_percent", "lmnn_accuracy_percent", "lmnn_fit_seconds",
              "lmnn_seconds_over_ours", "non_hierarchical_seconds_over_hierarchical",
              "non_hierarchical_seconds_same_k_c_over_hierarchical", "note"]
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for dataset, rows in by_dataset.items():
            knn = next((r for r in rows if r.method.startswith("kNN")), None)
            peer = next((r for r in rows if r.method.startswith("metric-learn")), None)
            for r in rows:
                thesis = THESIS_TABLE_3_1.get((dataset, r.approach), {}).get(r.method,
                                                                            (None, None))
                partner = None
                if r.approach == "hierarchical":
                    partner = next((p for p in rows if p.method == r.method
                                    and p.approach == "non-hierarchical"), None)
                speedup = (partner.fit_seconds / r.fit_seconds
                           if partner and partner.fit_seconds and r.fit_seconds else None)
                ratio = (peer.fit_seconds / r.fit_seconds
                         if peer and peer.fit_seconds and r.fit_seconds
                         and r.method in MINERS else None)
                writer.writerow({
                    "dataset": dataset, "approach": r.approach, "method": r.method,
                    "thesis_name": THESIS_NAMES.get(r.method, ""),
                    "accuracy_percent": _fmt(r.accuracy), "thesis_accuracy_percent":
                    _fmt(thesis[0]), "fit_seconds": _fmt(r.fit_seconds, 3),
                    "thesis_seconds": _fmt(thesis[1]),
                    "validation_accuracy_percent": _fmt(r.validation_accuracy),
                    "k": r.k, "c": r.c, "solver": r.solver, "n_triplets": r.n_triplets,
                    "knn_accuracy_percent": _fmt(knn.accuracy if knn else None),
                    "lmnn_accuracy_percent": _fmt(peer.accuracy if peer else None),
                    "lmnn_fit_seconds": _fmt(peer.fit_seconds if peer else None, 3),
                    "lmnn_seconds_over_ours": _fmt(ratio),
                    "non_hierarchical_seconds_over_hierarchical": _fmt(speedup),
                    "non_hierarchical_seconds_same_k_c_over_hierarchical":
                        _fmt(_same_kc_ratio(partner, r) if partner else None),
                    "note": r.note})


def write_markdown(results, path, settings):
    """Table 3.1 layout: per dataset and approach, ours vs thesis accuracy and time."""
    lines = ["# Table 3.1 reproduced: triplet mining for large-margin metric learning", "",
             f"Settings: {settings}", "",
             "Accuracy = test accuracy (%) of kNN in the learned metric; time = seconds of "
             "one `fit` with the (k, c) chosen on validation, measured on this machine "
             "(thesis: its own machine). † = fast projected-gradient solver (SDP too large "
             "for cvxpy); no mark = SDP through cvxpy/Clarabel; ‡ = hierarchical, spheres "
             "solved by SDP and/or projected gradient as their size allows. – = not run.", ""]
    by_dataset = {}
    for result in results:
        by_dataset.setdefault(result.dataset, []).append(result)
    for dataset, rows in by_dataset.items():
        miners = [m for m in MINERS if any(r.method == m for r in rows)]
        header = "| approach | row | " + " | ".join(THESIS_NAMES[m] for m in miners) + " |"
        lines += [f"## {DATASET_TITLES.get(dataset, dataset)}", "", header,
                  "|---|---|" + "---|" * len(miners)]
        for approach in APPROACHES:
            cells = {r.method: r for r in rows if r.approach == approach}
            if not cells:
                continue
            thesis = THESIS_TABLE_3_1.get((dataset, approach), {})

            def line(label, values):
                return f"| {approach} | {label} | " + " | ".join(values) + " |"
            lines.append(line("accuracy % (ours)", [
                _fmt(cells[m].accuracy) + _solver_mark(cells[m]) if m in cells else "–"
                for m in miners]))
            lines.append(line("accuracy % (thesis)", [_fmt(thesis.get(m, (None,))[0])
                                                      for m in miners]))
            lines.append(line("time s (ours)", [_fmt(cells[m].fit_seconds, 3) if m in cells
                                                else "–" for m in miners]))
            lines.append(line("time s (thesis)", [_fmt(thesis.get(m, (None, None))[1])
                                                  for m in miners]))
            lines.append(line("chosen k, c", [f"{cells[m].k}, {cells[m].c:g}"
                                              if m in cells and cells[m].model is not None
                                              else "–" for m in miners]))
        non = {r.method: r for r in rows if r.approach == "non-hierarchical"}
        hier = {r.method: r for r in rows if r.approach == "hierarchical"}
        if non and hier:
            lines.append("| speed-up | non-hier. time / hier. time | " + " | ".join(
                _fmt(non[m].fit_seconds / hier[m].fit_seconds)
                if m in non and m in hier and non[m].fit_seconds and hier[m].fit_seconds
                else "–" for m in miners) + " |")
            lines.append("| speed-up | same (k, c): non-hier. time at hier.'s (k, c) / hier. time | "
                         + " | ".join(_fmt(_same_kc_ratio(non.get(m), hier.get(m)))
                                      for m in miners) + " |")
        lines.append("")
        knn = next((r for r in rows if r.method.startswith("kNN")), None)
        peer = next((r for r in rows if r.method.startswith("metric-learn")), None)
        ours = [r for r in rows if r.method in MINERS and r.model is not None]
        if knn:
            lines.append(f"- Euclidean kNN (k={knn.k}): test accuracy {_fmt(knn.accuracy)} %")
        if peer:
            lines.append(f"- metric-learn LMNN (n_neighbors={peer.k} chosen on validation): "
                         f"test accuracy {_fmt(peer.accuracy)} %, fit "
                         f"{_fmt(peer.fit_seconds, 3)} s {peer.note}")
        if ours:
            best = max(ours, key=lambda r: (r.validation_accuracy, -r.fit_seconds))
            line = (f"- our best by validation: {THESIS_NAMES[best.method]} "
                    f"{best.approach} (k={best.k}, c={best.c:g}): test accuracy "
                    f"{_fmt(best.accuracy)} %, fit {_fmt(best.fit_seconds, 3)} s")
            if peer and peer.fit_seconds:
                line += (f"; LMNN time / ours = {peer.fit_seconds / best.fit_seconds:.2f}; "
                         f"accuracy difference ours − LMNN = "
                         f"{best.accuracy - peer.accuracy:+.2f} points")
            lines.append(line)
            top = max(ours, key=lambda r: r.accuracy)
            lines.append(f"- our best by test accuracy: {THESIS_NAMES[top.method]} "
                         f"{top.approach}: {_fmt(top.accuracy)} %")
        lines.append("")
    Path(path).write_text("\n".join(lines))


def _spread(values):
    """(mean, sample standard deviation, min, max, count) of the non-missing values."""
    values = np.asarray([v for v in values if v is not None], dtype=float)
    if values.size == 0:
        return None
    std = float(values.std(ddof=1)) if values.size > 1 else 0.0
    return float(values.mean()), std, float(values.min()), float(values.max()), values.size


def _pm(stats, digits=2):
    return "–" if stats is None else f"{stats[0]:.{digits}f} ± {stats[1]:.{digits}f}"


def summarise_seeds(results_by_seed):
    """Mean and spread over seeds of accuracy, fit time and time ratios.

    ``results_by_seed`` maps seed -> list of Result.  Returns one dict per (dataset,
    approach, method) with ``accuracy``, ``fit_seconds`` and (hierarchical rows)
    ``ratio``: the non-hierarchical / hierarchical fit-time ratio computed within each
    seed, and ``ratio_same_kc``: the same with the non-hierarchical fit at the
    hierarchical model's (k, c); each as ``(mean, std, min, max, n)`` or None.
    """
    rows = {}
    for seed, results in results_by_seed.items():
        for r in results:
            if r.fit_seconds is None and r.approach != "-":
                continue                      # not run for this seed
            entry = rows.setdefault((r.dataset, r.approach, r.method),
                                    {"accuracy": [], "fit_seconds": [], "ratio": [],
                                     "ratio_same_kc": []})
            entry["accuracy"].append(r.accuracy)
            entry["fit_seconds"].append(r.fit_seconds)
            if r.approach == "hierarchical":
                partner = next((p for p in results if p.dataset == r.dataset
                                and p.method == r.method and p.approach == "non-hierarchical"
                                and p.fit_seconds), None)
                if partner and r.fit_seconds:
                    entry["ratio"].append(partner.fit_seconds / r.fit_seconds)
                same = _same_kc_ratio(partner, r)
                if same is not None:
                    entry["ratio_same_kc"].append(same)
    return [{"dataset": d, "approach": a, "method": m,
             **{key: _spread(values) for key, values in entry.items()}}
            for (d, a, m), entry in rows.items()]


def write_seed_summary(results_by_seed, markdown_path, csv_path, settings):
    """Markdown and CSV of :func:`summarise_seeds`."""
    summary = summarise_seeds(results_by_seed)
    seeds = list(results_by_seed)
    lines = ["# Table 3.1 over repeated splits", "", f"Settings: {settings}", "",
             f"Seeds {seeds}: each seed draws its own split (Iris, MNIST: the stratified "
             f"70/15/15 split; ORL: which two of images 7-10 per subject are validation) and "
             f"its own sampling. Cells: mean ± sample standard deviation over seeds "
             f"(n = number of seeds in which the cell ran). Speed-up = non-hierarchical fit "
             f"time / hierarchical fit time of the models chosen on validation, computed "
             f"within each seed, then mean ± sd [min–max]; at the same (k, c): the "
             f"non-hierarchical fit with the hierarchical model's (k, c) (from the "
             f"validation grid, no extra fit).", ""]
    for dataset in dict.fromkeys(row["dataset"] for row in summary):
        rows = [row for row in summary if row["dataset"] == dataset]
        lines += [f"## {DATASET_TITLES.get(dataset, dataset)}", "",
                  "| approach | method | n | test accuracy % | fit time s | speed-up non-hier./hier. "
                  "| speed-up at the same (k, c) |",
                  "|---|---|---|---|---|---|---|"]
        for row in rows:
            name = THESIS_NAMES.get(row["method"], row["method"])
            ratio = row["ratio"]
            texts = ["–" if r is None else f"{_pm(r)} [{r[2]:.2f}–{r[3]:.2f}]"
                     for r in (ratio, row["ratio_same_kc"])]
            n = row["accuracy"][4] if row["accuracy"] else 0
            lines.append(f"| {row['approach']} | {name} | {n} | {_pm(row['accuracy'])} | "
                         f"{_pm(row['fit_seconds'], 3)} | {texts[0]} | {texts[1]} |")
        lines.append("")
        differences = []
        for results in results_by_seed.values():
            ours = [r for r in results if r.dataset == dataset and r.method in MINERS
                    and r.model is not None]
            peer = next((r for r in results if r.dataset == dataset
                         and r.method.startswith("metric-learn")), None)
            if ours and peer:
                best = max(ours, key=lambda r: (r.validation_accuracy, -r.fit_seconds))
                differences.append(best.accuracy - peer.accuracy)
        if differences:
            stats = _spread(differences)
            lines += [f"- our best by validation − LMNN, test accuracy: {_pm(stats)} points "
                      f"[{stats[2]:+.2f} to {stats[3]:+.2f}]; at least as accurate in "
                      f"{sum(d >= 0 for d in differences)} of {len(differences)} seeds", ""]
    Path(markdown_path).write_text("\n".join(lines))
    fields = ["dataset", "approach", "method", "n_seeds", "accuracy_mean", "accuracy_std",
              "fit_seconds_mean", "fit_seconds_std", "speedup_mean", "speedup_std",
              "speedup_min", "speedup_max", "speedup_same_k_c_mean", "speedup_same_k_c_std",
              "speedup_same_k_c_min", "speedup_same_k_c_max"]
    with open(csv_path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for row in summary:
            accuracy, seconds, ratio = row["accuracy"], row["fit_seconds"], row["ratio"]
            writer.writerow({
                "dataset": row["dataset"], "approach": row["approach"],
                "method": row["method"], "n_seeds": accuracy[4] if accuracy else 0,
                "accuracy_mean": _fmt(accuracy and accuracy[0]),
                "accuracy_std": _fmt(accuracy and accuracy[1]),
                "fit_seconds_mean": _fmt(seconds and seconds[0], 3),
                "fit_seconds_std": _fmt(seconds and seconds[1], 3),
                "speedup_mean": _fmt(ratio and ratio[0]), "speedup_std": _fmt(ratio and ratio[1]),
                "speedup_min": _fmt(ratio and ratio[2]), "speedup_max": _fmt(ratio and ratio[3]),
                **{f"speedup_same_k_c_{key}": _fmt(same and same[i]) for i, key in
                   enumerate(("mean", "std", "min", "max")) for same in [row["ratio_same_kc"]]}})
