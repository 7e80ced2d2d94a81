"""Elaborate the gateware to Verilog: ``python -m hw.flows.verilog --out build/verilog``.

``DESIGNS`` names every block that is built on its own (for simulation, resource
estimates and the Quartus project), with the parameters it is built with by default.
"""

import argparse
import hashlib
import sys
from pathlib import Path

from amaranth.back import verilog

from hw.trainer import ForestTrainer
from hw.gini import GiniScanner
from hw.inbag import InBagBuilder
from hw.inference import InferenceEngine
from hw.partition import PartitionUnit
from hw.pe import ProcessingElement
from hw.rng import TreeRandom
from hw.sorter import RadixSorter
from hw.system import ForestSystem

__all__ = ["DESIGNS", "design_name", "write_verilog", "main"]

#: Top-level name -> (component class, default parameters).
DESIGNS = {
    "tree_random": (TreeRandom, {"bound_bits": 16, "tree_index_bits": 16}),
    "gini_scanner": (GiniScanner, {"classes": 8, "count_bits": 13, "code_bits": 16, "row_bits": 12}),
    "inbag_builder": (InBagBuilder, {"max_rows": 4096, "max_samples": 4096, "code_bits": 16,
                                     "tree_index_bits": 16, "lanes": 1}),
    "partition_unit": (PartitionUnit, {"max_rows": 4096, "max_samples": 4096, "code_bits": 16}),
    "radix_sorter": (RadixSorter, {"max_rows": 4096, "code_bits": 16, "radix_bits": 8}),
    "inference_engine": (InferenceEngine, {
        "max_trees": 256, "max_nodes_per_tree": 31, "feature_capacity": 64, "code_bits": 16, "classes": 8,
        "count_bits": 13, "max_depth": 4, "traversal_stages": 5, "class_count_sums": True}),
    "forest_system": (ForestSystem, {
        "pe_count": 2, "max_trees": 256, "radix_bits": 8, "traversal_stages": 1, "max_rows": 256,
        "max_samples": 256, "feature_capacity": 16, "feature_lanes": 4, "code_bits": 16, "classes": 4,
        "max_depth": 16}),
    "forest_trainer": (ForestTrainer, {
        "pe_count": 2, "max_trees": 1024, "radix_bits": 8, "max_rows": 256, "max_samples": 256,
        "feature_capacity": 16, "feature_lanes": 4, "code_bits": 16, "classes": 4, "max_depth": 16}),
    "processing_element": (ProcessingElement, {
        "max_rows": 256, "max_samples": 256, "feature_capacity": 16, "feature_lanes": 4,
        "code_bits": 16, "classes": 4, "max_depth": 16, "tree_index_bits": 16, "sparse_rows": 0}),
}


def design_name(base, parameters):
    """A Verilog module name that tells designs built with other parameters apart."""
    defaults = DESIGNS[base][1]
    if not parameters or parameters == defaults:
        return base
    text = ",".join(f"{key}={parameters[key]}" for key in sorted(parameters))
    return f"{base}_{hashlib.sha1(text.encode()).hexdigest()[:8]}"


def write_verilog(base, out_dir, parameters=None):
    """Write the Verilog of design ``base`` into ``out_dir``; return (path, module name).

    The file is only rewritten when its text changes, so that simulator builds keyed on
    file times are not redone needlessly.
    """
    component_class, defaults = DESIGNS[base]
    parameters = {**defaults, **(parameters or {})}
    name = design_name(base, parameters)
    text = verilog.convert(component_class(**parameters), name=name, emit_src=False)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.v"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path, name


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="build/verilog", help="output folder (default: %(default)s)")
    parser.add_argument("designs", nargs="*", metavar="DESIGN",
                        help=f"designs to write (default: all of {', '.join(sorted(DESIGNS))})")
    arguments = parser.parse_args(argv)
    unknown = sorted(set(arguments.designs) - set(DESIGNS))
    if unknown:
        parser.error(f"unknown design(s) {', '.join(unknown)}; known: {', '.join(sorted(DESIGNS))}")
    for base in arguments.designs or sorted(DESIGNS):
        path, _ = write_verilog(base, arguments.out)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
