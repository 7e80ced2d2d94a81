"""Building the regression's shapes once, and running a batch of cases on a built model.

:func:`prepare_builds` runs on the machine that starts the regression, before any case is
dispatched: it elaborates each build shape and builds its Verilator model once
(``sim.runner.build``, cached by Verilog digest under ``sim.runner.BUILD_ROOT``).
:func:`run_batch` is what a Dask worker runs: it starts the built simulator on
``sim.tb_regress`` for a batch of cases (no elaboration, no Verilator, no compiler) and
returns one verdict per case. A worker that cannot see the build folder (a cluster on
other machines without a shared file system) builds the shape itself first, once.
"""

import json
import tempfile
from pathlib import Path

from sim import runner
from sim.regress.cases import SHAPES, describe, shape_parameters

__all__ = ["TEST_MODULE", "prepare_builds", "run_batch", "batches", "run_cases"]

TEST_MODULE = "sim.tb_regress"
#: Lines of the simulator's log kept with a batch that stopped abnormally.
LOG_TAIL_LINES = 30


def prepare_builds(shapes):
    """Build every shape in ``shapes`` (once); return name -> build record for :func:`run_batch`."""
    builds = {}
    for shape in shapes:
        design = SHAPES[shape][0]
        parameters = shape_parameters(shape)
        build_dir, toplevel = runner.build(design, parameters)
        builds[shape] = {"shape": shape, "design": design, "parameters": parameters,
                         "build_dir": str(Path(build_dir).resolve()), "toplevel": toplevel}
    return builds


def _simulator(build):
    """(build folder, top module) of ``build``, building it here if this machine lacks it."""
    build_dir, toplevel = Path(build["build_dir"]), build["toplevel"]
    if not (build_dir / toplevel).exists():
        build_dir, toplevel = runner.build(build["design"], build["parameters"])
    return Path(build_dir), toplevel


def _start(build_dir, toplevel, settings, seed, folder):
    """Run the built simulator on ``sim.tb_regress`` with ``settings``; return its exit status."""
    from cocotb_tools.runner import get_runner
    runner.verilator_environment()
    simulator = get_runner("verilator")
    environment = runner.testbench_environment(settings)
    try:
        simulator.test(test_module=TEST_MODULE, hdl_toplevel=toplevel, hdl_toplevel_lang="verilog",
                       build_dir=build_dir, test_dir=folder, seed=seed, extra_env=environment,
                       results_xml=str(Path(folder) / "results.xml"),
                       log_file=Path(folder) / "simulator.log")
    except SystemExit as stop:
        return stop.code or 0
    except RuntimeError as error:       # the simulator's exit status was not 0
        return str(error)
    return 0


def run_batch(build, cases):
    """Run ``cases`` (all of shape ``build["shape"]``) in one simulator start; return their
    verdicts in case order. A case the simulator did not decide (it stopped or crashed
    first) is a failure naming the exit status, with the end of the simulator's log."""
    build_dir, toplevel = _simulator(build)
    with tempfile.TemporaryDirectory(prefix="hwforest-regress-") as folder:
        cases_path, verdicts_path = Path(folder) / "cases.json", Path(folder) / "verdicts.jsonl"
        cases_path.write_text(json.dumps(cases))
        settings = {"design": build["parameters"], "cases": str(cases_path),
                    "verdicts": str(verdicts_path)}
        status = _start(build_dir, toplevel, settings, cases[0]["seed"], folder)
        # One line per decided case, in case order.
        decided = ([json.loads(line) for line in verdicts_path.read_text().splitlines()]
                   if verdicts_path.exists() else [])
        log = Path(folder) / "simulator.log"
        tail = log.read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:] if log.exists() else []
    verdicts = []
    for position, case in enumerate(cases):
        verdict = decided[position] if position < len(decided) else None
        if verdict is None:
            verdict = {"index": case.get("index"), "seed": case["seed"], "shape": case["shape"],
                       "passed": False, "simulated_cycles": 0, "wall_seconds": 0.0,
                       "error": f"the simulator stopped (exit status {status}) before the case "
                                f"was decided ({describe(case)})", "log_tail": tail}
        verdicts.append(verdict)
    return verdicts


def _failed_batch(cases, error):
    return [{"index": case.get("index"), "seed": case["seed"], "shape": case["shape"], "passed": False,
             "simulated_cycles": 0, "wall_seconds": 0.0,
             "error": f"the Dask task of its batch failed: {type(error).__name__}: {error}"} for case in cases]


def batches(cases, batch_size):
    """``cases`` in batches of at most ``batch_size`` cases of one shape, the shapes of
    bigger builds first (their cases are the longest; started first, they end no later
    than the rest)."""
    by_shape = {}
    for case in cases:
        by_shape.setdefault(case["shape"], []).append(case)
    order = sorted(by_shape, key=lambda shape: -shape_parameters(shape)["max_rows"])
    return [(shape, by_shape[shape][start:start + batch_size])
            for shape in order for start in range(0, len(by_shape[shape]), batch_size)]


def run_cases(client, builds, cases, batch_size, progress=True):
    """Run ``cases`` on the Dask cluster of ``client``, one task per batch; return the
    verdicts in case order. Shows a progress bar over the cases as batches complete."""
    from distributed import as_completed
    from tqdm import tqdm
    work = batches(cases, batch_size)
    futures = {client.submit(run_batch, builds[shape], batch, pure=False, priority=len(work) - number): batch
               for number, (shape, batch) in enumerate(work)}
    verdicts = {}
    failed = 0
    with tqdm(total=len(cases), unit="case", desc="regression", disable=not progress) as bar:
        for future in as_completed(futures):
            batch = futures[future]
            try:
                results = future.result()
            except Exception as error:      # the worker died, or the task raised
                results = _failed_batch(batch, error)
            for case, verdict in zip(batch, results):
                verdicts[id(case)] = verdict
                failed += not verdict["passed"]
            bar.update(len(batch))
            bar.set_postfix(failed=failed)
    return [verdicts[id(case)] for case in cases]
