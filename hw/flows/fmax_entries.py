"""The builds ``make fmax`` places: every design at the widths the comparison uses.

The widths come from the measured PE fits in ``docs/pe_fit.json`` (written by
``sw.experiments.pe_fit``; read here as data, since the flows never import ``sw``): the
processing element of each of :data:`PE_DATASETS`, the blocks at the widths they have
inside the widest of those PEs (:data:`BLOCKS_FROM`), the forest trainer with
:data:`TRAINER_PES` of them, the inference engine sized for :data:`FOREST_TREES` trees of
that PE's node count, the whole forest system, and the system behind its Avalon-MM
interfaces (``forest_top``).

Each entry is ``{"design", "parameters", "reductions"}``: the parameters at the
comparison's widths (complete, over the design's defaults), and the steps tried in turn,
each over the previous, when a build does not fit the ECP5-85K. A step is
``(parameters, why)``; the reductions keep the widths of the paths (fewer feature lanes,
fewer trees in a node memory), so the placed build shows the same logic with less of it.
"""

import json
from pathlib import Path

from hw.checks import bits
from hw.designs import BUILDS, DESIGNS
from hw.lane import FeatureLane, lane_slots
from hw.pe.element import _draw_bound_bits
from hw.pe.layouts import PEGeometry

__all__ = ["PE_FIT_FILE", "PE_DATASETS", "BLOCKS_FROM", "TRAINER_PES", "FOREST_TREES",
           "load_pe_fits", "comparison_entries", "entry_names", "select"]

PROJECT_ROOT = Path(__file__).resolve().parents[2]
#: The measured PE fits (``sw.experiments.pe_fit``), read as data.
PE_FIT_FILE = PROJECT_ROOT / "docs" / "pe_fit.json"
#: Datasets whose PE is placed (the comparison's largest PEs: most lanes, most rows).
PE_DATASETS = ("ctg", "cmc")
#: Dataset whose PE gives the widths of the blocks, the trainer, inference and system.
BLOCKS_FROM = "ctg"
#: PEs in the placed forest trainer and forest system.
TRAINER_PES = 2
#: Trees of the comparison's forests (rounded up to a power of two for ``max_trees``,
#: as :func:`hw.designs.system_for_dataset` does).
FOREST_TREES = 100
#: Parameters of the comparison's simulated accelerator that the PE fits leave out.
FROM_COMPARISON = ("sparse_rows", "radix_bits", "traversal_stages")

_LANE_STEPS = (4, 2, 1)
#: Tree counts tried: a node memory of the comparison's ctg-sized trees takes about 10
#: of the 208 DP16KD per tree, so 16 is the first power of two that can fit.
_TREE_STEPS = (16, 8, 4, 2)
#: Trees of the placed forest system: its trainer leaves room for the node memories of few.
_SYSTEM_TREES = 4


def load_pe_fits(path=None):
    """``{dataset: fit}`` of ``docs/pe_fit.json`` (each fit with its ``parameters``)."""
    return json.loads(Path(path or PE_FIT_FILE).read_text())["datasets"]


def _max_trees():
    return 1 << bits(FOREST_TREES - 1)


def _pe_parameters(fit):
    """Complete ``processing_element`` parameters of a PE fit inside a forest of
    :data:`FOREST_TREES` trees, as the comparison builds it."""
    comparison = BUILDS["comparison"][1]
    parameters = {**DESIGNS["processing_element"][1], **fit["parameters"],
                  "sparse_rows": comparison["sparse_rows"],
                  "tree_index_bits": bits(_max_trees() - 1)}
    return {key: value for key, value in parameters.items() if key != "pe_count"}


