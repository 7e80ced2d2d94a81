"""Every design at each parameter's maximum: the limit cases (issue #21, item 6).

A limit case is a build of one design with some parameters at their maxima and the others
at small values, and a small randomized testbench run against the golden model. The
maxima are not written here: they are read from the hardware's own checks
(:func:`accepted_ranges`), with the other parameters at the case's values, and
:func:`resolve` checks that the constructor accepts each maximum and refuses one more.

Some maxima cannot be simulated here; their case says why (:attr:`LimitCase.not_simulated`)
and is still elaborated. ``tests/sim/test_limits.py`` elaborates every case and simulates
the ``ci`` ones; ``python -m sim.limits --report FILE`` (``make limits``) simulates every
simulated case and elaborates the others (``--verilog``: also converts them to Verilog),
with progress, and writes a table of verdicts and seconds (docs/simulation.md, "Limit
cases").
"""

import argparse
import contextlib
import dataclasses
import gc
import inspect
import sys
import time
import warnings
from pathlib import Path

from amaranth.hdl import UnusedElaboratable

from hw.designs import DESIGNS, component

__all__ = ["LimitCase", "CASES", "accepted_ranges", "parameter_names", "resolve", "elaborate",
           "run_case", "main"]


@contextlib.contextmanager
def accepted_ranges():
    """Record every :func:`hw.checks.check_integer` made inside the ``with`` block.

    Yields a dict: parameter name -> (minimum, maximum), the intersection of every check of
    that name (a component whose sub-components check a parameter again accepts only what
    all of them accept). The ranges hold for the other parameters' values of the checked
    construction (e.g. ``max_segment`` is at most that construction's ``max_rows``). The
    check is wrapped where each gateware module imported it, for the block only: the
    gateware's sources stay as they are (the Fmax record's digests are of those sources).
    """
    ranges = {}

    def recording(check):
        def recorded(name, value, minimum, maximum):
            low, high = ranges.get(name, (minimum, maximum))
            ranges[name] = (max(low, minimum), min(high, maximum))
            return check(name, value, minimum, maximum)
        return recorded

    checks = {module: module.check_integer for key, module in list(sys.modules.items())
              if (key == "hw" or key.startswith("hw.")) and callable(getattr(module, "check_integer", None))}
    for module, check in checks.items():
        module.check_integer = recording(check)
    try:
        yield ranges
    finally:
        for module, check in checks.items():
            module.check_integer = check


#: Why the million-word memories are not simulated (measured, docs/simulation.md).
_MILLION_WORDS = ("a memory of 2**20 words: Amaranth writes every word's initial value into the "
                  "RTLIL/Verilog (about 60 MB of Verilog; the sorter's conversion alone took over 23 min)")

#: Why PEs of 64 lanes and 4,096 features together are not simulated.
_WIDE_PES = ("64 lanes (64 Gini scanners and partition units per PE) with lists for 4,096 features: "
             "not built here; pe_lanes and pe_features simulate the PE at each of the two maxima")


@dataclasses.dataclass(frozen=True)
class LimitCase:
    """One limit build and its simulation.

    ``maximise``: the parameters set to their maxima (in this order: a later one's maximum
    may depend on an earlier one's value); ``base``: small values over the design's
    defaults (:data:`hw.designs.DESIGNS`) that the case needs; ``testbench``/``testcase``:
    the cocotb module, its settings and optionally the one test to run; ``ci``: simulated
    by the test suite (else by ``make limits`` and ``HWFOREST_LONG_SIMS=1``);
    ``not_simulated``: the reason this case is only elaborated.
    """
    name: str
    design: str
    maximise: tuple
    base: dict = dataclasses.field(default_factory=dict)
    module: str = ""
    testbench: dict = dataclasses.field(default_factory=dict)
    testcase: str = None
    seed: int = 1
    ci: bool = False
    not_simulated: str = None


