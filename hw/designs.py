"""The catalogue of named builds: the one place a build's parameters are written.

Elaboration (``hw.flows.verilog``), the simulation builds (``sim.runner``), the resource,
Fmax and Quartus flows and the comparison all take their parameters from here.

* :data:`DESIGNS`: every block built on its own, by top-level name, with the component
  class and the parameters it is built with by default (the small builds the flows and
  the block testbenches use).
* :data:`BUILDS`: named builds beyond the defaults, as (design, parameters): the
  comparison's simulated accelerator and the PE that cycles per tree are measured on.
* :func:`system_for_dataset`: the rule that sizes an accelerator for a dataset (what
  ``HardwareForestClassifier(backend="sim")`` builds).
"""

import hashlib

from hw.bootstrap import BootstrapUnit
from hw.gini import GiniScanner
from hw.histogram import HistogramUnit
from hw.histogram_lane import HistogramLane
from hw.histogram_pe import HistogramPE
from hw.histogram_system import HistogramSystem
from hw.histogram_top import HistogramTop
from hw.rewind_rng import RewindableRandom
from hw.row_gather import RowGather
from hw.inbag import InBagBuilder
from hw.inference import InferenceEngine
from hw.partition import PartitionUnit
from hw.pass_combiner import PassCombiner
from hw.pass_engine import PassEngine
from hw.pe import ProcessingElement
from hw.rng import TreeRandom
from hw.sorter import RadixSorter
from hw.system import ForestSystem
from hw.top import ForestTop
from hw.trainer import ForestTrainer

__all__ = ["DESIGNS", "BUILDS", "design_name", "component", "build_parameters",
           "system_for_dataset"]

#: Where the histogram PE's designs keep the codes by default (``"memory"``: read from a
#: code store in external memory in words of ``code_word_bits``, ``hw/code_reader.py``).
_CODES_ON_CHIP = {"code_store": "chip", "code_word_bits": 512}

#: Top-level name -> (component class, default parameters).
DESIGNS = {
    "tree_random": (TreeRandom, {"bound_bits": 16, "tree_index_bits": 16}),
    # The histogram PE's generator: the same stream, rewound after a node's draws.
    "rewind_random": (RewindableRandom, {"bound_bits": 16, "tree_index_bits": 16}),
    "bootstrap_unit": (BootstrapUnit, {"max_rows": 4096, "classes": 8, "count_bits": 13}),
    "gini_scanner": (GiniScanner, {"classes": 8, "count_bits": 13, "code_bits": 16, "row_bits": 12}),
    "inbag_builder": (InBagBuilder, {"max_rows": 4096, "max_samples": 4096, "code_bits": 16,
                                     "tree_index_bits": 16, "lanes": 1}),
    # The planned out-of-core PE's blocks (docs/out_of_core.md): not in the system.
    "histogram_unit": (HistogramUnit, {"classes": 8, "count_bits": 13, "code_bits": 8, "row_bits": 12}),
    "histogram_lane": (HistogramLane, {"classes": 8, "count_bits": 13, "code_bits": 8, "row_bits": 12}),
    "pass_combiner": (PassCombiner, {"lanes": 8, "pass_bits": 4, "classes": 8, "code_bits": 8,
                                     "count_bits": 13}),
    "row_gather": (RowGather, {"max_rows": 4096, "features": 32, "lanes": 8, "code_bits": 8,
                               "classes": 8, "weight_bits": 12, **_CODES_ON_CHIP}),
    "pass_engine": (PassEngine, {"max_rows": 4096, "features": 32, "lanes": 4, "code_bits": 8,
                                 "classes": 8, "count_bits": 13, "pass_bits": 4, **_CODES_ON_CHIP}),
    "histogram_pe": (HistogramPE, {"max_rows": 4096, "features": 32, "lanes": 4, "code_bits": 8,
                                   "classes": 8, "count_bits": 13, "pass_bits": 4, "max_nodes": 1024,
                                   "max_depth": 32, **_CODES_ON_CHIP}),
    # The histogram PE with its forest loop and register bank: what sim.histogram_backend
    # drives (``HardwareForestClassifier(backend="sim")`` on datasets the system's banks
    # cannot hold).
    "histogram_system": (HistogramSystem, {"max_rows": 200, "features": 8, "lanes": 2, "code_bits": 4,
                                           "classes": 4, "count_bits": 9, "pass_bits": 2, "max_nodes": 256,
                                           "max_depth": 16, "tree_index_bits": 8, **_CODES_ON_CHIP}),
    # The histogram system behind Avalon-MM (register slave, interrupt, DMA masters):
    # ``hw/histogram_top.py``.
    "histogram_top": (HistogramTop, {"max_rows": 200, "features": 8, "lanes": 2, "code_bits": 4, "classes": 4,
                                     "count_bits": 9, "pass_bits": 2, "max_nodes": 256, "max_depth": 16,
                                     "tree_index_bits": 8, "read_fifo_depth": 8, "separate_core_clock": False,
                                     "crossing_depth": 8, **_CODES_ON_CHIP}),
    "partition_unit": (PartitionUnit, {"max_rows": 4096, "max_samples": 4096, "code_bits": 16}),
    "radix_sorter": (RadixSorter, {"max_rows": 4096, "code_bits": 16, "radix_bits": 8}),
    "inference_engine": (InferenceEngine, {
        "max_trees": 256, "max_nodes_per_tree": 31, "feature_capacity": 64, "code_bits": 16,
        "classes": 8, "count_bits": 13, "max_depth": 4, "traversal_stages": 5,
        "class_count_sums": True}),
    "forest_system": (ForestSystem, {
        "pe_count": 2, "max_trees": 256, "radix_bits": 8, "traversal_stages": 1, "max_rows": 256,
        "max_samples": 256, "feature_capacity": 16, "feature_lanes": 4, "code_bits": 16,
        "classes": 4, "max_depth": 16}),
    # The system behind Avalon-MM (register slave, interrupt, DMA masters): ``hw/top.py``.
    "forest_top": (ForestTop, {
        "pe_count": 2, "max_trees": 256, "radix_bits": 8, "traversal_stages": 1, "max_rows": 256,
        "max_samples": 256, "feature_capacity": 16, "feature_lanes": 4, "code_bits": 16,
        "classes": 4, "max_depth": 16, "read_fifo_depth": 8, "separate_core_clock": False,
        "crossing_depth": 8}),
    "forest_trainer": (ForestTrainer, {
        "pe_count": 2, "max_trees": 1024, "radix_bits": 8, "max_rows": 256, "max_samples": 256,
        "feature_capacity": 16, "feature_lanes": 4, "code_bits": 16, "classes": 4,
        "max_depth": 16}),
    "processing_element": (ProcessingElement, {
        "max_rows": 256, "max_samples": 256, "feature_capacity": 16, "feature_lanes": 4,
        "code_bits": 16, "classes": 4, "max_depth": 16, "tree_index_bits": 16, "sparse_rows": 0}),
}

