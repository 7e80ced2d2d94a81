"""Shared pytest set-up: long simulations skipped unless asked for, test files kept whole on
one worker when ``make test`` runs the suite in parallel, and the end-of-run summary of the
Verilator simulations."""

import os

import pytest

from sim.runner import COMPLETED_RUNS

#: Set to 1 to run the tests marked ``long`` (``make test-long`` runs only those).
LONG_SIMS = "HWFOREST_LONG_SIMS"

#: Test files that fit ``HardwareForestClassifier(backend="sim")`` or the comparison through
#: the host backends: they choose among the builds already made (``sim.host.builds``) and
#: check that a second fit adds none, so they run on one worker, in this order.
HOST_BUILD_FILES = ("tests/sim/test_backend.py", "tests/sim/test_histogram_backend.py",
                    "tests/sim/test_tb_system.py", "tests/sw/experiments/test_compare.py")

#: The runs of this process since the last report (COMPLETED_RUNS keeps them all).
_reported = [0]
#: The runs the workers reported (or this process's own, without workers).
_runs = []


def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist, a test file goes whole to one worker, and the host-build files
    together (pytest-xdist's own ``--dist loadgroup`` does not group under pytest 9)."""
    from xdist.scheduler import LoadFileScheduling

    class FileScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid):
            path = nodeid.split("::", 1)[0]
            return "host_builds" if path in HOST_BUILD_FILES else path

    return FileScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    if os.environ.get(LONG_SIMS) == "1":
        return
    skip = pytest.mark.skip(reason=f"a long test: make test-long runs it (or set {LONG_SIMS}=1)")
    for item in items:
        if item.get_closest_marker("long"):
            item.add_marker(skip)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Attach the simulations a test ran to its report (a worker's reports reach the
    main process, its COMPLETED_RUNS do not)."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "teardown":
        new, _reported[0] = COMPLETED_RUNS[_reported[0]:], len(COMPLETED_RUNS)
        report.user_properties.extend(("verilator_run", list(run)) for run in new)


def pytest_runtest_logreport(report):
    _runs.extend(value for key, value in report.user_properties if key == "verilator_run")


def pytest_terminal_summary(terminalreporter):
    if not _runs:
        return
    terminalreporter.section("cocotb simulations under Verilator")
    for toplevel, module, tests, version in _runs:
        terminalreporter.write_line(
            f"{toplevel:24s} {module:28s} {tests} cocotb tests passed (Verilator {version})")
