"""Shared pytest set-up: long simulations skipped unless asked for, and the end-of-run
summary of the Verilator simulations."""

import os

import pytest

from sim.runner import COMPLETED_RUNS

#: Set to 1 to run the tests marked ``long`` (``make test-long`` runs only those).
LONG_SIMS = "HWFOREST_LONG_SIMS"


def pytest_collection_modifyitems(config, items):
    if os.environ.get(LONG_SIMS) == "1":
        return
    skip = pytest.mark.skip(reason=f"a long test: make test-long runs it (or set {LONG_SIMS}=1)")
    for item in items:
        if item.get_closest_marker("long"):
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter):
    if not COMPLETED_RUNS:
        return
    terminalreporter.section("cocotb simulations under Verilator")
    for toplevel, module, tests, version in COMPLETED_RUNS:
        terminalreporter.write_line(
            f"{toplevel:24s} {module:28s} {tests} cocotb tests passed (Verilator {version})")
