"""The logic depth report (``hw.flows.depth``) on small hand-made netlists whose depths are
known by construction (the real netlists are in ``build/fmax``, made by ``make fmax``)."""

import json

import pytest

from hw.flows import depth


def _cell(kind, inputs, outputs):
    connections = {**inputs, **outputs}
    directions = {**{port: "input" for port in inputs}, **{port: "output" for port in outputs}}
    return {"type": kind, "connections": connections, "port_directions": directions}


def _netlist(cells, nets):
    return {"modules": {"fmax_probe": {"cells": cells, "netnames": {
        name: {"bits": bits} for name, bits in nets.items()}}}}


def _chain(length, *, bits=1):
    """``bits`` registers ``a`` each through ``length`` LUTs into register ``b``, a register
    ``c`` straight into ``b``'s neighbour ``d``."""
    cells, nets = {}, {"a": [], "b": [], "c": [100], "d": []}
    for bit in range(bits):
        start = 1000 * (bit + 1)
        cells[f"a_TRELLIS_FF_Q_{bit}"] = _cell("TRELLIS_FF", {"DI": [5], "CLK": [2]}, {"Q": [start]})
        nets["a"].append(start)
        previous = start
        for level in range(length):
            cells[f"lut{bit}_{level}"] = _cell("LUT4", {"A": [previous], "B": [7]},
                                              {"Z": [start + level + 1]})
            previous = start + level + 1
        cells[f"b_TRELLIS_FF_Q_{bit}"] = _cell("TRELLIS_FF", {"DI": [previous], "CLK": [2]}, {"Q": [50 + bit]})
        nets["b"].append(50 + bit)
    cells["c_TRELLIS_FF_Q"] = _cell("TRELLIS_FF", {"DI": [5], "CLK": [2]}, {"Q": [100]})
    cells["d_TRELLIS_FF_Q"] = _cell("TRELLIS_FF", {"DI": [100], "CLK": [2]}, {"Q": [101]})
    nets["d"] = [101]
    return _netlist(cells, nets)


def test_a_chain_of_luts_is_as_deep_as_it_is_long_and_its_bits_group():
    paths = depth.deep_paths(_chain(7, bits=3), threshold=6)
    assert paths == [{"depth": 7.0, "source": "a", "endpoint": "b", "port": "DI", "bits": 3}]
    # below the threshold, nothing; the register-to-register path is depth 0
    assert depth.deep_paths(_chain(5), threshold=6) == []
    assert [p["depth"] for p in depth.deep_paths(_chain(5), threshold=0)] == [5.0, 0.0, 0.0, 0.0]


def test_the_deepest_input_is_the_one_followed_back():
    net = _chain(2)
    cells = net["modules"]["fmax_probe"]["cells"]
    # a second source, four LUTs deep, into the last LUT of the chain
    cells["e_TRELLIS_FF_Q"] = _cell("TRELLIS_FF", {"DI": [5], "CLK": [2]}, {"Q": [300]})
    previous = 300
    for level in range(4):
        cells[f"e{level}"] = _cell("LUT4", {"A": [previous]}, {"Z": [301 + level]})
        previous = 301 + level
    cells["lut0_1"]["connections"]["C"] = [previous]
    cells["lut0_1"]["port_directions"]["C"] = "input"
    net["modules"]["fmax_probe"]["netnames"]["e"] = {"bits": [300]}
    [path] = depth.deep_paths(net, threshold=5)
    assert (path["source"], path["endpoint"], path["depth"]) == ("e", "b", 5.0)


def test_a_carry_chain_counts_its_carry_in_as_a_fraction_of_a_level():
    cells = {"a_TRELLIS_FF_Q": _cell("TRELLIS_FF", {"DI": [5], "CLK": [2]}, {"Q": [10]})}
    cells["first"] = _cell("CCU2C", {"A0": [10]}, {"COUT": [11], "S0": [12]})
    previous = 11
    for index in range(10):
        cells[f"carry{index}"] = _cell("CCU2C", {"CIN": [previous]}, {"COUT": [20 + index]})
        previous = 20 + index
    cells["b_TRELLIS_FF_Q"] = _cell("TRELLIS_FF", {"DI": [previous], "CLK": [2]}, {"Q": [99]})
    [path] = depth.deep_paths(_netlist(cells, {"a": [10]}), threshold=1)
    assert path["depth"] == pytest.approx(1 + 10 * depth.CARRY_LEVEL)


def test_a_combinational_loop_is_refused():
    cells = {"x": _cell("LUT4", {"A": [2]}, {"Z": [1]}), "y": _cell("LUT4", {"A": [1]}, {"Z": [2]}),
             "r_TRELLIS_FF_Q": _cell("TRELLIS_FF", {"DI": [2]}, {"Q": [3]})}
    with pytest.raises(ValueError, match="combinational loop"):
        depth.deep_paths(_netlist(cells, {}), threshold=1)


def test_the_command_line_reports_a_netlist_and_refuses_a_missing_one(tmp_path, capsys):
    path = tmp_path / "fmax_probe.json"
    path.write_text(json.dumps(_chain(7, bits=2)))
    assert depth.main([str(path), "--threshold", "6"]) == 0
    out = capsys.readouterr().out
    assert "1 groups of endpoints at 6 levels or more" in out
    assert "| 7.0 | `a` | `b` (DI) | 2 |" in out
    with pytest.raises(SystemExit):
        depth.main([str(tmp_path / "missing.json")])
    assert "no netlist at" in capsys.readouterr().err
