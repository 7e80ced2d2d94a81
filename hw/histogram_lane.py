"""Histogram lane: a node's rows of one feature in, the feature's best split out, through
two histogram units and today's Gini scanner (the planned out-of-core PE's lane,
``docs/out_of_core.md``).

Reference: ``sw.methods.forest.histogram.best_split_of_histogram`` of ``class_histogram``
with ``min_samples_leaf = 1``. Per histogram the lane takes a header (the node's weighted
class totals and its distinct rows) and the node's samples (``hw.histogram.sample_layout``).
Two :class:`~hw.histogram.HistogramUnit` take the histograms in turn, so one gathers while
the other offers its cells. The cells go in order, as entries, to a
:class:`~hw.gini.GiniScanner`, which takes the header as its segment's.

**Only ``min_samples_leaf = 1``.** Today's scanner counts one row per entry, and a cell
holds a bin's rows of one class. With ``min_samples_leaf = 1`` that does not matter.
Every boundary between two occupied bins has a row on each side, and so a cell on each
side, so the scanner accepts the same boundaries. The header's rows (the node's rows) are
at least the cells, so no boundary lacks a row on its right. The scanner's ``rows_left``
then counts the cells left of the split, not the rows, so the lane does not offer it.
Larger ``min_samples_leaf`` needs the scanner to add a cell's rows (``docs/out_of_core.md``).
"""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hw.checks import refuse_construction
from hw.gini import GiniScanner, segment_layout
from hw.histogram import HistogramUnit, sample_layout

__all__ = ["HistogramLane", "lane_split_layout"]


def lane_split_layout(classes, code_bits, count_bits):
    """The best split of a histogram (``found`` low: no boundary), as the scanner reports
    it without its ``rows_left``."""
    return data.StructLayout({
        "found": 1, "threshold": code_bits, "numerator": 3 * count_bits + 1,
        "denominator": 2 * count_bits, "left_counts": data.ArrayLayout(count_bits, classes),
    })


class HistogramLane(wiring.Component):
    """Gathers a node's samples of one feature into a histogram and scans its cells.

    Parameters
    ----------
    classes, count_bits, code_bits, row_bits : int
        As :class:`~hw.histogram.HistogramUnit` (which checks them): 2 to 64 classes;
        the weights of a histogram sum below ``2**count_bits``; ``2**code_bits`` bins;
        fewer than ``2**row_bits`` samples a histogram.

    Members
    -------
    headers : In(stream.Signature(hw.gini.segment_layout(...)))
        Per histogram, in the histograms' order: the node's class totals and its rows.
    samples : In(stream.Signature(hw.histogram.sample_layout(...)))
    splits : Out(stream.Signature(lane_split_layout(...)))
    """

    def __init__(self, *, classes=8, count_bits=13, code_bits=8, row_bits=12):
        try:
            self._units = [HistogramUnit(classes=classes, count_bits=count_bits,
                                         code_bits=code_bits, row_bits=row_bits) for _ in range(2)]
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        self._scanner = GiniScanner(classes=classes, count_bits=count_bits, code_bits=code_bits,
                                    row_bits=row_bits)
        self.classes, self.count_bits = classes, count_bits
        self.code_bits, self.row_bits = code_bits, row_bits
        super().__init__({
            "headers": In(stream.Signature(segment_layout(classes, count_bits, row_bits))),
            "samples": In(stream.Signature(sample_layout(code_bits, classes, count_bits))),
            "splits": Out(stream.Signature(lane_split_layout(classes, code_bits, count_bits))),
        })

    def elaborate(self, platform):
        m = Module()
        units, scanner = self._units, self._scanner
        m.submodules.unit0, m.submodules.unit1 = units
        m.submodules.scanner = scanner
        m.d.comb += scanner.min_samples_leaf.eq(1)
        wiring.connect(m, wiring.flipped(self.headers), scanner.segments)

        # The samples go to the unit whose turn it is to gather, the cells come from the
        # unit whose turn it is to offer; each turn passes on with a ``last``.
        filling, draining = Signal(), Signal()
        for k, unit in enumerate(units):
            m.d.comb += [unit.samples.payload.eq(self.samples.payload),
                         unit.samples.valid.eq(self.samples.valid & (filling == k)),
                         unit.cells.ready.eq(scanner.entries.ready & (draining == k))]
        m.d.comb += self.samples.ready.eq(Mux(filling, units[1].samples.ready, units[0].samples.ready))
        with m.If(self.samples.valid & self.samples.ready & self.samples.payload.last):
            m.d.sync += filling.eq(~filling)

        cell = Signal.like(units[0].cells.payload)
        m.d.comb += [cell.eq(Mux(draining, units[1].cells.payload, units[0].cells.payload)),
                     scanner.entries.valid.eq(Mux(draining, units[1].cells.valid, units[0].cells.valid)),
                     scanner.entries.payload.code.eq(cell.code),
                     scanner.entries.payload.label_one_hot.eq(cell.label_one_hot),
                     scanner.entries.payload.weight_less_one.eq(cell.weight_less_one),
                     scanner.entries.payload.last.eq(cell.last)]
        with m.If(scanner.entries.valid & scanner.entries.ready & cell.last):
            m.d.sync += draining.eq(~draining)

        found = scanner.splits.payload
        m.d.comb += [self.splits.valid.eq(scanner.splits.valid),
                     scanner.splits.ready.eq(self.splits.ready),
                     self.splits.payload.found.eq(found.found),
                     self.splits.payload.threshold.eq(found.threshold),
                     self.splits.payload.numerator.eq(found.numerator),
                     self.splits.payload.denominator.eq(found.denominator),
                     self.splits.payload.left_counts.eq(found.left_counts)]
        return m
