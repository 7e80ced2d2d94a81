"""Shared pytest set-up: the end-of-run summary of the Verilator simulations."""

from sim.runner import COMPLETED_RUNS


def pytest_terminal_summary(terminalreporter):
    if not COMPLETED_RUNS:
        return
    terminalreporter.section("cocotb simulations under Verilator")
    for toplevel, module, tests, version in COMPLETED_RUNS:
        terminalreporter.write_line(
            f"{toplevel:24s} {module:28s} {tests} cocotb tests passed (Verilator {version})")
