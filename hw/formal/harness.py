"""The formal harness: a wrapper around one component that drives every input with a free
value each cycle, assumes the stream rules on its input streams, and asserts the chosen
properties.

Properties (the ``checks`` a harness is built with):

* ``valid``: on every output stream, once ``valid`` is high it stays high until the
  transfer (``valid & ready``);
* ``payload``: on every output stream, the payload does not change while
  ``valid & ~ready``;
* ``memory``: no enabled memory port addresses past its memory's depth;
* ``state``: no FSM state or enumerated register holds a value without a name (one
  property for all of them);
* ``invariant``: the block's own invariants, given as ``invariants`` (name -> function of
  the harness's :class:`Internals`, returning a 1-bit value);
* ``cover`` (not a default check): on every output stream, a transfer is reachable (a
  ``Cover`` of ``valid & ready``, for SymbiYosys's cover mode).

Both stream rules hold "until the transfer or an abort": a cycle with the domain's reset
or one of the named ``aborts`` inputs high (e.g. a ``start`` that abandons the work in
flight) releases the obligation of the cycle after, and so does the rise of one of the
named ``stops`` (an error flag such as ``bad_input``, raised as the block stops) in the
cycle it rises. The input streams are assumed to obey
the same rules (a reset releases them too). The history registers of the harness are
reset-less and start from a cycle with no obligation.
"""

from amaranth.hdl import (Assert, Assume, Cat, Const, Cover, Elaboratable, Fragment, Module,
                          ResetSignal, Signal)
from amaranth.hdl._ast import AnySeq
from amaranth.lib import wiring

from hw.formal.properties import (_fragments, driven_signals, fragment_of, input_ports,
                                  memory_bounds, output_ports, state_bounds, stream_ports)

__all__ = ["CHECKS", "KINDS", "FormalHarness", "Internals"]

#: Every property kind a harness asserts by default.
CHECKS = ("valid", "payload", "memory", "state", "invariant")
#: Every kind a harness can place: the checks, and ``cover`` (a transfer on each output
#: stream is reachable: a ``Cover`` for a cover trace, against vacuous proofs).
KINDS = (*CHECKS, "cover")


class Internals:
    """Signals of the elaborated component found by name (for the block's invariants):
    ``internals["row_count"]`` is the one internal signal of that name, and
    ``internals["lane0.fsm_state"]`` the one of that name in that submodule (a dotted
    path of submodule names; ``".fsm_state"`` for the top's own, ports included); the
    component's own ports are also ``internals.component``'s. Ambiguous or missing names
    raise ``KeyError``; :meth:`block` gives the component elaborated at a path."""

    def __init__(self, component, fragment):
        self.component = component
        self._by_name = {}
        ports = {id(value) for _, value in output_ports(component)}
        self._blocks = {}
        for path, child in _fragments(fragment):
            found = [origin for origin in getattr(child, "origins", None) or ()
                     if isinstance(origin, wiring.Component)]
            if found:
                self._blocks[".".join(path)] = found[0]
        for path, signal in driven_signals(fragment):
            self._by_name.setdefault(".".join((*path, signal.name)) if path
                                     else f".{signal.name}", []).append(signal)
            if id(signal) not in ports:
                self._by_name.setdefault(signal.name, []).append(signal)

    def __getitem__(self, name):
        found = self._by_name.get(name, [])
        if len(found) != 1:
            raise KeyError(f"{len(found)} signals named {name!r} in "
                           f"{type(self.component).__name__}")
        return found[0]

    def block(self, path):
        """The component elaborated at ``path`` (dotted submodule names, ``""``: the top)."""
        if path not in self._blocks:
            raise KeyError(f"no component at {path!r} in {type(self.component).__name__}")
        return self._blocks[path]

    def all(self, name):
        """Every signal named ``name``."""
        return list(self._by_name.get(name, []))


class _History:
    """Reset-less registers of last cycle's values."""

    def __init__(self, m):
        self.m = m

    def past(self, value, name):
        register = Signal(len(value), name=f"past_{name}", reset_less=True)
        self.m.d.sync += register.eq(value)
        return register


