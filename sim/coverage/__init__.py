"""Functional coverage of the cocotb testbenches: the bins (:mod:`.bins`), the FSMs of a
design (:mod:`.fsm`), the sampling inside a testbench (:mod:`.collector`), the merge and
report of the runs' databases (:mod:`.database`), and ``python -m sim.coverage`` (the
runs of ``make coverage``)."""

from sim.coverage import bins
from sim.coverage.collector import OFF, coverage_for

__all__ = ["bins", "coverage_for", "OFF"]
