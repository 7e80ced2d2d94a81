"""A tree's generator that can be rewound: ``hw.rng.TreeRandom``'s stream, with the stream
position of each draw and a ``rewinds`` stream that continues the stream at a position.

The histogram PE (``hw.histogram_pe``) draws a pass's features ahead and, after a node's
last pass, rewinds the stream to the position after the last draw it used, so that its
stream is the golden model's (``sw.methods.forest.sampling.NodeFeatureDrawer``). The
stream is counter-based (``sw.methods.forest.rng``): raw word ``i`` is
``mix32(key + (i + 1) * gamma)``, so a rewind to position ``p`` loads the counter with
``key + (p + 1) * gamma``, one 32 x 32 multiply (three 16 x 16 partial products,
registered, then their sum) and a refill of the mixer.

It is a generator of its own beside ``hw.rng.TreeRandom`` (the same mixer, derivation and
rejection rule, from that module's helpers) rather than an option of it: the placed
designs' Fmax entries are digests of their sources (``docs/arria10.md``).
"""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from hw.checks import check_integer, refuse_construction
from hw.rng import _PARTIALS, _MixerStage, _partials, _sum, MIXER_STAGES, TreeRandom, request_layout
from sw.methods.forest.rng import GAMMA_SALT, MIX_MULTIPLIER_1, MIX_MULTIPLIER_2, SEED_SALT, WORD_BITS

__all__ = ["RewindableRandom", "positioned_draw_layout", "rewind_layout", "POSITION_BITS",
           "REWIND_CYCLES"]

#: Width of a stream position (the number of raw words used before it).
POSITION_BITS = WORD_BITS
#: Cycles from a rewind taken to its first raw word at the mixer's output: the product's
#: partials, their sum into the counter, then the mixer's stages.
REWIND_CYCLES = 2 + MIXER_STAGES


def positioned_draw_layout(bound_bits):
    """A draw: an integer uniform in [0, bound) and the stream position after it."""
    return data.StructLayout({"value": bound_bits, "position": POSITION_BITS})


def rewind_layout():
    """A rewind: the stream position to continue at."""
    return data.StructLayout({"position": POSITION_BITS})


class _Phase(enum.Enum, shape=2):
    IDLE = 0            # no stream selected since reset
    DERIVE = 1          # hashing (seed, tree index) into the stream's key and increment
    REWIND = 2          # the counter of a rewind's position being worked out
    RUN = 3             # raw words flow through the mixer


