"""The command line of the comparison: its options, checked before any work, and
:func:`main`, which runs the cross-validation and the simulated samples, then times
scikit-learn alone and writes ``compare.md``, ``compare.csv`` and ``compare.png``.
"""

import argparse
import os
import sys
import time

from tqdm import tqdm

from sw.data import datasets
from sw.experiments.compare import builds, histogram
from sw.experiments.compare.hwtime import hardware_columns
from sw.experiments.compare.report import plot, render
from sw.experiments.compare.run import accuracy_row, untimed_phase
from sw.experiments.compare.simulate import design_key
from sw.experiments.report import results_dir, write_csv


def default_datasets():
    """The six thesis datasets when all are available, else those found plus the bundled."""
    found = [name for name in datasets.THESIS_HARDWARE_DATASETS if datasets.available(name)]
    if len(found) == len(datasets.THESIS_HARDWARE_DATASETS):
        return found
    return list(dict.fromkeys(found + [n for n in builds.BUNDLED_DATASETS if datasets.available(n)]))


def _depth(text):
    if text.lower() in ("none", "unlimited"):
        return None
    value = _positive_int(text)
    if value > builds.SIM_DESIGN["max_depth"]:
        raise argparse.ArgumentTypeError(
            f"depth {value} is deeper than the simulated build holds ({builds.SIM_DESIGN['max_depth']})")
    return value


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {value}")
    return value


def _pe_count(text):
    if text == "auto":
        return None
    value = _positive_int(text)
    if value > 1024:
        raise argparse.ArgumentTypeError(f"{value} PEs is far beyond any Arria 10 (at most 1024)")
    return value


