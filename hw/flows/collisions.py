"""Read-during-write collisions of old-data read ports, as the Arria 10's M20K has them.

An Amaranth read port that is not transparent for a write port (``transparent_for=()``,
the default) gives the old word when it reads the address being written in the same
cycle. The Arria 10's M20K does that in hardware (simple dual-port, one clock, mixed-port
read-during-write mode "old data": Intel Arria 10 Core Fabric and General Purpose I/Os
Handbook, 2.2.3.2), so the target spends no logic on it. The ECP5's DP16KD leaves such a
collision undefined, and Yosys emulates the old word with soft logic behind every block
RAM: a registered copy of the write, an address compare and a multiplexer on the read
data. On the proxy that logic sat on the critical paths of the inference engine (block
RAM, multiplexer, the bank's register) and of the system (a lane's read address into the
compare's register), and the target has none of it.

:func:`collisions_dont_care` marks the collisions of those ports undefined
(``COLLISION_X_MASK``) in the RTLIL the ECP5 flow synthesises, so Yosys maps them to
block RAM without the emulation, as Quartus maps them to M20K. It changes only the
proxy's netlist: simulation and the Verilog of ``make quartus`` keep Amaranth's
semantics. Ports transparent for a write port (new data) keep their emulation: the M20K
has no mixed-port new-data mode either, and Quartus adds the same kind of bypass.
"""

import re

__all__ = ["collisions_dont_care"]

_READ_PORT = re.compile(r"(\n\s*cell \$memrd_v2 [^\n]*\n)(.*?)(\n\s*end\b)", re.S)


def _parameter(body, name):
    match = re.search(rf"parameter \\{name} (?:(\d+)'([01xz]+)|(\d+))\s*$", body, re.M)
    if match is None:
        raise ValueError(f"read port without a {name} parameter: {body[:200]!r}")
    if match.group(3) is not None:
        return None, int(match.group(3))
    return int(match.group(1)), match.group(2)


def collisions_dont_care(text):
    """``text`` (RTLIL from :func:`amaranth.back.rtlil.convert`) with every clocked read
    port that is transparent for no write port given undefined read-write collisions.

    Returns ``(text, ports)``: the new RTLIL and the number of read ports changed.
    """
    changed = 0

    def mark(match):
        nonlocal changed
        head, body, tail = match.groups()
        _, clocked = _parameter(body, "CLK_ENABLE")
        width, transparency = _parameter(body, "TRANSPARENCY_MASK")
        if clocked not in (1, "1") or set(transparency) != {"0"}:
            return match.group(0)
        mask_width, _ = _parameter(body, "COLLISION_X_MASK")
        if mask_width != width:
            raise ValueError(f"read port with a {width}-bit transparency mask and a "
                             f"{mask_width}-bit collision mask")
        changed += 1
        body = re.sub(r"(parameter \\COLLISION_X_MASK )\d+'[01]+",
                      lambda m: f"{m.group(1)}{width}'{'1' * width}", body)
        return head + body + tail

    return _READ_PORT.sub(mark, text), changed
