"""Fmax proxy (hw/flows/fmax.py, fmax_entries.py, fmax_record.py) on tiny builds, in seconds;
`make fmax` places the real sizes. No test depends on a measured MHz figure: placements
are either real (and only checked for consistency) or faked with known figures."""

import json
import math
import os
import subprocess

import pytest

import hw.flows.fmax
from hw.designs import DESIGNS, build_parameters
from hw.lane import lane_slots
from hw.flows.fmax import _critical_sources, _overflow, _seed_list, fmax, fmax_entry, main, report
from hw.flows.fmax_entries import comparison_entries, select
from hw.flows.fmax_record import (FMAX_RECORD, design_digest, entry_digest, load_record,
                                  proxy_clock, update_record)

pytestmark = pytest.mark.skipif("partition_unit" not in DESIGNS, reason="no partition_unit design")

TINY = {"max_rows": 16, "max_samples": 16}


def _fake_placement(monkeypatch, figures):
    """Replace nextpnr by a report of ``figures[seed]`` MHz (and a critical path naming the
    seed); returns the list of seeds placed."""
    placed = []

    def fake(netlist, *, speed, frequency, seed, timeout, out_dir):
        placed.append(seed)
        if figures[seed] is None:
            raise RuntimeError("nextpnr-ecp5 failed (log x):\nERROR: no route")
        report = {"fmax": {"$glbnet$clk": {"achieved": figures[seed]}},
                  "critical_paths": [{"from": "posedge clk", "to": "posedge clk", "path": [
                      {"from": {"cell": f"start{seed}", "port": "Q"},
                       "to": {"cell": f"end{seed}", "port": "D"}}]}],
                  "utilization": {key: {"used": 1} for key in hw.flows.fmax.ECP5_85K}}
        log = (f"Info: Critical path report for clock 'clk' (posedge -> posedge):\n"
               f"Info:   /x/hw/gini.py:{100 + seed}\n")
        return report, log
    monkeypatch.setattr(hw.flows.fmax, "place_and_route", fake)
    return placed


def _fake_synthesis(monkeypatch, tmp_path):
    """Replace Yosys by a netlist of a few cells; returns the parameters synthesised."""
    built = []

    def fake(design, out_dir, parameters=None):
        built.append(dict(parameters))
        return tmp_path / "netlist.json", {"LUT4": 5, "TRELLIS_FF": 5}, dict(parameters)
    monkeypatch.setattr(hw.flows.fmax, "synthesise", fake)
    return built


def test_tiny_design_places_and_routes(tmp_path):
    """The real tools end to end, on one seed (several seeds: the fakes below)."""
    result = fmax("partition_unit", tmp_path, TINY, seeds=(4,), log=lambda text: None)
    assert result["parameters"]["max_rows"] == 16
    assert list(result["seeds"]) == ["4"] and result["worst_seed"] == "4"
    assert 20 < result["fmax_mhz"] == result["seeds"]["4"] < 1000
    assert (tmp_path / "partition_unit" / "seed4" / "nextpnr.log").exists()
    start, end = result["critical_endpoints"]
    # Both ends in the block, or the path ends at the probe's register of its outputs.
    assert start.startswith("partition_unit.")
    assert end.startswith("partition_unit.") or end == "partition_unit_observed (DI)", end
    assert result["seed_paths"]["4"]["critical_endpoints"] == result["critical_endpoints"]
    assert result["utilisation"]["TRELLIS_FF"] > 0
    text = report([result])
    assert "LOWER-BOUND PROXY" in text and "not the Arria 10" in text
    assert f"| {result['fmax_mhz']:.1f} | 4: {result['fmax_mhz']:.1f} |" in text


def test_a_netlist_is_synthesised_once_per_design_and_parameters(tmp_path, monkeypatch):
    """Other seeds or a resumed run reuse the netlist; other parameters run Yosys again."""
    netlist, cells, _ = hw.flows.fmax.synthesise("partition_unit", tmp_path, TINY)
    assert netlist.exists() and cells.get("TRELLIS_FF", 0) > 0
    calls = []

    def no_yosys(command, **options):
        calls.append(command)
        raise AssertionError("Yosys ran again")
    monkeypatch.setattr(hw.flows.fmax.subprocess, "run", no_yosys)
    again, cells_again, _ = hw.flows.fmax.synthesise("partition_unit", tmp_path, dict(TINY))
    assert (again, cells_again, calls) == (netlist, cells, [])
    with pytest.raises(AssertionError, match="Yosys ran again"):
        hw.flows.fmax.synthesise("partition_unit", tmp_path, {**TINY, "max_rows": 32})
    assert len(calls) == 1
    # A netlist whose synthesis did not finish (no cell counts written) is not reused.
    (netlist.parent / f"{hw.flows.fmax.TOP}.stat.json").unlink()
    with pytest.raises(AssertionError, match="Yosys ran again"):
        hw.flows.fmax.synthesise("partition_unit", tmp_path, TINY)


