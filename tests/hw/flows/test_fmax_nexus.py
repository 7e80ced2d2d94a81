"""The Nexus Fmax flow: commands, the carry-in fix, failure reasons, the record; one tiny
placement of the default-size generator."""

import subprocess

import pytest

from hw.flows import fmax_nexus
from hw.flows.fmax_record import load_record, update_record


def _ccu2(cin, init0="0x96AA", init1="0x96AA"):
    return {"type": "CCU2", "parameters": {"INIT0": init0, "INIT1": init1},
            "port_directions": {"CIN": "input", "COUT": "output"},
            "connections": {"CIN": [cin], "COUT": [cin + 100]}}


def _netlist(*cells):
    named = {"low": {"type": "VLO", "connections": {"Z": [2]}},
             "high": {"type": "VHI", "connections": {"Z": [3]}}}
    named.update({f"c{i}": cell for i, cell in enumerate(cells)})
    return {"modules": {"fmax_top": {"cells": named}}}


def test_synth_script_uses_synth_nexus_without_abc9_on_the_wrapper():
    script = fmax_nexus.synth_script()
    assert "synth_nexus -noabc9 -top fmax_top" in script
    assert "read_rtlil fmax_probe.il" in script and "read_verilog fmax_top.v" in script
    assert "OSC_CORE" in fmax_nexus.WRAPPER and "fmax_probe probe" in fmax_nexus.WRAPPER


def test_pdc_constrains_both_pins_and_the_clock_period():
    text = fmax_nexus.pdc_text(125)
    assert "create_clock -period 8 [get_nets clk]" in text
    assert "ldc_set_location -site {G19} [get_ports rst]" in text
    assert "ldc_set_location -site {E17} [get_ports led]" in text
    assert "-period 10 " in fmax_nexus.pdc_text(100)


def test_nextpnr_command_names_the_fastest_lifcl40_and_the_seed():
    command = fmax_nexus.nextpnr_command("../fmax_top.json", seed=7, frequency=100)
    assert command[command.index("--device") + 1] == "LIFCL-40-9BG400C"
    assert command[command.index("--seed") + 1] == "7"
    assert command[command.index("--json") + 1] == "../fmax_top.json"
    assert "--timing-allow-fail" in command and "--pdc" in command


@pytest.mark.parametrize("init0, init1", [("0xFFFF", "0x00AA"),
                                          ("1111111111111111", "0000000010101010")])
def test_feed_in_constant_carry_in_is_disconnected(init0, init1):
    netlist = _netlist(_ccu2(2, init0, init1), _ccu2(102))
    assert fmax_nexus.free_constant_carry_ins(netlist) == 1
    cells = netlist["modules"]["fmax_top"]["cells"]
    assert "CIN" not in cells["c0"]["connections"]
    assert cells["c1"]["connections"]["CIN"] == [102]      # a chained carry stays


def test_other_constant_carry_in_is_refused_by_name():
    netlist = _netlist(_ccu2(3))
    with pytest.raises(ValueError, match="'c0'.*not a chain feed-in"):
        fmax_nexus.free_constant_carry_ins(netlist)


def test_overflow_names_the_resource_and_the_limit():
    assert fmax_nexus.overflow({"LUT4": 1000, "CCU2": 10, "FD1P3IX": 500, "DP16K": 84}) == {}
    assert fmax_nexus.overflow({"DP16K": 80, "PDPSC16K": 5}) == {"OXIDE_EBR": (85, 84)}
    assert fmax_nexus.overflow({"LUT4": 32000, "CCU2": 200}) == {"OXIDE_COMB": (32400, 32256)}
    assert fmax_nexus.overflow({"MULT18X18": 57}) == {"MULT18_CORE": (57, 56)}
    # the cmc PE's DSP cells, which nextpnr-nexus reported as 212 of 112 pre-adders
    dsp = {"MULT18X18": 10, "MULT18X36": 8, "MULT36X36": 18, "MULTADDSUB18X18": 8}
    assert fmax_nexus.overflow(dsp) == {"MULT18_CORE": (106, 56)}


def test_failure_reason_quotes_the_error_or_says_crash():
    log = "Info: Packing carries...\nERROR: Failed to route arc 0.0 of net 'clk'\n1 error"
    assert fmax_nexus.failure_reason(1, log) == "Failed to route arc 0.0 of net 'clk'"
    assert fmax_nexus.failure_reason(-11, "Info: placing\n").startswith("crashed (exit code -11")
    assert fmax_nexus.failure_reason(2, "", "boom") == "exit code 2: boom"


def _fake_synthesis(monkeypatch, tmp_path, cells=None):
    netlist = tmp_path / "fmax_top.json"
    netlist.write_text("{}")
    monkeypatch.setattr(fmax_nexus, "synthesise", lambda base, out, parameters=None:
                        (netlist, cells or {"LUT4": 10}, {**parameters}, 0))


