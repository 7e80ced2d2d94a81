"""The incremental-ELM reproduction (``python -m sw.experiments.ielm_tables``): the seed's
numbers against the seed's text, the data generators, and a smoke run of ``--quick``."""

import csv
from pathlib import Path

import numpy as np
import pytest

from sw.experiments import ielm_tables
from sw.experiments.ielm_tables import ORDER, SEED_NUMBERS

SEED = Path(__file__).resolve().parents[3].parent / ielm_tables.SEED_FILE


@pytest.mark.skipif(not SEED.exists(), reason="the seed texts are not beside this checkout")
def test_seed_numbers_are_the_lines_they_cite():
    lines = SEED.read_text().splitlines()
    names = {"friedman": "Friedman", "2dplanes": "2D planes"}
    for key, name in names.items():
        for kind in ("rmse", "std"):
            cells = lines[SEED_NUMBERS[key][f"{kind}_line"] - 1].split("\t")
            assert cells[0] == name
            assert tuple(float(cell) for cell in cells[1:]) == SEED_NUMBERS[key][kind]
    assert "0.85 (42.6/50) to 0.98" in lines[SEED_NUMBERS["efficiency_p50_large_datasets"]
                                              ["line"] - 1]
    assert "range from 0.98 to 0.92" in lines[SEED_NUMBERS["scaleup_p50_all_datasets"]
                                              ["line"] - 1]


def test_planes2d_follows_its_definition():
    X, y = ielm_tables.planes2d(20000, seed=3)
    assert set(np.unique(X[:, 0])) == {-1.0, 1.0}
    assert set(np.unique(X[:, 1:])) == {-1.0, 0.0, 1.0}
    clean = np.where(X[:, 0] > 0, 3 + X[:, 1:4] @ [3, 2, 1], -3 + X[:, 4:7] @ [3, 2, 1])
    noise = y - clean
    assert abs(noise.mean()) < 0.05 and abs(noise.std() - 1) < 0.05
    assert abs(np.corrcoef(noise, X[:, 7])[0, 1]) < 0.05


def test_split_scales_inputs_and_targets_by_the_training_rows():
    X, y = ielm_tables.friedman(1000, seed=0)
    train_X, train_y, test_X, test_y = ielm_tables.split_scaled(X, y, trial=0)
    assert len(train_y) == 800 and len(test_y) == 200
    assert train_X.min() == pytest.approx(-1) and train_X.max() == pytest.approx(1)
    assert train_y.min() == pytest.approx(0) and train_y.max() == pytest.approx(1)


def test_quick_run_writes_the_tables_and_plots(tmp_path):
    paths = ielm_tables.main(["--quick", "--out", str(tmp_path)])
    names = {path.name for path in paths}
    assert names == {"ielm_tables.md", "ielm_tables.csv", "ielm_tables.png",
                     "ielm_scaling.csv", "ielm_scaling.png"}
    with open(tmp_path / "ielm_tables.csv") as file:
        rows = list(csv.DictReader(file))
    assert [(row["dataset"], row["method"]) for row in rows] == [
        (key, method) for key in ("friedman", "2dplanes") for method in ORDER]
    for row in rows:
        seed = SEED_NUMBERS[row["dataset"]]
        assert float(row["seed_rmse"]) == seed["rmse"][ORDER.index(row["method"])]
        assert 0.02 < float(row["our_rmse"]) < 0.3       # [0, 1] target scale
    with open(tmp_path / "ielm_scaling.csv") as file:
        scaling = list(csv.DictReader(file))
    assert len(scaling) == 2 and all(float(row["speedup"]) > 0 for row in scaling)
    text = (tmp_path / "ielm_tables.md").read_text()
    assert "Pokerhand" in text and "seed RMSE" in text
