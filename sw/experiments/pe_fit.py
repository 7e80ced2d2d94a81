"""How many PEs sized for each dataset fit a 10AX115: the P of the comparison's modelled time.

``python -m sw.experiments.pe_fit [--datasets ...] [--out results/pe_fit.md]`` (slow: two to
four full Yosys runs per dataset).

For each dataset, a processing element is built for its 5-fold training set (rows rounded
up to a power of two, as ``sim.backend.design_for`` does; above 1,024 training rows,
in-bag lists as long as a bootstrap of the training rows overflows with probability
1e-15, :func:`inbag_capacity`; its features and classes; ``max_depth`` 64, deep enough
for forest mode), once with 8 feature lanes (fewer for fewer features) and once with 4,
and synthesised with :func:`hw.flows.resources.estimate` (Yosys ``synth_intel_alm``,
Cyclone V cells as the Arria 10 proxy; see ``docs/arria10.md``). So is the whole
``forest_system`` with that one PE and its inference engine sized for the comparison's
forest (:data:`FOREST_TREES` trees of the PE's node count): the system minus the PE is what
sits on the chip beside the PEs (:func:`shell`: the inference engine's node memories, the
trainer's presorted, code and label banks, sorters and list rotor, the register bank and
the host streams). Then

    P = min over ALMs, M20K, DSP of floor((BUDGET x device - beside the PEs) / per PE)

with :data:`BUDGET` = 85 %, the rest left for routing and timing closure. (The per-PE
ports of the trainer's dispatcher and merger are counted with neither; they are a few
multiplexers per PE.)

The lanes with the higher ``P / (2 + ceil(F / lanes))`` (:func:`throughput`: PEs over
the passes per tree level of the cycle model) are chosen: fewer lanes cost more cycles
per tree but fewer DSP blocks per PE. Still an estimate: Quartus maps, places and routes
otherwise, and only a Quartus build shows what fits. The result is written to
:data:`FIT_FILE` (``docs/pe_fit.json``: per dataset P, lanes, the limiting resource, the
PE's parameters and estimate, with the digest of the sources of the system it was
measured on, :func:`fit_digest`), which the comparison reads (it does not run Yosys).
"""

import argparse
import json
import math
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hw.flows.cli import job_count
from hw.flows.fmax_record import design_digest
from hw.flows.resources import ARRIA10_10AX115, estimate
from sim.backend import BUILD_ROOT, PROJECT_ROOT

__all__ = ["FIT_FILE", "FIT_DESIGN", "inbag_capacity", "lane_options", "throughput",
           "pe_parameters", "system_parameters", "shell", "pes_that_fit", "design_digest",
           "fit_digest", "load_fits", "staleness", "P_RULE", "FOREST_TREES", "BUDGET", "main"]

#: Where the measured fits live (a measurement, so in docs/), written by :func:`main`.
FIT_FILE = PROJECT_ROOT / "docs" / "pe_fit.json"
#: The design whose gateware sources the fits depend on (the PE and the system beside it).
FIT_DESIGN = "forest_system"

FOLDS = 5
FEATURE_LANES = 8
MAX_DEPTH = 64
CODE_BITS = 16
RADIX_BITS = 8
#: Largest probability that one tree's bootstrap overflows the in-bag lists of a PE.
OVERFLOW_BOUND = 1e-15
#: In-bag list lengths are multiples of this (M20K blocks hold 512 x 40 or 2,048 x 10).
LIST_GRANULE = 256
#: Training sets above this many rows get in-bag lists shorter than the rows.
SHORT_LISTS_FROM = 1024
#: Trees the inference engine is sized for: the comparison's forest.
FOREST_TREES = 100
#: Share of each resource the PEs and everything beside them may use (the rest is left
#: for routing and timing closure).
BUDGET = 0.85
RESOURCES = ("alms", "m20k", "dsp")
#: How P is chosen, in words (the comparison's caption).
P_RULE = (f"every ALM, M20K and DSP count at most {BUDGET:.0%} of the 10AX115 with the "
          f"inference engine for {FOREST_TREES} trees, the trainer's banks, sorters and rotor "
          f"and the register bank counted beside the PEs")


def _power_of_two(value):
    return 1 << max(0, int(value) - 1).bit_length()


def inbag_capacity(rows, draws, bound=OVERFLOW_BOUND, granule=LIST_GRANULE):
    """In-bag list length (``max_inbag_rows``) that a bootstrap of ``draws`` draws from
    ``rows`` rows overflows with probability at most ``bound``: a multiple of ``granule``,
    at most ``rows``.

    The number D of distinct rows drawn has mean ``rows (1 - (1 - 1/rows) ** draws)``, and
    each draw changes D by at most one, so McDiarmid's inequality bounds
    ``P(D >= mean + t) <= exp(-2 t**2 / draws)``. A tree that does overflow is not
    truncated: the PE stops on ``inbag_overflow``, and the host refuses such a forest
    before it starts (``sim.backend``).
    """
    mean = rows * (1 - (1 - 1 / rows) ** draws)
    margin = math.sqrt(draws * math.log(1 / bound) / 2)
    return min(rows, granule * math.ceil((mean + margin) / granule))


