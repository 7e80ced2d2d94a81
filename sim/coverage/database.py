"""Merge the coverage databases of several runs and report every bin.

A database (written by :mod:`sim.coverage.collector`, one per simulation run) is JSON:
``{"design", "parameters", "bins": [{"block", "kind", "group", "bin", "hits"}]}``, with
``hits`` None for a stream counter the drivers do not keep. Merging sums the hits of
equal (block, kind, group, bin) over the runs (None + n = n); a bin is hit when its sum
is positive and missed otherwise, unless a proof of :mod:`sim.coverage.proofs` shows it
unreachable: then it is no bin of the list (status ``unreachable``, reported with its
proof, counted apart). A bin hit although proved unreachable is a contradiction and an
error.
"""

import json
from pathlib import Path

from sim.coverage.bins import CASE_BINS, FSM_MEANINGS, STREAM_BINS, UNSAMPLED

__all__ = ["load", "merge", "classify", "summary", "markdown_report"]

_KEY = ("block", "kind", "group", "bin")


def load(paths):
    """The databases in ``paths`` (missing files are an error: the run did not write one)."""
    return [json.loads(Path(path).read_text()) for path in paths]


def merge(databases):
    """One list of bins, hits summed over the databases, in order of first appearance."""
    merged = {}
    for database in databases:
        for record in database["bins"]:
            key = tuple(record[name] for name in _KEY)
            hits = record["hits"]
            if key not in merged:
                merged[key] = hits
            elif hits is not None:
                merged[key] = (merged[key] or 0) + hits
    return [{**dict(zip(_KEY, key)), "hits": hits} for key, hits in merged.items()]


def meaning(record):
    """What a bin means (from the catalogue of :mod:`sim.coverage.bins`)."""
    kind = record["kind"]
    if kind == "case":
        return CASE_BINS.get(record["block"], {}).get(record["group"], {}).get(record["bin"], "")
    if kind == "stream":
        role = "sink" if record["group"].endswith("(sink)") else "source"
        return STREAM_BINS[role].get(record["bin"], "")
    return FSM_MEANINGS.get(kind, "")


def classify(records, unreachable=None):
    """Each record with its ``status`` (hit, missed, or unreachable: a key of
    ``unreachable``, (block, kind, group, bin) -> proof record) and ``explanation``."""
    unreachable = unreachable or {}
    out = []
    for record in records:
        hits = record["hits"]
        proof = unreachable.get(tuple(record[name] for name in _KEY))
        if proof and hits:
            raise ValueError(f"{record['block']} {record['kind']} {record['group']!r} {record['bin']!r} "
                             f"was hit {hits} times, but proved unreachable: {proof['statement']}")
        if hits:
            status, reason = "hit", ""
        elif proof:
            status, reason = "unreachable", f"proved: {proof['statement']} ({proof['method']})"
        else:
            status, reason = "missed", UNSAMPLED if hits is None else ""
        out.append({**record, "status": status, "explanation": reason, "meaning": meaning(record)})
    return out


def summary(classified):
    """(block, kind) -> {hit, missed, total (the listed bins), unreachable (not listed)}."""
    table = {}
    for record in classified:
        row = table.setdefault((record["block"], record["kind"]), {"hit": 0, "missed": 0, "unreachable": 0})
        row[record["status"]] += 1
    for row in table.values():
        row["total"] = row["hit"] + row["missed"]
    return table


def _cell(text):
    return str(text).replace("|", "/")


def markdown_report(classified, runs=(), seconds=None, proofs=()):
    """The report: a summary per block and kind, the proofs, then every bin with its hits."""
    lines = ["# Functional coverage", ""]
    if seconds is not None:
        lines += [f"{len(runs)} simulation runs in {seconds:.0f} s.", ""]
    for run in runs:
        lines.append(f"- `{run}`")
    table = summary(classified)
    totals = {name: sum(row[name] for row in table.values()) for name in ("hit", "missed", "unreachable", "total")}
    lines += ["", f"**{totals['hit']} of {totals['total']} bins hit, {totals['missed']} missed** "
                  f"({totals['unreachable']} more proved unreachable, not listed).", "",
              "| block | kind | bins | hit | missed | proved unreachable |", "|---|---|---|---|---|---|"]
    for (block, kind), row in table.items():
        lines.append(f"| {block} | {kind} | {row['total']} | {row['hit']} | {row['missed']} | {row['unreachable']} |")
    if proofs:
        lines += ["", "## Proofs (sim.coverage.proofs)", "", "| statement | status | method | seconds |",
                  "|---|---|---|---|"]
        lines += [f"| {_cell(p['statement'])} | {p['status']} | {p['method']} | "
                  f"{'cached' if p.get('cached') else p['seconds']} |" for p in proofs]
    lines += ["", "## Every bin", "", "| block | kind | group | bin | hits | status | explanation |",
              "|---|---|---|---|---|---|---|"]
    for record in classified:
        hits = "not sampled" if record["hits"] is None else record["hits"]
        lines.append("| " + " | ".join(_cell(value) for value in (
            record["block"], record["kind"], record["group"], record["bin"], hits, record["status"],
            record["explanation"])) + " |")
    return "\n".join(lines) + "\n"
