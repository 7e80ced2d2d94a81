"""Resource estimates (hw/flows/resources.py): the arithmetic, and one small design end to end."""

import json

import pytest

from hw.designs import DESIGNS
from hw.flows.resources import (ARRIA10_10AX115, PE_BLOCKS, alm_estimate, dsp_block_estimate,
                          estimate, m20k_blocks, main, pe_estimate, pes_that_fit, report)


def test_m20k_blocks():
    assert m20k_blocks(4096, 28) == 6            # 2K x 10: 2 deep x 3 wide
    assert m20k_blocks(256, 13) == 1
    assert m20k_blocks(512, 40) == 1             # simple dual port allows x40
    assert m20k_blocks(512, 40, write_ports=2) == 2   # true dual port: at most x20
    assert m20k_blocks(16384, 1) == 1
    assert m20k_blocks(16385, 1) == 2
    assert m20k_blocks(4096, 28, read_ports=2) == 12  # one copy per read port
    assert m20k_blocks(0, 8) == 0
    # Never fewer blocks than the bits need, never more than one block per bit column.
    for depth in (1, 100, 511, 4096, 10000):
        for width in (1, 7, 20, 41, 104):
            blocks = m20k_blocks(depth, width)
            assert blocks * 20480 >= depth * width
            assert blocks <= width * -(-depth // 16384)


def test_alm_and_dsp_estimates():
    assert alm_estimate({"MISTRAL_ALUT6": 10, "MISTRAL_ALUT3": 5, "MISTRAL_ALUT_ARITH": 4}) == 15
    assert alm_estimate({"MISTRAL_ALUT2": 2, "MISTRAL_FF": 40}) == 10   # 4 flip-flops per ALM
    assert alm_estimate({"MISTRAL_MLAB": 20}) == 10                     # a 10-ALM LAB
    assert alm_estimate({}) == 0
    assert dsp_block_estimate(mul27=3, mul18=3, mul9=0) == 5
    assert dsp_block_estimate(mul27=0, mul18=0, mul9=1) == 1


def _row(name, **counts):
    keys = ("aluts", "alms", "flip_flops", "block_memory_bits", "m10k", "m20k", "mlab_bits",
            "mul27", "mul18", "mul9", "dsp")
    return {"design": name, "parameters": {}, **{key: counts.get(key, 0) for key in keys}}


def test_pe_estimate_and_fit():
    blocks = [_row(name, alms=100, m20k=1, dsp=2) for name in PE_BLOCKS]
    row, label = pe_estimate(blocks)
    assert row["alms"] == 500 and row["m20k"] == 5 and row["dsp"] == 10
    assert label.startswith("SUM OF BLOCKS") and all(name in label for name in PE_BLOCKS)
    row, label = pe_estimate(blocks + [_row("processing_element", alms=1000, m20k=10, dsp=3)])
    assert row["design"] == "processing_element" and "processing_element" in label
    row, _ = pe_estimate(blocks + [_row("my_pe", alms=7)], pe="my_pe")
    assert row["alms"] == 7
    assert pe_estimate(blocks[:2]) == (None, None)

    count, limiting, limits = pes_that_fit(_row("x", alms=1000, m20k=10, dsp=3))
    assert limits == {"alms": 427, "m20k": 271, "dsp": 506}
    assert (count, limiting) == (271, "m20k")
    assert pes_that_fit(_row("x", alms=ARRIA10_10AX115["alms"] + 1))[0] == 0


def test_report_labels_estimates_and_thesis_table():
    blocks = [_row(name, alms=100, m20k=1, dsp=2, flip_flops=50) for name in PE_BLOCKS]
    text = report(blocks)
    assert "ESTIMATES" in text and "Not a Quartus result" in text
    assert "**PEs that fit a 10AX115 (estimate): 151**" in text   # 1518 DSP / 10
    assert "SUM OF BLOCKS" in text and "sum of PE blocks" in text
    assert "| thesis PE (thesis Table 4.3, Quartus) | 3,420 | 9,152 | 497 |" in text
    assert "not computed" in report(blocks[:1])


@pytest.mark.skipif("radix_sorter" not in DESIGNS, reason="no radix_sorter design")
def test_small_sorter_end_to_end(tmp_path):
    """A 64-row sorter through Yosys: its four memories are found and mapped to M10K."""
    row = estimate("radix_sorter", tmp_path, {"max_rows": 64})
    assert row["parameters"]["max_rows"] == 64
    assert row["aluts"] > 0 and row["flip_flops"] > 0 and row["alms"] > 0
    memories = {m["name"]: m for m in row["memories"]}
    assert {"buffer0", "buffer1", "counter0", "counter1"} <= set(memories)
    assert (memories["buffer0"]["depth"], memories["buffer0"]["width"]) == (64, 22)
    block = [m for m in row["memories"] if m["mapped_to"] == "M10K"]
    assert row["m10k"] >= len(block) > 0
    assert row["m20k"] == sum(m["m20k"] for m in block)
    assert row["block_memory_bits"] == sum(m["depth"] * m["width"] for m in block)


@pytest.mark.skipif("tree_random" not in DESIGNS, reason="no tree_random design")
def test_cli_writes_report_and_json(tmp_path):
    report_path = tmp_path / "resources.md"
    assert main(["--out", str(tmp_path / "work"), "--report", str(report_path),
                 "--set", "tree_random.bound_bits=8", "tree_random"]) == 0
    text = report_path.read_text()
    assert "| tree_random | bound_bits=8, tree_index_bits=16 |" in text
    rows = json.loads(report_path.with_suffix(".json").read_text())
    assert rows[0]["design"] == "tree_random" and rows[0]["dsp"] > 0
