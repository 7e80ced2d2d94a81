"""Write a complete Quartus Prime Pro project for the Arria 10 without Quartus installed.

``python -m hw.flows.quartus --out build/quartus [--set forest_top.PARAMETER=VALUE ...]``
(``make quartus``) writes the Platform Designer component of ``forest_top``, or with
``--component histogram_top`` that of the histogram system behind the same wrapper
(:func:`write_component`): its Verilog and ``<module>_hw.tcl`` (clock, reset, the Avalon-MM
register slave ``csr``, the Avalon-MM masters ``mem_read`` and ``mem_write``, the interrupt
sender ``irq``), to be instantiated beside the board's PCIe hard IP and DDR4 interface
(``docs/arria10.md``). Nothing of Quartus is run.

``python -m hw.flows.quartus --probe --out build/quartus [--top NAME] [--blocks NAME ...]
[--set DESIGN.PARAMETER=VALUE ...]`` writes the synthesis probe project instead. Its folder
gets the top-level Verilog (the design wrapped for :class:`Arria10Platform`,
its ``sync`` domain driven by the 100 MHz board clock through a reset synchronizer on the
reset button), ``NAME.qpf`` and ``NAME.qsf`` (family, device, top entity, Verilog files,
SDC file, pins), ``arria10.sdc`` and ``build.sh``, which runs ``quartus_syn``,
``quartus_fit``, ``quartus_sta`` and ``quartus_asm``. The pins are PLACEHOLDERS (see
``hw/flows/platform.py`` and ``docs/arria10.md``).

The design is :class:`DemoTop`, a synthesis and timing probe around the biggest system
in :data:`hw.designs.DESIGNS` (:func:`default_blocks`): the first of
:data:`SYSTEM_DESIGNS` whose main design exists (``forest_system``,
the whole accelerator with ``pe_count`` PEs; else the forest trainer with the inference
engine beside it; else the processing element with the presorter and inference engine
beside it), else every design built so far. ``--blocks`` names the designs explicitly and
``--set`` changes their parameters, for example ``--set forest_system.pe_count=4``.
"""

import argparse
import re
import sys
from pathlib import Path

from amaranth.hdl import Cat, Elaboratable, Module, Shape, Signal, Value
from amaranth.lib import io
from amaranth.lib.wiring import In, Out

from hw.checks import refuse_construction
from hw.designs import DESIGNS
from hw.flows.cli import add_set_option, checked_overrides
from hw.flows.platform import Arria10Platform

__all__ = ["DemoTop", "DEFAULT_TOP", "SYSTEM_DESIGNS", "default_blocks", "write_project",
           "check_constraints", "write_component", "component_tcl", "COMPONENT_DESIGN", "COMPONENT_DESIGNS",
           "main"]

#: The design ``make quartus`` writes as a Platform Designer component by default.
COMPONENT_DESIGN = "forest_top"
#: The designs that are Platform Designer components (``--component``): display names.
COMPONENT_DESIGNS = {"forest_top": "Random-forest training accelerator",
                     "histogram_top": "Random-forest training accelerator (histogram PE)"}

#: Default name of the top-level entity (and of the .qsf/.qpf/.v files).
DEFAULT_TOP = "demo_top"

#: Systems, biggest first: (main design, designs beside it). The first whose main design
#: is in :data:`hw.designs.DESIGNS` is the default project, with those of the designs
#: beside it that exist (a main design contains its own blocks; the PE contains the in-bag
#: builder, generator, Gini scanners and partition units, but not the presorter or the
#: inference engine). With none of them, every design is probed.
SYSTEM_DESIGNS = (
    ("forest_system", ()),
    ("forest_trainer", ("inference_engine",)),
    ("processing_element", ("radix_sorter", "inference_engine")),
)


def default_blocks(designs=None):
    """Names of the designs the default project is built around (see :data:`SYSTEM_DESIGNS`)."""
    designs = DESIGNS if designs is None else designs
    for main_design, beside in SYSTEM_DESIGNS:
        if main_design in designs:
            return [main_design] + [name for name in beside if name in designs]
    return sorted(designs)


#: Width of the stimulus register (a maximal-length LFSR, taps 64, 63, 61, 60).
STIMULUS_BITS = 64
_STIMULUS_TAPS = (63, 62, 60, 59)


