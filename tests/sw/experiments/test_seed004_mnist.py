"""The seed-004 MNIST reproduction (``python -m sw.experiments.seed004_mnist``): the seed's
numbers against the seed file, the splits, the float32 reading, and a smoke run on a small
subset."""

import csv
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_digits

from sw.data.datasets import available
from sw.experiments import seed004_mnist as experiment
from sw.methods.linear.logistic import GradientLogisticClassifier

SHARED = Path(__file__).resolve().parents[4] / "shared"
DATA_HINT = ("mnist_test10k data file not found: set HWFOREST_DATA_DIR to a directory holding "
             "it (e.g. /work/shared/datasets) or fetch it with "
             "sw.data.datasets.download('mnist_test10k') and HWFOREST_DATA_URL; see "
             "sw/data/datasets.py")


@pytest.mark.skipif(not (SHARED / "seeds").is_dir(),
                    reason="the seeds are not beside this checkout (../shared/seeds)")
def test_seed_numbers_are_on_the_lines_cited():
    lines = (SHARED.parent / experiment.SEED_FILE).read_text().splitlines()
    assert len(experiment.SEED_004_TABLE) == 4
    for row in experiment.SEED_004_TABLE:
        line = lines[int(row["source"].rsplit(":", 1)[1]) - 1]
        assert row["hardware"] in line, line
        assert f"{row['accuracy']:.2f}%" in line and f"{row['train_s']}s" in line, line
        assert f"{row['predict_s']}s" in line, line
        assert ("Naive Bayes" in line) == (row["algorithm"] == "naive_bayes"), line
    assert "6100 training images, 3900 testing images" in lines[157]


def test_splits_are_the_seeds_sizes_disjoint_and_seeded():
    train, test = experiment.split(10_000, 3)
    assert (len(train), len(test)) == (6100, 3900)
    assert len(np.union1d(train, test)) == 10_000
    again, _ = experiment.split(10_000, 3)
    other, _ = experiment.split(10_000, 4)
    assert np.array_equal(train, again) and not np.array_equal(train, other)


def test_float32_reading_ties_saturated_units():
    """Units whose float32 sigmoid rounds to the same value tie: the first and the last of
    the tied classes, found here row by row; ties come from saturation at 1.0 (z above
    ~16) or, when every unit is far below 0, underflow to 0.0."""
    from scipy.special import expit
    X, y = load_digits(return_X_y=True)
    model = GradientLogisticClassifier(max_iter=50).fit(X, y)
    first, last, tied = experiment.float32_readings(model, X)
    z = model.decision_values(X)
    activation = expit(z.astype(np.float32))
    for row in range(len(X)):
        largest = [k for k in range(10) if activation[row, k] == activation[row].max()]
        assert first[row] == model.classes_[largest[0]]
        assert last[row] == model.classes_[largest[-1]]
        if len(largest) > 1:
            saturated = activation[row].max() == 1.0 and z[row, largest].min() > 16
            underflowed = activation[row].max() == 0.0 and z[row].max() < -80
            assert saturated or underflowed
    assert 0 < tied == np.count_nonzero(first != last)


@pytest.mark.skipif(not available("mnist_test10k"), reason=DATA_HINT)
def test_smoke_run_on_a_small_subset(tmp_path):
    assert experiment.main(["--images", "500", "--splits", "2", "--max-iter", "25",
                            "--out", str(tmp_path)]) == 0
    text = (tmp_path / "seed004_mnist.md").read_text()
    for number in ("80.69 / 81.19", "83.64 / 85.29", "305 / 195"):
        assert number in text
    with open(tmp_path / "seed004_mnist.csv") as file:
        rows = list(csv.DictReader(file))
    assert len(rows) == 2 * len(experiment.METHODS)
    assert {row["method"] for row in rows} == set(experiment.METHODS)
    by_method = {}
    for row in rows:
        by_method.setdefault(row["method"], []).append(float(row["accuracy"]))
    # Ours and GaussianNB with the matching smoothing are the same model.
    assert by_method["naive_bayes"] == by_method["sklearn_gnb_matched"]
    assert min(by_method["naive_bayes"]) > 0.6 and min(by_method["sklearn_lr_ovr"]) > 0.6
    assert all(row["n_iter"] == "25" for row in rows if row["method"] == "perceptron")
    assert (tmp_path / "seed004_mnist.png").stat().st_size > 10_000