_PE_SMALL = {"max_rows": 32, "max_samples": 32, "feature_capacity": 4, "feature_lanes": 2,
             "code_bits": 8, "classes": 4, "max_depth": 8}
_TRAINER_SMALL = {**_PE_SMALL, "pe_count": 1, "max_trees": 16, "radix_bits": 4}
_SYSTEM_SMALL = {**_TRAINER_SMALL, "max_trees": 8, "traversal_stages": 1}

CASES = [
    LimitCase("rng_widths", "tree_random", ("bound_bits", "tree_index_bits"), module="sim.tb_rng",
              testbench={"seed_count": 100, "long_draws": 300}, ci=True),
    LimitCase("rewind_widths", "rewind_random", ("bound_bits", "tree_index_bits"),
              module="sim.tb_rewind_rng", testbench={"cases": 20}, ci=True),
    LimitCase("bootstrap_widths", "bootstrap_unit", ("classes", "count_bits"), {"max_rows": 64},
              module="sim.tb_bootstrap", testbench={"random_cases": 4}, ci=True),
    LimitCase("bootstrap_rows", "bootstrap_unit", ("max_rows",), {"classes": 2, "count_bits": 17},
              module="sim.tb_bootstrap", testbench={"random_cases": 1, "reset_cases": 1}),
    LimitCase("sorter_digits", "radix_sorter", ("code_bits", "radix_bits"), {"max_rows": 256},
              module="sim.tb_sorter", testbench={"random_cases": 10}, ci=True),
    LimitCase("sorter_rows", "radix_sorter", ("max_rows",), not_simulated=_MILLION_WORDS),
    LimitCase("inbag_widths", "inbag_builder", ("lanes", "code_bits", "tree_index_bits", "draw_bound_bits"),
              {"max_rows": 64, "max_samples": 64}, module="sim.tb_inbag",
              testbench={"random_trees": 10}),
    LimitCase("inbag_rows", "inbag_builder", ("max_rows", "max_samples"), not_simulated=_MILLION_WORDS),
    LimitCase("partition_widths", "partition_unit", ("code_bits", "address_bits"),
              {"max_rows": 64, "max_samples": 64}, module="sim.tb_partition",
              testbench={"random_cases": 10}, ci=True),
    LimitCase("partition_rows", "partition_unit", ("max_rows", "max_samples", "max_segment"),
              not_simulated=_MILLION_WORDS),
    LimitCase("gini_widths", "gini_scanner", ("classes", "count_bits", "code_bits", "row_bits"),
              module="sim.tb_gini", testbench={"random_segments": 30}, ci=True),
    LimitCase("histogram_widths", "histogram_unit", ("classes", "count_bits", "code_bits", "row_bits"),
              module="sim.tb_histogram", testbench={"random_cases": 10, "longest_run": 3000}, ci=True),
    LimitCase("pass_combiner_widths", "pass_combiner", ("lanes", "pass_bits", "classes", "code_bits", "count_bits"),
              module="sim.tb_pass_combiner", testbench={"random_cases": 10}, ci=True),
    LimitCase("row_gather_widths", "row_gather", ("features", "lanes", "code_bits", "classes", "weight_bits"),
              {"max_rows": 64}, module="sim.tb_row_gather", testbench={"random_cases": 2}, ci=True),
    LimitCase("row_gather_rows", "row_gather", ("max_rows",), {"features": 2, "lanes": 2},
              module="sim.tb_row_gather", testbench={"random_cases": 1}),
    # The codes in memory: 1,024-bit words, 10-bit codes (16-bit slots), 1,024 features
    # and 64 lanes; then 65,536 rows (columns of 2,048 32-bit words).
    LimitCase("row_gather_memory", "row_gather", ("code_word_bits", "code_bits", "features", "lanes"),
              {"max_rows": 64, "code_store": "memory"}, module="sim.tb_row_gather",
              testbench={"random_cases": 2}),
    LimitCase("row_gather_memory_rows", "row_gather", ("max_rows",),
              {"features": 2, "lanes": 2, "code_store": "memory", "code_word_bits": 32},
              module="sim.tb_row_gather", testbench={"random_cases": 1}),
    LimitCase("pass_engine_lanes", "pass_engine", ("lanes", "pass_bits", "features"),
              {"max_rows": 32, "classes": 2, "code_bits": 2, "count_bits": 8}, module="sim.tb_pass_engine",
              testbench={"random_cases": 1, "nodes": 3}, ci=True),
    LimitCase("pass_engine_widths", "pass_engine", ("classes", "code_bits", "count_bits"),
              {"max_rows": 32, "features": 3, "lanes": 2, "pass_bits": 1}, module="sim.tb_pass_engine",
              testbench={"random_cases": 2, "nodes": 6}, ci=True),
    LimitCase("pass_engine_rows", "pass_engine", ("max_rows",),
              {"features": 2, "lanes": 2, "classes": 2, "code_bits": 2, "count_bits": 8},
              module="sim.tb_pass_engine", testbench={"random_cases": 1, "nodes": 3}),
    LimitCase("histogram_pe_tree", "histogram_pe", ("max_nodes", "max_depth"),
              {"max_rows": 32, "features": 4, "lanes": 2, "code_bits": 3, "classes": 3, "count_bits": 7,
               "pass_bits": 2}, module="sim.tb_histogram_pe", testbench={"random_cases": 3}),
    LimitCase("histogram_pe_lanes", "histogram_pe", ("lanes", "pass_bits", "features"),
              {"max_rows": 32, "classes": 2, "code_bits": 2, "count_bits": 7, "max_nodes": 63, "max_depth": 8},
              module="sim.tb_histogram_pe", testbench={"random_cases": 2}),
    LimitCase("histogram_pe_widths", "histogram_pe", ("classes", "code_bits", "count_bits", "tree_index_bits"),
              {"max_rows": 32, "features": 3, "lanes": 2, "pass_bits": 1, "max_nodes": 63, "max_depth": 8},
              module="sim.tb_histogram_pe", testbench={"random_cases": 3}),
    LimitCase("histogram_pe_rows", "histogram_pe", ("max_rows",),
              {"features": 2, "lanes": 2, "classes": 2, "code_bits": 2, "count_bits": 17, "max_nodes": 63,
               "max_depth": 4}, module="sim.tb_histogram_pe", testbench={"random_cases": 1}),
    # The histogram system: its forest loop's tree count at 31 bits (2**31 trees), the
    # PE's widths through its register bank and trees stream.
    LimitCase("histogram_system_widths", "histogram_system", ("classes", "code_bits", "count_bits", "tree_index_bits"),
              {"max_rows": 32, "features": 3, "lanes": 2, "pass_bits": 1, "max_nodes": 63, "max_depth": 8},
              module="sim.tb_histogram_system", testbench={"random_forests": 3}, ci=True),
    LimitCase("histogram_system_tree", "histogram_system", ("max_nodes", "max_depth"),
              {"max_rows": 32, "features": 4, "lanes": 2, "code_bits": 3, "classes": 3, "count_bits": 7,
               "pass_bits": 2}, module="sim.tb_histogram_system", testbench={"random_forests": 3}),
    LimitCase("histogram_system_lanes", "histogram_system", ("lanes", "pass_bits", "features"),
              {"max_rows": 32, "classes": 2, "code_bits": 2, "count_bits": 7, "max_nodes": 63, "max_depth": 8},
              module="sim.tb_histogram_system", testbench={"random_forests": 2}),
    LimitCase("histogram_system_rows", "histogram_system", ("max_rows",),
              {"features": 2, "lanes": 2, "classes": 2, "code_bits": 2, "count_bits": 17, "max_nodes": 63,
               "max_depth": 4}, module="sim.tb_histogram_system", testbench={"random_forests": 1}),
    LimitCase("histogram_lane_widths", "histogram_lane", ("classes", "count_bits", "code_bits", "row_bits"),
              module="sim.tb_histogram_lane", testbench={"random_cases": 10, "longest_run": 3000},
              ci=True),
    # 65,536 one-leaf trees: node memory of 65,536 words, votes and n_trees of 17 bits.
    LimitCase("inference_trees", "inference_engine", ("max_trees",),
              {"max_nodes_per_tree": 1, "max_depth": 0, "traversal_stages": 1},
              module="sim.tb_inference", testcase="corner_cases_match_model",
              testbench={"random_trees": 1}),
    LimitCase("inference_deep", "inference_engine", ("max_nodes_per_tree", "max_depth"),
              {"max_trees": 1, "traversal_stages": 1}, module="sim.tb_inference",
              testcase="corner_cases_match_model", testbench={"random_trees": 2}),
    LimitCase("inference_stages", "inference_engine", ("max_depth", "traversal_stages"),
              {"max_trees": 4, "feature_capacity": 4}, module="sim.tb_inference",
              testcase="corner_cases_match_model", testbench={"random_trees": 2}),
    LimitCase("inference_widths", "inference_engine",
              ("feature_capacity", "code_bits", "classes", "count_bits"), {"max_trees": 4},
              module="sim.tb_inference", testcase="corner_cases_match_model",
              testbench={"random_trees": 2}),
    LimitCase("pe_widths", "processing_element",
              ("code_bits", "classes", "tree_index_bits", "sparse_rows", "max_depth", "max_inbag_rows"),
              _PE_SMALL, module="sim.tb_pe", testbench={"random_cases": 8, "reset_cases": 2,
                                                        "queued_sequences": 2}),
    LimitCase("pe_features", "processing_element", ("feature_capacity",), {**_PE_SMALL, "max_rows": 16,
                                                                           "max_samples": 16},
              module="sim.tb_pe", testbench={"random_cases": 4, "reset_cases": 1, "queued_sequences": 1}),
    LimitCase("pe_lanes", "processing_element", ("feature_lanes",), {**_PE_SMALL, "feature_capacity": 64},
              module="sim.tb_pe", testbench={"random_cases": 4, "reset_cases": 1, "queued_sequences": 1}),
    LimitCase("pe_nodes", "processing_element", ("max_nodes",), _PE_SMALL, not_simulated=_MILLION_WORDS),
    LimitCase("pe_rows", "processing_element", ("max_rows", "max_samples"), _PE_SMALL,
              not_simulated=_MILLION_WORDS),
    # The 65,536-tree forest (also tests/sim/test_tb_trainer.py).
    LimitCase("trainer_trees", "forest_trainer", ("max_trees",), {**_TRAINER_SMALL, "pe_count": 2},
              module="sim.tb_trainer", testcase="largest_forest_finishes",
              testbench={"idle_probability": 0.05, "stall_probability": 0.05}, seed=65536),
    LimitCase("trainer_widths", "forest_trainer",
              ("radix_bits", "code_bits", "classes", "max_depth", "sparse_rows", "tree_index_bits",
               "max_inbag_rows"), _TRAINER_SMALL, module="sim.tb_trainer",
              testbench={"random_forests": 2, "stopped_forests": 1}),
    LimitCase("trainer_pes", "forest_trainer", ("pe_count",), {**_TRAINER_SMALL, "feature_lanes": 1},
              module="sim.tb_trainer", testbench={"random_forests": 1, "stopped_forests": 1}),
    LimitCase("trainer_rows", "forest_trainer", ("max_rows", "max_samples", "max_nodes"),
              _TRAINER_SMALL, not_simulated=_MILLION_WORDS),
    LimitCase("trainer_features", "forest_trainer", ("feature_capacity", "feature_lanes"),
              _TRAINER_SMALL, not_simulated=_WIDE_PES),
    LimitCase("system_widths", "forest_system",
              ("radix_bits", "code_bits", "classes", "max_depth", "traversal_stages"), _SYSTEM_SMALL,
              module="sim.tb_system", testbench={"random_forests": 2}),
    LimitCase("system_trees", "forest_system", ("max_trees",), {**_SYSTEM_SMALL, "max_depth": 1},
              module="sim.tb_system", testbench={"random_forests": 1}),
    LimitCase("system_pes", "forest_system", ("pe_count",), {**_SYSTEM_SMALL, "feature_lanes": 1},
              not_simulated="64 processing elements behind the register map: not built here; "
              "trainer_pes simulates 64 PEs in the trainer"),
    LimitCase("system_rows", "forest_system", ("max_rows", "max_samples", "sparse_rows", "tree_index_bits",
                                               "max_inbag_rows", "max_nodes"),
              _SYSTEM_SMALL, not_simulated=_MILLION_WORDS),
    # Not together with the rows: banks of max_rows x feature_capacity words (2**32 at both
    # maxima) exhaust the memory of the elaboration itself.
    LimitCase("system_features", "forest_system", ("feature_capacity", "feature_lanes"), _SYSTEM_SMALL,
              not_simulated=_WIDE_PES),
]


