"""Train on the simulated histogram system: ``backend="sim"`` for datasets a ``ForestSystem``
build cannot hold.

::

    result = train(codes, labels, params, seed, n_trees, code_bits=8)   # trees + cycles

As :mod:`sim.backend` does for the ``ForestSystem``: a job no build can serve is refused
at once, by value and limit (:func:`check_job`); a build already made that holds the job
is reused (:func:`choose_design`), else one is sized for it (:func:`design_for`: rows
rounded up to a power of two up to 1,024 and to a multiple of 1,024 beyond, features to a
multiple of the lanes, classes to a power of two, node memory for any tree of those rows,
depth 255), elaborated and compiled once; one host session trains the forest through the
system's registers (:mod:`sim.host.histogram_session`) with progress shown and the
simulator's log in a file.

**Where the codes live.** A build keeps the codes on the chip (the row gather's memory)
when they take at most :data:`CHIP_CODE_BITS` (half the M20K bits of the 10AX115, the rest
left to the PE); a larger dataset gets a build that reads them from the board's memory
(``code_store="memory"``, ``hw.code_reader``): the host writes the code store into the
simulated DDR4 (:data:`sim.support.avalon.SIMULATED_DDR4`: its latency is in the cycles)
and streams only the labels. A build made earlier that keeps more codes on the chip than
that is not reused (no 10AX115 takes it).

The histogram system trains forest-mode trees with ``min_samples_leaf = 1`` and codes of
at most 10 bits (``docs/out_of_core.md``), node for node as the golden model. It has no
inference engine: the estimator predicts a forest trained here with the golden model's
inference (which the ``ForestSystem``'s engine equals) and says so.
"""

from hw.checks import bits
from hw.flows.resources import ARRIA10_10AX115, M20K_CONFIGURATIONS
from sim.backend import _session
from sim.host.builds import build_folder, known_builds
from sim.host.histogram_driver import HistogramCapacity, check_histogram_job
from sim.support.avalon import SIMULATED_DDR4

__all__ = ["LIMITS", "LANES", "check_job", "design_for", "shortfall", "choose_design", "train", "built_at",
           "load_cycles"]

#: What the histogram system can be built for, in the user's terms (the row gather's,
#: bootstrap unit's and histogram lanes' ranges).
LIMITS = {"rows": 1 << 16, "features": 1024, "classes": 64, "code_bits": 10, "trees": 1 << 16}
#: Histogram lanes of a build (features gathered a pass).
LANES = 8
#: The depth limit of a build (the PE's largest): an unlimited tree runs with it.
DEPTH = 255
TOPLEVEL = "histogram_system"
#: Most code bits a build keeps on the chip: half the 10AX115's M20K (20,480 bits a block).
CHIP_CODE_BITS = ARRIA10_10AX115["m20k"] * max(depth * width for depth, width in M20K_CONFIGURATIONS) // 2


def _codes_on_chip(design):
    """Bits of codes ``design`` keeps on the chip (0 when they are in memory)."""
    if design.get("code_store", "chip") == "memory":
        return 0
    return design["max_rows"] * design["features"] * design["code_bits"]


def check_job(n_rows, n_features, n_classes, n_trees, params, *, code_bits):
    """Refuse, before any elaboration, a job the histogram system cannot train as the
    model does (a value past :data:`LIMITS`, thesis mode, ``min_samples_leaf`` above 1)."""
    limits = {"rows": n_rows, "features": n_features, "classes": n_classes, "code_bits": code_bits,
              "trees": n_trees}
    for name, value in limits.items():
        if value > LIMITS[name]:
            raise ValueError(f"backend='sim' (histogram system): {value} {name.replace('_', ' ')} is more "
                             f"than it can be built for ({LIMITS[name]})")
    check_histogram_job(HistogramCapacity(design_for(n_rows, n_features, n_classes, code_bits)), n_rows,
                        n_features, n_classes, params, n_trees)


def _power_of_two(value):
    return 1 << bits(max(1, value) - 1)