#: Named builds: name -> (design, parameters over the design's defaults).
BUILDS = {
    # The comparison's simulated accelerator (``make``): one PE (trees do not depend on P;
    # the modelled time divides by the P the resource estimates give), lists of 1,280
    # rows as ctg's estimated PE has, deep enough for forest mode, the thesis's 16-row
    # sparse fill. The lanes are set per dataset (the estimated PE's lanes).
    "comparison": ("forest_system", {
        "pe_count": 1, "max_trees": 32, "radix_bits": 8, "traversal_stages": 1,
        "max_rows": 2048, "max_samples": 2048, "feature_capacity": 64, "feature_lanes": 8,
        "code_bits": 16, "classes": 4, "max_depth": 64, "sparse_rows": 16,
        "max_inbag_rows": 1280}),
    # The PE that cycles per tree are measured on (``sw.experiments.pe_cycles``) and that
    # trains the thesis datasets in the PE testbench.
    "pe_datasets": ("processing_element", {
        "max_rows": 2200, "max_samples": 2200, "feature_capacity": 64, "feature_lanes": 8,
        "code_bits": 16, "classes": 4, "max_depth": 40, "sparse_rows": 32}),
    # The small forest_top the test suite simulates (holds iris: 150 rows, 4 features).
    "forest_top_small": ("forest_top", {
        "pe_count": 1, "max_trees": 8, "radix_bits": 4, "max_rows": 160, "max_samples": 160,
        "feature_capacity": 6, "feature_lanes": 2, "code_bits": 8, "classes": 4, "max_depth": 10}),
    # forest_top_small with the system on a clock of its own (``core_clk``), unrelated to the
    # Avalon clock (``clk``): the clock-domain crossings of ``hw.avalon.crossing``.
    "forest_top_small_cdc": ("forest_top", {
        "pe_count": 1, "max_trees": 8, "radix_bits": 4, "max_rows": 160, "max_samples": 160,
        "feature_capacity": 6, "feature_lanes": 2, "code_bits": 8, "classes": 4, "max_depth": 10,
        "separate_core_clock": True}),
    # The forest_top that trains sonar (208 rows, 60 features, 2 classes; in the test suite)
    # and ctg (2,126 rows, 21 features, 3 classes; ``make avalon``) through Avalon-MM: codes
    # of 8 bits as the testbench quantises them, lists of 1,400 rows for ctg's bootstraps
    # (about 1,350 distinct rows), depth 20 (ctg's trees reach 16), 4 trees.
    "forest_top_datasets": ("forest_top", {
        "pe_count": 1, "max_trees": 4, "radix_bits": 8, "max_rows": 2126, "max_samples": 2126,
        "max_inbag_rows": 1400, "feature_capacity": 60, "feature_lanes": 2, "code_bits": 8,
        "classes": 3, "max_depth": 20}),
    # The out-of-core plan's blocks at the widths its figures use (docs/gateware.md,
    # docs/out_of_core.md), placed by ``make fmax FMAX_ARGS="histogram_unit_isolet ..."``
    # into docs/fmax_builds.json: isolet's 26 classes and 7,797 rows for the histogram
    # unit, ctg (3 classes, 2,126 rows x 21 features, 4 lanes for its 4 drawn features)
    # for the others.
    "histogram_unit_isolet": ("histogram_unit", {"classes": 26, "count_bits": 13, "code_bits": 8,
                                                 "row_bits": 13}),
    "histogram_lane_ctg": ("histogram_lane", {"classes": 3, "count_bits": 12, "code_bits": 8,
                                              "row_bits": 12}),
    "row_gather_ctg": ("row_gather", {"max_rows": 2126, "features": 21, "lanes": 4, "code_bits": 8,
                                      "classes": 3, "weight_bits": 12}),
    "pass_combiner_ctg": ("pass_combiner", {"lanes": 4, "pass_bits": 4, "classes": 3, "code_bits": 8,
                                            "count_bits": 12}),
    # The histogram PE's generator and bootstrap unit at ctg's widths (draws bounded by its
    # 2,126 rows).
    "rewind_random_ctg": ("rewind_random", {"bound_bits": 13, "tree_index_bits": 16}),
    "bootstrap_unit_ctg": ("bootstrap_unit", {"max_rows": 2126, "classes": 3, "count_bits": 12}),
    # The pass engine at ctg's widths with 3 lanes, not 4: 4 lanes need 92 18x18 multipliers,
    # more than the half of the ECP5-85K's 156 that ``make fmax`` allows.
    # The histogram PE that trains the thesis datasets in its testbench (ctg's 2,126 rows,
    # sonar's 60 features, 3 classes, 4 lanes as ctg draws 4 features a node).
    "histogram_pe_datasets": ("histogram_pe", {"max_rows": 2126, "features": 60, "lanes": 4, "code_bits": 8,
                                               "classes": 3, "count_bits": 12, "pass_bits": 4,
                                               "max_nodes": 2048, "max_depth": 48}),
    "pass_engine_ctg": ("pass_engine", {"max_rows": 2126, "features": 21, "lanes": 3, "code_bits": 8,
                                        "classes": 3, "count_bits": 12, "pass_bits": 4}),
}


