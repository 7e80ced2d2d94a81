"""Coverage sampling in a cocotb testbench: off by default, and one small Gini run with it on."""

import json
import types

import pytest

from sim.coverage.collector import OFF, base_design, coverage_for, stream_name
from sim.runner import simulate


def test_coverage_is_off_without_the_setting():
    testbench = types.SimpleNamespace(settings={"design": {}})
    collector = coverage_for(testbench)
    assert collector is OFF and not collector.active
    collector.record(lambda: pytest.fail("a classifier ran with coverage off"))


def test_toplevel_names_map_to_catalogue_designs():
    assert base_design("gini_scanner") == "gini_scanner"
    assert base_design("forest_trainer_1de0b447") == "forest_trainer"
    with pytest.raises(ValueError):
        base_design("unknown_block")


def test_stream_names_come_from_the_driver_or_its_valid_signal():
    assert stream_name(types.SimpleNamespace(name="rows")) == "rows"
    assert stream_name(types.SimpleNamespace(valid=types.SimpleNamespace(_name="splits__valid"))) == "splits"


def test_gini_run_with_coverage_writes_its_bins(tmp_path):
    path = tmp_path / "gini.json"
    simulate("gini_scanner", "sim.tb_gini", parameters={"classes": 2, "count_bits": 5, "code_bits": 16, "row_bits": 4},
             testbench={"random_segments": 40, "coverage": str(path)}, seed=33)
    database = json.loads(path.read_text())
    assert database["design"] == "gini_scanner"
    hits = {(r["kind"], r["group"], r["bin"]): r["hits"] for r in database["bins"]}
    # Segments of 1 and 15 entries (2**4 - 1) are among the random and corner cases.
    assert hits[("case", "segment length", "1")] > 0 and hits[("case", "segment length", "maximum")] > 0
    # hw/gini.py: five states, every segment passes through all of them but "Sum squared totals"
    # (taken when the segment header arrives first).
    states = {key[2]: count for key, count in hits.items() if key[0] == "fsm state"}
    assert len(states) == 5 and all(count > 0 for count in states.values()), states
    transitions = {key[2]: count for key, count in hits.items() if key[0] == "fsm transition"}
    assert transitions["Drain the pipeline -> Offer the best split"] >= 40
    streams = {key[1] for key in hits if key[0] == "stream"}
    assert streams == {"segments (source)", "entries (source)", "splits (sink)"}
