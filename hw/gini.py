"""Gini calculator: the best split of one node's sorted segment, in exact integers.

Reference: ``sw.methods.forest.model.best_split_of_segment``. Between consecutive entries with different
codes, the split score of thesis eq. 4.2 is ``S = A / nL + B / nR`` with ``A`` and ``B``
the sums of squared (weighted) class counts left and right; it is kept as the fraction
``(A nR + B nL) / (nL nR)`` and compared by cross-multiplication, never divided. A
boundary counts only when both sides keep at least ``min_samples_leaf`` entries (distinct
in-bag rows). The best score wins; on equal scores the earlier boundary (lower threshold)
stays, because a later candidate must be strictly better to replace it. A boundary's
threshold is the code midway between its two entries' codes, ``(left + right) >> 1``:
the segment's rows split the same way as at the left code, and unseen values in the gap
are shared between the sides (scikit-learn's midpoint, in code space).
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hw.arith import carry_save_sum, logic_product_rows, tiles
from hw.checks import check_integer, refuse_construction

__all__ = ["GiniScanner", "segment_layout", "entry_layout", "split_layout"]


def segment_layout(classes, count_bits, row_bits):
    """Header of a segment: its weighted class totals and its number of entries."""
    return data.StructLayout({
        "class_counts": data.ArrayLayout(count_bits, classes),
        "rows": row_bits + 1,
    })


def entry_layout(code_bits, classes, count_bits):
    """One entry of a sorted segment; ``last`` on the segment's final entry; its label
    one-hot (``label_one_hot``: bit ``c`` set for class ``c``, so the class counts are
    selected by an AND-OR, not a decoded multiplexer); its weight ``w`` (an in-bag row's
    multiplicity, at least 1) as ``weight_less_one``, ``w - 1``, as the lists store it (so
    no adder lies between a list's read and the scan's products)."""
    return data.StructLayout({
        "code": code_bits, "label_one_hot": classes, "weight_less_one": count_bits, "last": 1,
    })


def split_layout(classes, code_bits, count_bits, row_bits):
    """The best split of a segment (``found`` low: no valid boundary)."""
    return data.StructLayout({
        "found": 1,
        "threshold": code_bits,
        "rows_left": row_bits + 1,
        "numerator": 3 * count_bits + 1,
        "denominator": 2 * count_bits,
        "left_counts": data.ArrayLayout(count_bits, classes),
    })


def _lowest(m, mask):
    """The index of the lowest set bit of ``mask`` (0 when none is set)."""
    index = Signal(range(len(mask)))
    for c in reversed(range(len(mask))):
        with m.If(mask[c]):
            m.d.comb += index.eq(c)
    return index


def _select(m, counts, one_hot):
    """The count whose bit is set in ``one_hot`` (0 when none is)."""
    selected = 0
    for c in range(len(one_hot)):
        selected = selected | Mux(one_hot[c], counts[c], 0)
    chosen = Signal.like(counts[0])
    m.d.comb += chosen.eq(selected)
    return chosen


class GiniScanner(wiring.Component):
    """Scans sorted segments one entry per cycle and reports each segment's best split.

    Per segment: a header on ``segments`` (class totals, entry count), then the entries on
    ``entries`` at one per cycle, then the pipeline's drain before the result is offered on
    ``splits``. The non-zero class totals go one per cycle into the squarer's operand
    register, the first in the header's cycle; each is squared the cycle after and added
    to ``B`` the cycle after that (the last with the first entry's increments), so the scan
    waits only when more than one class is present: segment latency ``entries + max(0,
    nonzero classes - 1) + 6`` cycles, header to result, both counted, without stalls; one
    fewer when the last entry closes no boundary, two fewer when neither of the last two
    entries does, three fewer when none of the last three does.

    Pipeline: the scan (class counts, updated in the entry's cycle; the sums of squares
    ``A`` and ``B`` a cycle later, from the products ``w L_c``, ``w R_c`` and ``w^2``
    registered in the entry's cycle); the boundary an entry closes is registered with the
    counts before that entry and taken by stage 1 a cycle later, when ``A`` and ``B`` have
    caught up: stage 1 registers the score's partial products, stage 2 adds them, stage 3
    registers the partial products of its cross products with the best and with the
    boundary in stage 4, stage 4 decides (see ``_choose_best``). No multiplier has an adder
    behind it in its cycle: the wide products (the score's and the cross products) are
    registered as products of ``TILE``-bit pieces, one multiplier tile each, and added in
    the next stage by carry-save adders and one carry chain (``carry_save_sum``); the
    denominator is one tile while ``count_bits`` is at most ``TILE``. The scan's four
    small products (``w L_c``, ``w R_c``, ``w^2``, ``T_c^2``) take no multiplier block:
    they are carry-save trees in logic (``logic_product_rows``), because a PE runs out
    of DSP blocks long before it runs out of ALMs (``docs/gateware.md``).

    While it waits for a header, the scan's registers load from the header in every cycle,
    the one it comes in last, so the header's ``valid`` (a lane's state and job queue)
    reaches only the state and the squarer's operand, not the counts' wide enables; the
    loads are harmless while waiting (no entry is scanned, no boundary is in the pipeline),
    and the operand stays 0 until the header comes (its square is added to ``B``).

    Parameters
    ----------
    classes : int
        Number of classes the hardware holds counts for (2 to 64).
    count_bits : int
        Width of a weighted count; the weights of a segment must sum below
        ``2**count_bits`` (1 to 24).
    code_bits : int
        Width of a code (1 to 32).
    row_bits : int
        Width of an entry index; a segment holds fewer than ``2**row_bits`` entries (1 to 24).

    Members
    -------
    min_samples_leaf : In(row_bits + 1)
        Entries each side of a split must keep (held stable while scanning).
    segments : In(stream.Signature(segment_layout(...)))
    entries : In(stream.Signature(entry_layout(...)))
    splits : Out(stream.Signature(split_layout(...)))
    """

    def __init__(self, *, classes=8, count_bits=13, code_bits=16, row_bits=12):
        try:
            check_integer("classes", classes, 2, 64)
            check_integer("count_bits", count_bits, 1, 24)
            check_integer("code_bits", code_bits, 1, 32)
            check_integer("row_bits", row_bits, 1, 24)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        self.classes = classes
        self.count_bits = count_bits
        self.code_bits = code_bits
        self.row_bits = row_bits
        super().__init__({
            "min_samples_leaf": In(row_bits + 1),
            "segments": In(stream.Signature(segment_layout(classes, count_bits, row_bits))),
            "entries": In(stream.Signature(entry_layout(code_bits, classes, count_bits))),
            "splits": Out(stream.Signature(split_layout(classes, code_bits, count_bits, row_bits))),
        })

    def elaborate(self, platform):
        m = Module()
        classes, count_bits = self.classes, self.count_bits
        square_bits = 2 * count_bits
        counts_layout = data.ArrayLayout(count_bits, classes)

        right = Signal(counts_layout)               # R_c = T_c - L_c
        total_rows = Signal(self.row_bits + 1)
        left = Signal(counts_layout)
        left_weight = Signal(count_bits)
        right_weight = Signal(count_bits)           # total weight - left_weight
        left_rows = Signal(self.row_bits + 1)
        # A = sum_c L_c^2 and B = sum_c R_c^2 lag the counts by one entry: an entry's
        # increments are registered in its cycle and added a cycle later.
        squares_left = Signal(square_bits)          # A
        squares_right = Signal(square_bits)         # B
        stepped = Signal()                          # the products are an entry's
        previous_code = Signal(self.code_bits)
        have_previous = Signal()
        # B starts as sum_c T_c^2: the non-zero class totals one per cycle into the
        # squarer's operand register (0 when none is due), squared the cycle after and
        # added to B the cycle after that. ``unsummed``: the classes not yet in the operand.
        unsummed = Signal(classes)
        operand = Signal(count_bits)
        lowest = _lowest(m, unsummed)
        later = Signal(classes)                     # unsummed without its lowest class
        m.d.comb += later.eq(unsummed & ~(1 << lowest))
        header = self.segments.p
        nonzero = Cat(header.class_counts[c] != 0 for c in range(classes))
        first = _lowest(m, nonzero)
        remaining = Signal(classes)                 # the header's non-zero classes but the first
        m.d.comb += remaining.eq(nonzero & ~(1 << first))

        # The scan's increments from the counts as they stand (updated in the entry's
        # cycle, so no forwarding): A += 2 w L_c + w^2 and B -= 2 w R_c - w^2 a cycle
        # later. The products are formed in logic (``logic_product_rows``: two registered
        # carry-save rows each, no multiplier block) from the entry and the class select,
        # and added into A and B the cycle after with them (one carry chain each); the
        # squared totals have a squarer of their own.
        entry = self.entries.p
        # The weight comes as w - 1 (``less``): w L_c = (w - 1) L_c + L_c, and
        # w^2 = (w - 1)^2 + 2 (w - 1) + 1, so no adder stands in front of the products.
        # The label comes one-hot: a count is selected by an AND-OR of the counts, and each
        # count's update reads only itself, under its bit.
        one_hot, less = entry.label_one_hot, entry.weight_less_one
        left_count, right_count = _select(m, left, one_hot), _select(m, right, one_hot)
        product_left = logic_product_rows(m, "product_left", left_count, less, plus=[(0, left_count)])
        product_right = logic_product_rows(m, "product_right", right_count, less, plus=[(0, right_count)])
        square = logic_product_rows(m, "square", less, less, plus=[(1, less), (0, Const(1, 1))])
        total_square = logic_product_rows(m, "total_square", operand, operand)        # T_c^2 or 0
        m.d.sync += [operand.eq(0), stepped.eq(0)]

        def step(rows, shift=0):
            return [(at + shift, Mux(stepped, row, 0)) for at, row in rows]

        new_left = carry_save_sum(m, [(0, squares_left), *step(product_left, 1), *step(square)])
        new_right = carry_save_sum(m, [(0, squares_right), *total_square, *step(square)],
                                    step(product_right, 1))
        m.d.sync += [squares_left.eq(new_left[:square_bits]),
                     squares_right.eq(new_right[:square_bits])]

        # The boundary an entry closes, with the scan's registers as they stand in its
        # cycle (the counts before that entry); stage 1 takes it a cycle later, when A
        # and B have caught up with the same entries.
        boundary = Signal(data.StructLayout({
            "found": 1, "threshold": self.code_bits, "rows_left": self.row_bits + 1,
            "left_counts": counts_layout, "left_weight": count_bits, "right_weight": count_bits,
        }))
        m.d.sync += [
            boundary.found.eq(0),
            boundary.threshold.eq((previous_code + entry.code) >> 1),
            boundary.rows_left.eq(left_rows), boundary.left_counts.eq(left),
            boundary.left_weight.eq(left_weight), boundary.right_weight.eq(right_weight),
        ]
        scoring, scored = self._score(m, boundary, squares_left, squares_right)
        best = Signal.like(scored)
        m.d.comb += self.splits.payload.eq(self._choose_best(m, scored, best))

        with m.FSM(init="Wait for a segment"):
            with m.State("Wait for a segment"):
                m.d.comb += self.segments.ready.eq(1)
                # (loads in every waiting cycle: see the class docstring)
                m.d.sync += [
                    right.eq(header.class_counts), total_rows.eq(header.rows),
                    right_weight.eq(sum(header.class_counts[c] for c in range(classes))),
                    left.eq(0), left_weight.eq(0), left_rows.eq(0),
                    squares_left.eq(0), squares_right.eq(0),
                    have_previous.eq(0), unsummed.eq(remaining),
                    # No best yet: 0 / 1, which every boundary beats (both sides
                    # weigh at least 1, so its numerator is at least 2).
                    best.found.eq(0), best.numerator.eq(0), best.denominator.eq(1),
                ]
                with m.If(self.segments.valid):
                    m.d.sync += operand.eq(header.class_counts[first])
                    with m.If(remaining == 0):
                        m.next = "Scan entries"
                    with m.Else():
                        m.next = "Sum squared totals"

            with m.State("Sum squared totals"):
                # One non-zero class total per cycle into the squarer's operand.
                m.d.sync += [unsummed.eq(later), operand.eq(right[lowest])]
                with m.If(later == 0):
                    m.next = "Scan entries"

            with m.State("Scan entries"):
                # The last total is squared in the scan's first cycle, added with its step.
                m.d.comb += self.entries.ready.eq(1)
                with m.If(self.entries.valid):
                    rows_right = total_rows - left_rows
                    leaf_ok = ((left_rows >= self.min_samples_leaf) &
                               (rows_right >= self.min_samples_leaf))
                    with m.If(have_previous & (previous_code != entry.code) & leaf_ok):
                        m.d.sync += boundary.found.eq(1)
                    # Move the entry from right to left (A and B follow a cycle later).
                    m.d.sync += [
                        stepped.eq(1),
                        # + w is + (w - 1) + 1; - w is + ~(w - 1), modulo the count width
                        *[counts[c].eq(Mux(one_hot[c], counts[c] + step, counts[c]))
                          for counts, step in ((left, less + 1), (right, ~less))
                          for c in range(classes)],
                        left_weight.eq(left_weight + less + 1),
                        right_weight.eq(right_weight + ~less),
                        left_rows.eq(left_rows + 1),
                        previous_code.eq(entry.code), have_previous.eq(1),
                    ]
                    with m.If(entry.last):
                        m.next = "Drain the pipeline"

            with m.State("Drain the pipeline"):
                # Once no boundary waits for stage 1 or is in stages 1 to 3, the best is
                # final at the next edge.
                with m.If(~boundary.found & ~scoring.found & ~scored.found):
                    m.next = "Offer the best split"

            with m.State("Offer the best split"):
                m.d.comb += self.splits.valid.eq(1)
                with m.If(self.splits.ready):
                    m.next = "Wait for a segment"
        return m

    def _score(self, m, boundary, squares_left, squares_right):
        """Stages 1 and 2: the score of ``boundary`` (registered with the counts before its
        entry) from ``A`` and ``B``, which have caught up with it. Stage 1 registers the
        tile products of ``A nR`` and ``B nL`` (``tiles``) and the denominator ``nL nR``;
        stage 2 adds the tile products. Stage 2 leaves a slot without a boundary the
        numerator 0 (a synchronous reset of the register), so it beats no best and stage
        4's decision needs no ``found``. Returns stage 1's boundary (no numerator) and
        stage 2's (``found``: a boundary is present)."""
        candidate = split_layout(self.classes, self.code_bits, self.count_bits, self.row_bits)
        scoring = Signal(candidate)
        partial_scores = [
            *tiles(m, "score_left", squares_left, boundary.right_weight),
            *tiles(m, "score_right", squares_right, boundary.left_weight)]
        m.d.sync += [
            scoring.found.eq(boundary.found),
            scoring.denominator.eq(boundary.left_weight * boundary.right_weight),
            scoring.threshold.eq(boundary.threshold),
            scoring.rows_left.eq(boundary.rows_left), scoring.left_counts.eq(boundary.left_counts),
        ]
        scored = Signal(candidate)
        m.d.sync += [scored.eq(scoring),
                     scored.numerator.eq(Mux(scoring.found, carry_save_sum(m, partial_scores), 0))]
        return scoring, scored

    def _choose_best(self, m, scored, best):
        """Stages 3 and 4: a scored boundary replaces ``best`` when it is strictly better.

        Stage 3 registers the scored boundary into ``held`` with the tile products of its
        cross products against ``best`` as it stands and against the boundary ``held``
        holds until then, which stage 4 decides in that cycle. The one update of ``best``
        that stage 3's products cannot have seen is that decision, so when it replaced the
        best, "beats the best" is "beats that boundary" (the pairwise products). Stage 4
        compares ``over > under`` as the sign of ``under - over`` summed from the tile
        products by carry-save adders and one carry chain (``carry_save_sum``), so no
        product is formed whole and the decision stays one cycle behind the products: a
        speculative compare, two more wide multipliers, no extra cycle. Until a boundary is
        found, ``best`` holds the fraction 0 / 1, which every boundary beats; a slot without
        a boundary comes with the numerator 0 (stage 2), which beats nothing, so the
        decision (four inputs with the waiting state's load of ``best``: one LUT before
        the enables) does not wait for ``found``. Returns the split to offer.
        """
        held = Signal.like(scored)                  # stage 3's boundary (found: present)

        def beats(over, under):
            """``over > under``: the sign of ``under - over``."""
            return carry_save_sum(m, under, over)[-1]

        # A <= nL^2 and B <= nR^2, so the numerator is at most nL nR (nL + nR) <= N^3 / 4
        # and the denominator nL nR <= N^2 / 4, with N = nL + nR < 2**count_bits: the
        # cross products need only their low 3 count_bits - 2 and 2 count_bits - 2 bits.
        def numerator(split):
            return split.numerator[:max(1, 3 * self.count_bits - 2)]

        def denominator(split):
            return split.denominator[:max(1, 2 * self.count_bits - 2)]

        over_best = tiles(m, "over_best", numerator(scored), denominator(best))
        under_best = tiles(m, "under_best", numerator(best), denominator(scored))
        over_pair = tiles(m, "over_pair", numerator(scored), denominator(held))
        under_pair = tiles(m, "under_pair", numerator(held), denominator(scored))
        m.d.sync += held.eq(scored)

        # Stage 4: only the fraction and found follow a decision at once (stage 3 needs
        # them); the rest of the boundary is copied a cycle later from ``decided``, and
        # offered from there in that cycle.
        replaced = Signal()                         # stage 4 replaced best in the last cycle
        take = Signal()
        m.d.comb += take.eq(Mux(replaced, beats(over_pair, under_pair), beats(over_best, under_best)))
        decided = Signal.like(held)                 # the boundary stage 4 decided last cycle
        m.d.sync += [replaced.eq(take), decided.eq(held)]
        with m.If(take):
            m.d.sync += [best.found.eq(1), best.numerator.eq(held.numerator),
                         best.denominator.eq(held.denominator)]
        offered = Signal.like(best)
        m.d.comb += offered.eq(best)
        with m.If(replaced):
            rest = [(offered.threshold, best.threshold, decided.threshold),
                    (offered.rows_left, best.rows_left, decided.rows_left),
                    (offered.left_counts, best.left_counts, decided.left_counts)]
            m.d.comb += [out.eq(new) for out, _, new in rest]
            m.d.sync += [kept.eq(new) for _, kept, new in rest]
        return offered
