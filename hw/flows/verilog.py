"""Elaborate the gateware to Verilog: ``python -m hw.flows.verilog --out build/verilog``.

Every design and its default parameters come from the catalogue, :mod:`hw.designs`.
"""

import argparse
import sys
from pathlib import Path

from amaranth.back import verilog

from hw.designs import DESIGNS, component, design_name
from hw.flows.cli import check_designs

__all__ = ["write_verilog", "main"]


def write_verilog(base, out_dir, parameters=None):
    """Write the Verilog of design ``base`` into ``out_dir``; return (path, module name).

    The file is only rewritten when its text changes, so that simulator builds keyed on
    file times are not redone needlessly.
    """
    parameters = {**DESIGNS[base][1], **(parameters or {})}
    name = design_name(base, parameters)
    text = verilog.convert(component(base, parameters), name=name, emit_src=False)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.v"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path, name


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="build/verilog", help="output folder (default: %(default)s)")
    parser.add_argument("designs", nargs="*", metavar="DESIGN",
                        help=f"designs to write (default: all of {', '.join(sorted(DESIGNS))})")
    arguments = parser.parse_args(argv)
    check_designs(parser, arguments.designs)
    for base in arguments.designs or sorted(DESIGNS):
        path, _ = write_verilog(base, arguments.out)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