def _fewer_lanes(lanes, features, n):
    """A step to ``n`` feature lanes, each holding as many lists as in the full build (the
    features shrink with the lanes): every lane's bank keeps its depth, so its block RAMs
    and their output multiplexer, and every lane path its widths; only the feature index
    narrows. Returns ``(changes, why)``."""
    slots = lane_slots(features, 0, lanes)
    fewer = min(features, slots * n)
    return ({"feature_lanes": n, "feature_capacity": fewer},
            f"feature_lanes {lanes} -> {n} and feature_capacity {features} -> {fewer} (fewer "
            f"lanes holding {slots} lists each, as in the full build: the lanes' banks and "
            f"paths are unchanged; feature index {bits(features - 1)} -> {bits(fewer - 1)} bits)")


def _lane_steps(lanes, features):
    """Fewer feature lanes (:func:`_fewer_lanes`), down to one."""
    return [_fewer_lanes(lanes, features, n) for n in _LANE_STEPS if n < lanes]


def _trainer_steps(pe, trees=None, nodes=None):
    """Steps for a design with several PEs: two such PEs with their shared banks and sorters
    at the ctg widths need several times the ECP5's 208 block RAMs (each PE about 150), so
    fewer lanes (:func:`_fewer_lanes`: fewer lists in the shared banks too, the row, code,
    count and node widths stay); a system also holds fewer trees."""
    steps = []
    for n in (2, 1):
        if n >= pe["feature_lanes"]:
            continue
        changes, why = _fewer_lanes(pe["feature_lanes"], pe["feature_capacity"], n)
        if trees is not None and not steps:
            changes["max_trees"] = _SYSTEM_TREES
            why += "; " + _tree_steps(trees, nodes, (_SYSTEM_TREES,))[0][1]
        steps.append((changes, why))
    return steps


def _tree_steps(trees, nodes, steps=None):
    """Fewer trees in the node memory: the node, feature, code and count widths stay;
    the node memory's address loses bits."""
    return [({"max_trees": n}, f"max_trees {trees} -> {n} (node memory of {n} x {nodes} nodes "
                               f"instead of {trees} x {nodes}: same node widths, "
                               f"{bits(trees * nodes - 1) - bits(n * nodes - 1)} address bits fewer)")
            for n in (steps or _TREE_STEPS) if n < trees]


def _geometry(pe):
    return PEGeometry(**{"max_inbag_rows": None, "max_nodes": None, **pe})


def _block_entries(pe):
    """The blocks at the widths they have inside PE ``pe`` (complete parameters)."""
    g = _geometry(pe)
    lane = FeatureLane(slots=g.slots, bank_slots=lane_slots(g.feature_capacity, 0, g.feature_lanes),
                       list_rows=g.max_inbag_rows, max_rows=g.max_rows, max_samples=g.max_samples,
                       code_bits=g.code_bits, classes=g.classes, count_bits=g.count_bits,
                       visit_bits=g.visit_bits)
    lane._MustUse__silence = True       # read for its widths only, never elaborated
    radix_bits = BUILDS["comparison"][1]["radix_bits"]
    blocks = {
        "tree_random": {"bound_bits": _draw_bound_bits(g), "tree_index_bits": g.tree_index_bits},
        "radix_sorter": {"max_rows": g.max_rows, "code_bits": g.code_bits, "radix_bits": radix_bits},
        "inbag_builder": {"max_rows": g.max_rows, "max_samples": g.max_samples,
                          "code_bits": g.code_bits + g.label_bits,
                          "tree_index_bits": g.tree_index_bits,
                          "draw_bound_bits": _draw_bound_bits(g), "lanes": g.feature_lanes},
        "gini_scanner": {"classes": g.classes, "count_bits": g.count_bits,
                         "code_bits": g.code_bits, "row_bits": g.position_bits},
        "partition_unit": {"max_rows": g.max_rows, "max_samples": g.max_samples,
                           "code_bits": lane.packed_bits, "address_bits": lane.address_bits,
                           "max_segment": lane.list_rows},
    }
    return {name: {"design": name, "parameters": {**DESIGNS[name][1], **parameters},
                   "reductions": []}
            for name, parameters in blocks.items()}