def _clock(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a clock in MHz, not {text!r}") from None
    if not 0 < value <= 1000:
        raise argparse.ArgumentTypeError(f"clock must be in (0, 1000] MHz, not {value}")
    return value


def parse_arguments(argv=None):
    """Parse and check the options (``argparse`` exits with a message on a bad one)."""
    parser = argparse.ArgumentParser(
        prog="python -m sw.experiments.compare",
        description="Accelerator (forest and thesis mode) vs scikit-learn vs the thesis: "
                    "k-fold accuracy and modelled training time (docs/compare.md).")
    parser.add_argument("--datasets", nargs="+", metavar="NAME",
                        help="datasets (default: the six thesis datasets if HWFOREST_DATA_DIR "
                             "holds them, else iris, wine, breast_cancer_wisconsin)")
    parser.add_argument("--trees", type=_positive_int, default=100,
                        help="forest-mode trees, also scikit-learn's (default 100)")
    parser.add_argument("--depth", type=_depth, default=None,
                        help="forest-mode max_depth, 'none' for unlimited (default none)")
    parser.add_argument("--folds", type=_positive_int, default=5,
                        help="stratified CV folds (default 5, as the thesis)")
    parser.add_argument("--repeats", type=_positive_int, default=10,
                        help="repeat the k-fold CV with seeds seed, seed+1, ... (default 10: one "
                             "5-fold run's forest-vs-scikit-learn difference moves by 1 to 3 "
                             "points from seed to seed on cmc and sonar)")
    parser.add_argument("--seed", type=int, default=0,
                        help="CV shuffle and forest seeds of the first repeat (default 0)")
    parser.add_argument("--pe-count", type=_pe_count, default=None, metavar="P",
                        help="PEs for the modelled time; 'auto' (default) = the estimate per "
                             "dataset (PE_FIT)")
    parser.add_argument("--clock-mhz", type=_clock, default=None,
                        help="clock for the modelled time, for what-ifs (default: the ECP5 "
                             "proxy's minimum Fmax over all designs, docs/fmax.json, rounded "
                             "down; 100, the thesis's, once every design reaches it)")
    parser.add_argument("--cpu-timings", type=_positive_int, default=3, metavar="N",
                        help="time each CPU forest's fit N times per fold and keep the least "
                             "(default 3)")
    parser.add_argument("--sim-trees", type=_positive_int, default=8, metavar="K",
                        help="forest-mode trees simulated per dataset (default 8)")
    parser.add_argument("--sim-thesis-trees", type=_positive_int, default=32, metavar="K",
                        help="thesis-mode trees simulated per dataset (default 32)")
    parser.add_argument("--sim-histogram-trees", type=_positive_int, default=2, metavar="K",
                        help="forest-mode trees simulated per dataset larger than the simulated "
                             "build, on the histogram system (default 2: an isolet tree takes "
                             "about a minute to simulate, an MNIST tree three)")
    parser.add_argument("--no-sim", action="store_true",
                        help="skip the Verilator runs (no hardware time; accuracy only)")
    parser.add_argument("--jobs", type=_positive_int, default=os.cpu_count() or 1, metavar="N",
                        help="processes for the accuracy folds and the Verilator builds, "
                             "beside which the samples are simulated (default: the machine's "
                             "cores, %(default)s); scikit-learn is timed afterwards with nothing "
                             "else running")
    parser.add_argument("--out", default="results", help="output folder (default results)")
    parser.add_argument("--no-plot", action="store_true", help="do not draw compare.png")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    arguments = parser.parse_args(argv)
    if arguments.folds < 2:
        parser.error(f"--folds must be at least 2, not {arguments.folds}")
    if not 0 <= arguments.seed < 1 << 31:
        parser.error(f"--seed must be in [0, 2**31), not {arguments.seed}")
    if arguments.seed + arguments.repeats > 1 << 31:
        parser.error(f"--seed + --repeats must be at most 2**31 (the last repeat's seed is "
                     f"seed + repeats - 1), not {arguments.seed + arguments.repeats}")
    for option in ("sim_trees", "sim_thesis_trees"):
        if getattr(arguments, option) > builds.SIM_DESIGN["max_trees"]:
            parser.error(f"--{option.replace('_', '-')} must be at most {builds.SIM_DESIGN['max_trees']} "
                         f"(the simulated build's max_trees), not {getattr(arguments, option)}")
    if arguments.sim_trees > arguments.trees:
        parser.error(f"--sim-trees ({arguments.sim_trees}) must not exceed --trees "
                     f"({arguments.trees})")
    clock_given = arguments.clock_mhz is not None
    if clock_given:
        arguments.clock_source = "given with --clock-mhz (a what-if, not a timing result)"
    elif not arguments.no_sim:
        arguments.clock_mhz, arguments.clock_source = builds.proxy_clock()
    if arguments.datasets is None:
        arguments.datasets = default_datasets()
        missing = [name for name in datasets.THESIS_HARDWARE_DATASETS if name not in arguments.datasets]
        if missing:
            print(f"compare: the thesis datasets {', '.join(missing)} are not available, so this "
                  f"run is not the headline's; it compares on {', '.join(arguments.datasets)}. Set "
                  f"{datasets.DATA_DIR_VARIABLE} to the datasets folder (docs/running.md).",
                  file=sys.stderr)
    for name in arguments.datasets:
        if name not in datasets.REGISTRY:
            parser.error(f"unknown dataset {name!r}; known: {', '.join(datasets.REGISTRY)}")
        if not datasets.available(name):
            parser.error(f"dataset {name!r} is not available: set HWFOREST_DATA_DIR to the folder "
                         f"holding it (see docs/running.md)")
    if len(set(arguments.datasets)) != len(arguments.datasets):
        parser.error("a dataset is named twice in --datasets")
    # Datasets the simulated build cannot hold train on the histogram system (8-bit codes).
    try:
        arguments.histogram = histogram.histogram_datasets(arguments.datasets, arguments.folds, arguments.trees,
                                                           strict=not arguments.no_sim)
    except ValueError as error:
        parser.error(str(error))
    if arguments.histogram and not arguments.no_sim:
        arguments.histogram_clock = (
            (arguments.clock_mhz, arguments.clock_source) if clock_given
            else histogram.clock(arguments.clock_mhz, arguments.clock_source))
    if arguments.pe_count is None and not arguments.no_sim:
        missing = [name for name in arguments.datasets
                   if name not in builds.PE_FIT and name not in arguments.histogram]
        if missing:
            parser.error(f"no PE estimate for {', '.join(missing)} (PE_FIT has "
                         f"{', '.join(builds.PE_FIT)}): pass --pe-count P, or run "
                         f"'python -m sw.experiments.pe_fit --datasets {' '.join(missing)}'")
    return arguments


def main(argv=None):
    """Run the comparison (``python -m sw.experiments.compare``); 1 if the RTL differed."""
    arguments = parse_arguments(argv)
    started = time.perf_counter()
    out = results_dir(arguments.out)
    on_system = [name for name in arguments.datasets if name not in arguments.histogram]
    sim_jobs = 0 if arguments.no_sim else 2 * len(on_system) + len(arguments.histogram)
    designs = [] if arguments.no_sim else list(
        {design_key(design): design for design in map(builds.sim_design, on_system)}.values())
    log = out / "compare_sim.log"
    log.unlink(missing_ok=True)
    splits = len(arguments.datasets) * arguments.folds * arguments.repeats
    timed = len(arguments.datasets) * arguments.folds
    # The bar writes to a copy of the terminal's stderr, so that it keeps drawing while
    # the simulator's output is sent to a log file.
    terminal = os.fdopen(os.dup(2), "w")
    try:
        rows = []
        with tqdm(total=splits + len(designs) + sim_jobs + timed, disable=arguments.quiet,
                  unit="step", file=terminal, dynamic_ncols=True) as bar:
            try:
                scored, samples = untimed_phase(arguments, designs, log, bar)
            except SystemExit:
                raise
            except Exception as error:
                where = f"; the Verilator builds' output is in {log}" if designs else ""
                raise SystemExit(f"the accuracy folds or the Verilator builds failed "
                                 f"({error!r}){where}") from error
            # Nothing else runs now: scikit-learn's fit times are measured alone.
            for name in arguments.datasets:
                bar.set_description(f"{name}: timing scikit-learn alone")
                row, _ = accuracy_row(name, arguments, tick=lambda: bar.update(1),
                                      scored=scored[name])
                if samples is not None:
                    columns = histogram.columns if name in arguments.histogram else hardware_columns
                    columns(row, samples[name], arguments)
                rows.append(row)
            bar.set_description("done")
    finally:
        terminal.close()
    seconds = time.perf_counter() - started
    text = render(rows, arguments, seconds)
    (out / "compare.md").write_text(text)
    write_csv(rows, out / "compare.csv")
    written = [out / "compare.md", out / "compare.csv"]
    if not arguments.no_plot:
        plot(rows, out / "compare.png")
        written.append(out / "compare.png")
    print(text)
    print("wrote " + ", ".join(map(str, written)))
    failed = [row["dataset"] for row in rows if row.get("rtl_equals_model") is False]
    if failed:
        print(f"ERROR: the simulated RTL's trees differ from the golden model's on "
              f"{', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
