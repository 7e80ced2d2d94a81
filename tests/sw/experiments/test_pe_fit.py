"""``python -m sw.experiments.pe_fit --jobs N``: the same fits and report as one job at a
time, with up to N estimates running at once (Yosys replaced by a stand-in here)."""

import json
import threading
import time

import pytest

from sw.experiments import pe_fit


def _fake_estimate(log):
    running, lock = [0], threading.Lock()

    def estimate(design, out_dir, parameters):
        with lock:
            running[0] += 1
            log.append(running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        lanes, rows = parameters["feature_lanes"], parameters["max_rows"]
        shell = 5_000 if design == "forest_system" else 0
        return {"alms": 2_000 * lanes + rows + shell, "m20k": lanes * 3 + (40 if shell else 0),
                "dsp": 9 * lanes + (6 if shell else 0), "parameters": parameters}
    return estimate


def _run(tmp_path, monkeypatch, jobs, log):
    monkeypatch.setattr(pe_fit, "estimate", _fake_estimate(log))
    monkeypatch.setattr(pe_fit, "BUILD_ROOT", tmp_path / f"build{jobs}")
    fits, report = tmp_path / f"fits{jobs}.json", tmp_path / f"report{jobs}.md"
    assert pe_fit.main(["--datasets", "iris", "wine", "--jobs", str(jobs),
                        "--out", str(report), "--fits", str(fits)]) == 0
    return json.loads(fits.read_text())["datasets"], report.read_text()


def test_jobs_give_the_serial_fits_and_run_at_once(tmp_path, monkeypatch):
    monkeypatch.delenv("HWFOREST_DATA_DIR", raising=False)
    serial_log, parallel_log = [], []
    serial = _run(tmp_path, monkeypatch, 1, serial_log)
    parallel = _run(tmp_path, monkeypatch, 3, parallel_log)
    assert max(serial_log) == 1
    assert max(parallel_log) > 1
    assert serial == parallel
    assert set(serial[0]) == {"iris", "wine"}
    # wine has two lane options (8 and 4 lanes): both measured, the report in dataset order
    assert serial[1].index("| wine |") > serial[1].index("**iris")
    assert serial[1].count("| wine |") == 2


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_second_run_uses_the_cache(tmp_path, monkeypatch, jobs):
    monkeypatch.delenv("HWFOREST_DATA_DIR", raising=False)
    log = []
    _run(tmp_path, monkeypatch, jobs, log)
    first = len(log)
    _run(tmp_path, monkeypatch, jobs, log)
    assert first > 0 and len(log) == first


def test_jobs_below_one_are_refused(capsys):
    with pytest.raises(SystemExit):
        pe_fit.main(["--datasets", "iris", "--jobs", "0"])
    assert "--jobs must be at least 1, not 0" in capsys.readouterr().err
