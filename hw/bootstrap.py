"""Bootstrap unit: a tree's bootstrap drawn on the chip, for the histogram PE.

Reference: ``sw.methods.forest.sampling.bootstrap_weights``: ``max_samples`` rows drawn
uniform in [0, ``n_rows``) from the tree's stream, a row's weight the times it was drawn;
without bootstrap every row once and nothing drawn. On ``start`` the unit

1. **draws** (bootstrap only): ``max_samples`` requests of bound ``n_rows`` to the
   generator, each draw adding one to its row's weight in a memory of its own (a
   read-modify-write a draw, the previous draw's new weight forwarded when it is the same
   row), counting the rows drawn for the first time;
2. **scans** rows 0 to ``n_rows - 1``, one a cycle: each row's weight goes out on
   ``weights`` (every row, so the PE's weight memory needs no clearing), each in-bag row
   on ``roots`` (``last`` on the final one: their number is known from the draws), and
   its weight is added to its label's class total (the labels are copied from the
   dataset's load, ``label_write``). The scan writes each weight back as 0, so the
   memory is clear for the next tree;
3. offers ``done``: the root's class totals, its rows (the distinct rows drawn) and the
   stream position after the last draw (0 without bootstrap).

A reset in the middle of a tree leaves weights in the memory: a register outside the
reset (``dirty``) remembers it, and the next start clears the whole memory first
(``max_rows`` cycles). Weights and totals are ``count_bits`` wide: the PE refuses a
start whose total (``max_samples``, or ``n_rows`` without bootstrap) does not fit.
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.checks import bits, check_integer, refuse_construction
from hw.rewind_rng import POSITION_BITS, positioned_draw_layout
from hw.rng import request_layout

__all__ = ["BootstrapUnit", "bootstrap_start_layout", "bootstrap_done_layout"]


def bootstrap_start_layout(row_bits, count_bits):
    """A tree's bootstrap: its rows, its draws and whether it draws at all."""
    return data.StructLayout({"n_rows": row_bits + 1, "max_samples": count_bits, "bootstrap": 1})


def bootstrap_done_layout(row_bits, classes, count_bits):
    """The bootstrap's root: class totals, in-bag rows and the stream position after it."""
    return data.StructLayout({"class_counts": data.ArrayLayout(count_bits, classes),
                              "rows": row_bits + 1, "position": POSITION_BITS})


class _Phase(enum.Enum, shape=3):
    IDLE = 0
    CLEAR = 1           # a reset left weights behind: every row written 0
    DRAW = 2
    SCAN = 3
    DONE = 4