def test_minimum_over_seeds_and_worst_seed_path(tmp_path, monkeypatch):
    figures = {1: 91.5, 2: 87.25, 3: 99.0, 4: 120.0}
    placed = _fake_placement(monkeypatch, figures)
    _fake_synthesis(monkeypatch, tmp_path)
    seen = []
    result = fmax_entry(
        "partition_unit", {"design": "partition_unit", "parameters": TINY, "reductions": []},
        tmp_path, seeds=(1, 2, 3), log=lambda text: None, progress=seen.append)
    assert placed == [1, 2, 3]
    assert result["seeds"] == {"1": 91.5, "2": 87.25, "3": 99.0}
    assert result["fmax_mhz"] == 87.25 and result["worst_seed"] == "2"
    assert result["critical_path"] == ["hw/gini.py:102"]
    assert result["critical_endpoints"] == ("start2 (Q)", "end2 (D)")
    # Each seed but the last is reported as it is placed, with the minimum so far.
    assert [r["fmax_mhz"] for r in seen] == [91.5, 87.25]


def test_a_failed_seed_is_noted_and_the_others_kept(tmp_path, monkeypatch):
    _fake_placement(monkeypatch, {1: 91.5, 2: None, 3: 99.0})
    _fake_synthesis(monkeypatch, tmp_path)
    entry = {"design": "partition_unit", "parameters": TINY, "reductions": []}
    result = fmax_entry("partition_unit", entry, tmp_path, seeds=(1, 2, 3), log=lambda text: None)
    assert result["seeds"] == {"1": 91.5, "3": 99.0} and result["fmax_mhz"] == 91.5
    assert result["note"] == "seed 2 not placed (nextpnr-ecp5 failed (log x):)"


def test_too_big_falls_back_with_the_note(tmp_path, monkeypatch):
    _fake_placement(monkeypatch, {1: 123.0})
    built = _fake_synthesis(monkeypatch, tmp_path)
    verdicts = iter([{"DP16KD": (300, 208)}, {"DP16KD": (250, 208)}, {}])
    monkeypatch.setattr(hw.flows.fmax, "_overflow", lambda cells: next(verdicts))
    entry = {"design": "partition_unit", "parameters": {"max_rows": 64, "max_samples": 64},
             "reductions": [({"max_rows": 32, "max_samples": 32}, "halve A"),
                            ({"max_rows": 16, "max_samples": 16}, "halve B"),
                            ({"max_rows": 8, "max_samples": 8}, "never needed")]}
    result = fmax_entry("partition_unit[x]", entry, tmp_path, seeds=(1,), log=lambda text: None)
    assert [p["max_rows"] for p in built] == [64, 32, 16]
    assert result["requested"]["max_rows"] == 64 and result["parameters"]["max_rows"] == 16
    assert result["note"] == ("too big for the ECP5-85K (DP16KD 300 > 208): halve A; "
                              "too big for the ECP5-85K (DP16KD 250 > 208): halve B")
    assert result["fmax_mhz"] == 123.0
    assert "(reduced from max_rows=64, max_samples=64)" in report([result])


def test_too_big_even_reduced_is_not_placed(tmp_path, monkeypatch):
    monkeypatch.setitem(hw.flows.fmax.ECP5_85K, "TRELLIS_FF", 4)
    placed = _fake_placement(monkeypatch, {1: 123.0})
    _fake_synthesis(monkeypatch, tmp_path)
    entry = {"design": "partition_unit", "parameters": TINY,
             "reductions": [({"max_rows": 8, "max_samples": 8}, "fewer rows")]}
    result = fmax_entry("partition_unit", entry, tmp_path, seeds=(1,), log=lambda text: None)
    assert placed == [] and result["fmax_mhz"] is None and result["seeds"] == {}
    assert "fewer rows" in result["note"]
    assert "does not fit the ECP5-85K even so (TRELLIS_FF" in result["note"]
    assert "| not placed |" in report([result])


