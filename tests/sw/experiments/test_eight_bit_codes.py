"""The 8-bit accuracy study on a small case: its paired difference and its table."""

import pytest

from sw.experiments import eight_bit_codes


def test_the_paired_difference_is_the_difference_of_the_means(tmp_path):
    rows = eight_bit_codes.study(["iris"], 1, 5, log=lambda *args, **kwargs: None)
    (row,) = rows
    assert row["difference"] == pytest.approx(row["8-bit"] - row["16-bit"])
    assert row["error"] >= 0 and 80 < row["16-bit"] <= 100 and 80 < row["oneDAL"] <= 100
    out = tmp_path / "e8.md"
    eight_bit_codes.main(["--datasets", "iris", "--seeds", "1", "--trees", "5", "--out", str(out)])
    text = out.read_text()
    assert "| iris | 150 x 4 |" in text and "5 trees, 5-fold CV x 1 shuffles" in text
