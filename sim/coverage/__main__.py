"""``python -m sim.coverage --out DIR`` (``make coverage``): run the testbenches with
coverage on, merge their databases and write ``coverage.md`` and ``coverage.json`` to DIR.

Before the merge, the proofs of :mod:`sim.coverage.proofs` run (or come from their cache,
keyed by the digest of ``hw/``): a bin proved unreachable is no bin of the list. The exit
status is 1 when a listed bin is not hit.
"""

import argparse
import json
import sys
import time
from pathlib import Path

from sim.coverage.database import classify, load, markdown_report, merge, summary
from sim.coverage.proofs import proved, run_proofs
from sim.runner import BUILD_ROOT, simulate

__all__ = ["RUNS", "run_all", "main"]

_PE_SMALL = {"max_rows": 64, "max_samples": 64, "feature_capacity": 8, "feature_lanes": 4,
             "code_bits": 8, "classes": 4, "max_depth": 8, "sparse_rows": 32}
_PE_SHORT = {"max_rows": 100, "max_samples": 40, "max_inbag_rows": 24, "feature_capacity": 6,
             "feature_lanes": 2, "code_bits": 12, "classes": 2, "max_depth": 12}
# The builds of tests/sim/test_tb_trainer.py and test_tb_system.py (two PEs; the trainer's
# lists shorter than its rows, so that bootstraps overflow them too).
_TRAINER_SMALL = {"pe_count": 2, "max_trees": 16, "radix_bits": 4, "max_rows": 64, "max_samples": 64,
                  "max_inbag_rows": 44, "feature_capacity": 8, "feature_lanes": 4, "code_bits": 8,
                  "classes": 4, "max_depth": 8, "sparse_rows": 16}
_SYSTEM_SMALL = {"pe_count": 2, "max_trees": 8, "radix_bits": 4, "traversal_stages": 1, "max_rows": 48,
                 "max_samples": 48, "feature_capacity": 6, "feature_lanes": 2, "code_bits": 8, "classes": 4,
                 "max_depth": 8}

#: name -> (design, cocotb module, design parameters, testbench settings, seed): builds small
#: enough that the segment, list and capacity limits are reached by the random cases.
RUNS = {
    "gini_rows7": ("gini_scanner", "sim.tb_gini", {"classes": 3, "count_bits": 8, "code_bits": 8, "row_bits": 7},
                   {"random_segments": 150}, 31),
    "gini_rows4": ("gini_scanner", "sim.tb_gini", {"classes": 2, "count_bits": 5, "code_bits": 16, "row_bits": 4},
                   {"random_segments": 150}, 33),
    "gini_queued": ("gini_scanner", "sim.coverage.tb_gini_corners",
                    {"classes": 2, "count_bits": 5, "code_bits": 16, "row_bits": 4}, {"batches": 6}, 34),
    "sorter": ("radix_sorter", "sim.tb_sorter", {"max_rows": 64, "code_bits": 16, "radix_bits": 8},
               {"random_cases": 20}, 11),
    "inbag": ("inbag_builder", "sim.tb_inbag", {"max_rows": 64, "max_samples": 100, "code_bits": 8,
                                                "tree_index_bits": 8, "lanes": 4}, {"random_trees": 10}, 21),
    "partition": ("partition_unit", "sim.tb_partition", {"max_rows": 64, "max_samples": 20, "code_bits": 8,
                                                         "address_bits": 11}, {"random_cases": 20}, 41),
    "rng": ("tree_random", "sim.tb_rng", None, {"seed_count": 200}, 1),
    "inference": ("inference_engine", "sim.tb_inference", {
        "max_trees": 5, "max_nodes_per_tree": 15, "feature_capacity": 3, "code_bits": 4, "classes": 2,
        "count_bits": 4, "max_depth": 3, "traversal_stages": 1, "class_count_sums": False},
        {"random_trees": 4, "scenarios": [{"data": "random", "mode": "forest", "trees": 5, "seed": 9, "rows": 30,
                                           "features": 3, "classes": 2, "train_rows": 14, "max_depth": 3}]}, 53),
    "pe": ("processing_element", "sim.tb_pe", _PE_SMALL, {"random_cases": 70}, 101),
    "pe_corners": ("processing_element", "sim.coverage.tb_pe_corners", _PE_SMALL, {}, 106),
    "pe_short_lists": ("processing_element", "sim.tb_pe", _PE_SHORT, {"random_cases": 40}, 104),
    "trainer": ("forest_trainer", "sim.tb_trainer", _TRAINER_SMALL, {"random_forests": 6, "stopped_forests": 2}, 202),
    "system": ("forest_system", "sim.tb_system", _SYSTEM_SMALL, {"random_forests": 6}, 301),
    "trainer_corners": ("forest_trainer", "sim.coverage.tb_trainer_corners", _TRAINER_SMALL, {}, 203),
    "system_corners": ("forest_system", "sim.coverage.tb_system_corners", _SYSTEM_SMALL, {}, 302),
}


def run_all(names, folder):
    """Run ``names`` of :data:`RUNS` with coverage into ``folder``; return the database paths."""
    from tqdm import tqdm
    paths = []
    for name in tqdm(names, desc="coverage runs", unit="run"):
        design, module, parameters, settings, seed = RUNS[name]
        path = Path(folder) / f"{name}.json"
        if path.exists():
            path.unlink()
        simulate(design, module, parameters=parameters, testbench={**settings, "coverage": str(path)}, seed=seed)
        paths.append(path)
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for coverage.md and coverage.json")
    parser.add_argument("--runs", nargs="*", choices=sorted(RUNS), help="only these runs (default: all)")
    parser.add_argument("--merge-only", action="store_true",
                        help="report the databases of an earlier run without simulating")
    parser.add_argument("--databases", default=str(BUILD_ROOT / "coverage"),
                        help="folder of the runs' databases (default: %(default)s)")
    parser.add_argument("--no-proofs", action="store_true",
                        help="skip the unreachability proofs (their bins then stay listed)")
    arguments = parser.parse_args(argv)
    names = arguments.runs or list(RUNS)
    folder = Path(arguments.databases)
    folder.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    paths = [folder / f"{name}.json" for name in names] if arguments.merge_only else run_all(names, folder)
    seconds = None if arguments.merge_only else time.monotonic() - started
    proofs = [] if arguments.no_proofs else run_proofs(folder=folder / "proofs")
    classified = classify(merge(load(paths)), proved(proofs))
    runs = [f"{name}: {RUNS[name][0]} {RUNS[name][1]} {RUNS[name][2] or 'default build'} seed {RUNS[name][4]}"
            for name in names]
    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "coverage.md").write_text(markdown_report(classified, runs, seconds, proofs))
    (out / "coverage.json").write_text(json.dumps({"runs": runs, "seconds": seconds, "bins": classified,
                                                   "proofs": proofs}, indent=1))
    table = summary(classified)
    missed = [record for record in classified if record["status"] == "missed"]
    for (block, kind), row in table.items():
        print(f"{block:20s} {kind:15s} {row['hit']:4d} hit {row['missed']:4d} missed of {row['total']} "
              f"({row['unreachable']} proved unreachable)")
    for proof in proofs:
        print(f"proof {proof['status']:7s} {proof['method']:18s} {proof['statement']}")
    for record in missed:
        print(f"MISSED {record['block']} {record['kind']} {record['group']!r} {record['bin']!r}")
    print(f"wrote {out / 'coverage.md'} and {out / 'coverage.json'}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
