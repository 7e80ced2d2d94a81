"""cocotb module of the random regression (``sim.regress``): a batch of drawn cases on the forest trainer.

Each case (``sim.regress.cases``) is trained whole by the simulated ``ForestTrainer``
and compared tree by tree, node by node, with ``train_forest`` through
``sim.tb_trainer.ForestTestbench.check_forest`` (which also expects ``tree_error``, and
the trees before it, when a tree cannot fit the build). Every case starts from a reset,
with its own stall probabilities and the stall generator seeded by its ``stall_seed``,
so its verdict does not depend on the cases run before it in the batch.

Settings: ``cases`` (a JSON file: the list of cases), ``verdicts`` (a file to which one
JSON line per case is appended as soon as it is decided, so a simulator that dies keeps
the verdicts before it). A case with ``"mutation": "wrong_expectation"`` is compared with
a deliberately wrong model forest (every tree's root counts one more sample of class 0):
the regression's own check that it can fail.
"""

import contextlib
import json
import time

import cocotb
from cocotb.utils import get_sim_time

import sim.tb_trainer as trainer_testbench
from sim.regress.cases import describe, materialise
from sim.support.testbench import CLOCK_PERIOD_NS
from sim.tb_trainer import ForestTestbench

__all__ = ["wrong_expectation", "run_case"]


@contextlib.contextmanager
def wrong_expectation():
    """Within: the model forests ``check_forest`` compares with are wrong (root counts + 1)."""
    model = trainer_testbench.train_forest

    def mutated(*arguments, **keywords):
        trees = model(*arguments, **keywords)
        for tree in trees:
            tree.class_counts[0, 0] += 1
        return trees

    trainer_testbench.train_forest = mutated
    try:
        yield
    finally:
        trainer_testbench.train_forest = model


async def run_case(tb, case):
    """Reset, train ``case`` and compare it; return its verdict (a dict)."""
    codes, labels, params, seed, n_trees = materialise(case)
    tb.rng.seed(case["stall_seed"])
    tb.dataset.idle_probability = case["idle_probability"]
    tb.nodes.stall_probability = case["stall_probability"]
    await tb.reset()
    wall, start = time.perf_counter(), get_sim_time("ns")
    verdict = {"index": case.get("index"), "seed": case["seed"], "shape": case["shape"]}
    mutation = wrong_expectation() if case.get("mutation") == "wrong_expectation" else contextlib.nullcontext()
    try:
        with mutation:
            cycles = await tb.check_forest(codes, labels, params, seed, n_trees, f"case {case['seed']}")
        verdict.update(passed=True, outcome="forest" if cycles is not None else "tree_error",
                       cycles=cycles)
    except Exception as error:      # an assertion, a hang past the budget, a driver error
        verdict.update(passed=False, error=f"{type(error).__name__}: {error}")
    verdict.update(simulated_cycles=int(get_sim_time("ns") - start) // CLOCK_PERIOD_NS,
                   wall_seconds=round(time.perf_counter() - wall, 3))
    return verdict


@cocotb.test()
async def regression_cases(dut):
    tb = ForestTestbench(dut)
    settings = tb.settings
    with open(settings["cases"]) as file:
        cases = json.load(file)
    await tb.begin()
    failed = 0
    for case in cases:
        verdict = await run_case(tb, case)
        failed += not verdict["passed"]
        if not verdict["passed"]:
            dut._log.error("case %d (%s) failed: %s", case["seed"], describe(case), verdict["error"])
        with open(settings["verdicts"], "a") as file:
            file.write(json.dumps(verdict) + "\n")
    dut._log.info("%d of %d cases passed", len(cases) - failed, len(cases))