def test_overflow_counts_carry_cells_twice():
    assert _overflow({"LUT4": 10, "CCU2C": 5, "TRELLIS_FF": 3}) == {}
    assert _overflow({"LUT4": 83_000, "CCU2C": 500}) == {"TRELLIS_COMB": (84_000, 83_640)}
    # Multipliers: half of the 156 (a build using more did not route within the hour).
    assert _overflow({"MULT18X18D": 78}) == {}
    assert _overflow({"MULT18X18D": 79}) == {"MULT18X18D": (79, 78)}


def test_critical_sources_skip_the_probe():
    log = ("Info: Critical path report for clock 'clk' (posedge -> posedge):\n"
           "Info:   /work/main/hw/flows/quartus.py:12\nInfo:   /x/hw/gini.py:144\n"
           "Info:   /x/hw/gini.py:144\nInfo:   /x/hw/rng.py:7\nInfo:   /x/hw/pe/combiner.py:31\n"
           "Info: Critical path report for cross-domain path '<async>' -> 'posedge clk':\n"
           "Info:   /x/hw/sorter.py:1\n")
    assert _critical_sources(log) == ["hw/gini.py:144", "hw/rng.py:7", "hw/pe/combiner.py:31"]


def test_seed_option():
    assert _seed_list("3") == [1, 2, 3]
    assert _seed_list("2,5") == [2, 5]
    for bad in ("0", "2,2", "x"):
        with pytest.raises(Exception, match="--seeds"):
            _seed_list(bad)


def test_cli_one_entry_per_design_and_record(tmp_path, monkeypatch):
    _fake_placement(monkeypatch, {1: 140.0, 2: 97.5, 3: 130.0})
    _fake_synthesis(monkeypatch, tmp_path)
    record, md = tmp_path / "docs" / "fmax.json", tmp_path / "results" / "fmax.md"
    options = ["--out", str(tmp_path / "work"), "--report", str(md), "--record", str(record)]
    assert main(options + ["gini_scanner", "processing_element"]) == 0
    results = json.loads(md.with_suffix(".json").read_text())
    names = [r["name"] for r in results]
    assert names == ["gini_scanner", "processing_element[ctg]", "processing_element[cmc]"]
    assert [r["design"] for r in results] == ["gini_scanner"] + ["processing_element"] * 2
    for r in results:
        assert r["fmax_mhz"] == 97.5 and r["seeds"] == {"1": 140.0, "2": 97.5, "3": 130.0}
        assert r["critical_path"] == ["hw/gini.py:102"] and r["critical_endpoints"]
        assert {"parameters", "utilisation", "note", "digest"} <= set(r)
    kept = load_record(record)
    assert set(kept["entries"]) == set(names) and kept["sources"] == design_digest()
    # A second run of another entry keeps the first run's entries.
    assert main(options + ["--seeds", "1", "radix_sorter"]) == 0
    assert set(load_record(record)["entries"]) == set(names) | {"radix_sorter"}
    text = md.read_text()
    assert "| radix_sorter |" in text and "| gini_scanner |" in text
    assert "Proxy clock (docs/fmax.json, `proxy_clock()`): 97 MHz" in text
    # --show places nothing and reports the record.
    md.unlink()
    monkeypatch.setattr(hw.flows.fmax, "place_and_route", None)
    assert main(options + ["--show"]) == 0
    assert md.read_text() == text


def test_cli_set_runs_are_not_recorded(tmp_path, monkeypatch):
    _fake_placement(monkeypatch, {1: 140.0})
    built = _fake_synthesis(monkeypatch, tmp_path)
    record, md = tmp_path / "record.json", tmp_path / "fmax.md"
    assert main(["--out", str(tmp_path / "work"), "--report", str(md), "--record", str(record),
                 "--seeds", "1", "--set", "partition_unit.max_rows=16",
                 "--set", "partition_unit.max_samples=16", "partition_unit"]) == 0
    assert not record.exists()
    # max_segment of the comparison's partition unit (1,280) exceeds 16 rows: the
    # catalogue's defaults with the changes are built instead.
    assert built == [{**DESIGNS["partition_unit"][1], **TINY}]
    assert "| partition_unit | max_rows=16, max_samples=16, code_bits=16 | 8 | 140.0 |" in md.read_text()
    assert json.loads(md.with_suffix(".json").read_text())[0]["fmax_mhz"] == 140.0


