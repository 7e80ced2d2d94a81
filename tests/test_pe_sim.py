"""The processing element, simulated by cocotb under Verilator, against the golden model."""

import pytest

from hw.pe import ProcessingElement
from sim.runner import simulate

SMALL = {"max_rows": 64, "max_samples": 64, "max_features": 8, "feature_lanes": 4,
         "code_bits": 8, "classes": 4, "max_depth": 8}


def test_pe_small_random_trees_match_model():
    tests, failed = simulate("processing_element", "sim.tb_pe", parameters=SMALL,
                             testbench={"random_cases": 30}, seed=41)
    assert failed == 0
