"""The comparison (``make``, ``python -m sw.experiments.compare``): options, thesis numbers, outputs.

The end-to-end test runs the real command on iris (2 folds, few trees) with its samples
simulated in Verilator on the small build that ``tests/sim/test_tb_system.py`` also uses
(``sim.backend.design_for`` of the same inputs), so the two share one Verilator build.
"""

import csv
import dataclasses
import os
import re

import numpy as np
import pytest

from sim import backend
from sim.runner import PROJECT_ROOT
from sw.experiments import compare
from sw.experiments.compare import histogram
from sw.experiments import pe_fit as bench_pe_fit
from sw.methods.forest import model
from sw.methods.forest.estimator import HardwareForestClassifier
from sw.experiments.thesis_tables import CITATION, THESIS_AVERAGE_SPEEDUP, THESIS_TABLE_4_2, thesis_row

NOTES = PROJECT_ROOT.parent / "shared" / "notes" / "thesis_tables.md"
SIX = ("iris", "sonar", "breast_cancer_coimbra", "heart_failure", "cmc", "ctg")


def test_thesis_numbers_are_table_4_2_with_its_citation():
    assert tuple(THESIS_TABLE_4_2) == SIX
    assert "Waterloo" in CITATION and "Table 4.2" in CITATION and "2022" in CITATION
    assert thesis_row("iris")["hw_accuracy"] == 86 and thesis_row("ctg")["sklearn_ms"] == 3336.08
    assert thesis_row("wine") is None
    speedups = [thesis_row(name)["speedup"] for name in SIX]
    assert thesis_row("iris")["speedup"] == pytest.approx(1710.24 / 29.64)
    # "on average 50x faster": the table's ratios are 46x to 88x.
    assert min(speedups) > 0.9 * THESIS_AVERAGE_SPEEDUP and np.mean(speedups) == pytest.approx(59, abs=1)


@pytest.mark.skipif(not NOTES.exists(), reason="the project notes are not beside this checkout")
def test_thesis_numbers_match_the_transcription_in_the_notes():
    text = NOTES.read_text()
    rows = [line.split("|")[1:-1] for line in text.splitlines()
            if line.startswith("| ") and re.match(r"\| \d+x\d+ \|", "| " + line.split("|")[2].strip() + " |")]
    assert len(rows) == 6
    for name, cells in zip(SIX, rows):
        numbers = [float(cell) for cell in cells[3:7]]
        row = THESIS_TABLE_4_2[name]
        assert numbers == [row["hw_accuracy"], row["sklearn_accuracy"], row["hw_ms"], row["sklearn_ms"]], name
        assert cells[1].strip() == row["size"] and int(cells[2]) == row["classes"], name


def test_inbag_capacity_holds_bootstraps_and_saves_rows():
    """Lists from sw.experiments.pe_fit.inbag_capacity hold every bootstrap of a model draw
    (2,000 trees, a loose bound of 1 %), are shorter than the rows, and never longer."""
    from sw.methods.forest.rng import TreeRandom
    rows = 300
    capacity = bench_pe_fit.inbag_capacity(rows, rows, bound=1e-2, granule=1)
    distinct = [np.count_nonzero(model.bootstrap_weights(TreeRandom(9, tree), rows, rows)) for tree in range(2000)]
    assert max(distinct) <= capacity < rows
    assert bench_pe_fit.inbag_capacity(rows, rows, bound=1e-300) == rows
    assert bench_pe_fit.inbag_capacity(1701, 1701) % bench_pe_fit.LIST_GRANULE == 0


def test_p_leaves_15_percent_of_every_resource_with_what_sits_beside_the_pes():
    device = {"alms": 1000, "m20k": 200, "dsp": 100}
    pe = {"alms": 50, "m20k": 10, "dsp": 4}
    system = {"alms": 250, "m20k": 70, "dsp": 4}            # one PE + 200 ALMs, 60 M20K beside
    beside = bench_pe_fit.shell(system, pe)
    assert beside == {"alms": 200, "m20k": 60, "dsp": 0}
    # 0.85 x 1000 - 200 = 650 ALMs: 13 PEs; 0.85 x 200 - 60 = 110 M20K: 11; 85 DSP: 21.
    assert bench_pe_fit.pes_that_fit(pe, beside, device) == (11, "m20k", {"alms": 13, "m20k": 11, "dsp": 21})
    assert bench_pe_fit.pes_that_fit(pe, {**beside, "m20k": 171}, device)[0] == 0
    parameters = bench_pe_fit.pe_parameters(2126, 21, 3)
    system_parameters = bench_pe_fit.system_parameters(parameters)
    assert system_parameters["pe_count"] == 1 and system_parameters["max_trees"] == bench_pe_fit.FOREST_TREES
    assert {key: system_parameters[key] for key in parameters} == parameters


def test_the_clock_is_the_proxy_minimum_rounded_down_and_never_above_the_target(monkeypatch):
    import hw.flows.fmax
    record = {"clock_mhz": 43, "limited_by": "processing_element[ctg]", "stale": [], "missing": []}
    monkeypatch.setattr(hw.flows.fmax, "proxy_clock", lambda *a, **k: record)
    clock, text = compare.builds.proxy_clock()
    assert clock == 43 and "limited by processing_element[ctg]" in text and "docs/fmax.json" in text
    record.update(clock_mhz=117, missing=["forest_system"], stale=["gini_scanner"])
    clock, text = compare.builds.proxy_clock()
    assert clock == compare.TARGET_CLOCK_MHZ == 100
    assert "not measured yet: forest_system" in text and "older gateware: gini_scanner" in text
    arguments = compare.parse_arguments(["--datasets", "iris", "--clock-mhz", "250"])
    assert arguments.clock_mhz == 250 and "what-if" in arguments.clock_source