def _inference_parameters(pe, trees):
    """``inference_engine`` parameters as :class:`hw.system.ForestSystem` sizes it."""
    g = _geometry(pe)
    stages = BUILDS["comparison"][1]["traversal_stages"]
    return {"max_trees": trees, "max_nodes_per_tree": g.max_nodes,
            "feature_capacity": g.feature_capacity, "code_bits": g.code_bits, "classes": g.classes,
            "count_bits": g.count_bits, "max_depth": g.max_depth,
            "traversal_stages": min(stages, g.max_depth + 1), "class_count_sums": True}


def comparison_entries(fits=None):
    """``{entry name: {"design", "parameters", "reductions", "widths_from"}}`` of every build
    ``make fmax`` places, in placing order (blocks, PEs, trainer, inference, system, top)."""
    fits = load_pe_fits() if fits is None else fits
    pes = {name: _pe_parameters(fits[name]) for name in PE_DATASETS if name in fits}
    if BLOCKS_FROM not in pes:
        raise ValueError(f"the PE fits have no {BLOCKS_FROM!r} entry (docs/pe_fit.json)")
    pe = pes[BLOCKS_FROM]
    entries = _block_entries(pe)
    for entry in entries.values():
        entry["widths_from"] = f"processing_element[{BLOCKS_FROM}]"
    for name, parameters in pes.items():
        entries[f"processing_element[{name}]"] = {
            "design": "processing_element", "parameters": parameters,
            "reductions": _lane_steps(parameters["feature_lanes"],
                                      parameters["feature_capacity"]), "widths_from": name}
    trees = _max_trees()
    comparison = BUILDS["comparison"][1]
    shared = {**pe, "pe_count": TRAINER_PES, "max_trees": trees,
              "radix_bits": comparison["radix_bits"]}
    entries[f"forest_trainer[{BLOCKS_FROM}]"] = {
        "design": "forest_trainer", "parameters": {**DESIGNS["forest_trainer"][1], **shared},
        "reductions": _trainer_steps(pe), "widths_from": BLOCKS_FROM}
    inference = _inference_parameters(pe, trees)
    entries[f"inference_engine[{BLOCKS_FROM}]"] = {
        "design": "inference_engine", "parameters": {**DESIGNS["inference_engine"][1], **inference},
        "reductions": _tree_steps(trees, inference["max_nodes_per_tree"]),
        "widths_from": BLOCKS_FROM}
    system = {**shared, "traversal_stages": comparison["traversal_stages"]}
    entries[f"forest_system[{BLOCKS_FROM}]"] = {
        "design": "forest_system", "parameters": {**DESIGNS["forest_system"][1], **system},
        "reductions": _trainer_steps(pe, trees, inference["max_nodes_per_tree"]),
        "widths_from": BLOCKS_FROM}
    # The system behind its Avalon-MM interfaces and DMA engines, as a board would hold it
    # (one clock for bus and core), reduced as the system is.
    entries[f"forest_top[{BLOCKS_FROM}]"] = {
        "design": "forest_top", "parameters": {**DESIGNS["forest_top"][1], **system},
        "reductions": _trainer_steps(pe, trees, inference["max_nodes_per_tree"]),
        "widths_from": BLOCKS_FROM}
    return entries


def entry_names(entries):
    """Entry names in placing order."""
    return list(entries)


def select(entries, names):
    """The entries named by ``names`` (entry names, or design names selecting every entry
    of that design); all of them when ``names`` is empty. Raises ``ValueError``."""
    if not names:
        return dict(entries)
    chosen = {}
    for name in names:
        matches = [key for key, entry in entries.items() if name in (key, entry["design"])]
        if not matches:
            raise ValueError(f"no Fmax entry or design {name!r}; entries: {', '.join(entries)}")
        chosen.update({key: entries[key] for key in matches})
    return {key: entries[key] for key in entries if key in chosen}
