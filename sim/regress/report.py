"""The regression's report: a JSON record and a Markdown page, and comparing two reports.

The JSON holds every case (its drawn values and its verdict), the failures with each one's
seed and the exact command that reruns it alone, the corners the cases reached, and the
times. Two runs of the same command (on any cluster, with any number of workers) give
the same report except for the times and the cluster: :func:`comparable` drops those,
and ``python -m sim.regress.report A.json B.json`` says whether two reports agree.
"""

import json
import sys
from collections import Counter
from pathlib import Path

from sim.regress.cases import describe, shape_parameters

__all__ = ["rerun_command", "corners", "summarise", "write_report", "comparable", "main"]

#: Keys of a report that depend on the machine and the cluster, not on the cases.
_VOLATILE = ("cluster", "command", "batch_size", "wall_seconds", "build_seconds", "total_seconds",
             "cases_per_second", "simulated_cycles_per_second")


def rerun_command(case):
    """The command that reruns ``case`` alone."""
    return f"python -m sim.regress --case {case['seed']} --shape {case['shape']}"


def corners(cases):
    """How many cases reached each corner of the drawn ranges (name -> count)."""
    counts = Counter()
    for case in cases:
        build, p = shape_parameters(case["shape"]), case["params"]
        checks = {
            "one row": case["rows"] == 1, "all rows of the build": case["rows"] == build["max_rows"],
            "one feature": case["features"] == 1,
            "all features of the build": case["features"] == build["feature_capacity"],
            "two classes": case["classes"] == 2, "all classes of the build": case["classes"] == build["classes"],
            "one class present": case["labels"] == "one_class", "constant features": case["code_top"] == 0,
            "codes of all code_bits": case["code_top"] == (1 << build["code_bits"]) - 1,
            "thesis mode": p["thesis_mode"], "no bootstrap": not p["bootstrap"],
            "bootstrap of one draw": p["bootstrap"] and p["max_samples"] == 1,
            "bootstrap of max_samples": p["bootstrap"] and p["max_samples"] == build["max_samples"],
            "thesis sparse fill full": p["thesis_mode"] and p["bootstrap"]
            and p["max_samples"] == build.get("sparse_rows"),
            "thesis one draw past the sparse fill": p["thesis_mode"] and p["bootstrap"]
            and p["max_samples"] == build.get("sparse_rows", 0) + 1,
            "no depth limit": p["max_depth"] is None, "depth limit 0": p["max_depth"] == 0,
            "depth limit max_depth": p["max_depth"] == build["max_depth"],
            "one feature per split": p["features_per_split"] == 1,
            "all features per split": p["features_per_split"] == case["features"],
            "min_samples_split = rows": p["min_samples_split"] == case["rows"],
            "min_samples_leaf = rows/2 + 1": p["min_samples_leaf"] == case["rows"] // 2 + 1,
            "one tree": case["trees"] == 1, "max_trees trees": case["trees"] == build["max_trees"],
            "no stalls": case["idle_probability"] == 0 and case["stall_probability"] == 0,
            "90 % idle input": case["idle_probability"] == 0.9,
            "90 % stalled output": case["stall_probability"] == 0.9,
        }
        counts.update(name for name, hit in checks.items() if hit)
        counts[f"shape {case['shape']}"] += 1
    return dict(sorted(counts.items()))


def summarise(cases, verdicts, *, run_seed, builds, cluster, command, batch_size, build_seconds,
              wall_seconds):
    """The report (a dict) of ``cases`` and their ``verdicts`` (same order)."""
    records, failures = [], []
    for case, verdict in zip(cases, verdicts):
        records.append({**case, "verdict": verdict})
        if not verdict["passed"]:
            failures.append({"index": case.get("index"), "seed": case["seed"], "shape": case["shape"],
                             "case": describe(case), "error": verdict["error"],
                             "rerun": rerun_command(case)})
    cycles = sum(verdict.get("simulated_cycles", 0) for verdict in verdicts)
    return {
        "command": command, "run_seed": run_seed, "cases_requested": len(cases),
        "shapes": {name: {key: build[key] for key in ("design", "parameters", "toplevel")}
                   for name, build in sorted(builds.items())},
        "cluster": cluster, "batch_size": batch_size,
        "passed": len(cases) - len(failures), "failed": len(failures),
        "outcomes": dict(Counter(verdict.get("outcome", "failed") for verdict in verdicts)),
        "simulated_cycles": cycles, "corners": corners(cases), "failures": failures,
        "build_seconds": round(build_seconds, 1), "wall_seconds": round(wall_seconds, 1),
        "total_seconds": round(build_seconds + wall_seconds, 1),
        "cases_per_second": round(len(cases) / wall_seconds, 3) if wall_seconds else None,
        "simulated_cycles_per_second": round(cycles / wall_seconds) if wall_seconds else None,
        "cases": records,
    }


def _markdown(report):
    lines = [
        "# Random regression of the forest trainer against the golden model", "",
        f"`{report['command']}`", "",
        "| cases | passed | failed | forests equal to the model / stopped on tree_error as expected "
        "| build s | run s | cases/s | simulated cycles/s | cluster |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| {report['cases_requested']} | {report['passed']} | {report['failed']} | "
        f"{report['outcomes'].get('forest', 0)} / {report['outcomes'].get('tree_error', 0)} | "
        f"{report['build_seconds']} | {report['wall_seconds']} | {report['cases_per_second']} | "
        f"{report['simulated_cycles_per_second']} | {report['cluster']['workers']} workers at "
        f"{report['cluster']['scheduler']} |", "",
    ]
    if report["failures"]:
        lines += ["## Failures", "", "| case | seed | shape | what | error | rerun |", "|---|---|---|---|---|---|"]
        for failure in report["failures"]:
            error = failure["error"].replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {failure['index']} | {failure['seed']} | {failure['shape']} | {failure['case']} "
                         f"| {error} | `{failure['rerun']}` |")
        lines.append("")
    lines += ["## Corners reached", "", "| corner | cases |", "|---|---|"]
    lines += [f"| {name} | {count} |" for name, count in report["corners"].items()]
    lines += ["", "## Build shapes", "", "| shape | model | parameters |", "|---|---|---|"]
    for name, shape in report["shapes"].items():
        text = ", ".join(f"{key}={value}" for key, value in sorted(shape["parameters"].items()))
        lines.append(f"| {name} | `{shape['toplevel']}` | {text} |")
    return "\n".join(lines) + "\n"


def write_report(report, out):
    """Write ``out/regress.json`` and ``out/regress.md``; return the two paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    json_path, markdown_path = out / "regress.json", out / "regress.md"
    json_path.write_text(json.dumps(report, indent=1) + "\n")
    markdown_path.write_text(_markdown(report))
    return json_path, markdown_path


def comparable(report):
    """``report`` without what depends on the machine or the cluster (times, addresses)."""
    if isinstance(report, dict):
        return {key: comparable(value) for key, value in report.items() if key not in _VOLATILE}
    if isinstance(report, list):
        return [comparable(value) for value in report]
    return report


def main(argv=None):
    """``python -m sim.regress.report A.json B.json``: 0 when the two reports agree."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python -m sim.regress.report A.json B.json", file=sys.stderr)
        return 2
    first, second = (comparable(json.loads(Path(path).read_text())) for path in argv)
    if first == second:
        print(f"the reports agree ({first['cases_requested']} cases, {first['failed']} failed)")
        return 0
    differing = sorted(key for key in set(first) | set(second) if first.get(key) != second.get(key))
    print(f"the reports differ in: {', '.join(differing)}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
