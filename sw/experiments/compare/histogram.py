"""The comparison on datasets larger than the chip: forest mode on the histogram system.

A dataset whose training folds the comparison's ``ForestSystem`` build cannot hold
(isolet, mnist_test10k: hundreds of features) is trained in forest mode on the simulated
histogram system instead (``sim.histogram_backend``: one histogram PE, ``hw/histogram_pe.py``),
which reads its codes from a code store in the simulated DDR4 when they do not fit the
chip (:data:`sim.support.avalon.SIMULATED_DDR4`: its latency and its one word a cycle are
in the cycles). Its codes are :data:`CODE_BITS` bits (256 bins, as oneDAL's), so the
golden-model forest whose accuracy the comparison reports is trained at that width too.

Modelled time = (load + trees x cycles per tree / P) / clock, with

* load: the code store written into the memory one word a cycle (when the build keeps
  the codes there) and one beat a row for the labels (or the whole row on the chip):
  :func:`sim.histogram_backend.load_cycles`;
* cycles per tree: the simulated training's cycles (from the start to the last tree's
  last node) over its trees, the memory reads' waits included;
* P = 1: the histogram system holds one PE, and how many fit beside each other has not
  been measured;
* the clock: the proxy clock of the comparison, or less when the pass engine, the
  histogram PE's core, places below it (:func:`clock`).

Thesis mode has no hardware time here: the thesis-mode PE is the ``ForestSystem``'s.
"""

import time

from sw.data import datasets
from sw.experiments.compare import builds
from sw.experiments.compare.hwtime import baseline_columns, modelled_seconds
from sw.experiments.compare.simulate import tree_columns

__all__ = ["CODE_BITS", "CLOCK_ENTRY", "PE_COUNT", "comparison_build_shortfalls", "histogram_datasets",
           "forest_code_bits", "clock", "simulate", "summary", "columns"]

#: Code bits of the forest trained on the histogram system (its histograms' 256 bins).
CODE_BITS = 8
#: The placed build whose Fmax bounds the histogram PE's clock (``docs/fmax_builds.json``).
CLOCK_ENTRY = "pass_engine_ctg"
#: The histogram system's PEs (it holds one).
PE_COUNT = 1


def _fold_shape(name, folds):
    info = datasets.REGISTRY[name]
    return {"max_rows": info.n_samples - info.n_samples // folds, "feature_capacity": info.n_features,
            "classes": info.n_classes}


def comparison_build_shortfalls(name, folds):
    """The comparison build's shortfalls for ``name``'s training folds (``["max_rows 6238 >
    2048", ...]``; empty when the build holds them)."""
    return [f"{key} {value} > {builds.SIM_DESIGN[key]}" for key, value in _fold_shape(name, folds).items()
            if value > builds.SIM_DESIGN[key]]


def histogram_datasets(names, folds, trees, strict=True):
    """``{name: why}`` for the datasets of ``names`` that go to the histogram system (the
    comparison build's shortfalls); for one that neither holds, ``ValueError`` naming the
    limits (``strict``) or nothing (it stays on the golden model at its own code bits)."""
    routed = {}
    for name in names:
        short = comparison_build_shortfalls(name, folds)
        if not short:
            continue
        from sim import histogram_backend      # (loads cocotb)
        shape = _fold_shape(name, folds)
        asked = {"rows": shape["max_rows"], "features": shape["feature_capacity"], "classes": shape["classes"],
                 "code_bits": CODE_BITS, "trees": trees}
        over = [f"{key} {value} > {histogram_backend.LIMITS[key]}" for key, value in asked.items()
                if value > histogram_backend.LIMITS[key]]
        if over and not strict:
            continue
        if over:
            raise ValueError(f"{name}'s training folds fit neither the simulated build ({', '.join(short)}) nor "
                             f"the histogram system ({', '.join(over)}): use --no-sim for accuracy only")
        routed[name] = ", ".join(short)
    return routed


def forest_code_bits(name, arguments):
    """The code bits of the forest mode's golden model on ``name``: :data:`CODE_BITS` on a
    dataset the histogram system trains, else None (the estimator's own)."""
    return CODE_BITS if name in getattr(arguments, "histogram", {}) else None


