"""Elaborate the gateware to Verilog: ``python -m hw.flows.verilog --out build/verilog``.

Every design and its default parameters come from the catalogue, :mod:`hw.designs`.
"""

import argparse
import hashlib
import json
import os
import sys
from importlib import metadata
from pathlib import Path

from amaranth.back import verilog

from hw.designs import DESIGNS, component, design_name
from hw.flows.cli import check_designs
from hw.flows.sources import design_digest

__all__ = ["write_verilog", "write_text_atomically", "main"]


def _stamp(base, parameters):
    """What the Verilog of ``base`` with ``parameters`` depends on: the design's sources
    (:func:`hw.flows.sources.design_digest`), the parameters and Amaranth's version."""
    text = json.dumps({"sources": design_digest(design=base), "parameters": parameters,
                       "amaranth": metadata.version("amaranth")}, sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()


def write_verilog(base, out_dir, parameters=None):
    """Write the Verilog of design ``base`` into ``out_dir``; return (path, module name).

    Elaboration is skipped when the file was written from the same sources, parameters
    and Amaranth (a stamp beside it, ``<name>.v.stamp``): a big system takes minutes to
    elaborate, and every simulation of a build calls this. The file is only rewritten
    when its text changes, so that simulator builds keyed on file times are not redone
    needlessly.
    """
    parameters = {**DESIGNS[base][1], **(parameters or {})}
    name = design_name(base, parameters)
    out_dir = Path(out_dir)
    path, stamp_path = out_dir / f"{name}.v", out_dir / f"{name}.v.stamp"
    stamp = _stamp(base, parameters)
    if path.exists() and stamp_path.exists() and stamp_path.read_text() == stamp:
        return path, name
    text = verilog.convert(component(base, parameters), name=name, emit_src=False)
    out_dir.mkdir(parents=True, exist_ok=True)
    # Written under another name and renamed: a process reading the file (another test
    # worker's simulator build) sees the old text or the new one, never half of it.
    if not path.exists() or path.read_text() != text:
        write_text_atomically(path, text)
    write_text_atomically(stamp_path, stamp)
    return path, name


def write_text_atomically(path, text):
    """Write ``text`` to ``path`` under another name and rename it: readers in other
    processes see the old text or the new one, never part of it."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}")
    temporary.write_text(text)
    os.replace(temporary, path)


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
