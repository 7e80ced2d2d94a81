"""``python -m sim.coverage`` on databases of an earlier run: its exit status fails on a missed bin."""

import json

from sim.coverage.__main__ import RUNS, main


def _write(folder, name, hits):
    record = {"block": "gini_scanner", "kind": "case", "group": "score ties", "bin": "tie for the best", "hits": hits}
    (folder / f"{name}.json").write_text(json.dumps({"design": "gini_scanner", "parameters": {}, "bins": [record]}))


def test_report_passes_when_every_bin_is_hit(tmp_path):
    _write(tmp_path, "gini_rows7", 0)
    _write(tmp_path, "gini_rows4", 2)
    status = main(["--out", str(tmp_path / "out"), "--databases", str(tmp_path), "--merge-only", "--no-proofs",
                   "--runs", "gini_rows7", "gini_rows4"])
    assert status == 0
    report = json.loads((tmp_path / "out" / "coverage.json").read_text())
    assert [(r["bin"], r["hits"], r["status"]) for r in report["bins"]] == [("tie for the best", 2, "hit")]


def test_report_fails_on_a_missed_bin(tmp_path, capsys):
    _write(tmp_path, "gini_rows7", 0)
    status = main(["--out", str(tmp_path / "out"), "--databases", str(tmp_path), "--merge-only", "--no-proofs",
                   "--runs", "gini_rows7"])
    assert status == 1
    assert "MISSED gini_scanner case 'score ties' 'tie for the best'" in capsys.readouterr().out
    assert "missed" in (tmp_path / "out" / "coverage.md").read_text()


def test_every_run_builds_a_catalogue_design_with_a_testbench_module():
    import gc
    import importlib.util
    import warnings
    from amaranth.hdl import UnusedElaboratable
    from hw.designs import component
    for design, module, parameters, settings, seed in RUNS.values():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnusedElaboratable)     # the system's inner trainer
            component(design, parameters)._MustUse__silence = True   # refused parameters raise
            gc.collect()
        assert importlib.util.find_spec(module) is not None, module