def parameter_names(design):
    """The integer parameters design ``design`` accepts and checks: every name its checks
    report (:func:`accepted_ranges`) that its constructor takes as a keyword
    (also through the ``**parameters`` it passes on); internal checks such as the
    system's ``max_nodes_per_tree`` are refused as keywords (``TypeError``)."""
    defaults = DESIGNS[design][1]
    with accepted_ranges() as ranges:
        _construct(design, defaults)
    keywords = inspect.signature(DESIGNS[design][0]).parameters
    open_ended = any(keyword.kind is inspect.Parameter.VAR_KEYWORD for keyword in keywords.values())
    names = []
    for name, (minimum, _) in ranges.items():
        if name not in keywords and not open_ended:
            continue        # (a sub-block's check: a call with it would leave an unused instance)
        try:
            with _refusals_unused():
                _construct(design, {**defaults, name: defaults.get(name, minimum)})
        except TypeError:
            continue                              # not a keyword of the constructor
        except ValueError:
            pass                                  # a keyword, refused with the defaults
        names.append(name)
    return names


@contextlib.contextmanager
def _refusals_unused():
    """A sub-block made before its own constructor refused an unknown keyword (passed on
    through a ``**parameters``) exists without having been constructed: collected here,
    without the warning that it was never used."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        try:
            yield
        finally:
            gc.collect()


def _construct(design, parameters):
    instance = component(design, parameters)
    _silence(instance, set())                # built to read its checks, not elaborated
    return instance


def _silence(elaboratable, seen):
    """Mark ``elaboratable`` and the elaboratables it holds as deliberately unused."""
    from amaranth.hdl import Elaboratable
    if id(elaboratable) in seen:
        return
    seen.add(id(elaboratable))
    elaboratable._MustUse__silence = True
    for value in vars(elaboratable).values():
        for item in (value if isinstance(value, (list, tuple)) else [value]):
            if isinstance(item, Elaboratable):
                _silence(item, seen)


def resolve(case):
    """The parameters of ``case``: its base with each of ``maximise`` at the maximum the
    design's checks accept (given the values before it). Raises AssertionError when the
    constructor refuses that maximum or accepts one more."""
    parameters = {**DESIGNS[case.design][1], **case.base}
    for name in case.maximise:
        with accepted_ranges() as ranges:
            _construct(case.design, parameters)
        assert name in ranges, f"{case.design} does not check {name}"
        parameters[name] = ranges[name][1]
    _construct(case.design, parameters)
    for name in case.maximise:
        try:
            _construct(case.design, {**parameters, name: parameters[name] + 1})
        except ValueError:
            continue
        raise AssertionError(f"{case.name}: {case.design} accepts {name} = {parameters[name] + 1}, "
                             f"past the maximum its checks report")
    return parameters


def elaborate(case):
    """Elaborate ``case``'s design in Amaranth (every submodule's ``elaborate``)."""
    from amaranth.hdl import Fragment
    return Fragment.get(component(case.design, resolve(case)), None)


def run_case(case, seed=None, verilog=False):
    """Build and simulate ``case``; one that is not simulated is only elaborated (and
    converted to Verilog with ``verilog``: tens of minutes for the 2**20-word memories).
    Returns (verdict, build seconds, run seconds, detail)."""
    from hw.flows.verilog import write_verilog
    from sim.runner import BUILD_ROOT, SimulationFailed, build, simulate
    parameters = resolve(case)
    start = time.monotonic()
    if case.not_simulated:
        elaborate(case)
        detail = case.not_simulated
        if verilog:
            path, _ = write_verilog(case.design, BUILD_ROOT / "verilog", parameters)
            detail = f"{path.stat().st_size / 1e6:.0f} MB of Verilog; {detail}"
        return "elaborated", time.monotonic() - start, 0.0, detail
    try:
        build(case.design, parameters)
    except Exception as error:                      # a build that fails is a finding
        return "build failed", time.monotonic() - start, 0.0, str(error).splitlines()[0][:200]
    built = time.monotonic()
    try:
        simulate(case.design, case.module, parameters=parameters, testbench=case.testbench,
                 testcase=case.testcase, seed=case.seed if seed is None else seed,
                 log_file=BUILD_ROOT / f"limits_{case.name}.log")
        verdict, detail = "pass", ""
    except SimulationFailed as error:
        verdict, detail = "fail", str(error)
    return verdict, built - start, time.monotonic() - built, detail


def _format(case, parameters):
    return ", ".join(f"{name} = {parameters[name]}" for name in case.maximise)


def report(rows):
    """The Markdown table of :func:`main`'s runs."""
    lines = ["# Limit cases", "", "Every design at each parameter's maximum (`python -m sim.limits`, "
             "docs/simulation.md).", "",
             "| case | design | at the maximum | verdict | build s | run s | note |",
             "|---|---|---|---|---:|---:|---|"]
    for case, parameters, (verdict, built, ran, detail) in rows:
        lines.append(f"| {case.name} | {case.design} | {_format(case, parameters)} | {verdict} | "
                     f"{built:.0f} | {ran:.0f} | {detail.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    from tqdm import tqdm
    parser = argparse.ArgumentParser(description="Build and simulate every limit case.")
    parser.add_argument("--report", type=Path, help="write the Markdown table here")
    parser.add_argument("--cases", nargs="*", metavar="CASE", help="only these cases (default: all)")
    parser.add_argument("--seed", type=int, help="cocotb seed for every case (default: each case's)")
    parser.add_argument("--verilog", action="store_true",
                        help="also convert the cases that are not simulated to Verilog (hours)")
    arguments = parser.parse_args(argv)
    names = {case.name for case in CASES}
    unknown = sorted(set(arguments.cases or ()) - names)
    if unknown:
        parser.error(f"unknown cases {unknown}; the cases are {sorted(names)}")
    cases = [case for case in CASES if not arguments.cases or case.name in arguments.cases]
    rows = []
    progress = tqdm(cases, unit="case")
    for case in progress:
        progress.set_description(case.name)
        rows.append((case, resolve(case), run_case(case, arguments.seed, arguments.verilog)))
        tqdm.write(f"{case.name}: {rows[-1][2][0]} (build {rows[-1][2][1]:.0f} s, run {rows[-1][2][2]:.0f} s)")
        if arguments.report:                       # after every case: a long run can be stopped
            arguments.report.parent.mkdir(parents=True, exist_ok=True)
            arguments.report.write_text(report(rows))
    print(report(rows))
    unexpected = [case.name for case, _, (verdict, *_) in rows
                  if verdict not in ("pass", "elaborated")]
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
