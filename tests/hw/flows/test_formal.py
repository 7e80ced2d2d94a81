"""``python -m hw.flows.formal``: one design end to end, and its command line.

(The test of ``hw/flows/formal.py``; it lives beside the other formal tests.)
"""

import json

import pytest

from hw.flows.formal import main


def test_one_design_writes_its_report(tmp_path, capsys):
    report = tmp_path / "formal.md"
    assert main(["tree_random", "--out", str(tmp_path / "work"), "--report", str(report)]) == 0
    text = report.read_text()
    assert "| tree_random | draws: valid held until the transfer | k-induction (smtbmc z3) | k = 10 | pass |" in text
    assert "draws: valid without combinational path from ready" in text
    rows = json.loads(report.with_suffix(".json").read_text())
    assert {row["result"] for row in rows} == {"pass"}
    assert len(rows) == 4


def test_unknown_designs_are_refused(tmp_path):
    with pytest.raises(SystemExit):
        main(["no_such_design", "--out", str(tmp_path)])