class DemoTop(Elaboratable):
    """Synthesis/timing probe of gateware designs: three pins (clock, reset, LED).

    Instantiates every design named in ``blocks`` (default: :func:`default_blocks`, so
    designs added to :data:`hw.designs.DESIGNS` later are picked up), drives every
    input of each (data, valid, and the ready of its output streams alike) from an
    on-chip free-running 64-bit LFSR (each design starts at its own bit offset), and
    reduces all outputs to a single registered LED bit so that synthesis has to keep all
    of the logic. The stimulus is meaningless as a computation; only the area and
    register-to-register timing of the result mean anything. A system top with a real
    host interface on pins would replace it on a real board.

    Parameters
    ----------
    blocks : iterable of str or None
        Names of :data:`hw.designs.DESIGNS` entries to instantiate (default:
        :func:`default_blocks`, the biggest system available).
    parameters : dict or None
        Block name -> parameters that replace some of that block's defaults (for example
        smaller memories for a quick check); blocks not named keep their defaults.
    """

    def __init__(self, blocks=None, *, parameters=None):
        try:
            names = default_blocks() if blocks is None else list(blocks)
            unknown = sorted(set(names) - set(DESIGNS))
            if unknown:
                raise ValueError(f"unknown block(s) {', '.join(unknown)}; "
                                 f"known: {', '.join(sorted(DESIGNS))}")
            if not names:
                raise ValueError("DemoTop needs at least one block")
            if len(set(names)) != len(names):
                raise ValueError(f"blocks named more than once: {names}")
            parameters = dict(parameters or {})
            unused = sorted(set(parameters) - set(names))
            if unused:
                raise ValueError(f"parameters given for block(s) not in the probe: {', '.join(unused)}")
        except ValueError:
            refuse_construction(self)
            raise
        self.blocks = names
        #: The registered bit that drives the LED (exposed for simulation).
        self.led = Signal()
        self.parameters = {name: {**DESIGNS[name][1], **parameters.get(name, {})} for name in names}

    def elaborate(self, platform):
        m = Module()

        stimulus = Signal(STIMULUS_BITS, init=1)
        feedback = 0
        for tap in _STIMULUS_TAPS:
            feedback ^= stimulus[tap]
        m.d.sync += stimulus.eq(Cat(feedback, stimulus[:-1]))

        block_bits = []
        for index, name in enumerate(self.blocks):
            component_class = DESIGNS[name][0]
            block = component_class(**self.parameters[name])
            m.submodules[name] = block
            offset = (index * 17) % STIMULUS_BITS
            outputs = []
            for _path, member, value in block.signature.flatten(block):
                value = Value.cast(value)
                if member.flow == In:
                    width = len(value)
                    bits = [stimulus[(offset + bit) % STIMULUS_BITS] for bit in range(width)]
                    m.d.comb += value.eq(Cat(*bits))
                    offset = (offset + width) % STIMULUS_BITS
                else:
                    outputs.append(value)
            if not outputs:
                raise ValueError(f"block {name!r} has no outputs to observe")
            observed = Signal(name=f"{name}_observed")
            m.d.sync += observed.eq(Cat(*outputs).xor())
            block_bits.append(observed)

        m.d.sync += self.led.eq(Cat(*block_bits).xor())
        if platform is not None:
            m.submodules.led_buffer = led = io.Buffer("o", platform.request("led", 0, dir="-"))
            m.d.comb += led.o.eq(self.led)
        return m


_LOCATION = re.compile(r"^\s*set_location_assignment\s+PIN_(\S+)\s+-to\s+(\S+)\s*$")
_INSTANCE = re.compile(r'^\s*set_instance_assignment\s+-name\s+(\S+)\s+("[^"]*"|\S+)\s+-to\s+(\S+)\s*$')
_CLOCK = re.compile(r"^\s*create_clock\s.*-period\s+([0-9.]+)\s.*\[get_ports\s+\{?([^\s}\]]+)\}?\]")


