"""The out-of-core plan's cost model, on work whose price can be worked out by hand."""

import numpy as np
import pytest

from sw.experiments import out_of_core
from sw.experiments.out_of_core import NODE_CYCLES, cycle_parts, external_bytes, histogram_pe_cycles
from sw.methods.forest.histogram import HistogramWork


def _one_node(partitioned=0):
    # 100 rows (ids 0..99: two 64-row blocks), 10 features drawn, 9 histograms, at most 40 cells.
    return HistogramWork(partitioned_rows=partitioned, nodes=[(np.arange(100), 10, 9, 40)])


def test_cycles_group_the_draws_into_passes_of_the_lanes():
    # 2 gather passes of 100 rows, 2 scan passes of 40 cells (or 256 bins), the node, 30
    # go-left rows. The 9 splits are taken 8 by the first pass, 1 by the second: the pass
    # engine's 24 cycles a pass, 2 + 3 for each of the first pass's 7 splits after its first.
    overhead = 24 + (2 + 3 * 7) + 24
    assert histogram_pe_cycles(_one_node(30), 8) == 200 + overhead + 80 + NODE_CYCLES + 30
    assert histogram_pe_cycles(_one_node(30), 8, full_scan=True) == 200 + overhead + 512 + NODE_CYCLES + 30
    # One pass of 16 lanes takes all 9 splits.
    assert histogram_pe_cycles(_one_node(), 16) == 100 + (24 + 2 + 3 * 8) + 40 + NODE_CYCLES
    work = _one_node(30)
    assert cycle_parts(work, 8) == {"bound": 100, "gather": 200, "pass_overhead": overhead, "scan": 80,
                                    "nodes": NODE_CYCLES, "partition": 30}


def test_the_two_layouts_read_what_their_bursts_hold():
    # Row-major, 617 one-byte codes a row (10 bursts): 2 passes x 100 rows x 8 bursts.
    assert external_bytes(_one_node(), 8, 617, "row-major") == 2 * 100 * 8 * 64
    # A 100-byte row is 2 bursts: each pass reads both.
    assert external_bytes(_one_node(), 8, 100, "row-major") == 2 * 100 * 2 * 64
    # Feature-major: 10 features x the 2 blocks of 64 rows the node's rows lie in.
    assert external_bytes(_one_node(), 8, 617, "feature-major") == 10 * 2 * 64
    with pytest.raises(ValueError, match="layout must be 'row-major' or 'feature-major', not 'tiled'"):
        external_bytes(_one_node(), 8, 617, "tiled")


def test_a_small_run_writes_its_table_and_plot(tmp_path):
    out = tmp_path / "ooc.md"
    out_of_core.main(["--datasets", "iris", "--trees", "1", "--cpu-trees", "2", "4", "--out", str(out)])
    text = out.read_text()
    assert text.count("| iris |") == 2 and "| iris | 150 x 4 (3) |" in text
    assert out.with_suffix(".png").stat().st_size > 10_000