def test_a_failing_tool_is_recorded_with_its_reason(monkeypatch, tmp_path):
    _fake_synthesis(monkeypatch, tmp_path)
    calls = iter([RuntimeError("ERROR text from nextpnr"),
                  subprocess.TimeoutExpired("nextpnr", 900)])

    def failing(*arguments, **options):
        raise next(calls)
    monkeypatch.setattr(fmax_nexus, "place_and_route", failing)
    entry = {"design": "tree_random", "parameters": {"bound_bits": 12}, "reductions": []}
    result = fmax_nexus.nexus_entry("tree_random", entry, tmp_path, seeds=(1, 2), timeout=900,
                                    log=lambda text: None)
    assert result["fmax_mhz"] is None and result["seeds"] == {}
    assert "seed 1: nextpnr-nexus failed: ERROR text from nextpnr" in result["note"]
    assert "seed 2: nextpnr-nexus timed out after 900 s" in result["note"]
    record = update_record([result], tmp_path / "nexus.json", header={"device": "x"})
    assert record["entries"]["tree_random"]["note"] == result["note"]
    assert load_record(tmp_path / "nexus.json")["entries"]["tree_random"]["speed"] == 9


def test_a_build_too_big_is_not_placed_and_says_why(monkeypatch, tmp_path):
    _fake_synthesis(monkeypatch, tmp_path, {"LRAM": 3})
    monkeypatch.setattr(fmax_nexus, "place_and_route", lambda *a, **k: pytest.fail("placed"))
    entry = {"design": "tree_random", "parameters": {}, "reductions": []}
    result = fmax_nexus.nexus_entry("tree_random", entry, tmp_path, log=lambda text: None)
    assert result["fmax_mhz"] is None
    assert "does not fit the LIFCL-40 (LRAM_CORE 3 > 2)" in result["note"]


def test_unknown_entry_is_refused(capsys):
    with pytest.raises(SystemExit):
        fmax_nexus.main(["no_such_block", "--no-record"])
    assert "no_such_block" in capsys.readouterr().err


def test_tiny_placement_of_the_generator(tmp_path):
    """The whole flow on the catalogue's default generator (about 15 s)."""
    entry = {"design": "tree_random", "parameters": {}, "reductions": []}
    result = fmax_nexus.nexus_entry("tree_random", entry, tmp_path, log=lambda text: None)
    assert result["note"] == ""
    assert result["freed_carry_ins"] > 0
    assert 20 < result["fmax_mhz"] < 1000
    assert result["utilisation"]["OXIDE_FF"] > 64      # at least the 64-bit stimulus LFSR
    assert result["critical_endpoints"] is not None


def test_a_failed_synthesis_is_noted_and_the_reduction_tried(monkeypatch, tmp_path):
    netlist = tmp_path / "fmax_top.json"
    tried = []

    def synthesise(base, out, parameters=None):
        tried.append(dict(parameters))
        if parameters["max_trees"] == 128:
            raise RuntimeError("Yosys synth_nexus failed on inference_engine: Assert failed")
        return netlist, {"LUT4": 10}, dict(parameters), 0
    monkeypatch.setattr(fmax_nexus, "synthesise", synthesise)
    monkeypatch.setattr(fmax_nexus, "place_and_route", lambda *a, **k: (
        {"fmax": {"clk": {"achieved": 150.0}}, "critical_paths": [],
         "utilization": {key: {"used": 1} for key in fmax_nexus.NEXUS_40}}, ""))
    entry = {"design": "inference_engine", "parameters": {"max_trees": 128},
             "reductions": [({"max_trees": 16}, "max_trees 128 -> 16")]}
    result = fmax_nexus.nexus_entry("inference_engine", entry, tmp_path, log=lambda text: None)
    assert [p["max_trees"] for p in tried] == [128, 16]
    assert result["parameters"]["max_trees"] == 16 and result["fmax_mhz"] == 150.0
    assert "synthesis failed (Yosys synth_nexus failed on inference_engine: Assert failed)" \
        in result["note"]
    assert "after that failure: max_trees 128 -> 16" in result["note"]


def test_show_writes_the_record_beside_the_ecp5_figure(tmp_path):
    result = {"name": "gini_scanner", "design": "gini_scanner", "fmax_mhz": 111.84,
              "seeds": {"1": 111.84}, "utilisation": dict.fromkeys(fmax_nexus.NEXUS_40, 3),
              "critical_endpoints": ["a (Q)", "b (DI)"], "seconds": 4.0, "note": ""}
    update_record([result], tmp_path / "nexus.json")
    report = tmp_path / "nexus.md"
    fmax_nexus.main(["--show", "--record", str(tmp_path / "nexus.json"), "--report", str(report)])
    row = [line for line in report.read_text().splitlines() if line.startswith("| gini_scanner")]
    ecp5 = load_record()["entries"]["gini_scanner"]["fmax_mhz"]
    assert row and "| 111.8 | 1: 111.8 |" in row[0] and f"| {ecp5:.1f} |" in row[0]
    assert "`a (Q)` -> `b (DI)`" in row[0]
