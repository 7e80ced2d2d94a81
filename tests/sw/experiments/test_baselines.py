"""The side-by-side comparison of the host library's methods (``make baselines``)."""

import csv

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold
from sklearn.naive_bayes import GaussianNB

from sw.data.datasets import load
from sw.experiments.baselines import methods
from sw.experiments.baselines.run import main, parse_arguments, summarise


def test_summary_is_the_mean_and_the_standard_error_of_the_repeats_differences():
    # Two repeats of two folds; accuracies (fraction) per fold in split order.
    folds = [{"hw_forest": (0.90, 1.0), "sk_nb": (0.80, 0.5)},
             {"hw_forest": (0.70, 3.0), "sk_nb": (0.75, 0.5)},
             {"hw_forest": (0.80, 1.0), "sk_nb": (0.60, 1.5)},
             {"hw_forest": (0.90, 1.0), "sk_nb": (0.90, 1.5)}]
    rows = {row["method"]: row for row in summarise("x", folds, ["hw_forest", "sk_nb"], 2, 0.25)}
    # Repeat means of the differences: (-10 + 5) / 2 = -2.5 and (-20 + 0) / 2 = -10 points.
    assert rows["sk_nb"]["minus_hw_forest"] == pytest.approx(-6.25)
    assert rows["sk_nb"]["minus_hw_forest_se"] == pytest.approx(np.std([-2.5, -10], ddof=1) / np.sqrt(2))
    assert rows["sk_nb"]["accuracy"] == pytest.approx(76.25)
    assert rows["hw_forest"]["fit_ms"] == pytest.approx(1500) and rows["sk_nb"]["fit_ms"] == pytest.approx(1000)
    assert rows["hw_forest"]["hw_modelled_ms"] == 0.25 and rows["sk_nb"]["hw_modelled_ms"] is None
    one = summarise("x", folds[:2], ["hw_forest", "sk_nb"], 1)
    assert one[1]["minus_hw_forest_se"] is None


def test_every_method_is_a_fresh_seeded_estimator():
    for key in ("hw_forest", "sk_forest", "dal_forest", "sk_entropy_tree"):
        first, second = methods.method(key, 5), methods.method(key, 5)
        assert first is not second and first.get_params()["random_state"] == 5


def test_bad_options_are_refused(capsys):
    for argv, message in ((["--methods", "svm"], "unknown methods ['svm']"),
                          (["--folds", "1"], "--folds must be at least 2, not 1"),
                          (["--datasets", "nosuch"], "unknown dataset 'nosuch'")):
        with pytest.raises(SystemExit):
            parse_arguments(["--datasets", "iris", *argv] if "--datasets" not in argv else argv)
        assert message in capsys.readouterr().err
    # The hardware forest is always fitted: it is what every method is compared with.
    assert parse_arguments(["--datasets", "iris", "--methods", "sk_nb"]).methods == ["hw_forest", "sk_nb"]


def test_end_to_end_on_iris(tmp_path):
    assert main(["--datasets", "iris", "--methods", "sk_nb", "--folds", "3", "--repeats", "2",
                 "--jobs", "1", "--quiet", "--out", str(tmp_path),
                 "--compare-csv", str(tmp_path / "none.csv")]) == 0
    rows = {row["method"]: row for row in csv.DictReader(open(tmp_path / "baselines.csv"))}
    assert set(rows) == {"hw_forest", "sk_nb"}
    # GaussianNB on the same folds, computed here.
    data = load("iris")
    scores = [GaussianNB().fit(data.X[train], data.y[train]).score(data.X[test], data.y[test])
              for seed in (0, 1)
              for train, test in StratifiedKFold(3, shuffle=True, random_state=seed).split(data.X, data.y)]
    assert float(rows["sk_nb"]["accuracy"]) == pytest.approx(100 * np.mean(scores), rel=1e-5)
    assert (tmp_path / "baselines.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "scikit-learn GaussianNB (peer)" in (tmp_path / "baselines.md").read_text()