class BootstrapUnit(wiring.Component):
    """Draws a tree's bootstrap and offers its weights, its root rows and its class totals.

    Parameters
    ----------
    max_rows : int
        Rows of the dataset (2 to 65,536).
    classes : int
        Number of classes (2 to 64).
    count_bits : int
        Width of a weight and of a class total (1 to 24).
    """

    def __init__(self, *, max_rows=4096, classes=8, count_bits=13):
        try:
            check_integer("max_rows", max_rows, 2, 1 << 16)
            check_integer("classes", classes, 2, 64)
            check_integer("count_bits", count_bits, 1, 24)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        self.max_rows, self.classes, self.count_bits = max_rows, classes, count_bits
        self.row_bits, self.label_bits = bits(max_rows - 1), bits(classes - 1)
        super().__init__({
            "label_write": In(data.StructLayout({"en": 1, "row": self.row_bits, "label": self.label_bits})),
            "start": In(stream.Signature(bootstrap_start_layout(self.row_bits, count_bits))),
            "requests": Out(stream.Signature(request_layout(self.row_bits + 1))),
            "draws": In(stream.Signature(positioned_draw_layout(self.row_bits + 1))),
            "weights": Out(stream.Signature(data.StructLayout({"row": self.row_bits, "weight": count_bits}))),
            "roots": Out(stream.Signature(data.StructLayout({"row": self.row_bits, "last": 1}))),
            "done": Out(stream.Signature(bootstrap_done_layout(self.row_bits, classes, count_bits))),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.weight_memory = weight_memory = Memory(shape=self.count_bits, depth=self.max_rows, init=[])
        m.submodules.labels = labels = Memory(shape=self.label_bits, depth=self.max_rows, init=[])
        weight_write, weight_read = weight_memory.write_port(), weight_memory.read_port()
        label_write, label_read = labels.write_port(), labels.read_port()
        m.d.comb += [label_write.addr.eq(self.label_write.row), label_write.data.eq(self.label_write.label),
                     label_write.en.eq(self.label_write.en)]

        phase = Signal(_Phase)
        config = Signal.like(self.start.payload, name="bootstrap_config")
        # (outside the reset: a reset in the middle of a tree leaves weights to clear)
        dirty = Signal(reset_less=True)
        distinct, position = Signal(self.row_bits + 1), Signal(POSITION_BITS)
        totals = Signal(data.ArrayLayout(self.count_bits, self.classes))
        clear_row = Signal(self.row_bits)
        done = self.done.payload
        m.d.comb += [done.class_counts.eq(totals), done.rows.eq(distinct), done.position.eq(position)]

        with m.Switch(phase):
            with m.Case(_Phase.IDLE):
                m.d.comb += self.start.ready.eq(1)
                with m.If(self.start.valid):
                    start = self.start.payload
                    m.d.sync += [config.eq(start), distinct.eq(0), position.eq(0), totals.eq(0),
                                 clear_row.eq(0), dirty.eq(1)]
                    with m.If(~start.bootstrap):
                        m.d.sync += distinct.eq(start.n_rows)
                    with m.If(dirty):
                        m.d.sync += phase.eq(_Phase.CLEAR)
                    with m.Else():
                        self._begin(m, phase, start)
            with m.Case(_Phase.CLEAR):
                m.d.comb += [weight_write.addr.eq(clear_row), weight_write.data.eq(0), weight_write.en.eq(1)]
                m.d.sync += clear_row.eq(clear_row + 1)
                with m.If(clear_row == self.max_rows - 1):
                    self._begin(m, phase, config)
            with m.Case(_Phase.DRAW):
                self._draw(m, phase, config, weight_write, weight_read, distinct, position)
            with m.Case(_Phase.SCAN):
                self._scan(m, phase, config, weight_write, weight_read, label_read, distinct, totals)
            with m.Case(_Phase.DONE):
                m.d.comb += self.done.valid.eq(1)
                with m.If(self.done.ready):
                    m.d.sync += [phase.eq(_Phase.IDLE), dirty.eq(0)]
        return m

    @staticmethod
    def _begin(m, phase, config):
        """Into the draws, or straight to the scan without bootstrap."""
        with m.If(config.bootstrap):
            m.d.sync += phase.eq(_Phase.DRAW)
        with m.Else():
            m.d.sync += phase.eq(_Phase.SCAN)

    def _draw(self, m, phase, config, weight_write, weight_read, distinct, position):
        """``max_samples`` draws, a weight's read-modify-write each: the draw's row is read
        in its cycle and written one more in the next (the previous draw's new weight
        forwarded when it is the same row, whose write the read does not see)."""
        requested = Signal(self.count_bits, name="bootstrap_requested")
        drawn = Signal(self.count_bits, name="bootstrap_drawn")
        # The draw in its write cycle: its row, whether to take the forwarded weight, and
        # the weight written in this cycle (forwarded to the next draw).
        row, pending, forward = Signal(self.row_bits), Signal(), Signal()
        written = Signal(self.count_bits)
        # (only a draw whose request was taken: the draws end with no request pending)
        m.d.comb += [self.requests.valid.eq(requested != config.max_samples),
                     self.requests.payload.bound.eq(config.n_rows), self.draws.ready.eq(drawn != requested)]
        with m.If(self.requests.valid & self.requests.ready):
            m.d.sync += requested.eq(requested + 1)
        draw = self.draws.payload
        taken = self.draws.valid & self.draws.ready
        m.d.comb += [weight_read.addr.eq(draw.value), weight_read.en.eq(taken)]
        m.d.sync += pending.eq(taken)
        with m.If(taken):
            m.d.sync += [row.eq(draw.value), forward.eq(pending & (row == draw.value)),
                         position.eq(draw.position), drawn.eq(drawn + 1)]
        old = Signal(self.count_bits)
        m.d.comb += old.eq(Mux(forward, written, weight_read.data))
        with m.If(pending):
            m.d.comb += [weight_write.addr.eq(row), weight_write.data.eq(old + 1), weight_write.en.eq(1)]
            m.d.sync += written.eq(old + 1)
            with m.If(old == 0):
                m.d.sync += distinct.eq(distinct + 1)
        with m.If((drawn == config.max_samples) & ~pending):
            m.d.sync += [phase.eq(_Phase.SCAN), requested.eq(0), drawn.eq(0)]

    def _scan(self, m, phase, config, weight_write, weight_read, label_read, distinct, totals):
        """Rows 0 to ``n_rows - 1``: stage A reads a row's weight and label, stage B offers
        them on ``weights`` and (in the bag) ``roots``, each stream once, and moves on when
        both are taken."""
        row_a, row_b, valid_b = Signal(self.row_bits + 1), Signal(self.row_bits), Signal()
        weights_sent, roots_sent, emitted = Signal(), Signal(), Signal(self.row_bits + 1)
        weight = Signal(self.count_bits)
        m.d.comb += weight.eq(Mux(config.bootstrap, weight_read.data, 1))
        in_bag = weight != 0
        m.d.comb += [self.weights.valid.eq(valid_b & ~weights_sent), self.weights.payload.row.eq(row_b),
                     self.weights.payload.weight.eq(weight),
                     self.roots.valid.eq(valid_b & in_bag & ~roots_sent), self.roots.payload.row.eq(row_b),
                     self.roots.payload.last.eq(emitted + 1 == distinct)]
        moved = Signal()
        m.d.comb += moved.eq((weights_sent | self.weights.ready) & (roots_sent | self.roots.ready | ~in_bag))
        advance = ~valid_b | moved
        m.d.comb += [weight_read.addr.eq(row_a), weight_read.en.eq(advance),
                     label_read.addr.eq(row_a), label_read.en.eq(advance)]
        with m.If(advance):
            m.d.sync += [valid_b.eq(row_a != config.n_rows), row_b.eq(row_a), weights_sent.eq(0),
                         roots_sent.eq(0)]
            with m.If(row_a != config.n_rows):
                m.d.sync += row_a.eq(row_a + 1)
            with m.Else():
                m.d.sync += [phase.eq(_Phase.DONE), row_a.eq(0), emitted.eq(0)]
        with m.Else():
            m.d.sync += [weights_sent.eq(weights_sent | self.weights.ready),
                         roots_sent.eq(roots_sent | self.roots.ready)]
        with m.If(valid_b & moved):
            # the row's weight written back as 0: the memory is clear for the next tree
            m.d.comb += [weight_write.addr.eq(row_b), weight_write.data.eq(0), weight_write.en.eq(1)]
            with m.If(row_a != config.n_rows):
                m.d.sync += emitted.eq(emitted + in_bag)
            for label, total in enumerate(totals):
                with m.If(label_read.data == label):
                    m.d.sync += total.eq(total + weight)
