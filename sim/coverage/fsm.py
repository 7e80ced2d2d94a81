"""The finite-state machines of an elaborated design: their state names and transitions.

Amaranth 0.5 gives every ``m.FSM()`` a state signal named ``fsm_state`` in its module's
Verilog (``fsm_state$1`` and so on when a module has several), numbered from 0 (the
initial state) in order of first mention, with a decoder from encoding to state name.
Nothing of this reaches the Verilog, so it is read from the elaborated design: the
state names from each FSM signal's decoder, the transitions from the ``m.next = ...``
statements under each state's case, and the Verilog path of the signal from the names
Amaranth's back end gives the design's fragments and signals.

The bins of an FSM belong to the RTL module that holds it, not to the instance: every
machine has an ``owner``, the nearest enclosing component that is a design of
``hw.designs.DESIGNS`` (the Gini scanner's FSM in a PE's lane is ``gini_scanner``'s, the
PE's controller in a trainer is ``processing_element``'s), and a ``group``, its path
below that owner with instance numbers replaced by ``N`` (``laneN/fsm_state``). The
instances of one module in every run (standalone or inside a larger design) merge
into one set of bins.
"""

import re

import dataclasses

from amaranth.hdl import _ast, _dsl, _ir
from amaranth.lib import wiring

from hw.designs import DESIGNS, component

__all__ = ["StateMachine", "state_machines", "machines_of"]


@dataclasses.dataclass(frozen=True)
class StateMachine:
    """One FSM: ``path`` (instance names below the top module), ``signal`` (its state
    signal's name in that module), ``states`` (encoding -> name) and ``transitions``
    (the (from, to) encodings an ``m.next`` can take; an ``m.next`` naming the state it is in
    is no transition: the state signal does not change, and nothing could sample it)."""
    path: tuple
    signal: str
    states: dict
    transitions: frozenset
    owner: str = ""
    group: str = ""

    @property
    def label(self):
        """The FSM's name in reports: its instance path and signal, e.g. ``lane0/scanner/fsm_state``."""
        return "/".join([*self.path, self.signal])

    def state_name(self, encoding):
        return self.states.get(encoding, f"unnamed encoding {encoding}")

    def transition_name(self, source, target):
        return f"{self.state_name(source)} -> {self.state_name(target)}"

    @property
    def transition_names(self):
        return [self.transition_name(*pair) for pair in sorted(self.transitions)]


def _decoded_states(signal):
    """Encoding -> state name, from the FSM signal's decoder (encodings 0, 1, ... up to the
    first one it does not know)."""
    states, encoding = {}, 0
    while True:
        try:
            text = signal.decoder(encoding)
        except KeyError:
            return states
        states[encoding] = text.rsplit("/", 1)[0]
        encoding += 1


def _transitions(statements, signal, current, found):
    """Collect (state, next state) under ``Switch`` cases on ``signal`` into ``found``."""
    for statement in statements:
        if isinstance(statement, _dsl.FSMNextStatement):
            if statement.ctrl_data["signal"] is signal and current is not None:
                found.add((current, statement.ctrl_data["encoding"][statement.state]))
        elif isinstance(statement, _ast.Assign):
            if statement.lhs is signal and isinstance(statement.rhs, _ast.Const) and current is not None:
                found.add((current, statement.rhs.value))
        elif isinstance(statement, _ast.Switch):
            for patterns, body, _ in statement.cases:
                state = current
                if statement.test is signal and patterns and len(patterns) == 1:
                    state = int(patterns[0], 2)
                _transitions(body, signal, state, found)


def _ports(instance):
    directions = {wiring.In: _ir.PortDirection.Input, wiring.Out: _ir.PortDirection.Output}
    return {"__".join(map(str, path)): (_ast.Value.cast(value), directions[member.flow])
            for path, member, value in instance.signature.flatten(instance)}


def state_machines(design, parameters=None):
    """Every FSM of design ``design`` (a name of ``hw.designs.DESIGNS``) built with
    ``parameters``, in the order of the design's hierarchy."""
    return machines_of(component(design, parameters))


def machines_of(instance):
    """Every FSM of the ``wiring.Component`` ``instance``, in the order of its hierarchy."""
    fragment = _ir.Fragment.get(instance, None)
    elaborated = fragment.prepare(_ports(instance))
    classes = {cls: name for name, (cls, _) in DESIGNS.items()}
    owners = {}                 # fragment path -> design name of the component it elaborates
    for part, info in elaborated.fragments.items():
        names = [classes[type(origin)] for origin in (part.origins or ()) if type(origin) in classes]
        if names:
            owners[tuple(info.name[1:])] = names[0]
    owners.setdefault((), type(instance).__name__)     # a component outside the catalogue
    machines = []
    for part, info in elaborated.fragments.items():
        for signal, name in info.signal_names.items():
            if signal.decoder is None or not signal.name.endswith("_state") \
                    or getattr(signal.decoder, "__name__", "") != "<lambda>":
                continue
            states = _decoded_states(signal)
            if not states:
                continue
            found = set()
            for statements in part.statements.values():
                _transitions(statements, signal, None, found)
            moves = frozenset((a, b) for a, b in found if a != b)       # staying is no transition
            path = tuple(info.name[1:])
            top = max((p for p in owners if path[:len(p)] == p), key=len)
            group = "/".join([*(_NUMBERED.sub("N", part) for part in path[len(top):]), name])
            machines.append(StateMachine(path, name, states, moves, owners[top], group))
    return machines


_NUMBERED = re.compile(r"(?<=[A-Za-z_])\d+$")
