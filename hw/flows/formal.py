"""Formal proofs of every catalogued design's stream rules and state invariants:
``python -m hw.flows.formal [designs...] [--depth N] [--out build/formal] [--report results/formal.md]``.

For each design of :data:`hw.formal.catalogue.FORMAL` (small parameters): per output
stream, whether ``valid`` depends combinationally on ``ready`` (Yosys, on the flattened
netlist), that ``valid`` holds until the transfer and that the payload is stable while
stalled (SymbiYosys, smtbmc with Z3); then the memory bounds, the named states and the
block's own invariants. One row per property in the report: design, property, method,
depth or induction, result, seconds. ``docs/formal.md`` says what each row means.
Exits 1 if any property fails or cannot be decided.
"""

import argparse
import hashlib
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from tqdm import tqdm

from hw.designs import component
from hw.formal.catalogue import FORMAL, harness, jobs
from hw.formal.sby import prove, ready_to_valid_paths

__all__ = ["run_design", "report", "summary", "main"]

HEADER = ["design", "property", "method", "depth / induction", "result", "seconds"]


def _combinational_rows(design, build, streams, out):
    paths, seconds = ready_to_valid_paths(component(design, build.parameters),
                                          Path(out) / design / "paths", streams, name=design)
    share = seconds / max(1, len(streams))
    return [{"design": design, "property": f"{name}: valid without combinational path from ready",
             "method": "structural (Yosys %coe* cone)", "depth": "netlist",
             "result": "FAIL" if paths[name] else "pass", "seconds": share, "trace": None}
            for name in streams]


def _proof_row(job, build, out):
    only = [(job.kind, job.subject)]
    mode, depth = build.method(job.kind, job.subject)
    outcome = prove(harness(job.design, only=only, build=build),
                    Path(out) / job.design / f"{job.kind}_{_slug(job.subject)}",
                    mode=mode, depth=depth, timeout=build.timeout)
    result = {"pass": "pass", "fail": "FAIL", "open": "open (induction did not close)",
              "timeout": "timeout", "error": "ERROR"}[outcome.status]
    if outcome.status == "pass" and mode == "bmc":
        result = f"pass to depth {depth}"
    elif outcome.status == "pass" and mode == "cover":
        result = f"pass: reached in step {outcome.reached}"
    elif outcome.status == "fail" and mode == "cover":
        result = f"FAIL: not reached in {depth} steps"
    elif outcome.status == "open":
        result = f"pass to depth {depth}, induction open"
    method = {"prove": "k-induction (smtbmc z3)", "bmc": "BMC (smtbmc z3)",
              "cover": "cover (smtbmc z3)"}[mode]
    depth = f"k = {depth}" if mode == "prove" else f"{depth} cycles"
    return {"design": job.design, "property": _property_text(job), "method": method,
            "depth": depth, "result": result, "seconds": outcome.seconds,
            "trace": outcome.trace, "log": outcome.log if outcome.status == "error" else None}


def _property_text(job):
    return {"valid": f"{job.subject}: valid held until the transfer",
            "payload": f"{job.subject}: payload stable while stalled",
            "memory": f"{job.subject}: address below depth",
            "state": f"named states only: {job.subject}",
            "invariant": job.subject,
            "cover": f"{job.subject}: a transfer is reachable"}[job.kind]


def _slug(text):
    """A folder name for a property (long names keep a hash: two PEs' invariants differ
    only at their end)."""
    slug = "".join(c if c.isalnum() else "_" for c in text)
    if len(slug) <= 60:
        return slug
    return f"{slug[:51]}_{hashlib.sha1(text.encode()).hexdigest()[:8]}"


def run_design(design, out, depth=None, progress=None):
    """Every property of ``design``: a list of report rows (dicts)."""
    build = FORMAL[design]
    if depth is not None:
        build = replace(build, depth=depth, methods={key: (mode, depth) for key, (mode, _)
                                                     in build.methods.items()})
    found = jobs(design, build)
    streams = [job.subject for job in found if job.kind == "combinational"]
    rows = []
    if streams:
        rows += _combinational_rows(design, build, streams, out)
        if progress is not None:
            progress.update(len(streams))
    for job in found:
        if job.kind == "combinational":
            continue
        if progress is not None:
            progress.set_postfix_str(job.label[:70])
        rows.append(_proof_row(job, build, out))
        if progress is not None:
            progress.update(1)
            progress.write(f"{rows[-1]['design']}: {rows[-1]['property']}: {rows[-1]['result']} "
                           f"({rows[-1]['seconds']:.1f} s)")
    return rows


def report(rows):
    """The Markdown table of ``rows``."""
    body = [[row["design"], row["property"], row["method"], row["depth"], row["result"],
             f"{row['seconds']:.1f}"] for row in rows]
    line = lambda cells: "| " + " | ".join(cells) + " |"
    return "\n".join([line(HEADER), "|" + "|".join("---" for _ in HEADER) + "|", *map(line, body)])


def summary(rows):
    """How many properties were proved, only bounded (induction open), covered, and failed."""
    proved = sum(row["result"] == "pass" for row in rows)
    covered = sum(row["result"].startswith("pass: reached") for row in rows)
    failed = sum(_failed(row) for row in rows)
    return (f"{len(rows)} properties: {proved} proved, {len(rows) - proved - covered - failed} "
            f"bounded only (BMC to the stated depth), {covered} covers reached, {failed} "
            f"failed or undecided")


def _failed(row):
    return not row["result"].startswith("pass")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("designs", nargs="*", metavar="DESIGN",
                        help=f"designs to prove (default: all of {', '.join(FORMAL)})")
    parser.add_argument("--depth", type=int, default=None,
                        help="k of the induction or BMC depth for every design (default: the catalogue's)")
    parser.add_argument("--quick", action="store_true", help="only the designs of the quick subset")
    parser.add_argument("--out", default="build/formal", help="work folder (default: %(default)s)")
    parser.add_argument("--report", default="results/formal.md",
                        help="Markdown report (default: %(default)s); a .json beside it")
    arguments = parser.parse_args(argv)
    unknown = sorted(set(arguments.designs) - set(FORMAL))
    if unknown:
        parser.error(f"unknown design(s) {', '.join(unknown)}; known: {', '.join(FORMAL)}")
    designs = arguments.designs or [name for name in FORMAL
                                    if FORMAL[name].quick or not arguments.quick]
    total = sum(len(jobs(design)) for design in designs)
    began = time.monotonic()
    rows = []
    with tqdm(total=total, unit="property", desc="formal") as progress:
        for design in designs:
            rows += run_design(design, arguments.out, arguments.depth, progress)
    path = Path(arguments.report)
    path.parent.mkdir(parents=True, exist_ok=True)
    failed = [row for row in rows if _failed(row)]
    path.write_text(f"# Formal proofs\n\n{report(rows)}\n\n{summary(rows)}; "
                    f"{time.monotonic() - began:.0f} s in all "
                    f"(`python -m hw.flows.formal`, docs/formal.md).\n")
    path.with_suffix(".json").write_text(json.dumps(rows, indent=1))
    print(f"wrote {path}: {summary(rows)}")
    for row in failed:
        print(f"  {row['design']}: {row['property']}: {row['result']}"
              + (f" (trace {row['trace']})" if row["trace"] else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