def lane_options(n_features):
    """Lane counts tried for a dataset: 8 (or fewer for fewer features) and 4."""
    return sorted({min(lanes, _power_of_two(n_features)) for lanes in (FEATURE_LANES, 4)}, reverse=True)


def throughput(pe_count, n_features, lanes):
    """PEs over the passes per tree level of the cycle model (docs/gateware.md: scans,
    go-left bits and one partition pass per list a lane holds): what the lanes are
    chosen by. Fewer lanes mean more passes but fewer DSP blocks per PE."""
    return pe_count / (2 + -(-n_features // lanes))


def pe_parameters(n_rows, n_features, n_classes, folds=FOLDS, lanes=None):
    """``processing_element`` parameters for the training set of a ``folds``-fold split
    (forest mode: a bootstrap of as many draws as training rows); ``lanes`` default the
    first of :func:`lane_options`."""
    train_rows = n_rows - n_rows // folds
    max_rows = _power_of_two(train_rows)
    # Short lists only where they save block memory (lists longer than two 512 x 40 M20K
    # blocks); smaller PEs are bound by DSP blocks (docs/arria10.md).
    lists = inbag_capacity(train_rows, train_rows) if train_rows > SHORT_LISTS_FROM else max_rows
    return {"max_rows": max_rows, "max_samples": max_rows, "max_inbag_rows": lists,
            "feature_capacity": n_features,
            "feature_lanes": lanes or lane_options(n_features)[0], "code_bits": CODE_BITS,
            "classes": max(2, n_classes), "max_depth": MAX_DEPTH}


def system_parameters(parameters, trees=FOREST_TREES):
    """``forest_system`` parameters of one PE ``parameters`` with the inference engine
    sized for a forest of ``trees`` trees: the build whose estimate minus the PE's is what
    sits on the chip beside the PEs."""
    return {**parameters, "pe_count": 1, "max_trees": trees, "radix_bits": RADIX_BITS,
            "traversal_stages": 1}


def shell(system, pe):
    """What sits on the chip beside the PEs, per resource: the one-PE system's estimate
    ``system`` minus the PE's ``pe`` (dicts with ``alms``, ``m20k``, ``dsp``)."""
    return {key: max(0, system[key] - pe[key]) for key in RESOURCES}


def pes_that_fit(pe, beside, device=ARRIA10_10AX115, budget=BUDGET):
    """``(P, limiting resource, per-resource counts)``: PEs of estimate ``pe`` that fit
    ``budget`` of ``device`` with ``beside`` (:func:`shell`) on the chip too."""
    room = {key: budget * device[key] - beside[key] for key in RESOURCES}
    counts = {key: max(0, math.floor(room[key] / pe[key])) for key in RESOURCES if pe[key]}
    limiting = min(counts, key=counts.get)
    return counts[limiting], limiting, counts


def fit_digest():
    """The digest the fits are measured against: the gateware sources of
    :data:`FIT_DESIGN` (the PE and everything beside it on the chip,
    :func:`hw.flows.sources.design_sources`), so a block the system does not contain does
    not call P stale."""
    return design_digest(design=FIT_DESIGN)


def load_fits(path=None):
    """The measured fits (:data:`FIT_FILE`): ``{dataset: {"pe_count", "feature_lanes",
    "limited_by", "parameters", "estimate", "beside"}}``."""
    return json.loads(Path(path or FIT_FILE).read_text())["datasets"]


def staleness(path=None):
    """None when every fit (:data:`FIT_FILE`) was measured on today's gateware, else a
    sentence naming the datasets whose fits were not (their digest against
    :func:`fit_digest`; a record without per-dataset digests has one for all)."""
    record = json.loads(Path(path or FIT_FILE).read_text())
    current = fit_digest()
    measured = {name: fit.get("design_digest", record.get("design_digest"))
                for name, fit in record["datasets"].items()}
    older = sorted(name for name, digest in measured.items() if digest != current)
    if not older:
        return None
    digests = sorted({str(measured[name])[:10] for name in older})
    return (f"P measured on older gateware (docs/pe_fit.json digest {', '.join(digests)} for "
            f"{', '.join(older)}; the gateware's now {current[:10]}): rerun python -m "
            f"sw.experiments.pe_fit")


def _estimate_cached(name, parameters, folder, design_name="processing_element"):
    cache = folder / f"{name}.json"
    design = fit_digest()
    if cache.exists():
        cached = json.loads(cache.read_text())
        if (cached.get("design") == design
                and cached["parameters"] == {**cached["parameters"], **parameters}):
            return cached
    started = time.perf_counter()
    result = estimate(design_name, folder / name, parameters)
    result["seconds"] = time.perf_counter() - started
    result.pop("cells", None)
    result["design"] = design
    cache.write_text(json.dumps(result))
    return result


def write_fits(fits, path):
    """Record the chosen fit of every dataset measured (``main``'s ``fits``) in ``path``,
    each with the gateware digest and date it was measured on; datasets not measured this
    time keep their entry, digest and date."""
    digest, date = fit_digest(), time.strftime("%Y-%m-%d")
    record = {"tool": "python -m sw.experiments.pe_fit (Yosys synth_intel_alm estimates)",
              "datasets": {name: {"design_digest": digest, "date": date, "pe_count": fit["pe_count"],
                                  "feature_lanes": fit["parameters"]["feature_lanes"],
                                  "limited_by": fit["limited_by"], "parameters": fit["parameters"],
                                  "estimate": fit["estimate"], "beside": fit["beside"],
                                  "budget": BUDGET, "forest_trees": FOREST_TREES}
                           for name, fit in fits.items()}}
    if path.exists():
        # Kept entries keep the digest and date they were measured with.
        old = json.loads(path.read_text())
        kept = {name: {"design_digest": old.get("design_digest"), "date": old.get("date"), **fit}
                for name, fit in old["datasets"].items()}
        record["datasets"] = {**kept, **record["datasets"]}
    path.write_text(json.dumps(record, indent=1) + "\n")


def _measure(tasks, folder, jobs):
    """The PE's and the one-PE system's estimates of each task, in the tasks' order, as
    they come: up to ``jobs`` Yosys runs at once (each estimate is cached on its own, so
    runs that share the cache folder never do one twice once it is written)."""
    calls = [call for _, _, parameters, cache in tasks
             for call in ((cache, parameters, folder),
                          (f"{cache}_system", system_parameters(parameters), folder, "forest_system"))]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = pool.map(lambda call: _estimate_cached(*call), calls)
        for pe in results:
            yield pe, next(results)


def main(argv=None):
    from sw.data.datasets import THESIS_HARDWARE_DATASETS, available, load
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(THESIS_HARDWARE_DATASETS))
    parser.add_argument("--out", default=str(PROJECT_ROOT / "results" / "pe_fit.md"))
    parser.add_argument("--fits", default=str(FIT_FILE),
                        help="the measured fits the comparison reads (default: %(default)s)")
    parser.add_argument("--jobs", type=job_count, default=1,
                        help="Yosys runs at once (default: %(default)s); the big datasets' "
                             "system estimates are the long ones, so 2 on two cores")
    arguments = parser.parse_args(argv)
    folder = BUILD_ROOT / "pe_fit"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [f"| dataset | PE parameters | per PE: ALM / M20K / DSP | beside the PEs: ALM / M20K / DSP "
             f"| P by ALM / M20K / DSP at {BUDGET:.0%} | P | limited by | P / passes per level |",
             "|---|---|---|---|---|---|---|---|"]
    tasks = []          # (dataset, its features, PE parameters, cache name) per lane option
    for name in arguments.datasets:
        if not available(name):
            print(f"{name}: not available, skipped", file=sys.stderr)
            continue
        data = load(name)
        n_features = data.X.shape[1]
        for lanes in lane_options(n_features):
            parameters = pe_parameters(*data.X.shape, len(set(data.y)), lanes=lanes)
            cache = name if lanes == lane_options(n_features)[0] else f"{name}_lanes{lanes}"
            tasks.append((name, n_features, parameters, cache))
    options, rows = {}, {}          # per dataset: its lane options, its report rows
    measured = zip(tasks, _measure(tasks, folder, arguments.jobs))
    for (name, n_features, parameters, _), (pe, system) in measured:
        beside = shell(system, pe)
        count, limiting, counts = pes_that_fit(pe, beside)
        options.setdefault(name, []).append({
            "pe_count": count, "limited_by": limiting, "parameters": parameters,
            "throughput": throughput(count, n_features, parameters["feature_lanes"]),
            "estimate": {key: pe[key] for key in RESOURCES}, "beside": beside})
        rows.setdefault(name, []).append(
            f"| {name} | {', '.join(f'{k}={v}' for k, v in parameters.items())} | "
            f"{pe['alms']:,} / {pe['m20k']} / {pe['dsp']} | "
            f"{beside['alms']:,} / {beside['m20k']} / {beside['dsp']} | "
            f"{counts['alms']} / {counts['m20k']} / {counts['dsp']} | {count} | "
            f"{limiting} | {options[name][-1]['throughput']:.2f} |")
        print(rows[name][-1], f"({pe['seconds']:.0f} + {system['seconds']:.0f} s)", flush=True)
    fits = {name: max(choices, key=lambda option: option["throughput"])
            for name, choices in options.items()}
    for name, fit in fits.items():
        lines += [*rows[name], f"| **{name}: {fit['parameters']['feature_lanes']} lanes, "
                               f"P = {fit['pe_count']}** | | | | | | | |"]
    out = Path(arguments.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("# PEs sized per dataset that fit a 10AX115 (ESTIMATE)\n\n"
                   + __doc__.split("\n\n", 2)[2] + "\n" + "\n".join(lines) + "\n")
    write_fits(fits, Path(arguments.fits))
    print(f"wrote {out} and {arguments.fits}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
