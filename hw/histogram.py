"""Histogram unit: one lane of the planned out-of-core PE (``docs/out_of_core.md``). It
gathers a node's rows of one feature into a class histogram and hands on the histogram's
non-zero (bin, class) cells in code order, as entries a Gini scan takes.

Reference: ``sw.methods.forest.histogram.class_histogram`` and ``histogram_cells``. A
histogram is a run of samples (a row's code, its label one-hot, its weight as ``w - 1``;
``last`` on the run's final sample). Once the run is in, the unit offers its cells: per
occupied bin in code order, per class present in it in class order, the bin's code, the
label one-hot, the cell's weighted count as ``count - 1`` (at least 1, so the entry
format of ``hw.gini.entry_layout``), and on a bin's first cell the bin's distinct rows
(0 on its other cells); ``last`` on the histogram's final cell.

* **Gathering** takes one sample a cycle and never stalls. A bin's word (the classes
  present, their counts less one, the bin's rows) lives in one block RAM word: a sample
  reads it in the cycle after it is taken, registers it off the block RAM, and writes it
  back updated a cycle later. A sample whose bin was written after its read takes that
  write's data (forwarding from the two samples ahead). A bitmap of registers marks the
  bins occupied in this histogram. A sample whose bin was not yet occupied starts from an
  empty word, whatever the block RAM holds: the memory is never cleared, not even by a
  reset.
* **Offering** finds the next occupied bin without scanning the empty ones. The bitmap's
  groups (``2**(code_bits // 2)`` of them, each of the remaining bits) have flags; one
  register holds the bits of the group being issued, another the next occupied group's
  bits, fetched while the group before is issued. So a bin is issued every cycle, and a
  bin with ``k`` classes present takes ``k`` cycles. A bin's word is read when it is
  issued and stepped through its classes a cycle later. Bins are issued on a count of
  the words in flight (the read port's and one held register's), the stepper knows a
  bin's last cell from a register, and the cells leave through an output register with
  a skid register behind it (``hw.skid``): neither the consumer's ``ready`` nor the
  stepper's moves reach a read address.

Cycles without stalls: a histogram of ``n`` samples and ``c`` cells occupies the unit for
``n + c +`` :data:`TURNAROUND_CYCLES` cycles, back to back (the next histogram's samples
are taken once the last cell has left the class stepper); the testbench holds the unit to
that figure.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.checks import check_integer, refuse_construction
from hw.skid import SkidOutput

__all__ = ["HistogramUnit", "TURNAROUND_CYCLES", "sample_layout", "cell_layout"]

#: Cycles a histogram occupies the unit beyond one per sample and one per cell, without
#: stalls. After the last sample is taken: its read (its bit enters the bitmap), the
#: finder's start from the bitmap, the fetch of the first group, its move into the
#: group being issued, the first bin's issue, and that bin's read.
TURNAROUND_CYCLES = 6


def sample_layout(code_bits, classes, count_bits):
    """One row of a histogram's run: its code, its label one-hot, its weight ``w`` (at
    least 1) as ``w - 1``; ``last`` on the run's final row."""
    return data.StructLayout({
        "code": code_bits, "label_one_hot": classes, "weight_less_one": count_bits, "last": 1,
    })


def cell_layout(code_bits, classes, count_bits, row_bits):
    """One non-zero cell of a histogram: the fields of a Gini scan's entry
    (``hw.gini.entry_layout``) with the cell's weighted count as ``weight_less_one``, and
    ``rows``: the bin's distinct rows on its first cell, 0 on the others."""
    return data.StructLayout({
        "code": code_bits, "label_one_hot": classes, "weight_less_one": count_bits,
        "rows": row_bits, "last": 1,
    })


def _word_layout(classes, count_bits, row_bits):
    """A bin's word in the block RAM: the classes present (a mask and their number, so
    the class stepper knows its last cell from a register), their counts less one, and
    the bin's rows."""
    return data.StructLayout({
        "present": classes,
        "classes_present": range(classes + 1),
        "counts_less_one": data.ArrayLayout(count_bits, classes),
        "rows": row_bits,
    })