def build_parameters(name):
    """The complete parameters of a named build (:data:`BUILDS`) or design (:data:`DESIGNS`)."""
    if name in BUILDS:
        design, parameters = BUILDS[name]
        return {**DESIGNS[design][1], **parameters}
    return dict(DESIGNS[name][1])


def design_name(base, parameters):
    """A Verilog module name that tells designs built with other parameters apart."""
    defaults = DESIGNS[base][1]
    if not parameters or parameters == defaults:
        return base
    text = ",".join(f"{key}={parameters[key]}" for key in sorted(parameters))
    return f"{base}_{hashlib.sha1(text.encode()).hexdigest()[:8]}"


def component(base, parameters=None):
    """An instance of design ``base`` with ``parameters`` over its defaults."""
    component_class, defaults = DESIGNS[base]
    return component_class(**{**defaults, **(parameters or {})})


def _power_of_two(value, minimum):
    return max(minimum, 1 << max(0, int(value) - 1).bit_length())


def system_for_dataset(n_rows, n_features, n_classes, n_trees, max_depth, *, pe_count=2,
                       feature_lanes=8, code_bits=16):
    """``forest_system`` parameters for a dataset of this size: rows, features, classes,
    trees and depth rounded up to powers of two (``max_depth`` None: 48 levels)."""
    max_rows = _power_of_two(n_rows, 64)
    features = _power_of_two(n_features, 4)
    depth = max_depth if max_depth is not None else 48
    return {
        "pe_count": pe_count, "max_trees": _power_of_two(n_trees, 16), "radix_bits": 8,
        "traversal_stages": 1, "max_rows": max_rows, "max_samples": max_rows,
        "feature_capacity": features, "feature_lanes": min(feature_lanes, features),
        "code_bits": code_bits, "classes": _power_of_two(n_classes, 2),
        "max_depth": _power_of_two(depth, 4),
    }
