"""``sw.experiments.cv``: the background load measured around a CPU timing."""

import subprocess
import sys
import time

import pytest

from sw.experiments import cv

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/stat")


def test_a_busy_process_beside_the_timing_is_seen():
    spinner = subprocess.Popen([sys.executable, "-c", "import time\nend = time.time() + 1.5\nwhile time.time() < end: pass"])
    try:
        time.sleep(0.2)                               # the spinner runs
        cores, result = cv.background_cores(lambda: time.sleep(1.0) or "done")
    finally:
        spinner.wait()
    assert result == "done"
    assert cores >= 0.5, cores


def test_this_process_own_work_is_not_counted_as_background(monkeypatch):
    # A machine where nothing else runs: its busy time is this process's CPU time.
    monkeypatch.setattr(cv, "_busy_seconds", lambda: 1000.0 + time.process_time())

    def spin():
        end = time.process_time() + 0.5
        while time.process_time() < end:
            pass
    cores, _ = cv.background_cores(spin)
    assert cores < 0.05, cores


def test_no_proc_stat_gives_no_figure(monkeypatch):
    monkeypatch.setattr(cv, "_busy_seconds", lambda: None)
    assert cv.background_cores(lambda: 7) == (None, 7)