def test_cli_places_named_builds_into_their_own_record(tmp_path, monkeypatch, capsys):
    """A named build (``hw.designs.BUILDS``) is placed with its parameters and recorded
    apart: never into the record that sets the proxy clock, nor in one run with entries."""
    _fake_placement(monkeypatch, {1: 90.0})
    built = _fake_synthesis(monkeypatch, tmp_path)
    record, md = tmp_path / "builds.json", tmp_path / "fmax.md"
    assert main(["--out", str(tmp_path / "work"), "--report", str(md), "--record", str(record),
                 "--seeds", "1", "pass_combiner_ctg"]) == 0
    assert built == [build_parameters("pass_combiner_ctg")]
    assert set(load_record(record)["entries"]) == {"pass_combiner_ctg"}
    assert "Proxy clock" not in md.read_text()
    for names, text in ((["pass_combiner_ctg", "gini_scanner"], "separate runs"),
                        (["--record", str(FMAX_RECORD), "pass_combiner_ctg"], "docs/fmax.json sets")):
        with pytest.raises(SystemExit):
            main(["--out", str(tmp_path / "work"), "--report", str(md), "--seeds", "1", *names])
        assert text in capsys.readouterr().err
    assert len(built) == 1


def test_cli_refuses_a_record_the_report_would_overwrite(tmp_path, monkeypatch, capsys):
    """The report's JSON beside ``--report`` is a list of results; written over the record it
    lost a run's seeds (and the next seed's update failed on the list)."""
    placed = _fake_placement(monkeypatch, {1: 140.0})
    with pytest.raises(SystemExit):
        main(["--out", str(tmp_path / "work"), "--report", str(tmp_path / "x.md"),
              "--record", str(tmp_path / "x.json"), "--seeds", "1", "partition_unit"])
    assert "overwrite the record" in capsys.readouterr().err and placed == []
    assert not (tmp_path / "x.json").exists()


def _entry(name, mhz, design="gini_scanner", parameters=None, sources="s1", seeds=None):
    parameters = parameters or {"classes": 3}
    return {"name": name, "design": design, "requested": parameters, "parameters": parameters,
            "fmax_mhz": mhz, "seeds": seeds or ({"1": mhz} if mhz else {}), "seed_paths": {},
            "speed": 8, "target_mhz": 100, "tools": {"t": "1"},
            "digest": entry_digest(design, parameters, sources)}


def test_record_update_keeps_the_others_and_merges_seeds(tmp_path):
    path = tmp_path / "fmax.json"
    update_record([_entry("a", 80.0), _entry("b", 90.0)], path, today="2026-01-01")
    update_record([_entry("b", 95.0, seeds={"2": 95.0}), _entry("c", 70.0)], path,
                  today="2026-01-02")
    entries = load_record(path)["entries"]
    assert set(entries) == {"a", "b", "c"}
    assert entries["a"]["date"] == "2026-01-01" and entries["c"]["date"] == "2026-01-02"
    # Same build placed with another seed: both seeds kept, the minimum is the entry's.
    assert entries["b"]["seeds"] == {"1": 90.0, "2": 95.0} and entries["b"]["fmax_mhz"] == 90.0
    # Other sources: the new measurement replaces the old one.
    update_record([_entry("b", 60.0, sources="s2")], path)
    assert load_record(path)["entries"]["b"]["seeds"] == {"1": 60.0}


def test_design_digest_ignores_the_flows(tmp_path):
    (tmp_path / "hw" / "flows").mkdir(parents=True)
    (tmp_path / "hw" / "gini.py").write_text("a = 1\n")
    (tmp_path / "hw" / "flows" / "fmax.py").write_text("b = 1\n")
    first = design_digest(tmp_path)
    (tmp_path / "hw" / "flows" / "fmax.py").write_text("b = 2\n")
    assert design_digest(tmp_path) == first
    (tmp_path / "hw" / "gini.py").write_text("a = 2\n")
    assert design_digest(tmp_path) != first


