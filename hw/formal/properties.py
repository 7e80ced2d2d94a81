"""The property library: which streams a component has, and the assertions the formal
harness (:mod:`hw.formal.harness`) places on them and on the block's own state.

Everything here is found from the component itself, never listed by hand: the streams
from its signature (``amaranth.lib.stream`` members, at any depth of the signature), the
memories, state machines and enumerated registers by walking its elaborated fragment.
"""

import itertools
from dataclasses import dataclass

from amaranth.hdl import Format, Signal, Value
from amaranth.hdl._ir import Fragment
from amaranth.hdl._mem import MemoryInstance
from amaranth.lib import stream, wiring

__all__ = ["StreamPort", "stream_ports", "input_ports", "output_ports", "MemoryBound", "memory_bounds",
           "StateBound", "state_bounds", "driven_signals"]


@dataclass(frozen=True)
class StreamPort:
    """One stream member: its Verilog prefix (``draws`` for ``draws__valid``), whether it
    is an output of the component, and the interface object (``valid``, ``ready``,
    ``payload``)."""
    name: str
    output: bool
    interface: object

    @property
    def payload(self):
        return Value.cast(self.interface.payload)


def _streams(signature, obj, prefix, flipped):
    for name, member in signature.members.items():
        if not member.is_signature:
            continue
        child = getattr(obj, name) if not isinstance(obj, (list, tuple)) else obj[name]
        path = f"{prefix}__{name}" if prefix else name
        outward = (member.flow == wiring.Out) != flipped
        if isinstance(member.signature, stream.Signature):
            # An array of streams is one stream per element, named as Amaranth flattens it
            # (``splits__0__valid``).
            for index in itertools.product(*(range(size) for size in member.dimensions)):
                element = child
                for position in index:
                    element = element[position]
                yield StreamPort("__".join([path, *map(str, index)]), outward, element)
        else:
            yield from _streams(member.signature, child, path, not outward)


def stream_ports(component):
    """Every stream of ``component``, outputs and inputs, in signature order."""
    return list(_streams(component.signature, component, "", False))


def input_ports(component):
    """Every port value the component reads (inputs, including the ``ready`` of its output
    streams), as (Verilog name, value) pairs: the harness drives each with a free value."""
    ports = []
    for path, member, value in component.signature.flatten(component):
        if member.flow == wiring.In:
            ports.append(("__".join(str(part) for part in path), Value.cast(value)))
    return ports


def output_ports(component):
    """Every port value the component drives, as (Verilog name, value) pairs."""
    return [("__".join(str(part) for part in path), Value.cast(value))
            for path, member, value in component.signature.flatten(component)
            if member.flow == wiring.Out]


def _fragments(fragment, path=()):
    yield path, fragment
    for child, name, _ in fragment.subfragments:
        yield from _fragments(child, (*path, str(name)))


@dataclass(frozen=True)
class MemoryBound:
    """One memory port whose address can exceed the memory's depth (a depth that is not
    a power of two): the assertion is ``enable -> address < depth``."""
    name: str
    depth: int
    address: Value
    enable: Value
    write: bool

    def holds(self):
        return ~self.enable.any() | (self.address < self.depth)


def memory_bounds(fragment, *, reads=True):
    """The ports of every memory in ``fragment`` (an elaborated :class:`Fragment`) that
    could address past its depth; power-of-two depths cannot and are left out."""
    bounds = []
    for path, child in _fragments(fragment):
        if not isinstance(child, MemoryInstance):
            continue
        depth = child._data.depth
        if depth & (depth - 1) == 0:
            continue
        name = ".".join(path) or "memory"
        for index, port in enumerate(child._write_ports):
            bounds.append(MemoryBound(f"{name} write port {index}", depth, port._addr, port._en,
                                      True))
        if reads:
            for index, port in enumerate(child._read_ports):
                bounds.append(MemoryBound(f"{name} read port {index}", depth, port._addr,
                                          port._en, False))
    return bounds


def driven_signals(fragment):
    """Every signal some statement of ``fragment`` or its children assigns, as (path of
    the submodule that drives it, signal) pairs; the path is a tuple of names."""
    signals = {}
    for path, child in _fragments(fragment):
        for statements in child.statements.values():
            for statement in statements:
                for signal in statement._lhs_signals():
                    signals[id(signal)] = (path, signal)
    return list(signals.values())


@dataclass(frozen=True)
class StateBound:
    """A state register (an FSM's state or an enumerated register) with fewer named
    values than its width can hold: the assertion is that it only holds named ones."""
    name: str
    signal: Signal
    values: tuple

    def holds(self):
        return self.signal.matches(*self.values)


def _named_values(signal):
    """The named values of a state or enum register, or None if it is neither."""
    if isinstance(signal._format, Format.Enum):
        return tuple(sorted(signal._format._variants))
    decoder = signal.decoder
    if signal.name.endswith("_state") and callable(decoder) and not isinstance(decoder, type):
        values = []
        for value in range(1 << len(signal)):
            try:
                decoder(value)
            except (KeyError, IndexError):
                break
            values.append(value)
        return tuple(values)
    return None


def state_bounds(fragment):
    """Every FSM state register and enumerated register of ``fragment`` that can hold a
    value with no name."""
    bounds = []
    for path, signal in driven_signals(fragment):
        values = _named_values(signal)
        if values and len(values) < (1 << len(signal)):
            bounds.append(StateBound(".".join((*path, signal.name)), signal, values))
    return sorted(bounds, key=lambda bound: bound.name)


def fragment_of(component, platform=None):
    """The elaborated fragment of ``component`` (elaborated once; the harness adds it as
    its submodule)."""
    return Fragment.get(component, platform)
