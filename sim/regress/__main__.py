"""``python -m sim.regress``: the random regression (see docs/regress.md).

::

    python -m sim.regress --cases 2000 --seed 1                  # LocalCluster, one worker per core
    python -m sim.regress --cases 2000 --seed 1 --scheduler tcp://host:8786
    python -m sim.regress --case 1835504127 --shape small        # rerun one case alone

Exit status 0 when every case passed, 1 when any failed.
"""

import argparse
import math
import shlex
import sys
import time

from sim.regress.cases import SHAPES, draw_case, draw_cases
from sim.regress.report import summarise, write_report

#: Most cases per Dask task: a simulator start costs seconds, a small case a fraction of one.
MAX_BATCH = 50


def _arguments(argv):
    from sim.runner import BUILD_ROOT
    parser = argparse.ArgumentParser(prog="python -m sim.regress", description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100, help="cases to draw (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="run seed the cases are drawn from (default %(default)s)")
    parser.add_argument("--shapes", nargs="+", choices=sorted(SHAPES), default=list(SHAPES),
                        help="build shapes the cases are drawn over (default: all)")
    parser.add_argument("--scheduler", help="address of an existing Dask scheduler (default: "
                        "DASK_SCHEDULER_ADDRESS, else a LocalCluster on this machine)")
    parser.add_argument("--workers", type=int, help="LocalCluster workers (default: one per core; "
                        "ignored with a scheduler)")
    parser.add_argument("--batch", type=int, help=f"cases per Dask task (default: the cases shared "
                        f"out over the workers, at most {MAX_BATCH})")
    parser.add_argument("--out", default=str(BUILD_ROOT / "regress"),
                        help="folder of regress.json and regress.md (default %(default)s)")
    parser.add_argument("--case", type=int, help="rerun the case of this seed alone (with --shape)")
    parser.add_argument("--shape", choices=sorted(SHAPES), help="the build shape of --case")
    parser.add_argument("--mutate", type=int, nargs="+", default=[], metavar="INDEX",
                        help="compare these cases (by index) with a deliberately wrong model, "
                        "to see that the regression fails and names them")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    arguments = parser.parse_args(argv)
    if (arguments.case is None) != (arguments.shape is None):
        parser.error("--case and --shape go together")
    if arguments.cases < 1:
        parser.error("--cases must be at least 1")
    if any(not 0 <= index < arguments.cases for index in arguments.mutate):
        parser.error(f"--mutate takes case indices from 0 to {arguments.cases - 1}")
    return arguments


def _rerun(arguments):
    """One case, in this process (no cluster)."""
    from sim.regress.run import prepare_builds, run_batch
    case = draw_case(arguments.case, arguments.shape)
    started = time.perf_counter()
    builds = prepare_builds([arguments.shape])
    built = time.perf_counter()
    verdicts = run_batch(builds[arguments.shape], [case])
    return [case], verdicts, builds, {"scheduler": "this process", "workers": 1, "threads": 1}, \
        built - started, time.perf_counter() - built, 1


def _regress(arguments):
    """The drawn cases, on the cluster."""
    from sim.regress.cluster import cluster_client, describe_cluster
    from sim.regress.run import prepare_builds, run_cases
    cases = draw_cases(arguments.seed, arguments.cases, arguments.shapes)
    for index in arguments.mutate:
        cases[index]["mutation"] = "wrong_expectation"
    started = time.perf_counter()
    builds = prepare_builds(sorted({case["shape"] for case in cases}))
    built = time.perf_counter()
    with cluster_client(arguments.scheduler, arguments.workers) as client:
        cluster = describe_cluster(client)
        batch = arguments.batch or max(1, min(MAX_BATCH, math.ceil(len(cases) / max(1, cluster["workers"]))))
        ran = time.perf_counter()
        verdicts = run_cases(client, builds, cases, batch, progress=not arguments.no_progress)
        done = time.perf_counter()
    return cases, verdicts, builds, cluster, built - started, done - ran, batch


def main(argv=None):
    arguments = _arguments(argv)
    runner = _rerun if arguments.case is not None else _regress
    cases, verdicts, builds, cluster, build_seconds, wall_seconds, batch = runner(arguments)
    command = shlex.join(["python", "-m", "sim.regress", *(sys.argv[1:] if argv is None else argv)])
    report = summarise(cases, verdicts, run_seed=None if arguments.case is not None else arguments.seed,
                       builds=builds, cluster=cluster, command=command, batch_size=batch,
                       build_seconds=build_seconds, wall_seconds=wall_seconds)
    json_path, markdown_path = write_report(report, arguments.out)
    print(f"{report['passed']} of {report['cases_requested']} cases passed in {report['wall_seconds']} s "
          f"({report['cases_per_second']} cases/s, builds {report['build_seconds']} s); "
          f"report: {markdown_path}, {json_path}")
    for failure in report["failures"]:
        print(f"FAILED case {failure['index']} seed {failure['seed']} ({failure['case']}): "
              f"{failure['error']}\n  rerun: {failure['rerun']}")
    return 1 if report["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
