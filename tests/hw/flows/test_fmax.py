"""Fmax proxy (hw/flows/fmax.py) on a tiny design end to end, in seconds; `make fmax` runs the real sizes."""

import json

import pytest

import hw.flows.fmax
from hw.designs import DESIGNS
from hw.flows.fmax import _critical_sources, _overflow, default_designs, fmax, main, report

pytestmark = pytest.mark.skipif("partition_unit" not in DESIGNS, reason="no partition_unit design")

TINY = {"max_rows": 16, "max_samples": 16}


def test_tiny_design_places_and_routes(tmp_path):
    result = fmax("partition_unit", tmp_path, TINY)
    assert result["parameters"]["max_rows"] == 16
    assert 20 < result["fmax_mhz"] < 1000
    assert result["utilisation"]["TRELLIS_FF"] > 0
    start, end = result["critical_endpoints"]
    assert start.startswith("partition_unit.") and end.startswith("partition_unit.")
    text = report([result])
    assert "LOWER-BOUND PROXY" in text and "not the Arria 10" in text
    assert f"| {result['fmax_mhz']:.1f} |" in text


def test_too_big_is_reported_not_placed(tmp_path, monkeypatch):
    monkeypatch.setitem(hw.flows.fmax.ECP5_85K, "TRELLIS_FF", 10)
    result = fmax("partition_unit", tmp_path, TINY)
    assert result["fmax_mhz"] is None
    assert "does not fit the ECP5-85K (TRELLIS_FF" in result["note"]
    assert "| not placed |" in report([result])


def test_overflow_counts_carry_cells_twice():
    assert _overflow({"LUT4": 10, "CCU2C": 5, "TRELLIS_FF": 3}) == {}
    assert _overflow({"LUT4": 83_000, "CCU2C": 500}) == {"TRELLIS_COMB": (84_000, 83_640)}


def test_critical_sources_skip_the_probe():
    log = ("Info: Critical path report for clock 'clk' (posedge -> posedge):\n"
           "Info:   /work/main/hw/flows/quartus.py:12\nInfo:   /x/hw/gini.py:144\n"
           "Info:   /x/hw/gini.py:144\nInfo:   /x/hw/rng.py:7\n"
           "Info: Critical path report for cross-domain path '<async>' -> 'posedge clk':\n"
           "Info:   /x/hw/sorter.py:1\n")
    assert _critical_sources(log) == ["hw/gini.py:144", "hw/rng.py:7"]


def test_cli(tmp_path):
    path = tmp_path / "fmax.md"
    assert main(["--out", str(tmp_path / "work"), "--report", str(path),
                 "--set", "partition_unit.max_rows=16", "--set", "partition_unit.max_samples=16",
                 "partition_unit"]) == 0
    assert "| partition_unit | max_rows=16, max_samples=16, code_bits=16 | 8 |" in path.read_text()
    assert json.loads(path.with_suffix(".json").read_text())[0]["fmax_mhz"] > 0


def test_smaller_parameters_when_too_big(tmp_path, monkeypatch):
    monkeypatch.setitem(hw.flows.fmax.SMALLER_FOR_ECP5, "partition_unit", TINY)
    monkeypatch.setitem(hw.flows.fmax.FMAX_PARAMETERS, "partition_unit", {"max_rows": 32,
                                                                    "max_samples": 32})
    verdicts = iter([{"DP16KD": (300, 208)}, {}])          # the first build is too big
    monkeypatch.setattr(hw.flows.fmax, "_overflow", lambda cells: next(verdicts))
    fake_report = {"fmax": {"clk": {"achieved": 123.0}}, "critical_paths": [],
                   "utilization": {key: {"used": 0} for key in hw.flows.fmax.ECP5_85K}}
    monkeypatch.setattr(hw.flows.fmax, "place_and_route", lambda *a, **k: (fake_report, ""))
    original = hw.flows.fmax.synthesise
    calls = []

    def recording(base, out_dir, parameters=None):
        calls.append(dict(parameters))
        return original(base, out_dir, parameters)

    monkeypatch.setattr(hw.flows.fmax, "synthesise", recording)
    result = fmax("partition_unit", tmp_path)
    assert calls == [{"max_rows": 32, "max_samples": 32}, TINY]
    assert result["parameters"]["max_rows"] == 16
    assert "to keep the run short" in result["note"] and "too big for the ECP5-85K" in result["note"]
    assert result["fmax_mhz"] == 123.0


def test_systems_only_on_request():
    designs = {"gini_scanner": None, "forest_system": None, "forest_trainer": None,
               "processing_element": None}
    assert default_designs(designs) == ["gini_scanner", "processing_element"]
