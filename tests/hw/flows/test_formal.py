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


def test_the_summary_counts_proved_bounded_covered_and_failed_rows():
    from hw.flows.formal import summary
    rows = [{"result": result} for result in (
        "pass", "pass", "pass to depth 3, induction open", "pass: reached in step 13",
        "FAIL: not reached in 5 steps", "timeout")]
    assert summary(rows) == ("6 properties: 2 proved, 1 bounded only (BMC to the stated depth), "
                             "1 covers reached, 2 failed or undecided")


def test_long_property_names_keep_distinct_work_folders():
    from hw.flows.formal import _slug
    first, second = (f"node <= level end <= nodes created <= max_nodes, in review (pe{index})"
                     for index in (0, 1))
    assert _slug(first) != _slug(second)
    assert len(_slug(first)) == 60 and _slug("valid nodes") == "valid_nodes"