class RewindableRandom(TreeRandom):
    """Uniform integers in [0, bound) from the stream of one tree, by rejection, each with
    its stream position; the stream can be continued at any position.

    As :class:`hw.rng.TreeRandom` (``start``, ``seed``, ``tree_index``, ``requests``,
    ``running``, ``bad_bound``, the masks of the last bound and of one less kept in
    registers), except:

    * each draw carries ``position``, the number of raw words used up to and including
      the one accepted (``NodeFeatureDrawer.position`` after the draw);
    * a rewind on ``rewinds`` continues the stream at ``position``: the next draw uses raw
      word ``position`` first. It is taken once the stream runs and no draw waits at the
      output, before any request still waiting; :data:`REWIND_CYCLES` later the first raw
      word is out. A consumer that wants a definite order sends a rewind only when its
      requests are answered (as the histogram PE does);
    * a start begins the stream at ``position`` (sampled with the seed and the tree
      index; 0 for the stream's first word): the key and gamma are derived as there,
      then the counter is worked out as a rewind's: about 22 cycles to the first raw word
      (the seed's hash is derived again at every start).

    Members
    -------
    position : In(POSITION_BITS)
        Where the stream begins, sampled on ``start``.
    draws : Out(stream.Signature(positioned_draw_layout(bound_bits)))
    rewinds : In(stream.Signature(rewind_layout()))
    """

    def __init__(self, *, bound_bits=16, tree_index_bits=16):
        try:
            check_integer("bound_bits", bound_bits, 1, WORD_BITS)
            check_integer("tree_index_bits", tree_index_bits, 1, WORD_BITS)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        self.bound_bits = bound_bits
        self.tree_index_bits = tree_index_bits
        wiring.Component.__init__(self, {
            "seed": In(WORD_BITS),
            "tree_index": In(tree_index_bits),
            "start": In(1),
            "position": In(POSITION_BITS),
            "requests": In(stream.Signature(request_layout(bound_bits))),
            "draws": Out(stream.Signature(positioned_draw_layout(bound_bits))),
            "rewinds": In(stream.Signature(rewind_layout())),
            "running": Out(1),
            "bad_bound": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        phase = Signal(_Phase)
        m.d.comb += self.running.eq((phase == _Phase.RUN) | (phase == _Phase.REWIND))
        mixer = _Mixer(m)

        key, gamma, counter = Signal(WORD_BITS), Signal(WORD_BITS), Signal(WORD_BITS)
        # The index of the raw word at the mixer's output (the next one a draw uses).
        consumed = Signal(POSITION_BITS)
        derive_step, derive_issued = Signal(2), Signal()
        start_seed, start_tree = Signal(WORD_BITS), Signal(self.tree_index_bits)
        # A rewind's position + 1 and its product's partials with gamma.
        target = Signal(POSITION_BITS)
        product = Signal(_PARTIALS, name="rewind_product")
        rewind_step = Signal()

        draw_valid = Signal()
        draw = Signal(positioned_draw_layout(self.bound_bits))
        m.d.comb += [self.draws.valid.eq(draw_valid), self.draws.payload.eq(draw)]
        with m.If(self.draws.ready):
            m.d.sync += draw_valid.eq(0)
        output_free = ~draw_valid | self.draws.ready
        known, candidate, fits = self._cached_masks(m, self.requests.p.bound, mixer.mixed)

        with m.Switch(phase):
            with m.Case(_Phase.DERIVE):
                self._derive(m, mixer, phase, key, gamma, derive_step, derive_issued, start_seed,
                             start_tree, rewind_step)
            with m.Case(_Phase.REWIND):
                m.d.sync += rewind_step.eq(1)
                with m.If(~rewind_step):
                    m.d.sync += product.eq(_variable_partials(target, gamma))
                with m.Else():
                    m.d.sync += [counter.eq(key + _sum(product)), phase.eq(_Phase.RUN)]
            with m.Case(_Phase.RUN):
                m.d.comb += [mixer.input.eq(counter), mixer.input_valid.eq(1)]
                with m.If(mixer.advance):
                    m.d.sync += counter.eq(counter + gamma)
                with m.If(self.rewinds.valid & ~draw_valid):
                    # The rewind wins over a request: the mixer is emptied and refilled.
                    m.d.comb += self.rewinds.ready.eq(1)
                    m.d.sync += [target.eq(self.rewinds.p.position + 1), consumed.eq(self.rewinds.p.position),
                                 rewind_step.eq(0), phase.eq(_Phase.REWIND), *mixer.flush()]
                with m.Elif(mixer.raw_valid & self.requests.valid & output_free):
                    # A bound whose mask is not cached waits two cycles; the raw word waits too.
                    with m.If(known & fits):
                        m.d.comb += [mixer.raw_used.eq(1), self.requests.ready.eq(1)]
                        m.d.sync += [draw_valid.eq(1), draw.value.eq(candidate), draw.position.eq(consumed + 1)]
                    with m.Elif(self.requests.p.bound == 0):
                        m.d.comb += [mixer.raw_used.eq(1), self.requests.ready.eq(1)]
                        m.d.sync += [draw_valid.eq(1), draw.value.eq(0), draw.position.eq(consumed + 1),
                                     self.bad_bound.eq(1)]
                    with m.Elif(known):
                        m.d.comb += mixer.raw_used.eq(1)          # rejected: the next raw word
                    with m.If(mixer.raw_used):
                        m.d.sync += consumed.eq(consumed + 1)

        # A start wins over everything above: the mixer and the output are emptied.
        with m.If(self.start):
            m.d.sync += [phase.eq(_Phase.DERIVE), derive_step.eq(0), derive_issued.eq(0),
                         start_seed.eq(self.seed), start_tree.eq(self.tree_index),
                         target.eq(self.position + 1), consumed.eq(self.position),
                         *mixer.flush(), draw_valid.eq(0), self.bad_bound.eq(0)]
        return m

    def _derive(self, m, mixer, phase, key, gamma, derive_step, derive_issued, start_seed, start_tree,
                rewind_step):
        """Three words pass the mixer one after another (the seed's hash, the key, gamma),
        each entering it again in the cycle it leaves; then the counter of the start's
        position is worked out as a rewind's."""
        with m.If(~derive_issued):
            m.d.comb += [mixer.input.eq(start_seed ^ SEED_SALT), mixer.input_valid.eq(1)]
            m.d.sync += derive_issued.eq(1)
        with m.If(mixer.raw_valid):
            m.d.comb += mixer.raw_used.eq(1)
            m.d.sync += derive_step.eq(derive_step + 1)
            with m.Switch(derive_step):
                with m.Case(0):                 # the seed's hash -> the key
                    m.d.comb += [mixer.input.eq(mixer.mixed ^ start_tree), mixer.input_valid.eq(1)]
                with m.Case(1):                 # the key -> gamma
                    m.d.comb += [mixer.input.eq(mixer.mixed ^ GAMMA_SALT), mixer.input_valid.eq(1)]
                    m.d.sync += key.eq(mixer.mixed)
                with m.Case(2):                 # gamma; the counter of the start's position
                    # is worked out as a rewind's
                    m.d.sync += [gamma.eq(mixer.mixed | 1), rewind_step.eq(0), phase.eq(_Phase.REWIND)]


def _variable_partials(word, factor):
    """``word * factor mod 2**32`` (both signals) as 16 x 16 partial products, a
    ``hw.rng._PARTIALS`` value as ``hw.rng._partials`` gives for a constant factor."""
    low, high = word[:16], word[16:]
    return Cat(low * factor[:16], (low * factor[16:])[:16], (high * factor[:16])[:16])


class _Mixer:
    """MurmurHash3's finaliser as :class:`hw.rng.TreeRandom` pipelines it: the first
    xor-shift, then each multiplication by a constant in two stages (16 x 16 partial
    products, then their sum), moving as a whole unless its output waits to be used."""

    def __init__(self, m):
        self.input, self.input_valid = Signal(WORD_BITS, name="mixer_input"), Signal(name="mixer_input_valid")
        self.raw_used, self.advance = Signal(name="raw_used"), Signal(name="mixer_advance")
        self.stages = [_MixerStage("shift"), _MixerStage("product1", partial=True), _MixerStage("sum1"),
                       _MixerStage("product2", partial=True), _MixerStage("sum2")]
        assert len(self.stages) == MIXER_STAGES
        first, s = self.input ^ (self.input >> 16), [stage.word for stage in self.stages]
        nexts = [first, _partials(s[0], MIX_MULTIPLIER_1), _sum(s[1]),
                 _partials(s[2] ^ (s[2] >> 13), MIX_MULTIPLIER_2), _sum(s[3])]
        self.mixed = Signal(WORD_BITS, name="mixed")
        self.raw_valid = self.stages[-1].valid
        m.d.comb += [self.mixed.eq(s[4] ^ (s[4] >> 16)), self.advance.eq(~self.raw_valid | self.raw_used)]
        with m.If(self.advance):
            valid = self.input_valid
            for stage, value in zip(self.stages, nexts):
                m.d.sync += [stage.word.eq(value), stage.valid.eq(valid)]
                valid = stage.valid

    def flush(self):
        """The assignments that empty the pipeline."""
        return [stage.valid.eq(0) for stage in self.stages]
