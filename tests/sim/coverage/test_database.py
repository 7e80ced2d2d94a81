"""Merging coverage databases and reporting: a bin missed is reported missed."""

import json

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


def test_unhit_bins_are_missed_unless_explained(tmp_path):
    database = _database({("case", "segment length", "1"): 5, ("case", "score ties", "tie for the best"): 0,
                          ("stream", "splits (sink)", "stall_cycles"): None})
    path = tmp_path / "run.json"
    path.write_text(json.dumps(database))
    classified = classify(merge(load([path])))
    status = {r["bin"]: r["status"] for r in classified}
    assert status == {"1": "hit", "tie for the best": "missed", "stall_cycles": "explained"}
    assert summary(classified)[("gini_scanner", "case")] == {"hit": 1, "explained": 0, "missed": 1, "total": 2}
    text = markdown_report(classified, ["run"], 12.0)
    assert "1 of 3 bins hit, 1 unhit and explained, 1 missed" in text
    assert "| gini_scanner | case | score ties | tie for the best | 0 | missed |" in text
    assert "not sampled" in text


def test_a_stream_counter_at_zero_is_missed():
    classified = classify(merge([_database({("stream", "splits (sink)", "stall_cycles"): 0})]))
    assert classified[0]["status"] == "missed"
