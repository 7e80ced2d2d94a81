"""Coverage sampling inside a cocotb testbench (``cocotb-coverage`` cover points).

A testbench asks for its collector once, after ``StreamTestbench.__init__``::

    self.coverage = coverage_for(self)

With the testbench setting ``coverage`` (a JSON file) unset, that is :data:`OFF`, whose
methods do nothing, so the test suite pays nothing. With it set, the collector

* declares the design's case bins (:data:`sim.coverage.bins.CASE_BINS`), its FSMs' states
  and transitions (:func:`sim.coverage.fsm.state_machines`) and its streams' stall bins as
  ``cocotb_coverage.coverage.CoverPoint`` objects;
* watches every FSM state signal with a ``value_change`` trigger (one wake-up per change,
  not per cycle), through the DUT handle hierarchy (Verilator models are built public);
* samples case bins where the testbench knows the case: ``self.coverage.record(function,
  *arguments)`` calls a classifier of :mod:`sim.coverage.bins` (only when coverage is on)
  and counts the (group, bin) pairs it returns;
* when the cocotb test ends (its watcher task is cancelled), reads the stream drivers'
  counters and writes the process's cumulative counts to the file, every bin with its
  hits (0 for a declared bin never hit).
"""

import json
from pathlib import Path

import cocotb
from cocotb.triggers import Event
from cocotb_coverage.coverage import CoverPoint, coverage_db

from hw.designs import DESIGNS
from sim.coverage.bins import CASE_BINS, STREAM_BINS
from sim.coverage.fsm import state_machines

__all__ = ["OFF", "Collector", "coverage_for", "base_design", "stream_name"]


class _Off:
    """The collector of a run without coverage: every call does nothing."""
    active = False

    def record(self, function, *arguments, **keywords):
        pass

    def hit(self, group, label):
        pass


OFF = _Off()


def base_design(toplevel):
    """The catalogue name of a Verilog top module (``gini_scanner_1a2b3c4d`` -> ``gini_scanner``)."""
    names = [name for name in DESIGNS if toplevel == name or toplevel.startswith(name + "_")]
    if not names:
        raise ValueError(f"{toplevel} is no design of hw.designs.DESIGNS")
    return max(names, key=len)


def stream_name(driver):
    """A stream driver's port name: its ``name``, else the name of its valid signal."""
    name = getattr(driver, "name", None)
    if name:
        return str(name)
    return str(driver.valid._name).removesuffix("__valid")


def _point_name(*parts):
    # cocotb-coverage splits names on dots into its hierarchy.
    return ".".join(str(part).replace(".", ",") for part in parts)


