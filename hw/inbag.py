"""Bootstrap sampler and in-bag list builder of one tree.

Per tree, the golden model draws ``n_samples`` rows with replacement from the tree's
random stream (``TreeRandom(seed, tree).integers(n_rows, n_samples)``) and keeps their
multiplicities as integer weights; without bootstrap every row has weight 1. Each feature's
in-bag list is its presorted order with the rows of weight 0 left out, each row carrying
its weight. This block does both: the weights live in one memory, and every presorted list
streamed in comes out filtered and weighted, so no tree ever sorts.

The lists come ``lanes`` at a time: one word carries the entries at the same sorted
position of up to ``lanes`` lists (one per feature lane of a processing element), each
filtered on its own (the weight memory has one read port per lane), so a PE fills
``lanes`` lists in the cycles one took.
"""

from types import SimpleNamespace

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.checks import check_integer, refuse_construction
from hw.rng import TreeRandom, draw_layout, request_layout
from hw.skid import SkidOutput

__all__ = ["InBagBuilder", "presorted_layout", "inbag_layout", "inbag_word_layout"]


def presorted_layout(code_bits, row_bits, lanes=1):
    """One word of presorted lists: the (row, code) at one sorted position of ``lanes``
    lists (ascending codes in each), ``last`` on the final position."""
    entry = data.StructLayout({"row": row_bits, "code": code_bits})
    return data.StructLayout({"entries": data.ArrayLayout(entry, lanes), "last": 1})


def inbag_layout(code_bits, row_bits, weight_bits):
    """One entry of an in-bag list: an in-bag row of a presorted list with its weight,
    ``last`` on the list's final in-bag row."""
    return data.StructLayout({"row": row_bits, "code": code_bits, "weight": weight_bits, "last": 1})


def inbag_word_layout(code_bits, row_bits, weight_bits, lanes=1):
    """One word of in-bag lists: per lane an entry, valid where its ``present`` bit is set."""
    return data.StructLayout({"entries": data.ArrayLayout(inbag_layout(code_bits, row_bits, weight_bits),
                                                          lanes),
                              "present": lanes})


#: Width of the tree generation tag kept with every weight.
GENERATION_BITS = 8


def _tagged_layout(weight_bits):
    """One word of the weight memory: a weight and the generation of the tree that wrote it."""
    return data.StructLayout({"generation": GENERATION_BITS, "weight": weight_bits})


class _Phase(enum.Enum, shape=3):
    IDLE = 0
    CLEAR_WEIGHTS = 1       # every row's tag to 0: after a reset and once per 255 trees
    DRAW_BOOTSTRAP = 2      # n_samples draws, each adding 1 to its row's weight
    FILTER_LISTS = 3        # presorted lists in, in-bag lists out, until the next start
    CHECK = 4               # the cycle after a start: its registered verdict decides