class FormalHarness(Elaboratable):
    """Wrap ``component`` for a formal proof of ``checks`` (a subset of :data:`CHECKS`).

    ``aborts``: names of 1-bit input ports that abandon the output streams' transfers
    (they release the stream obligations of the next cycle like the reset does).
    ``stops``: names of 1-bit output flags whose rise abandons them (an error stop: the
    obligations of the cycle the flag rises in are released). ``invariants``: name ->
    function of :class:`Internals` giving a 1-bit value asserted in every cycle.
    ``assumptions``: name -> function of :class:`Internals` giving a 1-bit value assumed in
    every cycle (each must be justified in ``docs/formal.md``). ``only``: the (kind, name)
    pairs to assert (default: every property of the ``checks``). The properties found are
    listed in :attr:`properties` after elaboration (:meth:`plan` elaborates for that alone),
    as (kind, name) pairs, whether asserted or not.
    """

    def __init__(self, component, checks=CHECKS, *, aborts=(), stops=(), invariants=None,
                 assumptions=None, only=None):
        unknown = set(checks) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown checks {sorted(unknown)}; known: {', '.join(KINDS)}")
        self.component = component
        self.checks = tuple(checks)
        self.aborts = tuple(aborts)
        self.stops = tuple(stops)
        self.invariants = dict(invariants or {})
        self.assumptions = dict(assumptions or {})
        self.only = None if only is None else {tuple(item) for item in only}
        self.properties = []

    def elaborate(self, platform):
        m = Module()
        component = self.component
        fragment = fragment_of(component, platform)
        m.submodules.dut = fragment
        internals = Internals(component, fragment)
        inputs = dict(input_ports(component))
        for name, value in inputs.items():
            m.d.comb += value.eq(AnySeq(len(value)))
        for name in self.aborts:
            if name not in inputs or len(inputs[name]) != 1:
                raise ValueError(f"abort {name!r} is not a 1-bit input of "
                                 f"{type(component).__name__}")
        outputs = {name: value for name, value in output_ports(component)}
        for name in self.stops:
            if name not in outputs or len(outputs[name]) != 1:
                raise ValueError(f"stop {name!r} is not a 1-bit output of "
                                 f"{type(component).__name__}")

        history = _History(m)
        started = Signal(name="started", reset_less=True)
        m.d.sync += started.eq(1)
        released = ResetSignal()
        for name in self.aborts:
            released = released | inputs[name]
        # The obligations of this cycle come from last cycle, unless it reset or aborted,
        # or the block stops on an error in this cycle.
        stopped = Const(0)
        for name in self.stops:
            stopped = stopped | (outputs[name] & ~history.past(outputs[name], f"{name}"))
        bound = Signal(name="bound")
        m.d.comb += bound.eq(started & ~history.past(released, "released") & ~stopped)
        self.properties = []
        for port in stream_ports(component):
            self._stream(m, history, bound, port)
        self._state(m, fragment, internals)
        return m

    def _stream(self, m, history, bound, port):
        """The stream rules: assumed on an input stream, asserted on an output stream."""
        interface = port.interface
        stalled = history.past(interface.valid & ~interface.ready, f"{port.name}_stalled")
        payload = history.past(port.payload, f"{port.name}_payload")
        held = interface.valid
        same = port.payload == payload
        obliged = bound & stalled
        if not port.output:
            m.d.comb += [Assume(~obliged | held), Assume(~obliged | same)]
            return
        self._assert(m, "valid", port.name, ~obliged | held)
        self._assert(m, "payload", port.name, ~obliged | same)
        self._assert(m, "cover", port.name, interface.valid & interface.ready, Cover)

    def _state(self, m, fragment, internals):
        """Memory bounds, named states, the block's invariants; the named assumptions."""
        for name, assumption in self.assumptions.items():
            m.d.comb += Assume(assumption(internals))
        for bound in memory_bounds(fragment):
            self._assert(m, "memory", bound.name, bound.holds())
        states = state_bounds(fragment)
        if states:
            names = ", ".join(bound.name for bound in states)
            self._assert(m, "state", names, Cat(bound.holds() for bound in states).all())
        for name, invariant in self.invariants.items():
            self._assert(m, "invariant", name, invariant(internals))

    def _assert(self, m, kind, name, holds, statement=Assert):
        if kind not in self.checks:
            return
        self.properties.append((kind, name))
        if self.only is None or (kind, name) in self.only:
            m.d.comb += statement(holds, f"{kind}: {name}")

    def plan(self):
        """The (kind, name) pairs of every property the harness has (elaborates it)."""
        Fragment.get(self, None)
        return list(self.properties)