def test_speedups_name_each_cpu_forest_and_the_fastest():
    row = {"hw_forest_ms": 2.0, "fit_sk_forest_1_ms": 300.0, "fit_sk_forest_all_ms": 160.0,
           "fit_dal_forest_1_ms": 50.0, "fit_dal_forest_all_ms": 30.0}
    columns = compare.hwtime.baseline_columns(row)
    assert columns["speedup_vs_sklearn_1core"] == 150 and columns["speedup_vs_onedal_1core"] == 25
    assert columns["speedup_vs_sklearn_allcores"] == 80 and columns["speedup_vs_onedal_allcores"] == 15
    assert columns["fastest_cpu_trainer"].startswith("oneDAL")
    assert columns["speedup_vs_fastest_cpu_1core"] == columns["cpu_cores_replaced"] == 25
    assert columns["speedup_vs_fastest_cpu_allcores"] == 15
    row["fit_dal_forest_1_ms"] = 400.0
    columns = compare.hwtime.baseline_columns(row)
    assert columns["fastest_cpu_trainer"] == "scikit-learn" and columns["cpu_cores_replaced"] == 150


@pytest.mark.parametrize("argv, message", [
    (["--folds", "1"], "--folds must be at least 2, not 1"),
    (["--trees", "0"], "expected a positive integer, not 0"),
    (["--depth", "deep"], "expected a positive integer, not 'deep'"),
    (["--depth", "65"], "depth 65 is deeper than the simulated build holds (64)"),
    (["--datasets", "nosuch"], "unknown dataset 'nosuch'"),
    (["--datasets", "iris", "iris"], "a dataset is named twice"),
    (["--sim-trees", "33"], "--sim-trees must be at most 32"),
    (["--trees", "4", "--sim-trees", "8"], "--sim-trees (8) must not exceed --trees (4)"),
    (["--pe-count", "0"], "expected a positive integer, not 0"),
    (["--pe-count", "5000"], "5000 PEs is far beyond any Arria 10"),
    (["--clock-mhz", "-5"], "clock must be in (0, 1000] MHz, not -5.0"),
    (["--clock-mhz", "fast"], "expected a clock in MHz, not 'fast'"),
    (["--seed", "-1"], "--seed must be in [0, 2**31), not -1"),
    (["--repeats", "0"], "expected a positive integer, not 0"),
    (["--seed", str((1 << 31) - 1), "--repeats", "2"],
     "--seed + --repeats must be at most 2**31 (the last repeat's seed is seed + repeats - 1), "
     "not 2147483649"),
])
def test_bad_options_are_refused_by_name(argv, message, capsys):
    with pytest.raises(SystemExit) as exit:
        compare.parse_arguments(["--datasets", "iris", *argv] if "--datasets" not in argv else argv)
    assert exit.value.code == 2
    assert message in capsys.readouterr().err


