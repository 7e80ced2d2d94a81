"""The regression's report, without Verilator: failures with their seeds, rerun commands,
batches, and comparing two reports."""

import json

from sim.regress.__main__ import _arguments
from sim.regress.cases import draw_case, draw_cases
from sim.regress.report import comparable, main, rerun_command, summarise, write_report
from sim.regress.run import batches

BUILDS = {"small": {"design": "forest_trainer", "parameters": {"max_rows": 64}, "toplevel": "t"}}


def _verdict(case, passed, seconds):
    verdict = {"index": case["index"], "seed": case["seed"], "shape": case["shape"], "passed": passed,
               "simulated_cycles": 1000 + case["index"], "wall_seconds": seconds}
    return {**verdict, "outcome": "forest"} if passed else {**verdict, "error": "AssertionError: differs"}


def _report(cases, failing, seconds, cluster):
    verdicts = [_verdict(case, case["index"] not in failing, seconds) for case in cases]
    return summarise(cases, verdicts, run_seed=4, builds=BUILDS, cluster=cluster, command="x",
                     batch_size=3, build_seconds=seconds, wall_seconds=10 * seconds)


def test_failures_carry_their_seed_and_a_command_that_redraws_the_case():
    cases = draw_cases(4, 6, ["small"])
    report = _report(cases, {1, 4}, 1.0, {"scheduler": "a", "workers": 2})
    assert (report["passed"], report["failed"]) == (4, 2)
    assert [failure["seed"] for failure in report["failures"]] == [cases[1]["seed"], cases[4]["seed"]]
    for failure in report["failures"]:
        arguments = _arguments(failure["rerun"].split()[3:])
        case = cases[failure["index"]]
        assert {**draw_case(arguments.case, arguments.shape), "index": failure["index"]} == case
    assert report["cases_per_second"] == 0.6 and report["simulated_cycles"] == sum(1000 + i for i in range(6))


def test_reports_of_two_clusters_agree_except_times(tmp_path, capsys):
    cases = draw_cases(4, 6, ["small"])
    first = _report(cases, {2}, 1.0, {"scheduler": "tcp://a:1", "workers": 2})
    second = _report(cases, {2}, 7.5, {"scheduler": "tcp://b:2", "workers": 4})
    assert comparable(first) == comparable(second)
    paths = []
    for name, report in (("a", first), ("b", second)):
        json_path, markdown_path = write_report(report, tmp_path / name)
        assert rerun_command(cases[2]) in markdown_path.read_text()
        paths.append(str(json_path))
    assert main(paths) == 0
    other = _report(cases, {3}, 1.0, {"scheduler": "tcp://a:1", "workers": 2})
    write_report(other, tmp_path / "c")
    assert main([paths[0], str(tmp_path / "c" / "regress.json")]) == 1
    assert "failures" in capsys.readouterr().out
    assert json.loads((tmp_path / "a" / "regress.json").read_text())["failed"] == 1


def test_batches_hold_one_shape_and_every_case_once():
    cases = draw_cases(9, 23)
    work = batches(cases, 4)
    assert all(len(batch) <= 4 and {case["shape"] for case in batch} == {shape} for shape, batch in work)
    assert sorted(case["index"] for _, batch in work for case in batch) == list(range(23))
    assert work[0][0] == "medium", "the bigger build's cases go first"