def test_proxy_clock_floor_min_stale_missing():
    expected = {name: {"design": "gini_scanner", "parameters": {"classes": 3}}
                for name in ("a", "b", "c", "d", "e")}
    record = {"entries": {
        "a": _entry("a", 101.7), "b": _entry("b", 99.93), "c": _entry("c", 150.0),
        "d": _entry("d", None),                                       # not placed
        "e": _entry("e", 120.0, sources="old"),                       # other sources
        "f": _entry("f", 130.0, parameters={"classes": 8}),           # not a default entry
    }}
    clock = proxy_clock(record, expected=expected, sources="s1")
    assert clock["clock_mhz"] == math.floor(min(101.7, 99.93, 150.0, 120.0, 130.0)) == 99
    assert clock["limited_by"] == "b" and clock["fmax_mhz"] == 99.93
    assert clock["stale"] == ["e"] and clock["missing"] == ["d"]
    # A default entry measured with other parameters is stale too.
    changed = {**expected, "c": {"design": "gini_scanner", "parameters": {"classes": 4}}}
    assert proxy_clock(record, expected=changed, sources="s1")["stale"] == ["c", "e"]
    # 100 MHz only once every placed design reaches it; never above it.
    fast = {"entries": {"a": _entry("a", 180.2), "c": _entry("c", 100.4)}}
    assert proxy_clock(fast, expected=expected, sources="s1")["clock_mhz"] == 100
    assert proxy_clock(fast, expected=expected, sources="s1")["missing"] == ["b", "d", "e"]
    empty = proxy_clock({"entries": {}}, expected=expected, sources="s1")
    assert empty["clock_mhz"] is None and empty["missing"] == list(expected)


def test_proxy_clock_reads_the_record_file(tmp_path):
    path = tmp_path / "fmax.json"
    update_record([_entry("a", 88.8)], path)
    clock = proxy_clock(path, expected={"a": {"design": "gini_scanner",
                                              "parameters": {"classes": 3}}}, sources="s1")
    assert clock["clock_mhz"] == 88 and clock["stale"] == [] and clock["missing"] == []


def test_entries_at_the_comparison_widths():
    fits = {"ctg": {"parameters": {"max_rows": 2048, "max_samples": 2048, "max_inbag_rows": 1280,
                                   "feature_capacity": 21, "feature_lanes": 8, "code_bits": 16,
                                   "classes": 3, "max_depth": 64}},
            "cmc": {"parameters": {"max_rows": 1024, "max_samples": 1024, "max_inbag_rows": 1024,
                                   "feature_capacity": 9, "feature_lanes": 4, "code_bits": 16,
                                   "classes": 3, "max_depth": 64}}}
    entries = comparison_entries(fits)
    assert set(entries) == {"tree_random", "radix_sorter", "inbag_builder", "gini_scanner",
                            "partition_unit", "processing_element[ctg]", "processing_element[cmc]",
                            "forest_trainer[ctg]", "inference_engine[ctg]", "forest_system[ctg]",
                            "forest_top[ctg]"}
    # forest_top wraps the system at the system's widths
    assert {**entries["forest_top[ctg]"]["parameters"], **entries["forest_system[ctg]"]["parameters"]} \
        == entries["forest_top[ctg]"]["parameters"]
    assert entries["forest_top[ctg]"]["reductions"] == entries["forest_system[ctg]"]["reductions"]
    for dataset in ("ctg", "cmc"):
        placed = entries[f"processing_element[{dataset}]"]["parameters"]
        assert {**placed, **fits[dataset]["parameters"]} == placed
    gini = entries["gini_scanner"]["parameters"]
    assert gini["classes"] == 3 and gini["row_bits"] == (1280).bit_length()
    assert gini["count_bits"] == (2048).bit_length()
    assert entries["forest_trainer[ctg]"]["parameters"]["pe_count"] >= 2
    inference = entries["inference_engine[ctg]"]["parameters"]
    assert inference["max_trees"] >= 100 and inference["max_nodes_per_tree"] == 2 * 1280 - 1
    assert entries["inbag_builder"]["parameters"]["lanes"] == 8
    # A reduction to fewer lanes keeps every lane's bank as deep as in the full build (its
    # block RAMs' output multiplexer is a path of its own), and the widths of the rest.
    for name in ("processing_element[ctg]", "processing_element[cmc]", "forest_trainer[ctg]",
                 "forest_system[ctg]", "forest_top[ctg]"):
        full = entries[name]["parameters"]
        slots = lane_slots(full["feature_capacity"], 0, full["feature_lanes"])
        assert entries[name]["reductions"], name
        for step, why in entries[name]["reductions"]:
            reduced = {**full, **step}
            assert reduced["feature_lanes"] < full["feature_lanes"], (name, step)
            assert lane_slots(reduced["feature_capacity"], 0, reduced["feature_lanes"]) == slots, (name, step)
            assert f"holding {slots} lists each" in why
            assert {key: reduced[key] for key in ("max_rows", "max_inbag_rows", "code_bits", "classes")} \
                == {key: full[key] for key in ("max_rows", "max_inbag_rows", "code_bits", "classes")}
    for entry in entries.values():            # every build is one the design accepts
        if entry["design"] not in ("forest_system", "forest_top"):    # (their trainer and engine)
            DESIGNS[entry["design"]][0](**entry["parameters"])._MustUse__silence = True
    assert list(select(entries, ["processing_element"])) == ["processing_element[ctg]",
                                                             "processing_element[cmc]"]
    assert list(select(entries, ["forest_trainer[ctg]"])) == ["forest_trainer[ctg]"]
    with pytest.raises(ValueError, match="no Fmax entry or design 'nope'"):
        select(entries, ["nope"])


