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
    ``entries`` at one per cycle, then two cycles of pipeline drain before the result is
    offered on ``splits``. The squared totals ``sum_c T_c^2`` are summed one class with a
    non-zero total per cycle, the first in the header's cycle, so the scan waits only when
    more than one class is present: segment latency ``entries + max(0, nonzero classes -
    1) + 4`` cycles, header to result. (Adding the last square in the scan's first cycle
    would save one more cycle, but then the squarer works beside the scan's ``weight^2`` and
    Yosys can no longer share one multiplier between them: +1 DSP block per lane.)

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
        # One squarer serves both: the header's first square (in the header's cycle) and
        # then the registered totals' (its input is switched in the state that takes the header).
        square_input = Signal(self.count_bits)
        square = Signal(square_bits)
        m.d.comb += [square_input.eq(totals[next_class]), square.eq(square_input * square_input)]
        next_square = Signal(square_bits)
        m.d.comb += next_square.eq(Mux(unsummed.any(), square, 0))

        # Stage 1: a candidate boundary as it stood before the entry that closed it.
        c1_valid = Signal()
        c1_squares_left, c1_squares_right = Signal(square_bits), Signal(square_bits)
        c1_left_weight, c1_right_weight = Signal(count_bits), Signal(count_bits)
        c1_threshold = Signal(self.code_bits)
        c1_rows_left = Signal(self.row_bits + 1)
        c1_left = Signal(counts_layout)
        # Stage 2: its score as an exact fraction.
        c2_valid = Signal()
        c2_numerator = Signal(3 * count_bits + 1)
        c2_denominator = Signal(2 * count_bits)
        c2_threshold = Signal(self.code_bits)
        c2_rows_left = Signal(self.row_bits + 1)
        c2_left = Signal(counts_layout)
        # Stage 3: the best so far.
        best = Signal(split_layout(classes, self.code_bits, count_bits, self.row_bits))
        m.d.sync += [c1_valid.eq(0), c2_valid.eq(0)]
        m.d.comb += self.splits.payload.eq(best)

        # Stage 2 and 3 run whenever a candidate is present.
        with m.If(c1_valid):
            m.d.sync += [
                c2_valid.eq(1),
                c2_numerator.eq(c1_squares_left * c1_right_weight + c1_squares_right * c1_left_weight),
                c2_denominator.eq(c1_left_weight * c1_right_weight),
                c2_threshold.eq(c1_threshold), c2_rows_left.eq(c1_rows_left), c2_left.eq(c1_left),
            ]
        better = Signal()
        m.d.comb += better.eq(~best.found |
                              (c2_numerator * best.denominator > best.numerator * c2_denominator))
        with m.If(c2_valid & better):
            m.d.sync += [
                best.found.eq(1), best.threshold.eq(c2_threshold), best.rows_left.eq(c2_rows_left),
                best.numerator.eq(c2_numerator), best.denominator.eq(c2_denominator),
                best.left_counts.eq(c2_left),
            ]

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
                        have_previous.eq(0), unsummed.eq(remaining), best.found.eq(0),
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
                        m.d.sync += [
                            c1_valid.eq(1),
                            c1_squares_left.eq(squares_left), c1_squares_right.eq(squares_right),
                            c1_left_weight.eq(left_weight),
                            c1_right_weight.eq(total_weight - left_weight),
                            c1_threshold.eq((previous_code + entry.code) >> 1),
                            c1_rows_left.eq(left_rows),
                            c1_left.eq(left),
                        ]
                    # Move the entry from right to left:
                    # A += 2 w L_c + w^2 and B += w^2 - 2 w R_c, with R_c = T_c - L_c.
                    weight = entry.weight
                    left_count = left[entry.label]
                    right_count = totals[entry.label] - left_count
                    weight_squared = weight * weight
                    m.d.sync += [
                        squares_left.eq(squares_left + ((weight * left_count) << 1) + weight_squared),
                        squares_right.eq(squares_right + weight_squared - ((weight * right_count) << 1)),
                        left[entry.label].eq(left_count + weight),
                        left_weight.eq(left_weight + weight),
                        left_rows.eq(left_rows + 1),
                        previous_code.eq(entry.code), have_previous.eq(1),
                    ]
                    with m.If(entry.last):
                        m.next = "Drain the pipeline"

            with m.State("Drain the pipeline"):
                # Once no candidate is in stage 1, the best is final at the next edge.
                with m.If(~c1_valid):
                    m.next = "Offer the best split"

            with m.State("Offer the best split"):
                m.d.comb += self.splits.valid.eq(1)
                with m.If(self.splits.ready):
                    m.next = "Wait for a segment"
        return m