def _lowest_one_hot(m, mask, name):
    """``mask`` with all but its lowest set bit cleared (``mask & -mask``)."""
    lowest = Signal(len(mask), name=name)
    m.d.comb += lowest.eq(mask & (~mask + 1))
    return lowest


def _index(one_hot):
    """The index of the set bit of ``one_hot`` (an OR per index bit)."""
    width = max(1, (len(one_hot) - 1).bit_length())
    return Cat(*(Cat(*(one_hot[k] for k in range(len(one_hot)) if k >> b & 1)).any()
                 if len(one_hot) > 1 << b else Const(0, 1) for b in range(width)))


def _select(values, one_hot):
    """The value whose bit is set in ``one_hot`` (an AND-OR; 0 when none is)."""
    selected = 0
    for k, value in enumerate(values):
        selected = selected | Mux(one_hot[k], value, 0)
    return selected


class HistogramUnit(wiring.Component):
    """Gathers runs of samples into class histograms and offers their non-zero cells.

    Parameters
    ----------
    classes : int
        Number of classes (2 to 64).
    count_bits : int
        Width of a weighted count: the weights of a histogram sum below
        ``2**count_bits`` (1 to 24).
    code_bits : int
        Width of a code: the histogram has ``2**code_bits`` bins (1 to 10).
    row_bits : int
        A histogram holds fewer than ``2**row_bits`` samples (1 to 24).

    Members
    -------
    samples : In(stream.Signature(sample_layout(...)))
    cells : Out(stream.Signature(cell_layout(...)))
    """

    def __init__(self, *, classes=8, count_bits=13, code_bits=8, row_bits=12):
        try:
            check_integer("classes", classes, 2, 64)
            check_integer("count_bits", count_bits, 1, 24)
            check_integer("code_bits", code_bits, 1, 10)
            check_integer("row_bits", row_bits, 1, 24)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        self.classes = classes
        self.count_bits = count_bits
        self.code_bits = code_bits
        self.row_bits = row_bits
        super().__init__({
            "samples": In(stream.Signature(sample_layout(code_bits, classes, count_bits))),
            "cells": Out(stream.Signature(cell_layout(code_bits, classes, count_bits, row_bits))),
        })

    def elaborate(self, platform):
        m = Module()
        word_layout = _word_layout(self.classes, self.count_bits, self.row_bits)
        m.submodules.bins = memory = Memory(shape=word_layout, depth=1 << self.code_bits, init=[])
        write, read = memory.write_port(), memory.read_port()
        occupied = Signal(1 << self.code_bits)
        emitting = Signal()                     # the run is in: its cells are offered
        finished = Signal()                     # the final cell leaves the class stepper

        gathered, gathering, settled = self._gather(m, read, write, occupied, emitting, finished)
        issued_bin, issue = self._offer(m, read, occupied, emitting, settled, finished)
        # The read port serves the gathering until its last sample is read, then the
        # offering; the read stage's word stays on the port until it moves on.
        m.d.comb += [read.addr.eq(Mux(issue, issued_bin, gathered)),
                     read.en.eq(issue | ~emitting | gathering)]
        return m

    def _gather(self, m, read, write, occupied, emitting, finished):
        """The gathering pipeline and the switch to offering: a sample taken; its word
        read; the word registered off the block RAM; the word updated and written. A word
        is read two cycles before it is written, so a sample takes the word written in the
        cycle before its update (the sample just ahead, same bin) or the one before that
        (two ahead) instead of the word read: the block RAM's output reaches only a
        register, and the update's adders start from registers. Returns (the code being
        read, whether a sample's word is being read, the cycle the offering starts)."""
        word_layout = read.data.shape()
        sample = sample_layout(self.code_bits, self.classes, self.count_bits)
        m.d.comb += self.samples.ready.eq(~emitting)
        taken = self.samples.valid & ~emitting
        read_valid, reading = Signal(), Signal(sample)           # the word is being read
        fetch_valid, fetching = Signal(), Signal(sample)         # ... registered off the RAM
        write_valid, writing = Signal(), Signal(sample)          # ... updated and written
        fetched = Signal(word_layout)
        # Per stage: the bin was not occupied when read (start from an empty word); the
        # word to take is the one written 1 or 2 cycles before the update.
        fresh, after_one, after_two = Signal(2), Signal(2), Signal(2)
        written = [Signal(word_layout, name=f"written{k}") for k in (1, 2)]
        m.d.sync += [read_valid.eq(taken), reading.eq(self.samples.p),
                     fetch_valid.eq(read_valid), fetching.eq(reading),
                     write_valid.eq(fetch_valid), writing.eq(fetching), fetched.eq(read.data),
                     fresh.eq(Cat(~occupied.bit_select(reading.code, 1), fresh[0])),
                     after_one.eq(Cat(fetch_valid & (fetching.code == reading.code), after_one[0])),
                     after_two.eq(Cat(write_valid & (writing.code == reading.code), after_two[0]))]
        with m.If(taken & self.samples.p.last):
            m.d.sync += emitting.eq(1)
        with m.If(finished):
            m.d.sync += [emitting.eq(0), occupied.eq(0)]
        with m.Elif(read_valid):
            m.d.sync += occupied.eq(occupied | (Const(1, len(occupied)) << reading.code))

        base = Signal(word_layout)
        m.d.comb += base.eq(Mux(after_one[1], written[0], Mux(after_two[1], written[1], fetched)))
        present = Mux(fresh[1], 0, base.present)
        updated = Signal(word_layout)
        one_hot, less = writing.label_one_hot, writing.weight_less_one
        m.d.comb += [
            updated.present.eq(present | one_hot),
            updated.classes_present.eq(Mux(fresh[1], 1, base.classes_present + ~(present & one_hot).any())),
            updated.rows.eq(Mux(fresh[1], 1, base.rows + 1)),
            *[updated.counts_less_one[c].eq(
                Mux(one_hot[c], Mux(present[c], base.counts_less_one[c] + less + 1, less),
                    base.counts_less_one[c])) for c in range(self.classes)],
            write.addr.eq(writing.code), write.data.eq(updated), write.en.eq(write_valid),
        ]
        m.d.sync += [written[0].eq(updated), written[1].eq(written[0])]

        # Offering starts two cycles after the last sample was read: its bit is then in
        # the bitmap, and its word is written before the offering's first read.
        settled = Signal()
        m.d.sync += settled.eq(read_valid & reading.last)
        return reading.code, read_valid, settled

    def _offer(self, m, read, occupied, emitting, start, finished):
        """The read of the issued bins' words, the class stepper and the output. Returns
        (issued bin, issue).

        Words issued and not yet in the stepper are counted (``in_flight``, at most two:
        one on the read port, one in the ``held`` register it moves to when the next read
        would overwrite it), so a bin is issued on that count alone. The stepper's moves,
        which the consumer's stalls and the classes of a bin decide, reach no read
        address or enable."""
        issue = Signal()
        issued_bin, issued_final = self._find(m, occupied, start, issue)
        in_flight = Signal(2)
        read_valid, read_bin, read_final = Signal(), Signal(self.code_bits), Signal()
        held_valid, held_bin, held_final = Signal(), Signal(self.code_bits), Signal()
        held_word = Signal(read.data.shape())
        m.d.comb += issue.eq(emitting & (in_flight != 2) & issued_bin.valid)

        step_valid, step_bin, step_final, step_first = Signal(), Signal(self.code_bits), Signal(), Signal()
        step_word = Signal(read.data.shape())
        step_left = Signal(range(self.classes + 1))     # cells of the bin still to go
        step_last = Signal()                            # the bin's last cell: step_left == 1
        step_class = _lowest_one_hot(m, step_word.present, "step_class")
        step_rest = Signal(self.classes)
        m.d.comb += step_rest.eq(step_word.present & ~step_class)
        output = SkidOutput(self.cells.payload.shape(), name="cell")
        cell = Signal(self.cells.payload.shape())
        m.d.comb += [cell.code.eq(step_bin), cell.label_one_hot.eq(step_class),
                     cell.weight_less_one.eq(_select([step_word.counts_less_one[c]
                                                      for c in range(self.classes)], step_class)),
                     cell.rows.eq(Mux(step_first, step_word.rows, 0)),
                     cell.last.eq(step_final & step_last)]
        moves = output.feed(m, step_valid, cell, self.cells.ready)
        m.d.comb += [self.cells.valid.eq(output.valid), self.cells.payload.eq(output.payload)]
        step_done = moves & step_last
        load_step = (held_valid | read_valid) & (~step_valid | step_done)
        m.d.comb += finished.eq(step_done & step_final)
        m.d.sync += in_flight.eq(in_flight + issue - load_step)

        # The oldest word first: the held one, else the one on the read port.
        from_read = load_step & ~held_valid
        with m.If(issue):
            m.d.sync += [read_valid.eq(1), read_bin.eq(issued_bin.bin), read_final.eq(issued_final)]
            with m.If(read_valid & ~from_read):
                m.d.sync += [held_valid.eq(1), held_word.eq(read.data), held_bin.eq(read_bin),
                             held_final.eq(read_final)]
        with m.Elif(from_read):
            m.d.sync += read_valid.eq(0)
        with m.If(load_step & held_valid):
            m.d.sync += held_valid.eq(0)
        incoming = Signal.like(held_word, name="incoming")
        m.d.comb += incoming.eq(Mux(held_valid, held_word, read.data))
        with m.If(load_step):
            m.d.sync += [step_valid.eq(1), step_first.eq(1), step_word.eq(incoming),
                         step_left.eq(incoming.classes_present),
                         step_last.eq(incoming.classes_present == 1),
                         step_bin.eq(Mux(held_valid, held_bin, read_bin)),
                         step_final.eq(Mux(held_valid, held_final, read_final))]
        with m.Elif(moves):
            m.d.sync += [step_valid.eq(~step_done), step_first.eq(0),
                         step_word.present.eq(step_rest), step_left.eq(step_left - 1),
                         step_last.eq(step_left == 2)]
        return issued_bin.bin, issue

    def _find(self, m, occupied, start, issue):
        """The bin finder: the occupied bins in code order, one per ``issue``. Returns
        (a view with the next bin, ``bin``, and whether there is one, ``valid``; whether
        that bin is the histogram's last).

        ``remaining`` holds the occupied groups not yet fetched, ``next_bits`` the bits of
        the next group to issue (``next_valid``), fetched a cycle ahead, ``current`` the
        unissued bits of the group being issued. The next group's bits move into
        ``current`` when it is empty or its last bit is issued; the fetch refills the next
        group whenever it is empty or moves."""
        low_bits = self.code_bits - self.code_bits // 2
        groups = 1 << (self.code_bits // 2)
        words = [occupied[g << low_bits:(g + 1) << low_bits] for g in range(groups)]
        flags = Cat(*(word.any() for word in words))
        remaining = Signal(groups)
        next_bits, next_group, next_valid = Signal(1 << low_bits), Signal(range(groups)), Signal()
        current, group = Signal(1 << low_bits), Signal(range(groups))
        lowest_group = _lowest_one_hot(m, remaining, "lowest_group")
        lowest_bin = _lowest_one_hot(m, current, "lowest_bin")
        rest = Signal.like(current)
        m.d.comb += rest.eq(current & ~lowest_bin)

        take_next = next_valid & ((current == 0) | (issue & (rest == 0)))
        refill = (~next_valid | take_next) & (remaining != 0)
        with m.If(start):
            m.d.sync += [remaining.eq(flags), next_valid.eq(0), current.eq(0)]
        with m.Else():
            with m.If(refill):
                m.d.sync += [next_bits.eq(_select(words, lowest_group)),
                             next_group.eq(_index(lowest_group)),
                             remaining.eq(remaining & ~lowest_group)]
            m.d.sync += next_valid.eq(refill | (next_valid & ~take_next))
            with m.If(take_next):
                m.d.sync += [current.eq(next_bits), group.eq(next_group)]
            with m.Elif(issue):
                m.d.sync += current.eq(rest)

        found = Signal(data.StructLayout({"bin": self.code_bits, "valid": 1}))
        m.d.comb += [found.bin.eq(Cat(_index(lowest_bin)[:low_bits], group)[:self.code_bits]),
                     found.valid.eq(current != 0)]
        return found, (rest == 0) & ~next_valid & (remaining == 0)