def test_a_block_change_stales_only_the_designs_that_contain_it(tmp_path):
    import shutil
    from hw.flows.fmax_record import PROJECT_ROOT, design_sources
    shutil.copytree(PROJECT_ROOT / "hw", tmp_path / "hw")
    names = {path.relative_to(tmp_path).as_posix() for path in design_sources("gini_scanner", tmp_path)}
    assert "hw/gini.py" in names and not {"hw/system.py", "hw/pe/controller.py"} & names
    system = {path.relative_to(tmp_path).as_posix() for path in design_sources("forest_system", tmp_path)}
    assert {"hw/gini.py", "hw/pe/controller.py", "hw/trainer.py", "hw/inference.py"} <= system
    before = {design: design_digest(tmp_path, design) for design in ("gini_scanner", "forest_system")}
    with open(tmp_path / "hw" / "system.py", "a") as file:
        file.write("\n# changed\n")
    assert design_digest(tmp_path, "gini_scanner") == before["gini_scanner"]
    assert design_digest(tmp_path, "forest_system") != before["forest_system"]
    with open(tmp_path / "hw" / "gini.py", "a") as file:
        file.write("\n# changed\n")
    assert design_digest(tmp_path, "gini_scanner") != before["gini_scanner"]


def _fake_nextpnr(monkeypatch, calls):
    """Replace the nextpnr run itself (not the lock around it) by an empty report."""
    def fake(netlist, out_dir, speed, frequency, seed, timeout):
        calls.append((out_dir / "placing.lock").read_text())
        return {"fmax": {"$glbnet$clk": {"achieved": 100.0}}, "critical_paths": [],
                "utilization": {key: {"used": 1} for key in hw.flows.fmax.ECP5_85K}}, ""
    monkeypatch.setattr(hw.flows.fmax, "_run_nextpnr", fake)


def test_a_seed_folder_being_placed_is_refused_with_its_process(tmp_path, monkeypatch):
    calls = []
    _fake_nextpnr(monkeypatch, calls)
    folder = tmp_path / "seed2"
    folder.mkdir()
    # A live process holds the folder: refused, naming it, and nextpnr is not run.
    holder = subprocess.Popen(["sleep", "30"])
    try:
        (folder / "placing.lock").write_text(str(holder.pid))
        with pytest.raises(RuntimeError, match=f"process {holder.pid}"):
            hw.flows.fmax.place_and_route(tmp_path / "n.json", seed=2, out_dir=folder)
        assert calls == [] and (folder / "placing.lock").read_text() == str(holder.pid)
    finally:
        holder.kill()
        holder.wait()
    # Its process gone, the lock is taken over, held during the run and removed after it.
    hw.flows.fmax.place_and_route(tmp_path / "n.json", seed=2, out_dir=folder)
    assert calls == [str(os.getpid())] and not (folder / "placing.lock").exists()


def test_a_refused_seed_is_noted_and_the_others_placed(tmp_path, monkeypatch):
    calls = []
    _fake_nextpnr(monkeypatch, calls)
    _fake_synthesis(monkeypatch, tmp_path)
    entry = {"design": "partition_unit", "parameters": TINY, "reductions": []}
    busy = tmp_path / "partition_unit" / "seed1"
    busy.mkdir(parents=True)
    (busy / "placing.lock").write_text(str(os.getppid()))     # a live process: our parent
    result = fmax_entry("partition_unit", entry, tmp_path, seeds=(1, 2), log=lambda text: None)
    assert "seed 1 not placed" in result["note"] and "being placed by process" in result["note"]
    assert len(calls) == 1 and "2" in result["seeds"] and "1" not in result["seeds"]
