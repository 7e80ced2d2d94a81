"""The inference engine, simulated by cocotb under Verilator, against the golden model."""

import pytest

from hw.inference import InferenceEngine
from sim.runner import simulate

THESIS = {"max_trees": 40, "max_nodes_per_tree": 31, "feature_capacity": 4, "code_bits": 8,
          "classes": 3, "count_bits": 5, "max_depth": 4, "traversal_stages": 5,
          "class_count_sums": True}
DEEP = {"max_trees": 12, "max_nodes_per_tree": 201, "feature_capacity": 10, "code_bits": 12,
        "classes": 5, "count_bits": 8, "max_depth": 14, "traversal_stages": 3,
        "class_count_sums": True}
SMALL = {"max_trees": 5, "max_nodes_per_tree": 15, "feature_capacity": 3, "code_bits": 4,
         "classes": 2, "count_bits": 4, "max_depth": 3, "traversal_stages": 1,
         "class_count_sums": False}


@pytest.mark.parametrize("parameters, scenarios, seed", [
    # Thesis mode (depth 4, one feature per tree, fixed-point codes), fully pipelined by depth.
    (THESIS, [{"data": "iris", "mode": "thesis", "trees": 40, "seed": 3, "rows": 40},
              {"data": "random", "mode": "thesis", "trees": 25, "seed": 4, "rows": 30,
               "features": 4, "classes": 3, "train_rows": 80}], 51),
    # Forest mode, deep trees, three stages (traversals go round several times).
    (DEEP, [{"data": "iris", "mode": "forest", "trees": 12, "seed": 5, "rows": 40},
            {"data": "random", "mode": "forest", "trees": 10, "seed": 6, "rows": 40,
             "features": 10, "classes": 5, "train_rows": 100}], 52),
    # One stage, no class counts, non-power-of-two capacities.
    (SMALL, [{"data": "random", "mode": "forest", "trees": 5, "seed": 9, "rows": 30,
              "features": 3, "classes": 2, "train_rows": 14, "max_depth": 3}], 53),
], ids=["thesis", "deep", "small"])
def test_inference_engine_matches_model_in_verilator(parameters, scenarios, seed):
    tests, failed = simulate("inference_engine", "sim.tb_inference", parameters=parameters,
                             testbench={"scenarios": scenarios, "random_trees": 4}, seed=seed)
    assert (tests, failed) == (5, 0)


@pytest.mark.parametrize("arguments, error, text", [
    ({"max_trees": 0}, ValueError, "max_trees must be between 1 and 65536, not 0"),
    ({"classes": 1}, ValueError, "classes must be between 2 and 256, not 1"),
    ({"max_depth": 3, "traversal_stages": 5}, ValueError, "traversal_stages must be between 1 and 4, not 5"),
    ({"code_bits": 33}, ValueError, "code_bits must be between 1 and 32, not 33"),
    ({"feature_capacity": 2.0}, TypeError, "feature_capacity must be an integer"),
    ({"class_count_sums": 1}, TypeError, "class_count_sums must be True or False"),
])
def test_bad_parameters_are_refused(arguments, error, text):
    with pytest.raises(error, match=text):
        InferenceEngine(**arguments)


@pytest.mark.parametrize("arguments", [
    {"max_trees": 1, "max_nodes_per_tree": 1, "feature_capacity": 1, "code_bits": 1, "classes": 2,
     "count_bits": 1, "max_depth": 0},                 # root leaves only
    {"max_trees": 3, "max_nodes_per_tree": 7, "feature_capacity": 2, "code_bits": 3, "classes": 256,
     "count_bits": 2, "max_depth": 2, "traversal_stages": 2, "class_count_sums": False},
])
def test_extreme_parameters_elaborate(arguments):
    from amaranth.back import verilog
    assert "module inference_engine_edge" in verilog.convert(
        InferenceEngine(**arguments), name="inference_engine_edge", emit_src=False)