def test_missing_dataset_and_missing_estimate_are_explained(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("HWFOREST_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(SystemExit):
        compare.parse_arguments(["--datasets", "sonar"])
    assert "dataset 'sonar' is not available: set HWFOREST_DATA_DIR" in capsys.readouterr().err
    monkeypatch.setattr(compare.builds, "PE_FIT", {"iris": 56})
    with pytest.raises(SystemExit):
        compare.parse_arguments(["--datasets", "wine"])
    assert "no PE estimate for wine" in capsys.readouterr().err
    assert compare.parse_arguments(["--datasets", "wine", "--pe-count", "4"]).pe_count == 4
    assert compare.parse_arguments(["--datasets", "wine", "--no-sim"]).no_sim


def test_a_dataset_too_big_for_the_simulated_build_goes_to_the_histogram_system(monkeypatch, capsys):
    monkeypatch.setattr(compare.builds, "SIM_DESIGN", {**compare.SIM_DESIGN, "max_rows": 64, "classes": 2})
    # (no PE estimate needed for them: the histogram system has one PE)
    monkeypatch.setattr(compare.builds, "PE_FIT", {})
    arguments = compare.parse_arguments(["--datasets", "iris", "wine"])
    assert arguments.histogram == {"iris": "max_rows 120 > 64, classes 3 > 2", "wine": "max_rows 143 > 64, classes 3 > 2"}
    # The isolet-sized folds of the data folder, by the registry's shapes:
    monkeypatch.setattr(compare.builds, "SIM_DESIGN", compare.SIM_DESIGN)
    assert histogram.histogram_datasets(["isolet", "mnist_test10k", "ctg"], 5, 100) == {
        "isolet": "max_rows 6238 > 2048, feature_capacity 617 > 64, classes 26 > 4",
        "mnist_test10k": "max_rows 8000 > 2048, feature_capacity 784 > 64, classes 10 > 4"}


def test_a_dataset_too_big_for_both_systems_is_refused_before_any_work(monkeypatch, capsys):
    from sim import histogram_backend
    monkeypatch.setattr(compare.builds, "SIM_DESIGN", {**compare.SIM_DESIGN, "max_rows": 64, "classes": 2})
    monkeypatch.setattr(histogram_backend, "LIMITS", {**histogram_backend.LIMITS, "features": 3})
    with pytest.raises(SystemExit):
        compare.parse_arguments(["--datasets", "iris"])
    assert ("iris's training folds fit neither the simulated build (max_rows 120 > 64, classes 3 > 2) nor "
            "the histogram system (features 4 > 3): use --no-sim for accuracy only" in capsys.readouterr().err)
    arguments = compare.parse_arguments(["--datasets", "iris", "--no-sim"])
    assert arguments.no_sim and arguments.histogram == {}


def test_the_histogram_pe_clock_is_the_pass_engines_placement_below_the_proxy_clock(monkeypatch):
    from hw.flows import fmax_record
    entry = {"design": "pass_engine", "parameters": {"lanes": 3}, "fmax_mhz": 98.2,
             "seeds": {"2": 98.2, "3": 111.4}, "digest": "old"}
    monkeypatch.setattr(fmax_record, "load_record", lambda path: {"entries": {histogram.CLOCK_ENTRY: entry}})
    mhz, text = histogram.clock(99.0, "the proxy")
    assert mhz == 98.0
    assert "placed at 98.2 MHz at worst on the ECP5 proxy (seeds 2, 3; seed 1 gave no placement)" in text
    assert "measured on older gateware" in text and "histogram PE and system themselves were not placed" in text
    entry.update(fmax_mhz=120.5, seeds={"1": 120.5, "2": 130.0, "3": 125.0})
    mhz, text = histogram.clock(99.0, "the proxy")
    assert mhz == 99.0 and text.startswith("the proxy (") and "no placement" not in text
    monkeypatch.setattr(fmax_record, "load_record", lambda path: {"entries": {}})
    mhz, text = histogram.clock(99.0, "the proxy")
    assert mhz == 99.0 and "was never placed" in text


def test_histogram_load_is_the_code_store_words_and_a_beat_a_row():
    from sim import histogram_backend
    on_chip = histogram_backend.design_for(100, 4, 3, 8)
    assert histogram_backend.load_cycles(100, on_chip) == 100
    # isolet in memory: 617 features (624 slots) x 8,192 rows of 8-bit slots in 64-byte words
    isolet = histogram_backend.design_for(7_797, 617, 26, 8)
    assert histogram_backend.load_cycles(7_797, isolet) == 624 * 8192 // 64 + 7_797


def test_default_datasets_are_the_thesis_six_or_the_bundled_three(monkeypatch):
    import sw.data.datasets
    monkeypatch.setattr(sw.data.datasets, "available", lambda name: True)
    assert compare.default_datasets() == list(SIX)
    monkeypatch.setattr(sw.data.datasets, "available",
                        lambda name: name in ("iris", "wine", "breast_cancer_wisconsin"))
    assert compare.default_datasets() == ["iris", "wine", "breast_cancer_wisconsin"]


def test_a_default_run_without_the_thesis_datasets_says_so(monkeypatch, capsys):
    import sw.data.datasets
    monkeypatch.setattr(sw.data.datasets, "available",
                        lambda name: name in ("iris", "sonar", "wine", "breast_cancer_wisconsin"))
    arguments = compare.parse_arguments(["--no-sim"])
    assert arguments.datasets == ["iris", "sonar", "wine", "breast_cancer_wisconsin"]
    err = capsys.readouterr().err
    assert "breast_cancer_coimbra, heart_failure, cmc, ctg are not available" in err
    assert "HWFOREST_DATA_DIR" in err
    monkeypatch.setattr(sw.data.datasets, "available", lambda name: True)
    compare.parse_arguments(["--no-sim"])
    assert "not available" not in capsys.readouterr().err


def test_every_dataset_the_comparison_runs_by_default_has_a_measured_p():
    """Without the data folder the comparison falls back to the bundled sets; a P dropped
    from ``docs/pe_fit.json`` stopped ``make`` with 'no PE estimate' (5e7569b)."""
    from sw.data.datasets import THESIS_HARDWARE_DATASETS
    fits = bench_pe_fit.load_fits()
    for name in (*THESIS_HARDWARE_DATASETS, *compare.BUNDLED_DATASETS):
        assert name in fits, f"docs/pe_fit.json has no P for {name}: python -m sw.experiments.pe_fit"
        assert fits[name]["pe_count"] >= 1 and fits[name]["feature_lanes"] >= 1, (name, fits[name])


def test_modelled_time_is_load_presort_and_trees_over_pe_count():
    sample = {"load_cycles": 1000, "sort_cycles": 9000, "overhead_cycles": 0, "cycles_per_tree": 500}
    assert compare.modelled_seconds(sample, 100, 10, 100e6) == pytest.approx((10_000 + 5_000) / 100e6)
    assert compare.modelled_seconds(sample, 100, 1, 50e6) == pytest.approx(60_000 / 50e6)
    # With several PEs a tree may wait for the list rotor; a lone PE never does.
    sample["rotor_wait_cycles"] = 300
    assert compare.modelled_seconds(sample, 100, 10, 100e6) == pytest.approx((10_000 + 8_000) / 100e6)
    assert compare.modelled_seconds(sample, 100, 1, 50e6) == pytest.approx(60_000 / 50e6)


def test_a_pe_count_measured_on_older_gateware_is_said(tmp_path):
    import json
    record = json.loads((PROJECT_ROOT / "docs" / "pe_fit.json").read_text())
    datasets = {name: {key: value for key, value in fit.items() if key not in ("design_digest", "date")}
                for name, fit in record["datasets"].items()}
    path = tmp_path / "pe_fit.json"
    # A record with one digest for all its datasets (as before per-dataset digests).
    path.write_text(json.dumps({"datasets": datasets, "design_digest": bench_pe_fit.fit_digest()}))
    assert compare.builds.pe_fit_staleness(path) is None
    path.write_text(json.dumps({"datasets": datasets, "design_digest": "0123456789abcdef"}))
    assert compare.builds.pe_fit_staleness(path).startswith(
        "P measured on older gateware (docs/pe_fit.json digest 0123456789 for ")


def test_a_partial_pe_fit_rerun_keeps_the_others_digests(tmp_path):
    """Re-measuring some datasets records today's digest for them only: the others keep
    the digest they were measured with, so the comparison still calls them stale."""
    import json
    record = json.loads((PROJECT_ROOT / "docs" / "pe_fit.json").read_text())
    names = sorted(record["datasets"])
    datasets = {name: {key: value for key, value in fit.items() if key not in ("design_digest", "date")}
                for name, fit in record["datasets"].items()}
    path = tmp_path / "pe_fit.json"
    path.write_text(json.dumps({"datasets": datasets, "design_digest": "0123456789abcdef", "date": "2026-01-01"}))
    fit = {"pe_count": 7, "limited_by": "dsp", "parameters": {"feature_lanes": 2}, "estimate": {}, "beside": {}}
    bench_pe_fit.write_fits({names[0]: fit}, path)
    written = json.loads(path.read_text())["datasets"]
    assert written[names[0]]["design_digest"] == bench_pe_fit.fit_digest() and written[names[0]]["pe_count"] == 7
    assert all(written[name]["design_digest"] == "0123456789abcdef" for name in names[1:])
    assert written[names[1]]["date"] == "2026-01-01"
    message = compare.builds.pe_fit_staleness(path)
    assert names[0] not in message.split(" for ")[1].split(";")[0] and names[1] in message
    bench_pe_fit.write_fits({name: fit for name in names}, path)
    assert compare.builds.pe_fit_staleness(path) is None


def test_one_pass_bound_is_the_rows_of_each_levels_internal_nodes():
    """The issue's definition, counted level by level through the children: every in-bag
    row of a node that is split is read once on that level."""
    rng = np.random.default_rng(5)
    codes, labels = rng.integers(0, 40, (300, 6)), rng.integers(0, 3, 300)
    params = model.TrainingParameters(n_classes=3, max_samples=300, features_per_split=2)
    for tree in model.train_forest(codes, labels, params, 7, 3):
        total, level = 0, [0]
        while level:
            split = [node for node in level if tree.left_child[node] >= 0]
            total += sum(int(tree.n_rows[node]) for node in split)
            level = [child for node in split for child in (tree.left_child[node], tree.right_child[node])]
        assert tree.depth.max() > 3 and total > 300
        assert compare.one_pass_bound_cycles(tree) == total
    # A lone leaf is never scanned.
    stump = model.train_tree(codes[:1], labels[:1], dataclasses.replace(params, max_samples=1), 7, 0)
    assert compare.one_pass_bound_cycles(stump) == 0


def test_load_cycles_are_the_beats_the_host_driver_sends():
    """The modelled load is one cycle per beat of the dataset stream (the trainer takes one
    beat per cycle while not busy), counted here from the driver's own beats."""
    from sim.support.trees import dataset_beats
    rng = np.random.default_rng(3)
    for rows, features, lanes in ((7, 21, 8), (5, 60, 4), (6, 8, 4), (3, 1, 2), (4, 9, 1)):
        codes = rng.integers(0, 9, size=(rows, features))
        beats = list(dataset_beats(codes, np.zeros(rows, dtype=int), lanes))
        assert compare.load_cycles(codes.shape, {"feature_lanes": lanes}) == len(beats)
        assert sum(beat["last"] for beat in beats) == 1 and beats[-1]["last"] == 1
        sent = [code for beat in beats for code in beat["codes"]]
        padded = np.zeros((rows, len(beats) // rows * lanes), dtype=int)
        padded[:, :features] = codes
        assert sent == padded.ravel().tolist()


def test_rotor_wait_is_a_round_of_lists_unless_the_sparse_fill_reads_none():
    design = {"feature_lanes": 8, "sparse_rows": 16}
    codes = np.zeros((1701, 21), dtype=int)
    forest = model.TrainingParameters(n_classes=3, max_samples=1701)
    thesis = model.TrainingParameters(n_classes=3, max_samples=16, max_depth=4, thesis_mode=True)
    assert compare.rotor_wait_cycles({"codes": codes, "params": forest}, design) == 3 * 1701
    assert compare.rotor_wait_cycles({"codes": codes, "params": thesis}, design) == 0
    assert compare.rotor_wait_cycles({"codes": codes, "params": thesis}, {**design, "sparse_rows": 0}) == 3 * 1701


def _iris_models(n_trees):
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    forest = HardwareForestClassifier(n_trees, random_state=3).fit(X, y)
    return X, y, forest


def test_a_tree_that_differs_from_the_model_fails_the_run(monkeypatch, tmp_path, capsys):
    """Without Verilator: the simulator is replaced by the model with one node changed."""
    def fake_train_batch(jobs, design, progress=None, **_):
        results = []
        for job in jobs:
            trees = model.train_forest(job["codes"], job["labels"], job["params"], job["seed"],
                                       job["n_trees"])
            results.append({"trees": trees, "train_cycles": 1000 + 100 * job["n_trees"],
                            "sort_cycles": 1000, "tree_cycles": [100] * job["n_trees"],
                            "wall_seconds": 0.1, "design": design})
        broken = results[0]["trees"][0]
        results[0]["trees"][0] = dataclasses.replace(
            broken, threshold_code=np.where(broken.left_child >= 0, broken.threshold_code + 1, -1))
        return results
    monkeypatch.setattr(backend, "train_batch", fake_train_batch)
    monkeypatch.setattr(backend, "build", lambda design: None)
    # The fake simulator lives in this process: --jobs 1 (the one-process path, which
    # builds here, faked too; the end-to-end test below takes the worker processes).
    status = compare.main(["--datasets", "iris", "--folds", "2", "--repeats", "1", "--trees", "3",
                           "--sim-trees", "2", "--jobs", "1", "--clock-mhz", "100",
                           "--sim-thesis-trees", "2", "--out", str(tmp_path), "--quiet", "--no-plot"])
    captured = capsys.readouterr()
    assert status == 1
    assert "differ from the golden model's on iris" in captured.err
    assert "| NO " in captured.out
    row = next(csv.DictReader(open(tmp_path / "compare.csv")))
    assert row["rtl_equals_model"] == "False" and row["sim_forest_equal"] == "False"
    assert row["sim_thesis_equal"] == "True"
    # 3 trees of 100 cycles, each waiting at most one list of 75 rows for the rotor, over
    # the P of docs/pe_fit.json; 75 rows loaded in one beat each (4 features on iris's 4
    # lanes), 1,000 presort cycles:
    assert compare.PE_LANES["iris"] == 4
    pe_count = compare.PE_FIT["iris"]
    assert int(row["pe_count"]) == pe_count > 1
    assert float(row["hw_forest_ms"]) == pytest.approx((75 + 1000 + 3 * (100 + 75) / pe_count) / 1e5, rel=1e-5)


def test_samples_of_two_builds_are_simulated_side_by_side_and_land_in_their_rows(monkeypatch, tmp_path):
    """Without Verilator: iris and wine on builds of different lanes; the two simulator
    runs overlap (each waits until the other has started), and every dataset's row gets
    the results of its own jobs (the fake marks them with the build's lanes)."""
    import threading
    started = threading.Barrier(2, timeout=60)

    def fake_train_batch(jobs, design, progress=None, **_):
        started.wait()      # raises BrokenBarrierError if the builds ran one after the other
        lanes = design["feature_lanes"]
        return [{"trees": model.train_forest(job["codes"], job["labels"], job["params"], job["seed"],
                                             job["n_trees"]),
                 "train_cycles": 2000 + lanes + 100 * job["n_trees"], "sort_cycles": 1000 + lanes,
                 "tree_cycles": [100] * job["n_trees"], "wall_seconds": 0.1, "design": design}
                for job in jobs]
    monkeypatch.setattr(backend, "train_batch", fake_train_batch)
    monkeypatch.setattr(backend, "build", lambda design: None)
    monkeypatch.setattr(compare.builds, "PE_LANES", {**compare.PE_LANES, "iris": 4, "wine": 8})
    assert compare.main(["--datasets", "iris", "wine", "--folds", "2", "--repeats", "1", "--clock-mhz", "100",
                         "--trees", "3", "--sim-trees", "2", "--sim-thesis-trees", "2", "--jobs", "1",
                         "--pe-count", "4", "--out", str(tmp_path), "--quiet", "--no-plot"]) == 0
    rows = {row["dataset"]: row for row in csv.DictReader(open(tmp_path / "compare.csv"))}
    for name, lanes in (("iris", 4), ("wine", 8)):
        assert rows[name]["rtl_equals_model"] == "True"
        for mode in ("forest", "thesis"):
            assert int(rows[name][f"sim_{mode}_sort_cycles"]) == 1000 + lanes


def test_a_forest_the_estimated_pes_lists_cannot_hold_fails_the_run(monkeypatch, tmp_path):
    """Without Verilator: P of PE_FIT assumes in-bag lists shorter than the rows; a forest
    with a bootstrap of more distinct rows stops the run (here: lists of 40 rows, iris
    folds of 75 rows, about 47 distinct), unless the P is the user's own (--pe-count)."""
    def fake_train_batch(jobs, design, progress=None, **_):
        return [{"trees": model.train_forest(job["codes"], job["labels"], job["params"], job["seed"],
                                             job["n_trees"]),
                 "train_cycles": 1000 + 100 * job["n_trees"], "sort_cycles": 1000,
                 "tree_cycles": [100] * job["n_trees"], "wall_seconds": 0.1, "design": design}
                for job in jobs]
    monkeypatch.setattr(backend, "train_batch", fake_train_batch)
    monkeypatch.setattr(backend, "build", lambda design: None)
    real = bench_pe_fit.pe_parameters
    monkeypatch.setattr(bench_pe_fit, "pe_parameters", lambda *a, **k: {**real(*a, **k), "max_inbag_rows": 40})
    argv = ["--datasets", "iris", "--folds", "2", "--repeats", "1", "--trees", "3", "--clock-mhz", "100",
            "--sim-trees", "2", "--jobs", "1",
            "--sim-thesis-trees", "2", "--out", str(tmp_path), "--quiet", "--no-plot"]
    with pytest.raises(RuntimeError, match=r"iris: a tree's bootstrap holds \d+ distinct rows, more "
                                           r"than the 40 of the in-bag lists PE_FIT's estimate assumes"):
        compare.main(argv)
    assert compare.main(argv + ["--pe-count", "4"]) == 0
    row = next(csv.DictReader(open(tmp_path / "compare.csv")))
    assert int(row["pe_list_rows"]) == 40 and 40 < int(row["inbag_rows_max"]) <= 75


def test_repeats_reshuffle_the_folds_and_reseed_the_forests():
    """Repeat r is an ordinary k-fold run with seed + r: its scores equal a one-repeat run
    started at that seed (computed here with scikit-learn's splitter and the estimators
    directly), and the per-repeat differences are those runs' mean differences."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import StratifiedKFold
    from sklearnex.ensemble import RandomForestClassifier as OneDALForest

    from sw.data.datasets import load
    from sw.methods.forest.estimator import HardwareForestClassifier
    data = load("iris")
    row, first = compare.accuracy_row("iris", compare.parse_arguments(
        ["--datasets", "iris", "--folds", "3", "--trees", "4", "--sim-trees", "2", "--repeats", "2",
         "--seed", "7",
         "--no-sim"]))
    assert row["repeats"] == 2 and row["seed"] == 7
    per_repeat, hardware, software, onedal = [], [], [], []
    for seed in (7, 8):
        folds = StratifiedKFold(3, shuffle=True, random_state=seed).split(data.X, data.y)
        differences = []
        for fold, (train, test) in enumerate(folds):
            fit = dict(random_state=seed * 1000 + fold)
            hw = HardwareForestClassifier(4, n_jobs=1, **fit).fit(data.X[train], data.y[train])
            sk = RandomForestClassifier(4, **fit).fit(data.X[train], data.y[train])
            hardware.append(hw.score(data.X[test], data.y[test]))
            software.append(sk.score(data.X[test], data.y[test]))
            dal = OneDALForest(4, n_jobs=1, **fit).fit(data.X[train], data.y[train])
            onedal.append(dal.score(data.X[test], data.y[test]))
            differences.append(100 * (hardware[-1] - software[-1]))
            if seed == 7 and fold == 0:
                assert np.array_equal(first["train"], train)
        per_repeat.append(np.mean(differences))
    assert row["acc_hw_forest"] == pytest.approx(100 * np.mean(hardware))
    assert row["acc_hw_forest_sd"] == pytest.approx(100 * np.std(hardware))
    assert row["acc_sk_forest"] == pytest.approx(100 * np.mean(software))
    assert [float(value) for value in row["acc_forest_minus_sk_repeats"].split()] == \
        pytest.approx(per_repeat, abs=0.005)
    assert row["acc_forest_minus_sk_repeat_sd"] == pytest.approx(np.std(per_repeat, ddof=1))
    assert row["acc_forest_minus_sk_se"] == pytest.approx(np.std(per_repeat, ddof=1) / np.sqrt(2))
    assert row["acc_dal_forest"] == pytest.approx(100 * np.mean(onedal))
    assert row["acc_forest_minus_dal"] == pytest.approx(100 * np.mean(np.subtract(hardware, onedal)))
    assert row["fit_hw_forest_ms"] > 0 and row["fit_dal_forest_1_ms"] > 0 and row["fit_dal_forest_all_ms"] > 0


@pytest.mark.long
def test_worker_processes_give_the_same_results_as_one_process(tmp_path):
    """The golden-model folds run in worker processes (--jobs 2) and are merged back in
    split order: every accuracy equals the one-process run's, fold for fold."""
    rows = {}
    for jobs in (1, 2):
        out = tmp_path / str(jobs)
        assert compare.main(["--datasets", "iris", "wine", "--folds", "3", "--repeats", "2",
                             "--trees", "4", "--sim-trees", "2", "--no-sim", "--quiet", "--no-plot",
                             "--jobs", str(jobs), "--out", str(out)]) == 0
        rows[jobs] = list(csv.DictReader(open(out / "compare.csv")))
    assert [row["dataset"] for row in rows[2]] == ["iris", "wine"]
    for one, two in zip(rows[1], rows[2]):
        for key in one:
            if key.startswith("acc_"):
                assert one[key] == two[key], key
        assert float(two["fit_hw_forest_ms"]) > 0 and float(two["fit_sk_forest_1_ms"]) > 0


def test_bad_jobs_option_is_refused(capsys):
    with pytest.raises(SystemExit):
        compare.parse_arguments(["--datasets", "iris", "--jobs", "0"])
    assert "--jobs" in capsys.readouterr().err


def test_cpu_times_keep_the_least_of_each_kind_over_the_timed_fits(monkeypatch):
    """Each CPU fit is timed --cpu-timings times; the one-core CPU and wall times and the
    all-core wall time are each the least seen, not the last nor the first."""
    from sw.experiments.compare import run
    arguments = compare.parse_arguments(["--datasets", "iris", "--cpu-timings", "3"])
    assert compare.parse_arguments(["--datasets", "iris"]).cpu_timings == 3
    # Per timed fit (wall, cpu): descending, rising, then in between.
    readings = iter([(9.0, 1.0), (5.0, 5.0), (7.0, 9.0), (2.0, 3.0)] * 50)
    calls = []

    def fake_timed(function):
        calls.append(1)
        wall, cpu = next(readings)
        return wall, cpu, None
    monkeypatch.setattr(run.cv, "timed", fake_timed)
    monkeypatch.setattr(run, "_WARMED", set(run.CPU_MODELS))
    X, y = np.zeros((6, 2)), np.array([0, 1] * 3)
    times = run.cpu_times(X, y, arguments, 0)
    assert len(calls) == 3 * 2 * len(run.CPU_MODELS)
    # Fits in order: per timing round, per model, one core then all cores.
    seen = [(9.0, 1.0), (5.0, 5.0), (7.0, 9.0), (2.0, 3.0)] * 5
    for index, name in enumerate(run.CPU_MODELS):
        rounds = [seen[2 * (round_ * len(run.CPU_MODELS) + index): 2 * (round_ * len(run.CPU_MODELS) + index) + 2]
                  for round_ in range(3)]
        assert times[f"{name}_1_wall"] == min(pair[0][0] for pair in rounds)
        assert times[f"{name}_1"] == min(pair[0][1] for pair in rounds)
        assert times[f"{name}_all"] == min(pair[1][0] for pair in rounds)
    with pytest.raises(SystemExit):
        compare.parse_arguments(["--datasets", "iris", "--cpu-timings", "0"])


def test_end_to_end_on_iris_in_verilator(monkeypatch, tmp_path, capfd):
    params = model.TrainingParameters(n_classes=3, max_depth=None, max_samples=120, bootstrap=True,
                                      features_per_split=2, thesis_mode=False, min_samples_split=2,
                                      min_samples_leaf=1)
    design = backend.design_for(120, 4, 3, 6, params)     # tests/sim/test_tb_system.py's build
    monkeypatch.setattr(compare.builds, "SIM_DESIGN", design)
    status = compare.main(["--datasets", "iris", "--folds", "2", "--repeats", "2", "--trees", "4",
                           "--sim-trees", "2", "--sim-thesis-trees", "4", "--out", str(tmp_path)])
    captured = capfd.readouterr()
    assert status == 0, captured.err[-2000:]
    for name in ("compare.md", "compare.csv", "compare.png"):
        assert (tmp_path / name).stat().st_size > 500, name
    assert (tmp_path / "compare.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (tmp_path / "compare.md").read_text()
    assert text in captured.out
    assert "| iris " in text and CITATION in text and "Modelled HW training time" in text
    row = next(csv.DictReader(open(tmp_path / "compare.csv")))
    assert row["dataset"] == "iris" and row["rtl_equals_model"] == "True"
    assert float(row["thesis_hw_acc"]) == 86 and float(row["thesis_speedup"]) == pytest.approx(57.7, abs=0.1)
    assert 50 <= float(row["acc_hw_forest"]) <= 100 and 50 <= float(row["acc_sk_forest"]) <= 100
    assert row["repeats"] == "2" and len(row["acc_forest_minus_sk_repeats"].split()) == 2
    assert "per repeat pp" in text and "repeated 2 times (shuffle and forest seeds 0-1" in text
    assert int(row["pe_count"]) == compare.PE_FIT["iris"]
    for mode in ("forest", "thesis"):
        assert int(row[f"sim_{mode}_sort_cycles"]) > 0 and float(row[f"sim_{mode}_cycles_per_tree"]) > 50
        assert float(row[f"hw_{mode}_ms"]) > 0
    assert float(row["speedup_thesis_1"]) > 0
    # The clock is the proxy's (docs/fmax.json), and the speed-ups are against each CPU
    # forest's times measured in the run.
    assert float(row["clock_mhz"]) == compare.proxy_clock()[0]
    hw_ms = float(row["hw_forest_ms"])
    one_core = {"scikit-learn": float(row["fit_sk_forest_1_ms"]), "oneDAL": float(row["fit_dal_forest_1_ms"])}
    assert float(row["speedup_vs_sklearn_1core"]) == pytest.approx(one_core["scikit-learn"] / hw_ms, rel=1e-5)
    assert float(row["cpu_cores_replaced"]) == pytest.approx(min(one_core.values()) / hw_ms, rel=1e-5)
    assert row["fastest_cpu_trainer"].startswith(min(one_core, key=one_core.get))
    assert "oneDAL %" in text and "HW - oneDAL pp (s.e.)" in text and "CPU cores replaced" in text
    # Forest mode's cycles per tree beside the one-pass bound of the same sampled trees.
    assert float(row["cycles_per_tree"]) == float(row["sim_forest_cycles_per_tree"])
    assert 0 < float(row["one_pass_bound_cycles"]) < float(row["cycles_per_tree"])
    assert float(row["cycles_over_one_pass_bound"]) == pytest.approx(
        float(row["cycles_per_tree"]) / float(row["one_pass_bound_cycles"]), rel=1e-5)
    assert ("P measured on older gateware" in text) == (compare.builds.pe_fit_staleness() is not None)
    # What else ran while the CPU forests were timed is measured, not asserted.
    background = float(row["cpu_timing_background_cores"])
    assert 0 <= background <= os.cpu_count()
    assert f"other processes kept at most {background:.2f} of the {os.cpu_count()} cores busy" in text
    assert "%|" in captured.err                         # the progress bar
    assert "cocotb" not in captured.out + captured.err  # the simulator's chatter went to the log
    assert "run_jobs passed" in (tmp_path / "compare_sim.log").read_text()


def test_a_dataset_on_the_histogram_system_gets_its_time_from_its_own_sample(monkeypatch, tmp_path, capsys):
    """Without Verilator: iris too large for a shrunk simulated build goes to the histogram
    system (faked by the model, 1,000 cycles and 64,000 memory words a tree, its codes in
    memory), at 8-bit codes, one PE, no thesis-mode time."""
    from sim import histogram_backend
    calls = []

    def fake_train(codes, labels, params, seed, n_trees, *, code_bits, **_):
        calls.append((codes.shape, int(codes.max()), code_bits, n_trees))
        design = histogram_backend.design_for(*codes.shape, params.n_classes, code_bits)
        return {"trees": model.train_forest(codes, labels, params, seed, n_trees), "train_cycles": 1000 * n_trees,
                "words_read": 64_000 * n_trees, "design": {**design, "code_store": "memory", "code_word_bits": 512}}
    monkeypatch.setattr(histogram_backend, "train", fake_train)
    monkeypatch.setattr(compare.builds, "SIM_DESIGN", {**compare.SIM_DESIGN, "max_rows": 64})
    assert compare.main(["--datasets", "iris", "--folds", "2", "--repeats", "1", "--trees", "3",
                         "--sim-trees", "2", "--sim-histogram-trees", "2", "--jobs", "1", "--clock-mhz", "100",
                         "--out", str(tmp_path), "--quiet", "--no-plot"]) == 0
    text = capsys.readouterr().out
    # fold 0's 75 training rows at 8 bits (rank codes up to 255), two trees simulated
    assert calls == [((75, 4), calls[0][1], 8, 2)] and 30 < calls[0][1] < 256
    with open(tmp_path / "compare.csv") as file:
        row = next(csv.DictReader(file))
    assert row["hw_engine"] == "histogram" and row["hw_forest_code_bits"] == "8" and row["pe_count"] == "1"
    # The store (4 features x 128 rows of 8-bit slots: 8 words of 64 bytes), 75 label beats
    # and 3 trees of 1,000 cycles at 100 MHz:
    assert float(row["hw_forest_ms"]) == pytest.approx(1000 * (8 + 75 + 3 * 1000) / 100e6)
    assert float(row["speedup_vs_onedal_1core"]) == pytest.approx(float(row["fit_dal_forest_1_ms"]) / 0.03083, rel=1e-3)
    # 64,000 words of 64 bytes a tree: 4.1 MB in 10 microseconds
    assert float(row["sim_forest_mb_read_per_tree"]) == pytest.approx(4.096)
    assert re.search(r"\| 4\.1 \(409\.60\) +\|", text)
    assert row["rtl_equals_model"] == "True" and "hw_thesis_ms" not in row
    assert "## Forest mode on datasets larger than the simulated build: the histogram PE" in text
    assert re.search(r"\| iris +\| 1 +\| 100 +\| 0\.03 +\|", text) and "## Thesis mode: training time" not in text
    # The accuracy is the 8-bit model's: that of estimators fitted with code_bits=8 on the folds.
    from sw.data import datasets
    from sw.experiments import cv
    data = datasets.load("iris")
    scores = [HardwareForestClassifier(3, code_bits=8, random_state=cv.fold_seed(repeat, fold))
              .fit(data.X[train], data.y[train]).score(data.X[test], data.y[test])
              for repeat, fold, train, test in cv.splits(data.X, data.y, 2, range(1))]
    assert float(row["acc_hw_forest"]) == pytest.approx(100 * np.mean(scores), abs=1e-3)


def test_histogram_samples_train_in_verilator_equal_to_the_model(monkeypatch, tmp_path):
    """The histogram system's sample in Verilator: iris's fold-0 trees (at 6-bit codes, so
    that tests/sim/test_histogram_backend.py's build serves) node for node as the model's,
    and its cycles; the log goes where the comparison sends it."""
    from sklearn.datasets import load_iris
    monkeypatch.setattr(histogram, "CODE_BITS", 6)
    X, y = load_iris(return_X_y=True)
    X, y = X[::2], y[::2]
    estimator = HardwareForestClassifier(3, code_bits=6, random_state=5).fit(X, y)
    arguments = compare.parse_arguments(["--datasets", "iris", "--sim-histogram-trees", "2", "--clock-mhz", "50"])
    samples = histogram.simulate({"iris": {"X": X, "y": y, "hw_forest": estimator}}, arguments)
    forest = samples["iris"]["forest"]
    assert forest["equal"] and forest["trees"] == 2 and forest["code_store"] == "chip"
    # Each tree takes at least a cycle a row of its bootstrap and of each searched node's rows.
    assert forest["cycles_per_tree"] > forest["one_pass_bound_cycles"] > 75
    assert forest["load_cycles"] == 75
