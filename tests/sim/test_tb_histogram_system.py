"""The histogram system (a histogram PE, its forest loop and register bank), simulated by
cocotb under Verilator through its host driver, against the golden model's forests."""

import pytest

from hw.histogram_system import HistogramSystem
from sim.runner import simulate


@pytest.mark.parametrize("parameters, seed", [
    ({}, 201),
    # One lane, two classes, 9 nodes and depth 6: trees overflow the node memory and
    # unlimited trees outgrow the depth limit, so forests stop with their flags.
    ({"max_rows": 24, "features": 4, "lanes": 1, "code_bits": 2, "classes": 2, "count_bits": 6,
      "pass_bits": 2, "max_nodes": 9, "max_depth": 6, "tree_index_bits": 3}, 205),
    # The codes in memory: 32-bit words of 8 4-bit codes, read with random waitrequest and
    # 1 to 24 cycles of latency.
    ({"code_store": "memory", "code_word_bits": 32}, 206),
])
def test_histogram_system_matches_model_in_verilator(parameters, seed):
    tests, failed = simulate("histogram_system", "sim.tb_histogram_system", parameters=parameters,
                             testbench={"random_forests": 12, "memory_latency": [1, 24]}, seed=seed)
    assert (tests, failed) == (3, 0)


@pytest.mark.parametrize("arguments, text", [
    ({"tree_index_bits": 32}, "tree_index_bits must be between 1 and 31, not 32"),
    ({"max_nodes": 2}, "max_nodes must be between 3 and 65536, not 2"),
])
def test_bad_parameters_are_refused(arguments, text):
    with pytest.raises(ValueError, match=text):
        HistogramSystem(**arguments)


def test_register_map_document_matches_the_hardware():
    from hw.histogram_system import HISTOGRAM_REGISTERS
    from sim.runner import PROJECT_ROOT
    text = (PROJECT_ROOT / "docs" / "registers.md").read_text()
    section = text[text.index("## The histogram system"):]
    for name, (address, access, width, _) in HISTOGRAM_REGISTERS.items():
        assert f"| `{name}` | `{address:#04x}` | {access} | {width} |" in section, f"{name} is not documented as built"
    addresses = [address for address, *_ in HISTOGRAM_REGISTERS.values()]
    assert len(addresses) == len(set(addresses)), "two registers share an address"