def check_constraints(platform, pins_qsf_text, sdc_text):
    """Check the hand-written constraints against a prepared platform's ports.

    Every top-level port must have exactly the pin and attributes (I/O standard) the
    platform's resources give it, no assignment may name another port, and every clock
    resource in use must have a ``create_clock`` of the right period on its port.
    Raises ``ValueError`` listing the differences.
    """
    expected = {}
    for port_name, pin_name, attrs in platform.iter_port_constraints_bits():
        expected[port_name] = (pin_name, {key: str(value) for key, value in attrs.items()})

    found = {}
    for number, line in enumerate(pins_qsf_text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if match := _LOCATION.match(line):
            pin, port = match.groups()
            found.setdefault(port, [None, {}])[0] = pin
        elif match := _INSTANCE.match(line):
            key, value, port = match.groups()
            found.setdefault(port, [None, {}])[1][key] = value.strip('"')
        else:
            raise ValueError(f"pin constraints line {number} is not a pin or instance "
                             f"assignment: {line.strip()!r}")
    found = {port: (pin, attrs) for port, (pin, attrs) in found.items()}

    problems = []
    for port in sorted(set(expected) | set(found)):
        if port not in found:
            problems.append(f"port {port} has no pin assignment")
        elif port not in expected:
            problems.append(f"assignment to {port}, which is not a top-level port")
        elif found[port] != expected[port]:
            problems.append(f"port {port}: constraints say {found[port]}, "
                            f"platform says {expected[port]}")

    clocks = {}
    for line in sdc_text.splitlines():
        if match := _CLOCK.match(line):
            clocks[match.group(2)] = float(match.group(1))
    for port, frequency in platform.iter_port_clock_constraints():
        period = 1e9 / frequency
        if port.name not in clocks:
            problems.append(f"no create_clock on port {port.name}")
        elif abs(clocks[port.name] - period) > 1e-6:
            problems.append(f"clock {port.name}: SDC period {clocks[port.name]} ns, "
                            f"platform {period:.3f} ns")
    if problems:
        raise ValueError("constraints/ disagree with hw/flows/platform.py:\n  " + "\n  ".join(problems))


def write_project(out_dir, *, top=DEFAULT_TOP, blocks=None, parameters=None, design=None):
    """Write the Quartus project of ``design`` into ``out_dir``.

    ``design`` defaults to ``DemoTop(blocks, parameters=parameters)``.

    Returns the list of files written (paths). Nothing of Quartus is needed or run.
    """
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", top):
        raise ValueError(f"top entity name {top!r} is not a plain Verilog identifier")
    platform = Arria10Platform()
    if design is None:
        design = DemoTop(blocks, parameters=parameters)
    plan = platform.build(design, name=top, do_build=False)
    check_constraints(platform, platform.pins_qsf_text(), platform.sdc_text())
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    plan.extract(out_dir)
    written = [out_dir / name for name in sorted(plan.files)]
    for path in written:
        if path.suffix == ".sh":
            path.chmod(0o755)
    return written


#: Platform Designer interfaces of ``forest_top``: port prefix -> (interface type, its
#: direction, properties).
_INTERFACES = {
    "csr": ("avalon", "end", {"addressUnits": "WORDS", "readLatency": 0,
                              "maximumPendingReadTransactions": 1}),
    "mem_read": ("avalon", "start", {"addressUnits": "SYMBOLS", "burstOnBurstBoundariesOnly": "false",
                                     "linewrapBursts": "false", "doStreamReads": "false"}),
    "mem_write": ("avalon", "start", {"addressUnits": "SYMBOLS", "doStreamWrites": "false"}),
    # (histogram_top with its codes in memory: the code reader's master, on the system's clock)
    "mem_codes": ("avalon", "start", {"addressUnits": "SYMBOLS", "burstOnBurstBoundariesOnly": "false",
                                      "linewrapBursts": "false", "doStreamReads": "false"}),
}


def component_tcl(module, component, display_name=COMPONENT_DESIGNS[COMPONENT_DESIGN]):
    """The ``_hw.tcl`` text of ``component`` (a ``hw.top.AvalonTop``) as Verilog ``module``."""
    lines = [f"# Platform Designer component of the forest training accelerator ({type(component).__module__}).",
             "# Written by hw/flows/quartus.py; not yet opened in Platform Designer (docs/arria10.md).",
             "package require -exact qsys 16.1", "",
             f"set_module_property NAME {module}", "set_module_property VERSION 1.0",
             f'set_module_property DISPLAY_NAME "{display_name}"',
             'set_module_property GROUP "hwforest"', "set_module_property EDITABLE false", "",
             "add_fileset QUARTUS_SYNTH QUARTUS_SYNTH \"\" \"\"",
             f"set_fileset_property QUARTUS_SYNTH TOP_LEVEL {module}",
             f"add_fileset_file {module}.v VERILOG PATH {module}.v TOP_LEVEL_FILE", "",
             "add_interface clock clock end", "add_interface_port clock clk clk Input 1", "",
             "add_interface reset reset end", "set_interface_property reset associatedClock clock",
             "set_interface_property reset synchronousEdges BOTH",
             "add_interface_port reset rst reset Input 1"]
    separate = getattr(component, "separate_core_clock", False)
    if separate:
        # The system's own clock and reset (hw/avalon/crossing.py crosses to the bus clock).
        lines += ["", "add_interface core_clock clock end", "add_interface_port core_clock core_clk clk Input 1",
                  "", "add_interface core_reset reset end",
                  "set_interface_property core_reset associatedClock core_clock",
                  "set_interface_property core_reset synchronousEdges BOTH",
                  "add_interface_port core_reset core_rst reset Input 1"]
    for prefix, (kind, direction, properties) in _INTERFACES.items():
        if prefix not in component.signature.members:
            continue
        clock, reset = ("core_clock", "core_reset") if prefix == "mem_codes" and separate else ("clock", "reset")
        lines += ["", f"add_interface {prefix} {kind} {direction}",
                  f"set_interface_property {prefix} associatedClock {clock}",
                  f"set_interface_property {prefix} associatedReset {reset}"]
        lines += [f"set_interface_property {prefix} {key} {value}" for key, value in properties.items()]
        # A member's signature is seen from the component (flipped for an ``In`` member).
        for role, member in component.signature.members[prefix].signature.members.items():
            output = member.flow == Out
            lines.append(f"add_interface_port {prefix} {prefix}__{role} {role} "
                         f"{'Output' if output else 'Input'} {Shape.cast(member.shape).width}")
    lines += ["", "add_interface irq interrupt end", "set_interface_property irq associatedAddressablePoint csr",
              "set_interface_property irq associatedClock clock", "set_interface_property irq associatedReset reset",
              "add_interface_port irq irq irq Output 1", ""]
    return "\n".join(lines)


def write_component(out_dir, parameters=None, design=COMPONENT_DESIGN):
    """Write ``design``'s (one of :data:`COMPONENT_DESIGNS`) Verilog and ``_hw.tcl`` into
    ``out_dir``; return the paths."""
    from amaranth.back import verilog
    from hw.designs import component, design_name
    parameters = {**DESIGNS[design][1], **(parameters or {})}
    module = design_name(design, parameters)
    top = component(design, parameters)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tcl_path, verilog_path = out_dir / f"{module}_hw.tcl", out_dir / f"{module}.v"
    tcl_path.write_text(component_tcl(module, top, COMPONENT_DESIGNS[design]))
    verilog_path.write_text(verilog.convert(top, name=module, emit_src=False))
    return [verilog_path, tcl_path]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="build/quartus", help="output folder (default: %(default)s)")
    parser.add_argument("--component", default=COMPONENT_DESIGN, choices=sorted(COMPONENT_DESIGNS),
                        help="the Platform Designer component written (default: %(default)s)")
    parser.add_argument("--probe", action="store_true",
                        help="write the synthesis probe project (DemoTop) instead of forest_top's "
                             "Platform Designer component")
    parser.add_argument("--top", default=DEFAULT_TOP,
                        help="probe: top-level entity / project name (default: %(default)s)")
    parser.add_argument("--blocks", nargs="+", metavar="DESIGN",
                        help=f"designs in the probe (default: {', '.join(default_blocks())}; "
                             f"known: {', '.join(sorted(DESIGNS))})")
    add_set_option(parser)
    arguments = parser.parse_args(argv)
    parameters = checked_overrides(parser, arguments)
    if not arguments.probe:
        chosen = arguments.component
        unknown = sorted(set(parameters) - {chosen})
        if arguments.blocks or unknown:
            parser.error(f"without --probe only {chosen} is written: "
                         f"--blocks and --set {', '.join(unknown) or '...'} need --probe")
        for path in write_component(arguments.out, parameters.get(chosen), chosen):
            print(f"wrote {path}")
        print(f"add {Path(arguments.out)} to Platform Designer's IP search path "
              f"(docs/arria10.md: PCIe hard IP with DMA, DDR4 EMIF, pins)")
        return 0
    try:
        design = DemoTop(arguments.blocks, parameters=parameters)
        written = write_project(arguments.out, top=arguments.top, design=design)
    except ValueError as error:
        parser.error(str(error))
    for path in written:
        print(f"wrote {path}")
    for name in design.blocks:
        settings = ", ".join(f"{key}={value}" for key, value in design.parameters[name].items())
        print(f"top {arguments.top} probes {name}({settings})")
    print(f"run {Path(arguments.out) / 'build.sh'} where Quartus Prime Pro is installed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
