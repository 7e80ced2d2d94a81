"""The ELM cost experiment: the seed's Table 3.1 as transcribed, and a smoke run of
``--quick`` writing its three files."""

import csv

import pytest

from sw.experiments import elm_cost
from sw.methods.elm import selection as sel


def test_table_3_1_counts_are_the_seeds_rows():
    """Spot values worked out by hand from the printed formulas (L1157-L1164) at
    L_max = 40, N = 400, delta L = 1 (40 steps)."""
    L, N = 40.0, 400.0
    expected = {
        "cv_cholesky": L**2 * N + L**3 * N / 3 + 15 * L**2 * N + 25 * L**4 + 100 * L**3,
        "hat_cholesky": L**2 * N + 30 * L**3 * N / 3 + 10 * L**2 * N + 20 * L**3,
        "cv_svd": 40 * L**3 * N / 3 + 25 * L**2 * N + 25 * L**4 + 100 * L**3,
        "hat_svd": 4 * L**3 * N / 3 + 30 * L**2 * N + 5 * L**4 / 2 + 10 * L**3,
        "hat_qr_svd": 2 * L**2 * N + L**3 * N / 3 + 45 * L**2 * N + 5 * L**4 / 2,
        "hat_evd": L**2 * N + L**3 * N / 3 + 30 * L**2 * N + L**4 + 15 * L**3,
        "cv_evd": 2 * L**2 * N + 15 * L**2 * N + 10 * L**4 + 100 * L**3,
    }
    for name, value in expected.items():
        assert elm_cost.seed_operations(name, 40, 400) == pytest.approx(value, rel=1e-12)
    assert set(elm_cost.SEED["table_3_1"]) == set(sel.ALGORITHMS) - {"naive_cv", "naive_loo"}
    # The asymptotic claim (L1178-L1182): with L_max = a sqrt(N) Algorithm 7 needs the
    # fewest operations once N is large, for each of the seed's a.
    for a in (2, 4, 6):
        n = 10**8
        counts = {name: elm_cost.seed_operations(name, a * n ** 0.5, n)
                  for name in elm_cost.SEED["table_3_1"]}
        assert min(counts, key=counts.get) == "cv_evd"


def test_quick_run_writes_markdown_csv_and_plot(tmp_path, capsys):
    assert elm_cost.main(["--quick", "--out", str(tmp_path)]) == 0
    for suffix in ("md", "csv", "png"):
        assert (tmp_path / f"elm_cost.{suffix}").stat().st_size > 0
    rows = list(csv.DictReader(open(tmp_path / "elm_cost.csv")))
    names = {row["algorithm"] for row in rows}
    assert {"cv_evd", "hat_evd", "naive_cv", "hpelm_loo", "hpelm_cv", "skelm_naive"} <= names
    timed = [row for row in rows if row["seconds"]]
    assert timed and all(float(row["seconds"]) > 0 for row in timed)
    text = (tmp_path / "elm_cost.md").read_text()
    assert "Table 3.1 rank" in text and "DIFFERENT" not in text
    assert "wrote" in capsys.readouterr().out
