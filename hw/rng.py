"""Per-tree pseudo-random generator: the gateware twin of ``sw.methods.forest.rng``.

The numbers, their order and the rejection rule are specified in ``sw/methods/forest/rng.py``; this
module must agree with it bit for bit (checked in Verilator by ``sim/tb_rng.py``).
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from hw.checks import check_integer, refuse_construction
from sw.methods.forest.rng import GAMMA_SALT, MIX_MULTIPLIER_1, MIX_MULTIPLIER_2, SEED_SALT, WORD_BITS

__all__ = ["TreeRandom", "request_layout", "draw_layout", "MIXER_STAGES"]

#: Register stages of the mixer: the first xor-shift, then two per constant multiplication.
MIXER_STAGES = 5


def request_layout(bound_bits):
    """Payload of a draw request: the exclusive upper bound of the number wanted."""
    return data.StructLayout({"bound": bound_bits})


def draw_layout(bound_bits):
    """Payload of a draw: an integer uniform in [0, bound)."""
    return data.StructLayout({"value": bound_bits})


class _Phase(enum.Enum, shape=2):
    IDLE = 0            # no stream selected since reset
    DERIVE = 1          # hashing (seed, tree index) into the stream's key and increment
    RUN = 2             # raw words flow through the mixer


class _MixerStage:
    """One register stage of the mixer: a word (or three partial products) and its valid."""

    def __init__(self, name, partial=False):
        self.word = Signal(_PARTIALS if partial else WORD_BITS, name=f"mixer_{name}")
        self.valid = Signal(name=f"mixer_{name}_valid")


#: Three partial products of a 32-bit word and a constant, modulo 2**32: low x low (32 bits),
#: and the two cross products' low halves (they only reach the high half).
_PARTIALS = data.StructLayout({"low": WORD_BITS, "cross1": 16, "cross2": 16})


def _partials(word, constant):
    """``word * constant mod 2**32`` as 16x16 partial products (a :data:`_PARTIALS` value)."""
    low, high = word[:16], word[16:]
    return Cat(low * (constant & 0xFFFF), (low * (constant >> 16))[:16],
               (high * (constant & 0xFFFF))[:16])


def _sum(partials):
    """The product from its partial products."""
    return (partials.low + ((partials.cross1 + partials.cross2) << 16))[:WORD_BITS]


class TreeRandom(wiring.Component):
    """Uniform integers in [0, bound) from the stream of one tree, by rejection.

    A pulse on ``start`` selects the stream of (``seed``, ``tree_index``) and restarts it
    from its first word, discarding anything in flight. The key and the increment are
    derived by passing three words through the mixer, each entering it again in the
    cycle it leaves (about 15 cycles to the first raw word; 10 when the seed is the previous
    start's, whose hash is kept); then one raw word
    per cycle leaves the five-stage mixer pipeline (each constant multiplication takes two
    stages: 16x16 partial products, then their sum). Each request on ``requests`` yields one
    draw on ``draws``; a raw word whose masked value is not below ``bound`` is dropped and
    the next one is tried, exactly as ``sw.methods.forest.rng.TreeRandom.integer``.

    Throughput: one draw per accepted raw word, i.e. at least one draw every two cycles on
    average for any bound, one per cycle for powers of two. Latency from a request to
    its draw: 1 cycle when a raw word is waiting and the bound is the previous request's
    or one less (the masks of both are kept in registers), one more for any other bound.

    Parameters
    ----------
    bound_bits : int
        Width of ``bound`` and of the drawn values (1 to 32). Bounds up to
        ``2**bound_bits - 1`` are accepted.
    tree_index_bits : int
        Width of ``tree_index`` (1 to 32).

    Members
    -------
    seed : In(32)
        Forest seed, sampled on ``start``.
    tree_index : In(tree_index_bits)
        Tree index, sampled on ``start``.
    start : In(1)
        Restart the generator on the stream of (seed, tree_index).
    requests : In(stream.Signature(request_layout(bound_bits)))
        Draw requests.
    draws : Out(stream.Signature(draw_layout(bound_bits)))
        One draw per request, in order.
    running : Out(1)
        High once the stream's key is derived (draws can flow).
    bad_bound : Out(1)
        Sticky until ``start``: a request had bound 0. It is answered with value 0 and
        one raw word is used, so a consumer never hangs.
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
        super().__init__({
            "seed": In(WORD_BITS),
            "tree_index": In(tree_index_bits),
            "start": In(1),
            "requests": In(stream.Signature(request_layout(bound_bits))),
            "draws": Out(stream.Signature(draw_layout(bound_bits))),
            "running": Out(1),
            "bad_bound": Out(1),
        })

    def elaborate(self, platform):
        m = Module()

        phase = Signal(_Phase)
        m.d.comb += self.running.eq(phase == _Phase.RUN)

        # Mixer pipeline (MurmurHash3 fmix32): the first xor-shift, then each multiplication
        # by a constant in two stages (three 16x16 partial products, then their sum).
        mixer_input = Signal(WORD_BITS)
        mixer_input_valid = Signal()
        shifted = Signal(WORD_BITS)
        m.d.comb += shifted.eq(mixer_input ^ (mixer_input >> 16))
        stages = [_MixerStage("shift"), _MixerStage("product1", partial=True),
                  _MixerStage("sum1"), _MixerStage("product2", partial=True),
                  _MixerStage("sum2")]
        assert len(stages) == MIXER_STAGES
        nexts = [shifted, _partials(stages[0].word, MIX_MULTIPLIER_1), _sum(stages[1].word),
                 _partials(stages[2].word ^ (stages[2].word >> 13), MIX_MULTIPLIER_2),
                 _sum(stages[3].word)]
        last = stages[-1]
        mixed = Signal(WORD_BITS)
        m.d.comb += mixed.eq(last.word ^ (last.word >> 16))
        raw_valid = last.valid
        # The pipeline moves as a whole unless its output waits to be used.
        raw_used = Signal()
        advance = Signal()
        m.d.comb += advance.eq(~raw_valid | raw_used)
        with m.If(advance):
            valid_in = mixer_input_valid
            for stage, value in zip(stages, nexts):
                m.d.sync += [stage.word.eq(value), stage.valid.eq(valid_in)]
                valid_in = stage.valid

        # Stream state: counter = key + (i + 1) * gamma for the next raw word i to issue.
        key = Signal(WORD_BITS)
        gamma = Signal(WORD_BITS)
        counter = Signal(WORD_BITS)
        derive_step = Signal(2)     # which derivation word is in the pipeline
        seed_hash = Signal(WORD_BITS)       # the first derivation word's result ...
        hashed_seed = Signal(WORD_BITS)     # ... for this seed
        seed_hashed = Signal()
        start_seed = Signal(WORD_BITS)      # the seed sampled on start
        derive_issued = Signal()

        # Draw output register and the rejection rule on the oldest raw word.
        draw_valid = Signal()
        draw_value = Signal(self.bound_bits)
        m.d.comb += [self.draws.valid.eq(draw_valid), self.draws.p.value.eq(draw_value)]
        bound = self.requests.p.bound
        known, candidate, fits = self._cached_masks(m, bound, mixed)
        output_free = ~draw_valid | self.draws.ready
        with m.If(self.draws.ready):
            m.d.sync += draw_valid.eq(0)

        with m.Switch(phase):
            with m.Case(_Phase.DERIVE):
                # Three words pass the mixer one after another: seed hash, key, gamma.
                m.d.comb += mixer_input_valid.eq(~derive_issued)
                with m.Switch(derive_step):
                    with m.Case(0):
                        m.d.comb += mixer_input.eq(start_seed ^ SEED_SALT)
                    with m.Case(1):
                        m.d.comb += mixer_input.eq(key ^ self.tree_index)
                    with m.Case(2):
                        m.d.comb += mixer_input.eq(key ^ GAMMA_SALT)
                with m.If(~derive_issued):
                    m.d.sync += derive_issued.eq(1)
                # A result enters the mixer again in the cycle it leaves it: the next word
                # is computed from ``mixed`` itself (a few gates before the first register).
                with m.If(raw_valid):
                    m.d.comb += [raw_used.eq(1), mixer_input_valid.eq(1)]
                    m.d.sync += derive_step.eq(derive_step + 1)
                    with m.Switch(derive_step):
                        with m.Case(0):
                            m.d.comb += mixer_input.eq(mixed ^ self.tree_index)
                            m.d.sync += [key.eq(mixed), seed_hash.eq(mixed),
                                         hashed_seed.eq(start_seed), seed_hashed.eq(1)]
                        with m.Case(1):
                            m.d.comb += mixer_input.eq(mixed ^ GAMMA_SALT)
                            m.d.sync += key.eq(mixed)
                        with m.Case(2):
                            # The stream's first word, key + gamma, enters now.
                            m.d.comb += mixer_input.eq(key + (mixed | 1))
                            m.d.sync += [
                                gamma.eq(mixed | 1),
                                counter.eq(key + ((mixed | 1) << 1)),
                                phase.eq(_Phase.RUN),
                            ]
            with m.Case(_Phase.RUN):
                m.d.comb += [mixer_input.eq(counter), mixer_input_valid.eq(1)]
                with m.If(advance):
                    m.d.sync += counter.eq(counter + gamma)
                with m.If(raw_valid & self.requests.valid & output_free):
                    # A bound whose mask is not cached waits two cycles; the raw word waits too.
                    with m.If(known & fits):
                        m.d.comb += [raw_used.eq(1), self.requests.ready.eq(1)]
                        m.d.sync += [draw_valid.eq(1), draw_value.eq(candidate)]
                    with m.Elif(bound == 0):
                        m.d.comb += [raw_used.eq(1), self.requests.ready.eq(1)]
                        m.d.sync += [draw_valid.eq(1), draw_value.eq(0), self.bad_bound.eq(1)]
                    with m.Elif(known):
                        m.d.comb += raw_used.eq(1)          # rejected: the next raw word

        # A start wins over everything above: flush the pipeline and the output. The seed's
        # hash (the first derivation word) is the same for every tree of a forest: kept, it
        # is not derived again while the seed stays the same.
        with m.If(self.start):
            m.d.sync += [
                phase.eq(_Phase.DERIVE), derive_step.eq(0), derive_issued.eq(0),
                start_seed.eq(self.seed), *[stage.valid.eq(0) for stage in stages], draw_valid.eq(0), self.bad_bound.eq(0),
            ]
            with m.If(seed_hashed & (hashed_seed == self.seed)):
                m.d.sync += [derive_step.eq(1), key.eq(seed_hash)]
        return m

    def _cached_masks(self, m, bound, raw):
        """The rejection mask of ``bound`` (``bound - 1`` with every bit below its highest
        set) from registers: the masks of the last request's bound (``cached``) and of one
        less (``cached_less``) are kept, so a run of equal bounds (a bootstrap's ``n_rows``)
        or of bounds falling by one (a node's feature draws, ``n_features - position``) is
        decided without a subtract and a smear of the request. A bound one less shifts the
        cache down, the new lower mask worked out from ``cached_less`` (a register); any
        other bound is registered in its cycle (``pending``), with or without a request, and
        its masks are worked out from that register in the next, so a request with a bound
        not shown before waits two cycles, and no request path runs into the subtract and
        the smear. Returns (``known``, the candidate ``raw & mask``
        and whether it is below ``bound``), neither compare on the request's path."""
        width = self.bound_bits
        cached, cached_less = Signal(width), Signal(width, init=(1 << width) - 1)
        mask_same = Signal(width, init=_smeared((1 << width) - 1, width))
        mask_less = Signal(width, init=_smeared((1 << width) - 2, width))
        pending, pending_valid = Signal(width, name="pending"), Signal(name="pending_valid")
        same, less = Signal(name="same"), Signal(name="less")
        m.d.comb += [same.eq(bound == cached), less.eq(bound == cached_less)]
        m.d.sync += pending_valid.eq(0)
        with m.If(self.requests.valid & less & ~same):
            m.d.sync += [cached.eq(cached_less), cached_less.eq(cached_less - 1),
                         mask_same.eq(mask_less), mask_less.eq(_smeared(cached_less - 2, width))]
        with m.Elif(~less & ~same):
            # Also while no request is made: a bound shown before its request (the
            # bootstrap's n_rows while the tree's key is derived, a node's n_features
            # while the scans before run) has its masks ready when the request comes.
            m.d.sync += [pending.eq(bound), pending_valid.eq(1)]
        with m.If(pending_valid):
            m.d.sync += [cached.eq(pending), cached_less.eq(pending - 1),
                         mask_same.eq(_smeared(pending - 1, width)),
                         mask_less.eq(_smeared(pending - 2, width))]
        # The candidate and whether it is below the bound, for either cached bound, from
        # registers only (the raw word, the masks, the bounds); the request selects.
        candidate_same, candidate_less = Signal(width), Signal(width)
        m.d.comb += [candidate_same.eq(raw & mask_same), candidate_less.eq(raw & mask_less)]
        candidate, fits = Signal(width), Signal()
        m.d.comb += [candidate.eq(Mux(same, candidate_same, candidate_less)),
                     fits.eq(Mux(same, candidate_same < cached, candidate_less < cached_less))]
        return same | less, candidate, fits


def _smeared(value, width):
    """``value`` (an integer or an expression, taken modulo ``2**width``) with every bit
    below its highest set bit set: the rejection mask of ``bound`` is ``_smeared(bound - 1)``."""
    if isinstance(value, int):
        value %= 1 << width
        return (1 << value.bit_length()) - 1
    smeared = value[:width]
    for shift in (1, 2, 4, 8, 16):
        smeared = smeared | (smeared >> shift)
    return smeared
