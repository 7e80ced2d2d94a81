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


def _lowest(m, mask):
    """The index of the lowest set bit of ``mask`` (0 when none is set)."""
    index = Signal(range(len(mask)))
    for c in reversed(range(len(mask))):
        with m.If(mask[c]):
            m.d.comb += index.eq(c)
    return index


class GiniScanner(wiring.Component):
    """Scans sorted segments one entry per cycle and reports each segment's best split.

    Per segment: a header on ``segments`` (class totals, entry count), then the entries on
    ``entries`` at one per cycle, then three cycles of pipeline drain before the result is
    offered on ``splits``. The squared totals ``sum_c T_c^2`` are squared one class with a
    non-zero total per cycle, the first in the header's cycle, each added to ``B`` a cycle
    later (the last in the scan's first cycle, when no entry's step is due yet), so the scan
    waits only when more than one class is present: segment latency ``entries + max(0,
    nonzero classes - 1) + 5`` cycles, header to result, both counted, without stalls; one
    fewer when the last entry closes no boundary, two fewer when neither of the last two
    entries does.

    Pipeline: the scan (class counts, updated in the entry's cycle; the sums of squares
    ``A`` and ``B`` a cycle later, from the increments registered in the entry's cycle);
    the boundary an entry closes is registered with the counts before that entry and
    scored by stage 1 a cycle later, when ``A`` and ``B`` have caught up; stage 2 registers
    its cross products with the best and with the boundary in stage 3; stage 3 decides
    (see ``_choose_best``).

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
        step_left = Signal(square_bits)             # w (2 L_c + w)
        step_right = Signal(square_bits)            # w (2 R_c - w), or a squared total
        stepped = Signal()                          # the steps hold an entry's increments
        squared = Signal()                          # step_right holds a squared total
        previous_code = Signal(self.code_bits)
        have_previous = Signal()
        # Classes whose squared totals are still to be added to B (non-zero totals only),
        # the lowest of them in a register of its own (the squarer's operand).
        unsummed = Signal(classes)
        operand = Signal(count_bits)
        later = Signal(classes)                     # unsummed without its lowest class
        m.d.comb += later.eq(unsummed & ~(1 << _lowest(m, unsummed)))
        following = _lowest(m, later)
        header = self.segments.p
        nonzero = Cat(header.class_counts[c] != 0 for c in range(classes))
        first = _lowest(m, nonzero)
        remaining = Signal(classes)                 # the header's non-zero classes but the first
        m.d.comb += remaining.eq(nonzero & ~(1 << first))
        second = _lowest(m, remaining)

        # The scan's increments from the counts as they stand (updated in the entry's
        # cycle, so no forwarding); one multiplier per side, B's shared with the squared
        # totals (its factors are switched in the states before the scan).
        entry = self.entries.p
        weight, left_count, right_count = entry.weight, left[entry.label], right[entry.label]
        factor, other_factor = Signal(count_bits), Signal(count_bits + 1)
        m.d.comb += [factor.eq(weight), other_factor.eq((right_count << 1) - weight)]
        m.d.sync += [
            step_left.eq(weight * ((left_count << 1) + weight)),
            step_right.eq(factor * other_factor),   # < R_c^2: fits square_bits
            stepped.eq(0), squared.eq(0),
        ]
        with m.If(stepped):
            m.d.sync += [squares_left.eq(squares_left + step_left),
                         squares_right.eq(squares_right - step_right)]
        with m.Elif(squared):
            m.d.sync += squares_right.eq(squares_right + step_right)

        # The boundary an entry closes, with the scan's registers as they stand in its
        # cycle (the counts before that entry); stage 1 scores it a cycle later, when A
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
        candidate = split_layout(classes, self.code_bits, count_bits, self.row_bits)
        scored = Signal(candidate)                  # found: a boundary is present
        m.d.sync += [
            scored.found.eq(boundary.found),
            scored.numerator.eq(squares_left * boundary.right_weight +
                                squares_right * boundary.left_weight),
            scored.denominator.eq(boundary.left_weight * boundary.right_weight),
            scored.threshold.eq(boundary.threshold),
            scored.rows_left.eq(boundary.rows_left), scored.left_counts.eq(boundary.left_counts),
        ]
        best = Signal(candidate)
        self._choose_best(m, scored, best)
        m.d.comb += self.splits.payload.eq(best)

        with m.FSM(init="Wait for a segment"):
            with m.State("Wait for a segment"):
                m.d.comb += self.segments.ready.eq(1)
                with m.If(self.segments.valid):
                    # B starts as sum_c T_c^2 (nothing is left yet): the lowest non-zero
                    # class's square now, each square added a cycle after it is taken.
                    m.d.comb += [factor.eq(header.class_counts[first]),
                                 other_factor.eq(header.class_counts[first])]
                    m.d.sync += [
                        operand.eq(header.class_counts[second]), squared.eq(1),
                        right.eq(header.class_counts), total_rows.eq(header.rows),
                        right_weight.eq(sum(header.class_counts[c] for c in range(classes))),
                        left.eq(0), left_weight.eq(0), left_rows.eq(0),
                        squares_left.eq(0), squares_right.eq(0),
                        have_previous.eq(0), unsummed.eq(remaining), best.found.eq(0),
                    ]
                    with m.If(remaining == 0):
                        m.next = "Scan entries"
                    with m.Else():
                        m.next = "Sum squared totals"

            with m.State("Sum squared totals"):
                # One non-zero class per cycle; the next one's total into the operand.
                m.d.comb += [factor.eq(operand), other_factor.eq(operand)]
                m.d.sync += [squared.eq(1), unsummed.eq(later), operand.eq(right[following])]
                with m.If(later == 0):
                    m.next = "Scan entries"

            with m.State("Scan entries"):
                # The last square goes into B in the scan's first cycle (no step is due).
                m.d.comb += self.entries.ready.eq(1)
                with m.If(self.entries.valid):
                    rows_right = total_rows - left_rows
                    leaf_ok = ((left_rows >= self.min_samples_leaf) &
                               (rows_right >= self.min_samples_leaf))
                    with m.If(have_previous & (previous_code != entry.code) & leaf_ok):
                        m.d.sync += boundary.found.eq(1)
                    # Move the entry from right to left: A += w (2 L_c + w) and
                    # B -= w (2 R_c - w) a cycle later, where R_c >= w.
                    m.d.sync += [
                        stepped.eq(1),
                        left[entry.label].eq(left_count + weight),
                        right[entry.label].eq(right_count - weight),
                        left_weight.eq(left_weight + weight),
                        right_weight.eq(right_weight - weight),
                        left_rows.eq(left_rows + 1),
                        previous_code.eq(entry.code), have_previous.eq(1),
                    ]
                    with m.If(entry.last):
                        m.next = "Drain the pipeline"

            with m.State("Drain the pipeline"):
                # Once no boundary waits for stage 1 or is in it, the best is final at the
                # next edge.
                with m.If(~boundary.found & ~scored.found):
                    m.next = "Offer the best split"

            with m.State("Offer the best split"):
                m.d.comb += self.splits.valid.eq(1)
                with m.If(self.splits.ready):
                    m.next = "Wait for a segment"
        return m

    def _choose_best(self, m, scored, best):
        """Stages 2 and 3: a scored boundary replaces ``best`` when it is strictly better.

        Stage 2 registers the scored boundary into ``held`` with its cross products against
        ``best`` as it stands and against the boundary ``held`` holds until then, which
        stage 3 decides in that cycle; stage 3 compares registered products only. The one update
        of ``best`` that stage 2's products cannot have seen is that decision, so when it
        replaced the best, "beats the best" is "beats that boundary" (the pairwise
        products). A speculative compare: two more wide multipliers, no extra cycle.
        """
        width = 5 * self.count_bits + 1
        held = Signal.like(scored)                  # stage 2's boundary (found: present)
        held_best_found = Signal()
        over_best, under_best = Signal(width), Signal(width)    # beats best: over > under
        over_pair, under_pair = Signal(width), Signal(width)    # beats stage 3's boundary
        m.d.sync += [
            held.eq(scored), held_best_found.eq(best.found),
            over_best.eq(scored.numerator * best.denominator),
            under_best.eq(best.numerator * scored.denominator),
            over_pair.eq(scored.numerator * held.denominator),
            under_pair.eq(held.numerator * scored.denominator),
        ]
        replaced = Signal()                         # stage 3 replaced best in the last cycle
        better = Signal()
        m.d.comb += better.eq(Mux(replaced, over_pair > under_pair,
                                  ~held_best_found | (over_best > under_best)))
        m.d.sync += replaced.eq(held.found & better)
        with m.If(held.found & better):
            m.d.sync += best.eq(held)