def design_for(n_rows, n_features, n_classes, code_bits, lanes=LANES):
    """The ``HistogramSystem`` parameters for a dataset of this size (module docstring)."""
    rows = _power_of_two(max(n_rows, 2)) if n_rows <= 1024 else -(-n_rows // 1024) * 1024
    lanes = min(lanes, n_features)
    features = -(-n_features // lanes) * lanes
    design = {"max_rows": rows, "features": features, "lanes": lanes, "code_bits": code_bits,
              "classes": max(2, _power_of_two(n_classes)), "count_bits": bits(rows),
              "pass_bits": max(1, bits(features // lanes - 1)),
              "max_nodes": min(1 << 16, _power_of_two(2 * rows - 1)), "max_depth": DEPTH, "tree_index_bits": 16}
    if _codes_on_chip(design) > CHIP_CODE_BITS:
        design.update(code_store="memory", code_word_bits=SIMULATED_DDR4["word_bits"])
    return design


def shortfall(design, n_rows, n_features, n_classes, code_bits, params, n_trees):
    """Why the build ``design`` cannot hold this job (naming the parameter), or None."""
    if design["code_bits"] != code_bits:
        return f"design code_bits = {design['code_bits']}, the job's codes are {code_bits} bits"
    if _codes_on_chip(design) > CHIP_CODE_BITS:
        return (f"design keeps {_codes_on_chip(design) / 1e6:.1f} Mbit of codes on the chip, more than "
                f"the {CHIP_CODE_BITS / 1e6:.1f} Mbit a build may (half the 10AX115's M20K)")
    try:
        check_histogram_job(HistogramCapacity(design), n_rows, n_features, n_classes, params, n_trees)
    except ValueError as error:
        return str(error)
    nodes = min(1 << 16, 2 * n_rows - 1)
    if design["max_nodes"] < nodes:
        return f"design max_nodes = {design['max_nodes']} is too small: a tree of {n_rows} rows may have {nodes}"
    if params.max_depth is None and design["max_depth"] < DEPTH:
        return (f"design max_depth = {design['max_depth']} is too small for trees without a depth limit "
                f"(builds have {DEPTH})")
    return None


def choose_design(n_rows, n_features, n_classes, code_bits, params, n_trees):
    """The smallest build already made that holds the job, else a new one. Returns
    ``(design, reused)``."""
    fitting = [design for design in known_builds(TOPLEVEL)
               if shortfall(design, n_rows, n_features, n_classes, code_bits, params, n_trees) is None]
    if not fitting:
        return design_for(n_rows, n_features, n_classes, code_bits), False
    return min(fitting, key=lambda d: (d["max_rows"] * d["features"], d["classes"])), True


def train(codes, labels, params, seed, n_trees, *, code_bits, design=None, progress=None, show_log=None):
    """Train ``n_trees`` trees on the simulated histogram system (``design``: a build's
    parameters, else :func:`choose_design`'s). Returns a dict: ``trees``, ``train_cycles``
    (from the start to the last tree's last node), ``design``. Raises ``ValueError`` for a
    job no build can serve and ``sim.host.errors.AcceleratorError`` for an error flag."""
    n_rows, n_features = codes.shape
    check_job(n_rows, n_features, params.n_classes, n_trees, params, code_bits=code_bits)
    if design is None:
        design, _ = choose_design(n_rows, n_features, params.n_classes, code_bits, params, n_trees)
    else:
        reason = shortfall(design, n_rows, n_features, params.n_classes, code_bits, params, n_trees)
        if reason is not None:
            raise ValueError(reason)
    job = {"train": {"codes": codes, "labels": labels, "params": params, "seed": seed, "n_trees": n_trees}}
    result = _session(design, job, module="sim.host.histogram_session", n_trees=n_trees, progress=progress,
                      show_log=show_log, toplevel=TOPLEVEL)
    result["design"] = dict(design)
    return result


def built_at(design):
    """When the Verilator model of the build ``design`` was last built (nanoseconds, the
    mtime of its Verilog digest), or None if it never was: a fit that reuses the build
    leaves it unchanged, whatever else is built beside it."""
    stamp = build_folder(design, TOPLEVEL) / "verilog.sha1"
    return stamp.stat().st_mtime_ns if stamp.exists() else None


def load_cycles(n_rows, design):
    """Cycles the host driver's load of ``n_rows`` rows takes on the build ``design``: its
    code store written into the memory one word a cycle (a build with
    ``code_store="memory"``), then a beat a row (the label, or the row's codes and label on
    the chip)."""
    store = HistogramCapacity(design).store
    words = 0 if store is None else store.size_bytes // store.word_bytes
    return words + n_rows