class InBagBuilder(wiring.Component):
    """Draw a tree's bootstrap weights, then filter presorted lists to the in-bag rows.

    On ``start``: the configuration is registered with its check, and the cycle after it
    decides (``bad_config`` and nothing else happens when it is out of range, but for the
    generator's start: no compare of the inputs reaches it); ``n_samples`` rows are drawn
    (about 1.4 cycles per draw, one per cycle for a power-of-two ``n_rows``) and counted;
    then ``weights_ready`` rises and every word on ``presorted`` (``lanes`` lists side by side)
    comes out on ``inbag``, one word per cycle, in the same order: per lane, the entry is
    ``present`` if the lane is in ``lane_mask`` (sampled with the word) and its row is in
    the bag; a word with no entry present is dropped. ``last`` marks the final in-bag row
    of each lane's list (the number of distinct in-bag rows is counted while drawing).

    No tree clears the weights: each weight is stored with the 8-bit *generation* of the
    tree that wrote it, and a weight of another generation reads as 0. Only the first tree
    after power-up and every 255th tree after it clear the tags of all ``max_rows`` rows
    (one per cycle) before drawing. The generation survives a reset (like the memory it
    tags), so a reset (a start while busy, a new forest) costs no clearing pass: the
    tags a reset leaves behind are all of past generations. Without bootstrap every row
    has weight 1 and the weight memory is not used at all.

    Parameters
    ----------
    max_rows : int
        Capacity of the weight memory, in rows (2 to 2**20).
    max_samples : int
        Largest bootstrap size (1 to 2**20).
    code_bits : int
        Width of the codes passed through (1 to 32).
    tree_index_bits : int
        Width of the tree index (1 to 32).
    draw_bound_bits : int or None
        Width of the generator's bounds; ``None`` for what the bootstrap needs
        (``row_bits + 1``). A processing element that also draws features passes more.
    lanes : int
        Lists filtered side by side (1 to 64): read ports on the weight memory.

    Members
    -------
    seed, tree_index, n_rows, n_samples, bootstrap : In
        The tree's configuration, sampled on ``start`` and held until the next one.
    start : In(1)
        Begin a new tree.
    presorted : In(stream.Signature(presorted_layout(code_bits, row_bits, lanes)))
    lane_mask : In(lanes)
        The lanes of the word on ``presorted`` that carry a list (the others are ignored).
    inbag : Out(stream.Signature(inbag_word_layout(code_bits, row_bits, weight_bits, lanes)))
    filtering : Out(1)
        A word taken from ``presorted`` has not yet gone out on ``inbag`` (or been dropped).
    weights_ready : Out(1)
        The bootstrap is drawn; lists can flow. Low in the cycle of a ``start`` (the last
        tree's weights and ``inbag_rows`` are still there then).
    inbag_rows : Out(row_bits + 1)
        Number of distinct in-bag rows (valid with ``weights_ready``).
    bad_config : Out(1)
        From the cycle after it: the last ``start`` had n_rows outside [1, max_rows] or (with bootstrap) n_samples
        outside [1, max_samples].
    draw_requests : In(stream.Signature(request_layout(draw_bound_bits)))
    draws : Out(stream.Signature(draw_layout(draw_bound_bits)))
        Further draws from the same tree stream once ``weights_ready`` is high: the
        golden model draws the node features right after the bootstrap, from the same
        generator (``sw.methods.forest.model.NodeFeatureDrawer``). The stream is started on every tree,
        with or without bootstrap.
    drawn, drawn_row : Out
        A pulse for every bootstrap draw as it is counted, with the row drawn (a PE keeps
        small bootstraps itself instead of filtering whole lists).
    """

    def __init__(self, *, max_rows=4096, max_samples=4096, code_bits=16, tree_index_bits=16,
                 draw_bound_bits=None, lanes=1):
        try:
            check_integer("lanes", lanes, 1, 64)
            check_integer("max_rows", max_rows, 2, 1 << 20)
            check_integer("max_samples", max_samples, 1, 1 << 20)
            check_integer("code_bits", code_bits, 1, 32)
            check_integer("tree_index_bits", tree_index_bits, 1, 32)
            row_bits = (max_rows - 1).bit_length()
            if draw_bound_bits is None:
                draw_bound_bits = row_bits + 1
            check_integer("draw_bound_bits", draw_bound_bits, row_bits + 1, 32)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        self.draw_bound_bits = draw_bound_bits
        self.lanes = lanes
        self.max_rows = max_rows
        self.max_samples = max_samples
        self.code_bits = code_bits
        self.tree_index_bits = tree_index_bits
        self.row_bits = (max_rows - 1).bit_length()
        self.weight_bits = max_samples.bit_length()
        super().__init__({
            "seed": In(32),
            "tree_index": In(tree_index_bits),
            "n_rows": In(self.row_bits + 1),
            "n_samples": In(self.weight_bits),
            "bootstrap": In(1),
            "start": In(1),
            "presorted": In(stream.Signature(presorted_layout(code_bits, self.row_bits, lanes))),
            "lane_mask": In(lanes),
            "inbag": Out(stream.Signature(inbag_word_layout(code_bits, self.row_bits, self.weight_bits,
                                                            lanes))),
            "filtering": Out(1),
            "weights_ready": Out(1),
            "inbag_rows": Out(self.row_bits + 1),
            "bad_config": Out(1),
            "draw_requests": In(stream.Signature(request_layout(draw_bound_bits))),
            "draws": Out(stream.Signature(draw_layout(draw_bound_bits))),
            "drawn": Out(1),
            "drawn_row": Out(self.row_bits),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.random = random = TreeRandom(bound_bits=self.draw_bound_bits,
                                                  tree_index_bits=self.tree_index_bits)
        tagged = _tagged_layout(self.weight_bits)
        m.submodules.weights = weights = Memory(shape=tagged, depth=self.max_rows, init=[])
        weight_write = weights.write_port()
        # Transparent: a row drawn twice in a row sees its first increment. The other lanes'
        # ports only serve the list filter.
        weight_read = weights.read_port(transparent_for=(weight_write,))
        lane_reads = [weight_read] + [weights.read_port() for _ in range(1, self.lanes)]

        n_rows = Signal.like(self.n_rows)
        n_samples = Signal.like(self.n_samples)
        bootstrap = Signal()
        # 0 at power-up: the tags must be cleared. Not reset: the memory keeps its tags too.
        generation = Signal(GENERATION_BITS, reset_less=True)

        index = Signal(self.row_bits + 1)                           # rows cleared
        draws_counted = Signal(self.weight_bits + 1)
        # draws_counted < n_samples and draws_counted + 1 < n_samples, as registers: a
        # request's valid is a select of the two by the draw out now, no adder or compare
        # after the generator's output register (in a 2-PE trainer that chain ran into the
        # generator's pipeline enable, 91.5 MHz).
        more_now = Signal(name="more_now")
        more_next = Signal(name="more_next")
        # The bootstrap's read-modify-write pipeline: a drawn row's weight is read (pending),
        # registered as read (fetched), then written back plus one. The read port is
        # transparent, so the read sees the write of its own cycle; the write of the cycle
        # after it (the row drawn just before) is forwarded from ``written_next`` when
        # ``forward`` says it is the same row.
        pending = Signal()                                          # a draw read last cycle
        pending_row = Signal(self.row_bits)
        fetched = Signal()
        fetched_row = Signal(self.row_bits)
        fetched_weight = Signal(tagged)
        written_next = Signal(self.weight_bits)                     # the weight written last cycle + 1
        forward = Signal()
        emitted = [Signal(self.row_bits + 1, name=f"emitted{lane}") for lane in range(self.lanes)]
        m.d.sync += [pending.eq(0), fetched.eq(0)]

        # The phase is FILTER_LISTS: a register of its own, so that one LUT level selects the
        # generator's bound (its rejection rule is the longest path through the generator).
        serving = Signal()
        m.d.comb += [random.seed.eq(self.seed), random.tree_index.eq(self.tree_index),
                     random.requests.p.bound.eq(Mux(serving, self.draw_requests.p.bound, n_rows))]
        # After the bootstrap the generator serves the outside (node feature draws).
        m.d.comb += self.draws.p.eq(random.draws.p)

        f = self._filter_pipeline(m)

        phase = Signal(_Phase)
        with m.Switch(phase):
            with m.Case(_Phase.CLEAR_WEIGHTS):
                m.d.comb += [weight_write.addr.eq(index), weight_write.data.eq(0),
                             weight_write.en.eq(1)]
                m.d.sync += index.eq(index + 1)
                with m.If(index == self.max_rows - 1):
                    # Only a completed clear starts the generations again: a start that
                    # interrupts the clear finds generation 0 (or 255) and clears again.
                    m.d.sync += [index.eq(0), generation.eq(1), phase.eq(_Phase.DRAW_BOOTSTRAP)]

            with m.Case(_Phase.DRAW_BOOTSTRAP):
                # Each request taken is a draw out in the next cycle: the requests taken so
                # far are the draws counted plus the one out now. (Counting the requests
                # themselves put the generator's ready on a counter's enable.)
                m.d.comb += [random.requests.valid.eq(Mux(random.draws.valid, more_next, more_now)),
                             random.draws.ready.eq(1)]
                with m.If(random.draws.valid):
                    m.d.comb += weight_read.addr.eq(random.draws.p.value)
                    m.d.sync += [pending.eq(1), pending_row.eq(random.draws.p.value),
                                 draws_counted.eq(draws_counted + 1), more_now.eq(more_next),
                                 more_next.eq(draws_counted + 2 < n_samples)]
                with m.If(pending):
                    m.d.comb += [self.drawn.eq(1), self.drawn_row.eq(pending_row)]
                    # Whether the row fetched now is the row written next cycle: compared a
                    # cycle ahead, so that the write-back's data path starts at a register.
                    m.d.sync += [fetched.eq(1), fetched_row.eq(pending_row),
                                 fetched_weight.eq(weight_read.data),
                                 forward.eq(fetched & (fetched_row == pending_row))]
                with m.If(fetched):
                    # The weight written: the tag test and the increment side by side, then
                    # one select (no carry chain after the tag test).
                    mine = fetched_weight.generation == generation
                    plus = Signal(self.weight_bits, name="fetched_plus")
                    new = Signal(self.weight_bits, name="new_weight")
                    m.d.comb += [plus.eq(fetched_weight.weight + 1),
                                 new.eq(Mux(forward, written_next, Mux(mine, plus, 1)))]
                    m.d.comb += [weight_write.addr.eq(fetched_row),
                                 weight_write.data.generation.eq(generation),
                                 weight_write.data.weight.eq(new), weight_write.en.eq(1)]
                    m.d.sync += written_next.eq(new + 1)
                    with m.If(~forward & (~mine | (fetched_weight.weight == 0))):   # a new row
                        m.d.sync += self.inbag_rows.eq(self.inbag_rows + 1)
                with m.If((draws_counted == n_samples) & ~pending & ~fetched):
                    m.d.sync += [phase.eq(_Phase.FILTER_LISTS), serving.eq(1)]

            with m.Case(_Phase.FILTER_LISTS):
                m.d.comb += [
                    self.weights_ready.eq(~self.start),
                    random.requests.valid.eq(self.draw_requests.valid),
                    self.draw_requests.ready.eq(random.requests.ready),
                    self.draws.valid.eq(random.draws.valid),
                    random.draws.ready.eq(self.draws.ready),
                ]
                self._filter_lists(m, f, lane_reads, generation, bootstrap, emitted)

        # A start (re)begins a tree from any state: the configuration and its check are
        # registered, and the check's verdict decides in the cycle after (``CHECK``), so
        # the compares of the inputs (in a PE, selected between the running and the queued
        # tree's) end at a register, not at the generator's start (a 2-PE trainer placed
        # at 96.0 MHz on that path). The generator starts with the start itself, whatever
        # the verdict (a refused tree's stream is derived and never drawn from), so its
        # draws come when they did without the check's cycle.
        config_bad = ((self.n_rows == 0) | (self.n_rows > self.max_rows) |
                      (self.bootstrap & ((self.n_samples == 0) | (self.n_samples > self.max_samples))))
        start_bad = Signal()
        with m.If(phase == _Phase.CHECK):
            m.d.sync += self.bad_config.eq(start_bad)
            with m.If(start_bad):
                m.d.sync += phase.eq(_Phase.IDLE)
            with m.Else():
                m.d.sync += [more_now.eq(n_samples != 0), more_next.eq(n_samples > 1)]
                with m.If(~bootstrap):
                    m.d.sync += [self.inbag_rows.eq(n_rows), phase.eq(_Phase.FILTER_LISTS),
                                 serving.eq(1)]
                with m.Elif((generation == 0) | (generation == (1 << GENERATION_BITS) - 1)):
                    m.d.sync += phase.eq(_Phase.CLEAR_WEIGHTS)
                with m.Else():
                    m.d.sync += [generation.eq(generation + 1), phase.eq(_Phase.DRAW_BOOTSTRAP)]
        m.d.comb += random.start.eq(self.start)
        with m.If(self.start):
            m.d.sync += [self.bad_config.eq(0), f.stage1_valid.eq(0), f.stage2_valid.eq(0),
                         *f.output.clear(),
                         [count.eq(0) for count in emitted], draws_counted.eq(0), self.inbag_rows.eq(0), index.eq(0)]
            # (A draw of the tree before still in the pipeline is dropped.)
            m.d.sync += [serving.eq(0), pending.eq(0), fetched.eq(0),
                         n_rows.eq(self.n_rows), n_samples.eq(self.n_samples),
                         bootstrap.eq(self.bootstrap), start_bad.eq(config_bad),
                         phase.eq(_Phase.CHECK)]
        return m

    def _filter_pipeline(self, m):
        """The list filter's registers (docs/gateware.md): stage 1 holds the word whose
        weights are being read (the read ports only move when it does), stage 2 the word
        with its weights and keep bits registered, then the output register and a skid
        register behind it. Every read enable and ``presorted.ready`` is a function of
        these registers only, never of a weight read or of ``inbag.ready``."""
        f = SimpleNamespace()
        word_layout = presorted_layout(self.code_bits, self.row_bits, self.lanes)
        out_layout = inbag_word_layout(self.code_bits, self.row_bits, self.weight_bits, self.lanes)
        f.stage1_valid = Signal()
        f.stage1 = Signal(word_layout)
        f.stage1_mask = Signal(self.lanes)
        f.stage2_valid = Signal()
        f.stage2 = Signal(word_layout)
        # Per lane, the tagged weight as read (straight from the read port: a block RAM's
        # output goes into a register through no logic), and from it whether its tag is
        # this tree's and whether it is not 0.
        f.stage2_weights = [Signal(_tagged_layout(self.weight_bits), name=f"stage2_weight{lane}")
                            for lane in range(self.lanes)]
        f.stage2_this_tree = Signal(self.lanes)
        f.stage2_nonzero = Signal(self.lanes)
        f.stage2_mask = Signal(self.lanes)
        f.stage2_keep = Signal(self.lanes)
        f.pushed = Signal(out_layout)                     # stage 2's word, formatted
        f.output = SkidOutput(out_layout, name="output")
        m.d.comb += [self.inbag.valid.eq(f.output.valid), self.inbag.payload.eq(f.output.payload),
                     self.filtering.eq(f.stage1_valid | f.stage2_valid | f.output.valid
                                       | f.output.skid_valid)]
        return f

    def _filter_lists(self, m, f, lane_reads, generation, bootstrap, emitted):
        """The filter in phase FILTER_LISTS. The weights read for the word in stage 1 go
        into stage 2 as read; the tag compare, the non-zero test, whether an entry is kept
        and its weight (1 without bootstrap) are worked out from stage 2's registers."""
        stage2_moves = f.stage2_valid & ~f.output.skid_valid
        stage1_moves = f.stage1_valid & (~f.stage2_valid | stage2_moves)
        advance = ~f.stage1_valid | stage1_moves
        m.d.comb += self.presorted.ready.eq(advance)
        for lane, port in enumerate(lane_reads):
            m.d.comb += [port.addr.eq(self.presorted.p.entries[lane].row), port.en.eq(advance)]
        with m.If(advance):
            m.d.sync += [f.stage1_valid.eq(self.presorted.valid), f.stage1.eq(self.presorted.p),
                         f.stage1_mask.eq(self.lane_mask)]
        with m.If(stage1_moves):
            m.d.sync += [f.stage2_valid.eq(1), f.stage2.eq(f.stage1), f.stage2_mask.eq(f.stage1_mask)]
            m.d.sync += [f.stage2_weights[lane].eq(port.data) for lane, port in enumerate(lane_reads)]
        with m.Elif(stage2_moves):
            m.d.sync += f.stage2_valid.eq(0)
        for lane, tagged in enumerate(f.stage2_weights):
            m.d.comb += [f.stage2_this_tree[lane].eq(tagged.generation == generation),
                         f.stage2_nonzero[lane].eq(tagged.weight != 0)]
        # A word with no entry present is dropped.
        m.d.comb += [f.stage2_keep.eq(f.stage2_mask & (Mux(bootstrap, f.stage2_this_tree & f.stage2_nonzero,
                                                           (1 << self.lanes) - 1))),
                     f.pushed.present.eq(f.stage2_keep)]
        # Stage 2's word goes out (moves) when it has an entry present.
        push = f.output.feed(m, f.stage2_valid & f.stage2_keep.any(), f.pushed, self.inbag.ready)
        for lane in range(self.lanes):
            is_last = emitted[lane] == self.inbag_rows - 1
            entry = f.pushed.entries[lane]
            m.d.comb += [entry.row.eq(f.stage2.entries[lane].row), entry.code.eq(f.stage2.entries[lane].code),
                         entry.weight.eq(Mux(bootstrap, Mux(f.stage2_this_tree[lane], f.stage2_weights[lane].weight, 0), 1)),
                         entry.last.eq(is_last)]
            with m.If(push & f.stage2_keep[lane]):
                m.d.sync += emitted[lane].eq(Mux(is_last, 0, emitted[lane] + 1))
