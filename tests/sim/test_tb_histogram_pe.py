"""The histogram PE (the out-of-core PE's controller on the pass engine), simulated by
cocotb under Verilator, against the golden model's trees grown from histograms."""

import pytest

from hw.histogram_pe import HistogramPE
from sim.runner import simulate


@pytest.mark.parametrize("parameters, seed", [
    ({"max_rows": 40, "features": 6, "lanes": 3, "code_bits": 3, "classes": 3, "count_bits": 7,
      "pass_bits": 2, "max_nodes": 63, "max_depth": 12}, 101),
    # Two lanes for up to 8 features: most nodes take several passes, so the node drawn
    # ahead of a partition often comes after leaves and goes on drawing.
    ({"max_rows": 200, "features": 8, "lanes": 2, "code_bits": 3, "classes": 3, "count_bits": 9,
      "pass_bits": 2, "max_nodes": 255, "max_depth": 16}, 104),
    # One lane, two classes; a node memory too small for some trees (overflow); 8 trees
    # a forest seed.
    ({"max_rows": 24, "features": 4, "lanes": 1, "code_bits": 2, "classes": 2, "count_bits": 6,
      "pass_bits": 2, "max_nodes": 9, "max_depth": 6, "tree_index_bits": 3}, 102),
])
def test_histogram_pe_matches_model_in_verilator(parameters, seed):
    tests, failed = simulate("histogram_pe", "sim.tb_histogram_pe", parameters=parameters,
                             testbench={"random_cases": 6}, seed=seed)
    assert (tests, failed) == (4, 0)


@pytest.mark.parametrize("parameters, seed", [
    # The codes in memory (64-bit words of 16 3-bit codes in 4-bit slots): the same trees
    # with a memory model of random waitrequest and 1 to 24 cycles of read latency.
    ({"max_rows": 40, "features": 6, "lanes": 3, "code_bits": 3, "classes": 3, "count_bits": 7,
      "pass_bits": 2, "max_nodes": 63, "max_depth": 12, "code_store": "memory", "code_word_bits": 64}, 105),
    # Two lanes, 200 rows, 32-bit words of 8 codes; long latencies (16 to 48 cycles).
    ({"max_rows": 200, "features": 8, "lanes": 2, "code_bits": 3, "classes": 3, "count_bits": 9,
      "pass_bits": 2, "max_nodes": 255, "max_depth": 16, "code_store": "memory", "code_word_bits": 32}, 106),
])
def test_histogram_pe_reads_codes_from_memory_in_verilator(parameters, seed):
    latency = [1, 24] if seed == 105 else [16, 48]
    tests, failed = simulate("histogram_pe", "sim.tb_histogram_pe", parameters=parameters,
                             testbench={"random_cases": 6, "memory_latency": latency}, seed=seed)
    assert (tests, failed) == (4, 0)


@pytest.mark.parametrize("arguments, text", [
    ({"max_nodes": 2}, "max_nodes must be between 3 and 65536, not 2"),
    ({"max_depth": 256}, "max_depth must be between 1 and 255, not 256"),
    ({"lanes": 17}, "lanes must be between 1 and 16, not 17"),
    ({"tree_index_bits": 33}, "tree_index_bits must be between 1 and 32, not 33"),
])
def test_bad_parameters_are_refused(arguments, text):
    with pytest.raises(ValueError, match=text):
        HistogramPE(**arguments)


def test_histogram_pe_trains_datasets_as_the_model(tmp_path):
    # iris (bundled) and sonar (60 features: 15 passes of 4 lanes a node at most) at
    # the widths of the build that holds the thesis datasets.
    from hw.designs import build_parameters
    from sw.data.datasets import available
    datasets = [name for name in ("iris", "sonar") if available(name)]
    tests, failed = simulate("histogram_pe", "sim.tb_histogram_pe",
                             parameters=build_parameters("histogram_pe_datasets"),
                             testbench={"datasets": datasets, "dataset_trees": 1,
                                        "report": str(tmp_path / "cycles.json")},
                             testcase="datasets_match_model", seed=103)
    assert (tests, failed) == (1, 0)
