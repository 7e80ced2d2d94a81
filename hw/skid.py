"""An output register with a skid register behind it: a stream's ``valid`` and payload
come from registers, and the stage that feeds it moves on a function of its registers
alone (the skid register is empty), never on the consumer's ``ready`` in the same cycle.

Used wherever a block RAM's read (or a wide multiplexer) would otherwise reach a
consumer, and its read enable the consumer's ``ready`` (``docs/timing.md``): the in-bag
filter, the lanes' segment readers, the PE's tree writer, the trainer's presort feed and
its merge.
"""

from amaranth.hdl import Mux, Signal

__all__ = ["SkidOutput"]


class SkidOutput:
    """The registers of one stream output, in module ``m``.

    ``valid`` and ``payload`` are the output (registers). :meth:`feed` joins the stage in
    front of it and returns whether that stage's entry moves in this cycle.
    """

    def __init__(self, shape, *, name):
        self._name = name
        self.valid = Signal(name=f"{name}_valid")
        self.payload = Signal(shape, name=name)
        self.skid_valid = Signal(name=f"{name}_skid_valid")
        self.skid = Signal(shape, name=f"{name}_skid")

    def feed(self, m, valid, payload, ready):
        """Take ``payload`` while ``valid`` into the output register (if it is free or
        taken by ``ready`` now) or the skid register; returns the condition under which
        the feeding stage's entry moves (``valid`` and the skid register empty)."""
        moves = Signal(name=f"{self._name}_moves")
        m.d.comb += moves.eq(valid & ~self.skid_valid)
        self._loads = ~self.valid | ready
        self._incoming = Signal.like(self.payload, name=f"{self._name}_incoming")
        m.d.comb += self._incoming.eq(Mux(self.skid_valid, self.skid, payload))
        with m.If(self._loads):
            m.d.sync += [self.valid.eq(self.skid_valid | moves),
                         self.payload.eq(self._incoming),
                         self.skid_valid.eq(0)]
        with m.Elif(moves):
            m.d.sync += [self.skid.eq(payload), self.skid_valid.eq(1)]
        return moves

    def copy(self, m, shape, form, *, name):
        """A register of its own that holds ``form(payload)`` whenever the output register
        holds ``payload`` (loaded with it, after :meth:`feed`): a consumer far from the
        output register reads its own copy. ``form`` must not be the identity (synthesis
        merges equal registers, whatever their names), so the copy holds another form of
        the bits: a one-hot label, a complemented weight."""
        register = Signal(shape, name=name)
        with m.If(self._loads):
            m.d.sync += register.eq(form(self._incoming))
        return register

    def clear(self):
        """Statements (for ``m.d.sync``) that drop whatever the registers hold."""
        return [self.valid.eq(0), self.skid_valid.eq(0)]
