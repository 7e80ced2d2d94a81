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

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hw.checks import check_integer, refuse_construction

__all__ = ["GiniScanner", "segment_layout", "entry_layout", "split_layout"]


def segment_layout(classes, count_bits, row_bits):
    """Header of a segment: its weighted class totals and its number of entries."""
    return data.StructLayout({
        "class_counts": data.ArrayLayout(count_bits, classes),
        "rows": row_bits + 1,
    })


def entry_layout(code_bits, classes, count_bits):
    """One entry of a sorted segment; ``last`` on the segment's final entry."""
    return data.StructLayout({
        "code": code_bits, "label": range(classes), "weight": count_bits, "last": 1,
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


class GiniScanner(wiring.Component):
    """Scans sorted segments one entry per cycle and reports each segment's best split.

    Per segment: a header on ``segments`` (class totals, entry count), then the entries on
    ``entries`` at one per cycle, then the drain of the candidate pipeline and the merge of
    its two halves (:class:`_Candidates`) before the result is offered on ``splits``. The
    squared totals ``sum_c T_c^2`` are summed one class with a non-zero total per cycle, the
    first in the header's cycle, so the scan waits only when more than one class is
    present: segment latency ``entries + max(0, nonzero classes - 1) + 7`` cycles, header to
    result (``+ 6`` when the second half has no boundary: nothing to merge). One squarer serves the header, the totals and every entry's ``weight^2`` (Yosys
    does not share a multiplier between registered stages by itself, so the sharing is an
    explicit multiplexer: a second squarer would be one more DSP block per lane).

    Pipelining (for the clock): an entry's move from right to left is applied to the sums
    of squares a cycle after it is accepted; a candidate boundary passes three registers
    (its state, its score, its cross products) before the comparison
    that may make it the best; candidates alternate between two bests so that each best's
    compare-and-update loop has two cycles, and the two are compared at the end.

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
        result_layout = split_layout(classes, self.code_bits, count_bits, self.row_bits)

        totals = Signal(counts_layout)
        total_weight = Signal(count_bits)
        total_rows = Signal(self.row_bits + 1)
        left = Signal(counts_layout)
        left_weight = Signal(count_bits)
        left_rows = Signal(self.row_bits + 1)
        squares_left = Signal(square_bits)          # A = sum_c L_c^2
        squares_right = Signal(square_bits)         # B = sum_c (T_c - L_c)^2
        previous_code = Signal(self.code_bits)
        have_previous = Signal()
        # Classes whose squared totals are still to be added to B (non-zero totals only).
        unsummed = Signal(classes)
        next_class = Signal(range(classes))         # lowest class in unsummed
        for c in reversed(range(classes)):
            with m.If(unsummed[c]):
                m.d.comb += next_class.eq(c)

        # The move of an accepted entry from right to left, applied to A and B a cycle
        # later: A += 2 w L_c + w^2 and B += w^2 - 2 w R_c, with R_c = T_c - L_c.
        move_valid = Signal()
        move_weight, move_left, move_right = (Signal(count_bits) for _ in range(3))
        # One squarer serves all: the header's first square (in the header's cycle), the
        # registered totals' (summing B's start), and a move's w^2; never two at once.
        square_input = Signal(self.count_bits)
        square = Signal(square_bits)
        m.d.comb += [square_input.eq(Mux(move_valid, move_weight, totals[next_class])),
                     square.eq(square_input * square_input)]
        next_square = Signal(square_bits)
        m.d.comb += next_square.eq(Mux(unsummed.any(), square, 0))
        m.d.sync += move_valid.eq(0)
        with m.If(move_valid):
            m.d.sync += [
                squares_left.eq(squares_left + ((move_weight * move_left) << 1) + square),
                squares_right.eq(squares_right + square - ((move_weight * move_right) << 1)),
            ]

        candidates = _Candidates(m, self)
        best = [Signal(result_layout, name=f"best_{half}") for half in range(2)]
        result = Signal(result_layout)
        m.d.comb += self.splits.payload.eq(result)
        candidates.score(m, squares_left, squares_right)
        merging = candidates.compare(m, best)

        with m.FSM(init="Wait for a segment"):
            with m.State("Wait for a segment"):
                m.d.comb += self.segments.ready.eq(1)
                with m.If(self.segments.valid):
                    header = self.segments.p
                    # B starts as sum_c T_c^2 (nothing is left yet): the lowest non-zero
                    # class's square now, the others below.
                    nonzero = Cat(header.class_counts[c] != 0 for c in range(classes))
                    first = Signal(range(classes))
                    for c in reversed(range(classes)):
                        with m.If(nonzero[c]):
                            m.d.comb += first.eq(c)
                    m.d.comb += square_input.eq(header.class_counts[first])
                    remaining = nonzero & ~(1 << first)
                    m.d.sync += [
                        totals.eq(header.class_counts), total_rows.eq(header.rows),
                        total_weight.eq(sum(header.class_counts[c] for c in range(classes))),
                        left.eq(0), left_weight.eq(0), left_rows.eq(0),
                        squares_left.eq(0), squares_right.eq(square),
                        have_previous.eq(0), unsummed.eq(remaining), candidates.half.eq(0),
                        best[0].found.eq(0), best[1].found.eq(0),
                    ]
                    with m.If(remaining == 0):
                        m.next = "Scan entries"
                    with m.Else():
                        m.next = "Sum squared totals"

            with m.State("Sum squared totals"):
                # One non-zero class per cycle.
                m.d.sync += [squares_right.eq(squares_right + next_square),
                             unsummed.eq(unsummed & ~(1 << next_class))]
                with m.If((unsummed & ~(1 << next_class)) == 0):
                    m.next = "Scan entries"

            with m.State("Scan entries"):
                m.d.comb += self.entries.ready.eq(1)
                entry = self.entries.p
                with m.If(self.entries.valid):
                    rows_right = total_rows - left_rows
                    leaf_ok = ((left_rows >= self.min_samples_leaf) &
                               (rows_right >= self.min_samples_leaf))
                    with m.If(have_previous & (previous_code != entry.code) & leaf_ok):
                        candidates.open(m, threshold=(previous_code + entry.code) >> 1,
                                        left_weight=left_weight,
                                        right_weight=total_weight - left_weight,
                                        rows_left=left_rows, left=left)
                    left_count = left[entry.label]
                    m.d.sync += [
                        move_valid.eq(1), move_weight.eq(entry.weight), move_left.eq(left_count),
                        move_right.eq(totals[entry.label] - left_count),
                        left[entry.label].eq(left_count + entry.weight),
                        left_weight.eq(left_weight + entry.weight),
                        left_rows.eq(left_rows + 1),
                        previous_code.eq(entry.code), have_previous.eq(1),
                    ]
                    with m.If(entry.last):
                        m.next = "Drain the pipeline"

            with m.State("Drain the pipeline"):
                # The last candidate's comparison lands at the edge that leaves this state;
                # with nothing in the second half there is nothing to merge.
                with m.If(~candidates.pending):
                    with m.If(best[1].found | (candidates.stage3.valid & candidates.stage3.half)):
                        m.next = "Compare the halves"
                    with m.Else():
                        m.next = "Choose the best"

            with m.State("Compare the halves"):
                m.d.comb += merging.eq(1)
                m.next = "Choose the best"

            with m.State("Choose the best"):
                m.d.sync += result.eq(Mux(candidates.second_half_wins(best), best[1], best[0]))
                m.next = "Offer the best split"

            with m.State("Offer the best split"):
                m.d.comb += self.splits.valid.eq(1)
                with m.If(self.splits.ready):
                    m.next = "Wait for a segment"
        return m


class _Candidates:
    """The candidate boundaries' pipeline: the state before the closing entry (stage 0), its
    score as an exact fraction a cycle later, from the sums of squares once the moves before
    it have landed (stage 2), the two cross products with the best of its half (stage 3),
    and the comparison that may make it that half's best.

    Candidates alternate between two halves, each with its own best, so that a best is
    compared only every other cycle and the cross products get a cycle of their own; the
    halves' bests are compared once at the end (the same two multipliers), ties to the
    earlier boundary (fewer entries left), as within a half.
    """

    def __init__(self, m, scanner):
        count_bits, row_bits, classes = scanner.count_bits, scanner.row_bits, scanner.classes
        self.fraction_bits = (3 * count_bits + 1, 2 * count_bits)
        boundary = {"valid": 1, "threshold": scanner.code_bits, "rows_left": row_bits + 1,
                    "left": data.ArrayLayout(count_bits, classes)}
        weights = {"left_weight": count_bits, "right_weight": count_bits}
        fraction = {"numerator": self.fraction_bits[0], "denominator": self.fraction_bits[1],
                    "half": 1}
        product_bits = sum(self.fraction_bits)
        self.stage0 = Signal(data.StructLayout({**boundary, **weights}), name="c0")
        self.stage2 = Signal(data.StructLayout({**boundary, **fraction}), name="c2")
        self.stage3 = Signal(data.StructLayout({**boundary, **fraction, "best_found": 1,
                                                "lhs": product_bits, "rhs": product_bits}),
                             name="c3")
        self.half = Signal(name="candidate_half")       # the half of the next candidate
        self.pending = Signal()
        m.d.comb += self.pending.eq(self.stage0.valid | self.stage2.valid)
        m.d.sync += [self.stage0.valid.eq(0), self.stage2.valid.eq(0), self.stage3.valid.eq(0)]

    def open(self, m, **fields):
        """A boundary that qualifies, as it stands before the entry that closes it."""
        m.d.sync += self.stage0.valid.eq(1)
        m.d.sync += [getattr(self.stage0, name).eq(value) for name, value in fields.items()]

    def score(self, m, squares_left, squares_right):
        """Stage 2: ``(A nR + B nL, nL nR)``, a cycle after the boundary, when ``A`` and ``B``
        hold every move before it (and not yet the closing entry's)."""
        c0, c2 = self.stage0, self.stage2
        with m.If(c0.valid):
            m.d.sync += [
                c2.valid.eq(1), c2.threshold.eq(c0.threshold), c2.rows_left.eq(c0.rows_left),
                c2.left.eq(c0.left), c2.half.eq(self.half), self.half.eq(~self.half),
                c2.numerator.eq(squares_left * c0.right_weight + squares_right * c0.left_weight),
                c2.denominator.eq(c0.left_weight * c0.right_weight),
            ]

    def compare(self, m, best):
        """Stage 3 and the comparison with the half's best; returns the signal that turns
        the cross products to the two halves' bests instead (for the final merge)."""
        c2, c3 = self.stage2, self.stage3
        merging = Signal()
        own_best = Mux(c2.half, best[1].as_value(), best[0].as_value())
        own = Signal(best[0].shape(), name="own_best")
        m.d.comb += own.eq(own_best)
        # a beats b when a.num * b.den > b.num * a.den.
        a_num = Mux(merging, best[1].numerator, c2.numerator)
        a_den = Mux(merging, best[1].denominator, c2.denominator)
        b_num = Mux(merging, best[0].numerator, own.numerator)
        b_den = Mux(merging, best[0].denominator, own.denominator)
        m.d.sync += [
            c3.valid.eq(c2.valid), c3.threshold.eq(c2.threshold), c3.rows_left.eq(c2.rows_left),
            c3.left.eq(c2.left), c3.numerator.eq(c2.numerator), c3.denominator.eq(c2.denominator),
            c3.half.eq(c2.half), c3.best_found.eq(own.found),
            c3.lhs.eq(a_num * b_den), c3.rhs.eq(b_num * a_den),
        ]
        with m.If(c3.valid & (~c3.best_found | (c3.lhs > c3.rhs))):
            for half in range(2):
                with m.If(c3.half == half):
                    m.d.sync += [
                        best[half].found.eq(1), best[half].threshold.eq(c3.threshold),
                        best[half].rows_left.eq(c3.rows_left),
                        best[half].numerator.eq(c3.numerator),
                        best[half].denominator.eq(c3.denominator),
                        best[half].left_counts.eq(c3.left),
                    ]
        return merging

    def second_half_wins(self, best):
        """After a merge's cross products: the second half's best beats the first's
        (strictly better, or as good and earlier)."""
        c3 = self.stage3
        return best[1].found & (~best[0].found | (c3.lhs > c3.rhs) |
                                ((c3.lhs == c3.rhs) & (best[1].rows_left < best[0].rows_left)))
