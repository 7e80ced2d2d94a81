"""Logic depth of a synthesised ECP5 netlist: every register-to-register path at or above a
depth, not only the one a placement ends on (``python -m hw.flows.depth``).

A placement reports its worst path, and which path is worst changes from seed to seed:
on the slower proxy the trainer's and the system's seeds end on paths of six to eight LUT
levels whose routing crosses the die (``docs/timing_history.md``). This report lists every
such path of a netlist :mod:`hw.flows.fmax` synthesised (its ``fmax_probe.json``), grouped
by source signal and endpoint, so that a round can cut them all before placing.

Depth is counted in levels: a ``LUT4`` is one, a ``CCU2C`` (two LUTs and a carry) one from
its LUT inputs and :data:`CARRY_LEVEL` from its carry-in (so an adder behind a LUT counts
about its width / 2 x 0.15 more), a wide-function mux (``PFUMX``, ``L6MUX21``)
:data:`MUX_LEVEL`. Every other cell (flip-flops, block RAMs, multipliers, ports) starts and
ends paths. It is a count of logic, not a timing: routing, which is most of a path's delay
on the proxy, is not in it.
"""

import argparse
import json
import re
import sys
from pathlib import Path

from hw.flows.fmax import TOP

__all__ = ["CARRY_LEVEL", "MUX_LEVEL", "deep_paths", "report", "main"]

#: Levels from a carry cell's carry-in to its outputs.
CARRY_LEVEL = 0.15
#: Levels through a wide-function multiplexer.
MUX_LEVEL = 0.3
_LOGIC = {"LUT4", "CCU2C", "PFUMX", "L6MUX21"}
_CLOCKS = {"CLK", "CLKA", "CLKB", "CLK0", "CLK1", "CLK2", "CLK3"}


def _level(cell_type, port):
    if cell_type == "CCU2C" and port == "CIN":
        return CARRY_LEVEL
    if cell_type in ("PFUMX", "L6MUX21"):
        return MUX_LEVEL
    return 1.0


def _base(name):
    """A flip-flop cell's or a net's signal: ``x_TRELLIS_FF_Q_3`` and ``x[3]`` are ``x``."""
    return re.sub(r"(_TRELLIS_FF_Q\w*|\[\d+\])$", "", name)


def deep_paths(netlist, *, top=TOP, threshold=6.0):
    """The endpoints of ``netlist`` (a Yosys JSON netlist: a dict or a path) whose logic
    depth is at least ``threshold`` levels, one per (source signal, endpoint signal, port),
    deepest first: dicts ``{"depth", "source", "endpoint", "port", "bits"}`` (``bits``: how
    many endpoint bits of the group are that deep or more)."""
    if not isinstance(netlist, dict):
        netlist = json.loads(Path(netlist).read_text())
    module = netlist["modules"][top]
    cells = module["cells"]
    names = {}
    for name, net in module["netnames"].items():
        for bit in net["bits"]:
            if isinstance(bit, int) and (bit not in names or name.count("$") < names[bit].count("$")):
                names[bit] = name
    driver = {}
    for cell_name, cell in cells.items():
        for port, bits in cell["connections"].items():
            if cell["port_directions"].get(port) == "output":
                for bit in bits:
                    if isinstance(bit, int):
                        driver[bit] = cell_name
    depth, before = {}, {}
    for bit in driver:
        if bit not in depth:
            _depth(bit, cells, driver, depth, before)
    groups = {}
    for cell_name, cell in cells.items():
        if cell["type"] in _LOGIC:
            continue
        for port, bits in cell["connections"].items():
            if cell["port_directions"].get(port) != "input" or port in _CLOCKS:
                continue
            for bit in bits:
                deep = depth.get(bit, 0.0) if isinstance(bit, int) else 0.0
                if deep < threshold:
                    continue
                source = bit
                while before.get(source) is not None:
                    source = before[source]
                key = (_base(names.get(source, str(source))), _base(cell_name), port)
                found = groups.setdefault(key, {"depth": 0.0, "source": key[0], "endpoint": key[1],
                                                "port": port, "bits": 0})
                found["depth"] = max(found["depth"], deep)
                found["bits"] += 1
    return sorted(groups.values(), key=lambda g: (-g["depth"], g["source"], g["endpoint"]))


def _depth(bit, cells, driver, depth, before):
    """Depth of ``bit`` (iterative, so that deep cones need no recursion), and the input
    bit its deepest path comes through (``before``, None at a path's start)."""
    stack, expanding = [bit], set()
    while stack:
        current = stack[-1]
        if current in depth:
            stack.pop()
            continue
        cell = cells[driver[current]] if current in driver else None
        if cell is None or cell["type"] not in _LOGIC:
            depth[current], before[current] = 0.0, None
            stack.pop()
            continue
        inputs = [(port, b) for port, bits in cell["connections"].items()
                  if cell["port_directions"].get(port) == "input" for b in bits if isinstance(b, int)]
        if current not in expanding:
            expanding.add(current)
            pending = [b for _, b in inputs if b not in depth]
            if any(b in expanding for b in pending):
                raise ValueError(f"combinational loop through {driver[current]}")
            stack.extend(pending)
            continue
        best, through = 0.0, None
        for port, b in inputs:
            value = depth[b] + _level(cell["type"], port)
            if value > best:
                best, through = value, b
        depth[current], before[current] = best, through
        expanding.discard(current)
        stack.pop()


def report(paths, limit=40):
    """Markdown table of ``paths`` (:func:`deep_paths`), the first ``limit``."""
    lines = ["| levels | from | to (port) | bits |", "|---|---|---|---|"]
    for path in paths[:limit]:
        lines.append(f"| {path['depth']:.1f} | `{path['source']}` | `{path['endpoint']}` ({path['port']}) "
                     f"| {path['bits']} |")
    if len(paths) > limit:
        lines.append(f"| | ... {len(paths) - limit} more groups | | |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("netlist", help="a Yosys JSON netlist (build/fmax/<entry>/synth/<key>/fmax_probe.json)")
    parser.add_argument("--threshold", type=float, default=6.0, help="least depth listed, in levels (6)")
    parser.add_argument("--limit", type=int, default=40, help="groups shown (40)")
    parser.add_argument("--top", default=TOP, help=f"the netlist's top module ({TOP})")
    arguments = parser.parse_args(argv)
    if not Path(arguments.netlist).is_file():
        parser.error(f"no netlist at {arguments.netlist}")
    paths = deep_paths(arguments.netlist, top=arguments.top, threshold=arguments.threshold)
    print(f"{len(paths)} groups of endpoints at {arguments.threshold:g} levels or more in "
          f"{arguments.netlist}")
    print(report(paths, arguments.limit))
    return 0


if __name__ == "__main__":
    sys.exit(main())
