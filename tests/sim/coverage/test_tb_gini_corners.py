"""Back-to-back Gini segments in Verilator (the build of ``test_collector``'s run, reused)."""

from sim.coverage.tb_gini_corners import _observed
from sim.runner import simulate


def test_left_counts_are_unpacked_per_class():
    split = {"threshold": 7, "rows_left": 3, "numerator": 10, "denominator": 4,
             "left_counts": 2 | (5 << 5) | (1 << 10)}
    assert _observed(split, 3, 5) == (7, 3, 10, 4, [2, 5, 1])


def test_queued_segments_match_model_in_verilator():
    tests, failed = simulate("gini_scanner", "sim.coverage.tb_gini_corners",
                             parameters={"classes": 2, "count_bits": 5, "code_bits": 16, "row_bits": 4},
                             testbench={"batches": 4}, seed=35)
    assert (tests, failed) == (1, 0)
