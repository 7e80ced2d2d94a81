"""The sparse fill of small thesis-mode bootstraps: draws, code look-ups, insertion sort."""

from amaranth.hdl import Array, Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hw.pe.layouts import code_answer_layout, code_request_layout
from hw.rng import draw_layout, request_layout

__all__ = ["SparseFill"]


class SparseFill(wiring.Component):
    """The prologue of a sparse-fill tree and the writer of its one in-bag list.

    Thesis-mode bootstraps of at most ``sparse_rows`` draws: the distinct drawn rows and
    their weights are kept here as they are drawn, the tree's feature is drawn, the rows'
    codes are looked up and the rows insertion-sorted by (code, row): the tree's in-bag
    list without a filter. The prologue runs in its own state machine, for the running
    tree or, ahead of time, for the queued one (the serialised pipeline); its registers
    stay the running tree's until the sorted rows are written into lane 0.

    Members
    -------
    start_prologue : In(1)
        Pulse: the prologue begins (the in-bag builder starts with it).
    start : In(1)
        The PE's ``start``: an abandoned prologue goes idle, the writer stops.
    weights_ready, drawn, drawn_row : In
        From the in-bag builder: the bootstrap is drawn; a draw of the bootstrap, its row.
    bound : In
        The number of features the tree's feature is drawn from.
    draw_requests, draws : Out, In(stream.Signature(...))
        The feature draw, to be passed to the in-bag builder.
    code_requests, codes : Out, In(stream.Signature(...))
        The look-ups of the drawn rows' codes, answered in order.
    ready, bad : Out(1)
        The prologue is done; a looked-up label was out of range.
    taken : In(1)
        The controller takes the prologue's results (the prologue goes idle).
    feature, counts, drawn_count : Out
        The tree's feature, the root's class totals and the number of distinct rows.
    begin_write : In(1)
        The sorted rows go into lane 0, slot 0, one per cycle, from the second cycle on.
    writing, fill_address, fill_entry : Out
        While ``writing``: the lane-0 entry written at ``fill_address`` (row, code, weight).
    """

    def __init__(self, geometry, *, draw_bound_bits, entry_layout):
        g = geometry
        self._geometry = g
        entries = g.sparse_entries
        super().__init__({
            "start_prologue": In(1),
            "start": In(1),
            "weights_ready": In(1),
            "drawn": In(1),
            "drawn_row": In(g.row_bits),
            "bound": In(g.feature_count_bits),
            "draw_requests": Out(stream.Signature(request_layout(draw_bound_bits))),
            "draws": In(stream.Signature(draw_layout(draw_bound_bits))),
            "code_requests": Out(stream.Signature(code_request_layout(g.feature_bits, g.row_bits))),
            "codes": In(stream.Signature(code_answer_layout(g.code_bits, g.label_bits))),
            "ready": Out(1),
            "bad": Out(1),
            "taken": In(1),
            "feature": Out(g.feature_bits),
            "counts": Out(g.counts_layout),
            "drawn_count": Out(range(entries + 1)),
            "begin_write": In(1),
            "writing": Out(1),
            "fill_address": Out(range(entries + 1)),
            "fill_entry": Out(entry_layout),
        })

    def elaborate(self, platform):
        m = Module()
        g = self._geometry
        S = g.sparse_entries
        self._drawn_rows = [Signal(g.row_bits, name=f"drawn_row{k}") for k in range(S)]
        self._drawn_weights = [Signal(g.weight_bits, name=f"drawn_weight{k}") for k in range(S)]
        self._sorted = [[Signal(width, name=f"sorted_{field}{k}") for k in range(S)]
                        for field, width in (("row", g.row_bits), ("code", g.code_bits),
                                             ("label", g.label_bits), ("weight", g.weight_bits))]
        self._answered = Signal(range(S + 1))
        # Entry k is free (k >= answered), as a register of flags beside ``answered``.
        self._free = Signal(S, name="free")
        self._held = Signal(S, name="held")
        self._drawing = Signal()
        self._collect_draws(m)
        self._prologue(m)
        self._write(m)
        return m

    def _collect_draws(self, m):
        """The distinct rows of the bootstrap and their weights, in the order drawn."""
        S = self._geometry.sparse_entries
        drawn_rows, drawn_weights, drawn_count = self._drawn_rows, self._drawn_weights, self.drawn_count
        # Which entries hold a row: the first ``drawn_count``, as a register of flags (no
        # compare with the count between it and the entries' enables).
        held = self._held
        # A draw is taken a cycle after its pulse, from registers, so the in-bag builder's
        # draw pipeline does not reach the compares with the held rows (nor, through them,
        # the entries' enables). The builder's ``weights_ready`` comes three cycles after
        # its last pulse, so every draw is in before the prologue moves on; a pulse of an
        # abandoned tree arrives while the prologue is idle (``start`` put it there).
        drawn, drawn_row = Signal(name="draw_taken"), Signal(self.drawn_row.shape(), name="draw_taken_row")
        m.d.sync += [drawn.eq(self.drawn), drawn_row.eq(self.drawn_row)]
        with m.If(self._drawing & drawn):
            matches = [held[k] & (drawn_rows[k] == drawn_row) for k in range(S)]
            for k in range(S):
                with m.If(matches[k]):
                    m.d.sync += drawn_weights[k].eq(drawn_weights[k] + 1)
            with m.If(~Cat(matches).any()):
                for k in range(S):
                    with m.If(~held[k] & (held[k - 1] if k else 1)):
                        m.d.sync += [drawn_rows[k].eq(drawn_row), drawn_weights[k].eq(1)]
                m.d.sync += [drawn_count.eq(drawn_count + 1), held.eq(Cat(1, held[:-1]))]

    def _sort_places(self, m, new_row):
        """Per sorted entry: the answered row goes before it (or the entry is still free)."""
        S = self._geometry.sparse_entries
        sorted_rows, sorted_codes = self._sorted[:2]
        new_code = self.codes.p.code
        # (one compare of the (code, row) keys, not a less-than and an equality of the codes
        # and a less-than of the rows; the free entries are flags, not compares with
        # ``answered``: the seed-2 path of the system, 98.6 MHz, ran from ``new_row``
        # through them to a sorted entry's enable)
        new_key = Cat(new_row, new_code)
        goes_before = [Signal(name=f"goes_before{k}") for k in range(S)]
        for k in range(S):
            m.d.comb += goes_before[k].eq(self._free[k] | (new_key < Cat(sorted_rows[k], sorted_codes[k])))
        return goes_before

    def _insert(self, m, goes_before, new_row, new_weight):
        """Insert the answered row: entries from its place on move up by one."""
        S = self._geometry.sparse_entries
        sorted_rows, sorted_codes, sorted_labels, sorted_weights = self._sorted
        new_code = self.codes.p.code
        with m.If(self.codes.valid):
            for k in range(S):
                with m.If(goes_before[k]):
                    if k == 0:
                        source = (new_row, new_code, self.codes.p.label, new_weight)
                    else:
                        source = tuple(Mux(goes_before[k - 1], entry[k - 1], new)
                                       for entry, new in zip(
                                           (sorted_rows, sorted_codes, sorted_labels, sorted_weights),
                                           (new_row, new_code, self.codes.p.label, new_weight)))
                    m.d.sync += [sorted_rows[k].eq(source[0]), sorted_codes[k].eq(source[1]),
                                 sorted_labels[k].eq(source[2]), sorted_weights[k].eq(source[3])]

    def _prologue(self, m):
        g = self._geometry
        answered, counts = self._answered, self.counts
        looked_up = Signal(range(g.sparse_entries + 1))
        # The feature draw's request, from registers (set when the bootstrap is drawn).
        requesting = Signal(name="requesting")
        request_bound = Signal.like(self.draw_requests.p.bound, name="request_bound")
        m.d.comb += [self.draw_requests.valid.eq(requesting),
                     self.draw_requests.p.bound.eq(request_bound)]
        # The next row to answer and its weight, registered (no multiplexer over the drawn
        # rows in front of the sort's compares): they follow ``answered`` a cycle ahead.
        # Both candidates (``answered`` unchanged or one on) are selected from registers;
        # whether a code is answered this cycle only picks between them.
        new_row, new_weight = Signal(g.row_bits, name="new_row"), Signal(g.weight_bits, name="new_weight")
        answering = Signal()
        rows, weights = Array(self._drawn_rows), Array(self._drawn_weights)
        # (``answered + 1`` is a register of its own, so no carry chain comes before the
        # selects: the ctg PE's path on two of three seeds, 100.7 MHz)
        answered_next = Signal(range(g.sparse_entries + 2), name="answered_next")
        m.d.sync += [new_row.eq(Mux(answering, rows[answered_next], rows[answered])),
                     new_weight.eq(Mux(answering, weights[answered_next], weights[answered]))]
        goes_before = self._sort_places(m, new_row)
        # The next row to look up, registered the same way (``looked_up`` a cycle ahead),
        # so only a register drives the route to the shared label bank's read address.
        request_row = Signal(g.row_bits, name="request_row")
        looked_up_next = Signal(range(g.sparse_entries + 2), name="looked_up_next")
        request_taken = self.code_requests.valid & self.code_requests.ready
        m.d.sync += request_row.eq(Mux(request_taken, rows[looked_up_next], rows[looked_up]))
        with m.FSM(init="Idle", name="prologue"):
            def prologue_control():
                # A start abandons the tree: a pulse of the tree it abandons is stale
                # (a sparse-fill start's own pulse comes in the next cycle).
                with m.If(self.start):
                    m.d.sync += requesting.eq(0)
                    m.next = "Idle"
                with m.Elif(self.start_prologue):
                    m.d.sync += [self.drawn_count.eq(0), self._held.eq(0), self.bad.eq(0), counts.eq(0),
                                 requesting.eq(0)]
                    m.next = "Draw the bootstrap"

            with m.State("Idle"):
                prologue_control()

            with m.State("Draw the bootstrap"):
                m.d.comb += self._drawing.eq(1)
                with m.If(self.weights_ready):
                    m.d.sync += [requesting.eq(1), request_bound.eq(self.bound),
                                 looked_up.eq(0), looked_up_next.eq(1), answered.eq(0), answered_next.eq(1),
                                 self._free.eq((1 << g.sparse_entries) - 1)]
                    m.next = "Draw the tree's feature"
                prologue_control()

            with m.State("Draw the tree's feature"):
                m.d.comb += self.draws.ready.eq(1)
                with m.If(self.draw_requests.ready):
                    m.d.sync += requesting.eq(0)
                with m.If(self.draws.valid):
                    m.d.sync += self.feature.eq(self.draws.p.value)
                    m.next = "Look up the drawn rows"
                prologue_control()

            with m.State("Look up the drawn rows"):
                m.d.comb += [self.code_requests.valid.eq(looked_up < self.drawn_count),
                             self.code_requests.p.feature.eq(self.feature),
                             self.code_requests.p.row.eq(request_row),
                             self.codes.ready.eq(1)]
                with m.If(request_taken):
                    m.d.sync += [looked_up.eq(looked_up + 1), looked_up_next.eq(looked_up_next + 1)]
                self._insert(m, goes_before, new_row, new_weight)
                with m.If(self.codes.valid):
                    m.d.comb += answering.eq(1)
                    label = self.codes.p.label
                    m.d.sync += [answered.eq(answered + 1), answered_next.eq(answered_next + 1),
                                 self._free.eq(Cat(0, self._free[:-1])),
                                 counts[label].eq(counts[label] + new_weight)]
                    if g.classes < (1 << g.label_bits):
                        with m.If(self.codes.p.label >= g.classes):
                            m.d.sync += self.bad.eq(1)
                with m.If(answered == self.drawn_count):
                    m.next = "Ready"
                prologue_control()

            with m.State("Ready"):
                m.d.comb += self.ready.eq(1)
                with m.If(self.taken):
                    m.next = "Idle"
                prologue_control()

    def _write(self, m):
        """The sorted rows into lane 0, slot 0, one per cycle from the root's write on: the
        root's scan starts reading slot 0 at least four cycles after the first write
        would have been made (three after it is, a cycle later from registers), one entry
        per cycle, so it never overtakes. The prologue registers stay the running tree's until this
        ends (a queued tree's prologue waits for it), and so does the tree's end."""
        sorted_rows, sorted_codes, sorted_labels, sorted_weights = self._sorted
        # The entry selected from the prologue's registers is written a cycle later from
        # registers (``writing``, ``fill_address``, ``fill_entry``), so the selection's
        # multiplexers never reach the bank's write port.
        selecting = Signal()
        sparse_write = Signal.like(self.fill_address)
        m.d.sync += self.writing.eq(selecting)
        with m.If(selecting):
            sparse_label = Array(sorted_labels)[sparse_write]
            m.d.sync += [self.fill_address.eq(sparse_write),
                         self.fill_entry.row.eq(Array(sorted_rows)[sparse_write]),
                         self.fill_entry.code.eq(Cat(Array(sorted_codes)[sparse_write], sparse_label)),
                         self.fill_entry.weight.eq(Array(sorted_weights)[sparse_write]),
                         sparse_write.eq(sparse_write + 1)]
            with m.If(sparse_write == self.drawn_count - 1):
                m.d.sync += selecting.eq(0)
        with m.If(self.begin_write):
            m.d.sync += [sparse_write.eq(0), selecting.eq(1)]
        with m.If(self.start):      # the tree is abandoned
            m.d.sync += [selecting.eq(0), self.writing.eq(0)]
