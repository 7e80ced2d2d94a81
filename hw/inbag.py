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

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.checks import check_integer, refuse_construction
from hw.rng import TreeRandom, draw_layout, request_layout

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


class _Phase(enum.Enum, shape=2):
    IDLE = 0
    CLEAR_WEIGHTS = 1       # every row's tag to 0: after a reset and once per 255 trees
    DRAW_BOOTSTRAP = 2      # n_samples draws, each adding 1 to its row's weight
    FILTER_LISTS = 3        # presorted lists in, in-bag lists out, until the next start


class InBagBuilder(wiring.Component):
    """Draw a tree's bootstrap weights, then filter presorted lists to the in-bag rows.

    On ``start``: the configuration is checked (``bad_config`` and nothing else happens
    when it is out of range); ``n_samples`` rows are drawn (about 1.4 cycles per draw, one
    per cycle for a power-of-two ``n_rows``) and counted; then
    ``weights_ready`` rises and every word on ``presorted`` (``lanes`` lists side by side)
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
        The last ``start`` had n_rows outside [1, max_rows] or (with bootstrap) n_samples
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
        tagged = data.StructLayout({"generation": GENERATION_BITS, "weight": self.weight_bits})
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

        def this_tree(port):
            """The weight read on ``port`` if this tree wrote it, else 0."""
            return Mux(port.data.generation == generation, port.data.weight, 0)

        current_weight = Signal(self.weight_bits)   # the read weight if it is this tree's
        m.d.comb += current_weight.eq(this_tree(weight_read))
        index = Signal(max(self.row_bits, self.weight_bits) + 1)    # rows cleared / draws asked
        draws_counted = Signal(self.weight_bits + 1)
        pending = Signal()                                          # a draw read last cycle
        pending_row = Signal(self.row_bits)
        emitted = [Signal(self.row_bits + 1, name=f"emitted{lane}") for lane in range(self.lanes)]
        m.d.sync += pending.eq(0)

        m.d.comb += [random.seed.eq(self.seed), random.tree_index.eq(self.tree_index),
                     random.requests.p.bound.eq(n_rows)]
        # After the bootstrap the generator serves the outside (node feature draws).
        m.d.comb += self.draws.p.eq(random.draws.p)

        # Filtering pipeline: stage 1 holds the word whose weights are being read; the read
        # ports only move when stage 1 does, so the weights hold still under back-pressure.
        stage1_valid = Signal()
        stage1 = Signal(presorted_layout(self.code_bits, self.row_bits, self.lanes))
        stage1_mask = Signal(self.lanes)
        output_valid = Signal()
        output = Signal(inbag_word_layout(self.code_bits, self.row_bits, self.weight_bits, self.lanes))
        m.d.comb += [self.inbag.valid.eq(output_valid), self.inbag.payload.eq(output),
                     self.filtering.eq(stage1_valid | output_valid)]
        with m.If(self.inbag.ready):
            m.d.sync += output_valid.eq(0)

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
                m.d.comb += [random.requests.valid.eq(index < n_samples), random.draws.ready.eq(1)]
                with m.If(random.requests.valid & random.requests.ready):
                    m.d.sync += index.eq(index + 1)
                with m.If(random.draws.valid):
                    m.d.comb += weight_read.addr.eq(random.draws.p.value)
                    m.d.sync += [pending.eq(1), pending_row.eq(random.draws.p.value),
                                 draws_counted.eq(draws_counted + 1)]
                with m.If(pending):
                    m.d.comb += [self.drawn.eq(1), self.drawn_row.eq(pending_row)]
                    m.d.comb += [weight_write.addr.eq(pending_row),
                                 weight_write.data.generation.eq(generation),
                                 weight_write.data.weight.eq(current_weight + 1), weight_write.en.eq(1)]
                    with m.If(current_weight == 0):
                        m.d.sync += self.inbag_rows.eq(self.inbag_rows + 1)
                with m.If((draws_counted == n_samples) & ~pending):
                    m.d.sync += phase.eq(_Phase.FILTER_LISTS)

            with m.Case(_Phase.FILTER_LISTS):
                m.d.comb += [
                    self.weights_ready.eq(~self.start),
                    random.requests.valid.eq(self.draw_requests.valid),
                    random.requests.p.bound.eq(self.draw_requests.p.bound),
                    self.draw_requests.ready.eq(random.requests.ready),
                    self.draws.valid.eq(random.draws.valid),
                    random.draws.ready.eq(self.draws.ready),
                ]
                read = [current_weight] + [this_tree(port) for port in lane_reads[1:]]
                weights = [Mux(bootstrap, weight, 1) for weight in read]
                keep = Cat(stage1_mask[lane] & (weights[lane] != 0) for lane in range(self.lanes))
                output_free = ~output_valid | self.inbag.ready
                stage1_moves = stage1_valid & (~keep.any() | output_free)
                advance = ~stage1_valid | stage1_moves
                m.d.comb += self.presorted.ready.eq(advance)
                for lane, port in enumerate(lane_reads):
                    m.d.comb += [port.addr.eq(self.presorted.p.entries[lane].row), port.en.eq(advance)]
                with m.If(advance):
                    m.d.sync += [stage1_valid.eq(self.presorted.valid), stage1.eq(self.presorted.p),
                                 stage1_mask.eq(self.lane_mask)]
                with m.If(stage1_moves & keep.any()):
                    m.d.sync += [output_valid.eq(1), output.present.eq(keep)]
                    for lane in range(self.lanes):
                        is_last = emitted[lane] == self.inbag_rows - 1
                        entry = output.entries[lane]
                        m.d.sync += [entry.row.eq(stage1.entries[lane].row),
                                     entry.code.eq(stage1.entries[lane].code),
                                     entry.weight.eq(weights[lane]), entry.last.eq(is_last)]
                        with m.If(keep[lane]):
                            m.d.sync += emitted[lane].eq(Mux(is_last, 0, emitted[lane] + 1))

        # A start (re)begins a tree from any state, after checking the configuration.
        config_bad = ((self.n_rows == 0) | (self.n_rows > self.max_rows) |
                      (self.bootstrap & ((self.n_samples == 0) | (self.n_samples > self.max_samples))))
        with m.If(self.start):
            m.d.sync += [self.bad_config.eq(config_bad), stage1_valid.eq(0), output_valid.eq(0),
                         [count.eq(0) for count in emitted], draws_counted.eq(0), self.inbag_rows.eq(0), index.eq(0)]
            with m.If(config_bad):
                m.d.sync += phase.eq(_Phase.IDLE)
            with m.Else():
                m.d.comb += random.start.eq(1)
                m.d.sync += [n_rows.eq(self.n_rows), n_samples.eq(self.n_samples),
                             bootstrap.eq(self.bootstrap)]
                with m.If(~self.bootstrap):
                    m.d.sync += [self.inbag_rows.eq(self.n_rows), phase.eq(_Phase.FILTER_LISTS)]
                with m.Elif((generation == 0) | (generation == (1 << GENERATION_BITS) - 1)):
                    m.d.sync += phase.eq(_Phase.CLEAR_WEIGHTS)
                with m.Else():
                    m.d.sync += [generation.eq(generation + 1), phase.eq(_Phase.DRAW_BOOTSTRAP)]
        return m
