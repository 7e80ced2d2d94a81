"""hw/flows/verilog.py: the Verilog of a design, elaborated again only when its sources,
parameters or Amaranth change."""

import pytest

import hw.flows.verilog
from hw.flows.verilog import write_verilog

SMALL = {"classes": 2, "count_bits": 5, "code_bits": 4, "row_bits": 4}


def _refuse(*args, **kwargs):
    raise AssertionError("elaborated again")


def test_verilog_is_reused_until_the_stamp_changes(tmp_path, monkeypatch):
    path, name = write_verilog("gini_scanner", tmp_path, SMALL)
    text = path.read_text()
    assert f"module {name}" in text
    monkeypatch.setattr(hw.flows.verilog, "component", _refuse)
    assert write_verilog("gini_scanner", tmp_path, SMALL) == (path, name)    # no elaboration
    with pytest.raises(AssertionError, match="elaborated again"):           # other parameters
        write_verilog("gini_scanner", tmp_path, {**SMALL, "classes": 3})
    (tmp_path / f"{name}.v.stamp").write_text("other sources")
    with pytest.raises(AssertionError, match="elaborated again"):           # other sources
        write_verilog("gini_scanner", tmp_path, SMALL)
    monkeypatch.undo()
    assert write_verilog("gini_scanner", tmp_path, SMALL) == (path, name)
    assert path.read_text() == text
