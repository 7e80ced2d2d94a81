"""Which simulated accelerator serves a job: the limits, the sizing rule and the builds already made.

What ``sim.backend`` decides before any elaboration:

* :func:`check_job` refuses, at once and in the user's terms, a job no build can serve (a
  size beyond :data:`LIMITS`, or a build so large that elaborating and compiling it would
  take many minutes);
* :func:`choose_design` picks a build already made that holds the job (sizes rounded up to
  the build's capacities, so a new dataset size or depth does not rebuild), else sizes a new
  one with :func:`design_for`;
* :func:`shortfall` says why a given build cannot hold a job, naming the parameter.

The builds made are listed in ``$HWFOREST_BUILD_DIR/sim/backend_builds.json`` (only those
whose Verilator folder still exists count).
"""

import json
from pathlib import Path

from hw.designs import DESIGNS, design_name, system_for_dataset
from hw.flows.verilog import write_text_atomically
from hw.pe import LIMITS as PE_LIMITS
from hw.trainer import LIMITS as TRAINER_LIMITS
from sim import runner
from sw.methods.forest.model import inbag_row_count

__all__ = ["LIMITS", "VERILOG_LINES", "verilog_lines", "check_capacity", "check_job", "design_for", "shortfall",
           "choose_design", "record_build", "known_builds", "build_folder", "host_build_folders"]

#: Lines of Verilog a ``ForestSystem`` build elaborates to, about ``base + pe_count * (per_pe
#: + per_pe_row * max_rows) + per_cell * max_rows * feature_capacity`` (memories are written
#: word by word): fitted to the builds measured in docs/running.md, within 2 %.
VERILOG_LINES = {"base": 37_000, "per_pe": 46_000, "per_pe_row": 59, "per_cell": 4.2}
#: Elaboration time per million lines, the fastest measured (docs/running.md).
SECONDS_PER_MILLION_LINES = 95

#: What the simulated accelerator can be built for, in the user's terms: the upper ends of
#: the processing element's and forest trainer's parameter ranges, and ``verilog_lines``,
#: the largest build the simulation makes (the comparison's 2,048 rows x 64 features with 2
#: PEs is about 0.92 million lines, 90 s of elaboration before the Verilator build).
LIMITS = {"rows": PE_LIMITS["max_rows"][1], "features": PE_LIMITS["feature_capacity"][1],
          "classes": PE_LIMITS["classes"][1], "trees": TRAINER_LIMITS["max_trees"][1],
          "code_bits": PE_LIMITS["code_bits"][1], "pe_count": TRAINER_LIMITS["pe_count"][1],
          "max_depth": PE_LIMITS["max_depth"][1], "verilog_lines": 1_000_000}

#: Depth of a build for trees grown without a depth limit (``max_depth=None``).
UNLIMITED_DEPTH = 48


def check_capacity(**wanted):
    """Refuse, by name and limit, a job the simulated accelerator cannot be built for
    (keys of :data:`LIMITS` but ``verilog_lines``: rows, features, classes, trees, code_bits,
    pe_count, max_depth)."""
    for name, value in wanted.items():
        if name == "max_depth":
            if value is not None and value > LIMITS[name]:
                raise ValueError(f"backend='sim': max_depth={value} is more than the "
                                 f"{LIMITS[name]} levels the accelerator can be built for")
        elif value > LIMITS[name]:
            raise ValueError(f"backend='sim': {value} {name.replace('_', ' ')} is more than the "
                             f"accelerator can be built for ({LIMITS[name]})")


def design_for(n_rows, n_features, n_classes, n_trees, params, *, pe_count=2, feature_lanes=8,
               code_bits=16):
    """The ForestSystem parameters for a dataset of this size (a dict for ``simulate``;
    the rule is :func:`hw.designs.system_for_dataset`, its powers of two held to
    :data:`LIMITS`)."""
    depth = params.max_depth if params.max_depth is not None else UNLIMITED_DEPTH
    design = system_for_dataset(n_rows, n_features, n_classes, n_trees, depth,
                                pe_count=pe_count, feature_lanes=feature_lanes, code_bits=code_bits)
    design["max_depth"] = min(design["max_depth"], LIMITS["max_depth"])
    design["max_trees"] = min(design["max_trees"], LIMITS["trees"])
    return design


def verilog_lines(design):
    """The estimated size of the build ``design`` in lines of Verilog (:data:`VERILOG_LINES`)."""
    k = VERILOG_LINES
    return int(k["base"] + design["pe_count"] * (k["per_pe"] + k["per_pe_row"] * design["max_rows"])
               + k["per_cell"] * design["max_rows"] * design["feature_capacity"])