class Collector:
    """Cover points of one design in one simulation process (shared by its cocotb tests)."""

    active = True
    _by_path = {}

    def __init__(self, testbench, path):
        self.path = Path(path)
        self.design = base_design(testbench.dut._name)
        self.parameters = testbench.settings["design"]
        self.machines = state_machines(self.design, self.parameters)
        self.points = {}                # (block, kind, group) -> (cover point, bins in order, bin set)
        for group, bins in CASE_BINS.get(self.design, {}).items():
            self._declare(self.design, "case", group, list(bins))
        for machine in self.machines:   # one set of bins per RTL module (sim.coverage.fsm)
            self._declare(machine.owner, "fsm state", machine.group,
                          [machine.states[e] for e in sorted(machine.states)])
            self._declare(machine.owner, "fsm transition", machine.group, machine.transition_names)
        self.streams = {}              # (stream, role, counter) -> total or None

    @classmethod
    def shared(cls, testbench, path):
        """The collector of ``path`` in this process (cover points accumulate over tests)."""
        if path not in cls._by_path:
            cls._by_path[path] = cls(testbench, path)
        return cls._by_path[path]

    def _declare(self, block, kind, group, bins):
        key = (block, kind, group)
        if key in self.points:          # another instance of the same module
            _, known, _ = self.points[key]
            bins = known + [label for label in bins if label not in known]
        name = _point_name(block, kind, group)

        @CoverPoint(name, xf=lambda label: label, bins=list(bins))
        def sample(label):
            pass

        self.points[key] = (sample, list(bins), frozenset(bins))

    def hit(self, group, label, kind="case", block=None):
        """Count bin ``label`` of ``group`` (of ``block``, by default the testbench's design);
        a bin nobody declared is an error."""
        block = block or self.design
        sample, _, known = self.points[(block, kind, group)]
        if label not in known:
            raise KeyError(f"{block}: {kind} {group!r} has no bin {label!r}")
        sample(label)

    def record(self, function, *arguments, **keywords):
        """Count every (group, bin) that ``function(*arguments, **keywords)`` returns."""
        for group, label in function(*arguments, **keywords):
            self.hit(group, label)

    # ------------------------------------------------------------------ FSMs
    def start(self, testbench):
        """Watch every FSM of the DUT and write the counts when the test ends."""
        for machine in self.machines:
            handle = testbench.dut
            for part in (*machine.path, machine.signal):
                handle = getattr(handle, part)
            cocotb.start_soon(self._watch(machine, handle, testbench.dut.rst))
        cocotb.start_soon(self._save_at_end(testbench))

    async def _watch(self, machine, handle, reset):
        """Count each state entered and each transition; a change under reset is neither."""
        previous = None
        while True:
            value = handle.value
            encoding = int(value) if value.is_resolvable else None
            if encoding is not None:
                if not (reset.value.is_resolvable and int(reset.value)):
                    self._state(machine, previous, encoding)
                previous = encoding
            await handle.value_change

    def _state(self, machine, previous, encoding):
        if encoding in machine.states:
            self.hit(machine.group, machine.states[encoding], "fsm state", machine.owner)
        if previous is not None and (previous, encoding) in machine.transitions:
            self.hit(machine.group, machine.transition_name(previous, encoding), "fsm transition",
                     machine.owner)

    async def _save_at_end(self, testbench):
        try:
            await Event().wait()
        finally:
            self.save(testbench)

    # ------------------------------------------------------------------ the database
    def _add_streams(self, testbench):
        """Add the ending test's stream counters to the process's totals (a driver without
        a counter leaves its bin unsampled)."""
        for role, drivers in (("source", testbench.sources), ("sink", testbench.sinks)):
            for driver in drivers:
                for counter in STREAM_BINS[role]:
                    value = getattr(driver, counter, None)
                    key = (stream_name(driver), role, counter)
                    if value is None:
                        self.streams.setdefault(key, None)
                    else:
                        self.streams[key] = (self.streams.get(key) or 0) + int(value)

    def records(self):
        """Every bin with its hits so far (None: a stream counter the drivers do not keep)."""
        records = []
        for (block, kind, group), (_, bins, _) in self.points.items():
            counts = coverage_db[_point_name(block, kind, group)].detailed_coverage
            records.extend({"block": block, "kind": kind, "group": group, "bin": label,
                            "hits": int(counts.get(label, 0))} for label in bins)
        records.extend({"block": self.design, "kind": "stream", "group": f"{group} ({role})",
                        "bin": counter, "hits": hits} for (group, role, counter), hits in self.streams.items())
        return records

    def save(self, testbench):
        """Add the test's stream counters and write every bin's hits to the file."""
        self._add_streams(testbench)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        database = {"design": self.design, "parameters": self.parameters,
                    "bins": self.records()}
        self.path.write_text(json.dumps(database, indent=1))


def coverage_for(testbench):
    """The testbench's collector: :data:`OFF` unless the setting ``coverage`` names a file.
    Starts the FSM watchers and the end-of-test writer of this cocotb test."""
    path = testbench.settings.get("coverage")
    if not path:
        return OFF
    collector = Collector.shared(testbench, path)
    collector.start(testbench)
    return collector
