"""The seed 001 reproduction (``python -m sw.experiments.seed001_mnist``): its published
numbers against the seed's text, and a smoke run on a few hundred MNIST images."""

import csv
from pathlib import Path

import pytest

from sw.data import datasets
from sw.experiments import seed001_mnist

ROOT = Path(__file__).resolve().parents[3]
SEED_FILE = ROOT.parent / "shared" / "seeds" / "001_91dbfeccdf6be9db.txt"
DATA_HINT = ("mnist_test10k data file not found: set HWFOREST_DATA_DIR to a directory "
             "holding mnist_test10k.csv.gz (e.g. /work/shared/datasets) or fetch it with "
             "sw.data.datasets.download('mnist_test10k') and HWFOREST_DATA_URL")


@pytest.mark.skipif(not SEED_FILE.exists(), reason="the seed files are not beside this checkout")
def test_published_numbers_are_the_seeds_table():
    lines = SEED_FILE.read_text().splitlines()
    row = lambda number, name: lines[number - 1].split("\t")[1:] if lines[number - 1].startswith(
        name) else pytest.fail(f"line {number} is not the {name} row")
    table = list(zip(*[row(309, "Training Configuration"), row(310, "numFeatures"),
                       row(311, "minLeaf"), row(312, "Error Rate"), row(313, "Mins To Train")]))
    assert [(int(c), int(f), int(m), float(e), int(t)) for c, f, m, e, t in table] == \
        seed001_mnist.SEED_001["table_4_2"]
    assert lines[seed001_mnist.SEED_001["table_4_1_line"] - 1] == "Decision Tree\t18.42%\t81.16%"
    assert "N_tr = 35e3" in lines[363] and "N_te = 35e3" in lines[364]


def test_smoke_run_writes_the_tables_and_plot(tmp_path):
    if not datasets.available("mnist_test10k"):
        pytest.skip(DATA_HINT)
    data = datasets.load("mnist_test10k")
    images = (data.X[:400], data.y[:400])
    rows = seed001_mnist.run(images, None, [0], quick=True)
    paths = seed001_mnist.write(rows, tmp_path, [0], quick=True)
    assert [p.name for p in paths] == ["seed001_mnist.md", "seed001_mnist.csv",
                                       "seed001_mnist.png"]
    assert all(p.stat().st_size > 0 for p in paths)
    with open(paths[1]) as file:
        table = list(csv.DictReader(file))
    # 11 columns x (ours, scikit-learn) + two exhaustive searches and the LDA classifier
    assert len(table) == 11 * 2 + 3
    assert {r["train"] for r in table} == {"200"} and {r["test"] for r in table} == {"200"}
    lda = [r for r in table if r["feature_kind"] == "LDA"]
    assert {r["features"] for r in lda} == {"9"}
    once = [int(r["depth"]) for r in lda if r["method"] in ("ours (line search)",
                                                             "ours (exhaustive search)")]
    assert len(once) == 2 and max(once) <= 9             # a feature once per path: depth <= 9
    errors = [float(r["error_pct"]) for r in table]
    assert all(0 <= e < 90 for e in errors)              # better than chance (10 classes)
    text = paths[0].read_text()
    assert "18.42" in text and "not available offline" in text and text.count("| PCA-") == 10