def clock(proxy_mhz, proxy_source):
    """``(MHz, where it comes from)`` for the histogram PE: the comparison's proxy clock, or
    the pass engine's minimum Fmax over its placed seeds (:data:`CLOCK_ENTRY`) rounded down
    when that is lower; the seeds that did not route and a placement on older gateware are
    said."""
    from hw.flows.fmax import DEFAULT_SEEDS
    from hw.flows.fmax_record import BUILDS_RECORD, load_record, proxy_clock
    entry = load_record(BUILDS_RECORD)["entries"].get(CLOCK_ENTRY)
    if entry is None or entry.get("fmax_mhz") is None:
        return proxy_mhz, (f"{proxy_source}; the histogram PE's pass engine was never placed "
                           f"({CLOCK_ENTRY} is not in docs/fmax_builds.json), so nothing says it closes it")
    record = proxy_clock({"entries": {CLOCK_ENTRY: entry}},
                         expected={CLOCK_ENTRY: {"design": entry["design"],
                                                 "parameters": entry.get("requested", entry["parameters"])}})
    placed = sorted(entry["seeds"], key=int)
    unrouted = sorted(set(map(str, DEFAULT_SEEDS)) - set(placed), key=int)
    text = (f"the pass engine (the histogram PE's core, `{CLOCK_ENTRY}` in docs/fmax_builds.json) placed at "
            f"{min(entry['seeds'].values()):.1f} MHz at worst on the ECP5 proxy (seeds {', '.join(placed)}"
            + (f"; seed {', '.join(unrouted)} gave no placement" if unrouted else "") + "), rounded down")
    if record["stale"]:
        text += "; measured on older gateware"
    text += "; the histogram PE and system themselves were not placed"
    if record["clock_mhz"] >= proxy_mhz:
        return proxy_mhz, f"{proxy_source} ({text})"
    return float(record["clock_mhz"]), text


def simulate(firsts, arguments, progress=lambda name: None):
    """Train every dataset's first ``arguments.sim_histogram_trees`` forest-mode trees of fold
    0 on the simulated histogram system (``firsts``: name -> fold-0 data and fitted models);
    ``progress(name)`` after each. Returns name -> {"forest": :func:`summary`}."""
    from sim import histogram_backend      # (loads cocotb)
    samples = {}
    for name, first in firsts.items():
        estimator = first["hw_forest"]
        n_trees = min(arguments.sim_histogram_trees, len(estimator.trees_))
        codes = estimator.quantizer_.transform(first["X"])
        labels = estimator.classes_.searchsorted(first["y"])
        started = time.monotonic()
        result = histogram_backend.train(codes, labels, estimator.training_parameters_, estimator.seed_, n_trees,
                                         code_bits=CODE_BITS, progress=False, show_log=True)
        result["wall_seconds"] = time.monotonic() - started
        samples[name] = {"forest": summary(result, n_trees, estimator, len(first["y"]))}
        progress(name)
    return samples


def summary(result, n_trees, estimator, n_rows):
    """A simulated sample's columns (as :func:`sw.experiments.compare.simulate.sample_summary`'s;
    the histogram system reports the training's cycles only, so no spread over trees)."""
    from sim import histogram_backend      # (loads cocotb)
    design = result["design"]
    return {"trees": n_trees, **tree_columns(result["trees"], estimator, n_trees), "sort_cycles": 0,
            "train_cycles": result["train_cycles"], "overhead_cycles": 0,
            "cycles_per_tree": result["train_cycles"] / n_trees, "cycles_per_tree_sd": None,
            "load_cycles": histogram_backend.load_cycles(n_rows, design), "wall_seconds": result["wall_seconds"],
            "code_store": design.get("code_store", "chip"),
            # the code store's reads (none with the codes on the chip)
            "mb_read_per_tree": result.get("words_read", 0) * design.get("code_word_bits", 0) / 8e6 / n_trees}


def columns(row, samples, arguments):
    """Add a histogram-system dataset's simulated sample, modelled time and speed-ups to
    ``row`` (no thesis-mode time)."""
    clock_mhz, source = arguments.histogram_clock
    forest = samples["forest"]
    row.update(hw_engine="histogram", pe_count=PE_COUNT, pe_count_source="the histogram system's one PE",
               clock_mhz=clock_mhz, clock_source=source, code_bits=CODE_BITS)
    row.update({f"sim_forest_{key}": value for key, value in forest.items()})
    row["hw_forest_ms"] = 1000 * modelled_seconds(forest, arguments.trees, PE_COUNT, clock_mhz * 1e6)
    row.update(baseline_columns(row))
    row.update(cycles_per_tree=forest["cycles_per_tree"], one_pass_bound_cycles=forest["one_pass_bound_cycles"],
               cycles_over_one_pass_bound=forest["cycles_per_tree"] / forest["one_pass_bound_cycles"],
               rtl_equals_model=bool(forest["equal"]))
    return row
