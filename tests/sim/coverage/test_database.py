"""Merging coverage databases and reporting: a bin missed is reported missed."""

import json

import pytest

from sim.coverage.database import classify, load, markdown_report, merge, summary


def _database(hits):
    return {"design": "gini_scanner", "parameters": {},
            "bins": [{"block": "gini_scanner", "kind": kind, "group": group, "bin": label, "hits": count}
                     for (kind, group, label), count in hits.items()]}


def test_merge_sums_hits_and_keeps_bins_of_every_run():
    first = _database({("case", "score ties", "tie for the best"): 0, ("fsm state", "fsm_state", "Idle"): 2,
                       ("stream", "splits (sink)", "stall_cycles"): None})
    second = _database({("case", "score ties", "tie for the best"): 3, ("stream", "splits (sink)", "stall_cycles"): 4,
                        ("case", "segment length", "1"): 0})
    merged = {(r["kind"], r["group"], r["bin"]): r["hits"] for r in merge([first, second])}
    assert merged == {("case", "score ties", "tie for the best"): 3, ("fsm state", "fsm_state", "Idle"): 2,
                      ("stream", "splits (sink)", "stall_cycles"): 4, ("case", "segment length", "1"): 0}
    # A counter no run kept stays unsampled.
    assert merge([first])[2]["hits"] is None


def test_unhit_bins_are_missed_unless_proved_unreachable(tmp_path):
    database = _database({("case", "segment length", "1"): 5, ("case", "score ties", "tie for the best"): 0,
                          ("stream", "splits (sink)", "stall_cycles"): None,
                          ("fsm transition", "fsm_state", "A -> B"): 0})
    path = tmp_path / "run.json"
    path.write_text(json.dumps(database))
    proof = {"statement": "fsm_state never goes from A to B", "method": "k-induction, k=4"}
    classified = classify(merge(load([path])), {("gini_scanner", "fsm transition", "fsm_state", "A -> B"): proof})
    status = {r["bin"]: r["status"] for r in classified}
    assert status == {"1": "hit", "tie for the best": "missed", "stall_cycles": "missed", "A -> B": "unreachable"}
    assert summary(classified)[("gini_scanner", "case")] == {"hit": 1, "missed": 1, "unreachable": 0, "total": 2}
    assert summary(classified)[("gini_scanner", "fsm transition")]["total"] == 0
    text = markdown_report(classified, ["run"], 12.0, [{**proof, "status": "pass", "seconds": 3.0}])
    assert "**1 of 3 bins hit, 2 missed** (1 more proved unreachable, not listed)" in text
    assert "| gini_scanner | case | score ties | tie for the best | 0 | missed |" in text
    assert "not sampled" in text and "proved: fsm_state never goes from A to B (k-induction, k=4)" in text


def test_a_bin_hit_but_proved_unreachable_is_an_error():
    proof = {"statement": "never", "method": "k-induction, k=4"}
    with pytest.raises(ValueError, match="hit 2 times, but proved unreachable: never"):
        classify(merge([_database({("case", "score ties", "tie for the best"): 2})]),
                 {("gini_scanner", "case", "score ties", "tie for the best"): proof})


def test_a_stream_counter_at_zero_is_missed():
    classified = classify(merge([_database({("stream", "splits (sink)", "stall_cycles"): 0})]))
    assert classified[0]["status"] == "missed"
