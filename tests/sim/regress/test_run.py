"""The regression end to end under Verilator: a LocalCluster of two workers, a case compared
with a deliberately wrong model reported as a failure with its seed, and a case rerun
from its seed alone giving the verdict it had in its batch."""

import json

import pytest

from sim.regress.__main__ import main
from sim.regress.cases import draw_cases, materialise

SEED, CASES = 23, 8


def _mutated_index():
    """A case whose first tree surely comes out (depth limited: no tree_error), so a wrong
    model of it must be caught; not the last, so a case follows it in its batch."""
    for case in draw_cases(SEED, CASES, ["small"])[:-1]:
        if materialise(case)[2].max_depth is not None:
            return case["index"]
    raise AssertionError("no depth-limited case drawn")


@pytest.fixture(scope="module")
def regression(tmp_path_factory):
    out = tmp_path_factory.mktemp("regress")
    mutated = _mutated_index()
    status = main(["--cases", str(CASES), "--seed", str(SEED), "--shapes", "small", "--workers", "2",
                   "--mutate", str(mutated), "--out", str(out), "--no-progress"])
    return status, json.loads((out / "regress.json").read_text()), (out / "regress.md").read_text(), mutated


def test_a_wrong_model_is_reported_as_a_failure_with_its_seed(regression):
    status, report, markdown, mutated = regression
    assert status == 1
    assert report["cluster"]["workers"] == 2
    assert (report["cases_requested"], report["passed"], report["failed"]) == (CASES, CASES - 1, 1)
    case = report["cases"][mutated]
    [failure] = report["failures"]
    assert failure["index"] == mutated and failure["seed"] == case["seed"]
    assert "class_counts differs" in failure["error"]
    assert str(case["seed"]) in failure["rerun"] and failure["rerun"] in markdown
    for record in report["cases"]:
        assert record["verdict"]["seed"] == record["seed"]
        assert record["verdict"]["passed"] == (record["index"] != mutated)
        assert record["verdict"]["simulated_cycles"] > 0
    assert report["cases_per_second"] > 0


def test_a_case_reruns_from_its_seed_alone(regression, tmp_path):
    _, report, _, mutated = regression
    # A case run after the failing one: its verdict must not depend on what ran before it.
    record = report["cases"][mutated + 1]
    status = main(["--case", str(record["seed"]), "--shape", record["shape"], "--out", str(tmp_path),
                   "--no-progress"])
    assert status == 0
    rerun = json.loads((tmp_path / "regress.json").read_text())
    [alone] = rerun["cases"]
    assert alone["seed"] == record["seed"] and alone["verdict"]["passed"]
    for key in ("outcome", "cycles", "simulated_cycles"):
        assert alone["verdict"][key] == record["verdict"][key], key