def check_job(n_rows, n_features, n_classes, n_trees, params, *, pe_count=2, code_bits=16):
    """Refuse, before any elaboration, a job no simulated build can serve: a value beyond
    :data:`LIMITS`, or a dataset whose build would be larger than ``LIMITS["verilog_lines"]``
    (elaboration time grows with it)."""
    check_capacity(rows=n_rows, features=n_features, classes=n_classes, trees=n_trees,
                   code_bits=code_bits, pe_count=pe_count, max_depth=params.max_depth)
    design = design_for(n_rows, n_features, n_classes, n_trees, params, pe_count=pe_count,
                        code_bits=code_bits)
    lines, limit = verilog_lines(design), LIMITS["verilog_lines"]
    if lines > limit:
        seconds = lines * SECONDS_PER_MILLION_LINES // 1_000_000
        raise ValueError(
            f"backend='sim': {n_rows} rows x {n_features} features with {pe_count} PEs need a build "
            f"of {design['max_rows']} rows x {design['feature_capacity']} features, about "
            f"{lines / 1e6:.1f} million lines of Verilog (at least {seconds // 60} min {seconds % 60} s "
            f"of elaboration before the Verilator build); the simulation makes builds of at most "
            f"{limit / 1e6:.1f} million (2,048 rows x 64 features with 2 PEs, about 90 s). Use "
            f"fewer rows, features or PEs, or backend='model' (the same trees)")


def shortfall(design, codes, params, n_trees, seed):
    """Why the build ``design`` cannot hold this job (a message naming the parameter), or
    None. For lists shorter than the rows (``max_inbag_rows``), names the first tree whose
    bootstrap does not fit."""
    n_rows, n_features = codes.shape
    lists = design.get("max_inbag_rows") or design.get("max_rows", n_rows)
    could_draw = min(n_rows, params.max_samples) if params.bootstrap else n_rows
    for tree in range(n_trees if could_draw > lists else 0):
        distinct = inbag_row_count(n_rows, params, seed, tree)
        if distinct > lists:
            return (f"design max_inbag_rows = {lists} is too small: tree {tree} of seed "
                    f"{seed} draws {distinct} distinct rows")
    needed = {"max_rows": n_rows, "max_samples": params.max_samples, "feature_capacity": n_features,
              "classes": params.n_classes, "max_trees": n_trees,
              "code_bits": max(1, int(codes.max(initial=0)).bit_length())}
    if params.max_depth is not None:
        needed["max_depth"] = params.max_depth
    for name, value in needed.items():
        if name not in design:
            return f"design has no {name!r} (needed: {value})"
        if value > design[name]:
            return f"design {name} = {design[name]} is too small: the job needs {value}"
    return None


def build_folder(design, toplevel="forest_system"):
    """The Verilator folder ``sim.runner`` builds ``design`` (parameters of the top-level
    design ``toplevel``) into (port visibility)."""
    parameters = {**DESIGNS[toplevel][1], **design}
    return runner.BUILD_ROOT / "sim" / f"{design_name(toplevel, parameters)}_ports"


def host_build_folders():
    """Every Verilator folder the host backends built (``*_ports``; block testbenches
    build with every signal visible, into folders without the suffix)."""
    return set((runner.BUILD_ROOT / "sim").glob("*_ports"))


#: The file listing the builds made for each top-level design the backend drives.
_REGISTRIES = {"forest_system": "backend_builds.json", "histogram_system": "histogram_builds.json"}


def _registry(toplevel):
    return Path(runner.BUILD_ROOT) / "sim" / _REGISTRIES[toplevel]


def known_builds(toplevel="forest_system"):
    """The designs built for the backend whose Verilator folder still exists."""
    try:
        designs = json.loads(_registry(toplevel).read_text())
    except (OSError, ValueError):
        return []
    return [design for design in designs if (build_folder(design, toplevel) / "verilog.sha1").exists()]


def record_build(design, toplevel="forest_system"):
    """Add ``design`` to the builds that later jobs may reuse (atomically)."""
    designs = known_builds(toplevel)
    if dict(design) in designs:
        return
    path = _registry(toplevel)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(path, json.dumps([*designs, dict(design)], indent=1, sort_keys=True))


def choose_design(codes, params, n_trees, seed, *, pe_count=2, feature_lanes=8, code_bits=16):
    """The smallest build already made that holds the job with ``pe_count`` PEs (a tree
    without a depth limit needs the depth a new build would have), else a new one sized by
    :func:`design_for`. Returns ``(design, reused)``."""
    n_rows, n_features = codes.shape
    new = design_for(n_rows, n_features, params.n_classes, n_trees, params, pe_count=pe_count,
                     feature_lanes=feature_lanes, code_bits=code_bits)
    fitting = [design for design in known_builds()
               if design.get("pe_count") == pe_count and design.get("max_depth", 0) >= new["max_depth"]
               and verilog_lines(design) <= LIMITS["verilog_lines"]
               and shortfall(design, codes, params, n_trees, seed) is None]
    if not fitting:
        return new, False
    return min(fitting, key=lambda d: (d["max_rows"] * d["feature_capacity"], d["max_depth"],
                                       d["max_trees"], d["classes"])), True
