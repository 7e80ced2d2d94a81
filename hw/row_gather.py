"""Row gather: the planned out-of-core PE's store of a dataset held on the chip, its
node row lists, and the two passes a node makes over its rows (``docs/out_of_core.md``).

Reference: the gathers and the partition of ``sw.methods.forest.histogram``
(``codes[rows, f]``, ``labels[rows]``, ``weights[rows]``; a node's rows split by ``code <=
threshold``). The dataset is kept row-major: one word per row holds all its codes and its
label, so one read a cycle serves every lane, each taking its own feature's code. A
tree's weights (its bootstrap) are a memory of their own. A node's rows are a segment
``[base, base + count)`` of one of two banks of row ids.

* **Gather** (a job with ``partition`` low): the node's rows in bank order, one a cycle,
  each as a beat with its row, label one-hot, weight less one and the codes of the job's
  ``lanes`` features (``last`` on the node's last row).
* **Partition** (``partition`` high): each row of the node goes left when its code of
  ``features[0]`` is at most ``threshold``. It is written into the other bank, in the same
  segment: the rows going left upwards from ``base``, those going right downwards from
  ``base + count - 1``. So the left child is ``[base, base + left)`` and the right child
  ``[base + left, base + count)`` of the other bank. A histogram does not depend on the
  order of its rows, so no queue is needed. The number going left comes out on
  ``partitioned``.

Reads are issued only while the output FIFO has room for every read in flight, so the
consumer's ``ready`` reaches no read enable. Loads (``dataset``, ``weights``, ``roots``)
are taken only while no job runs. ``roots`` writes a tree's root rows into bank 0 from
address 0 on (``last`` ends the list). Cycles without stalls: a job of ``count`` rows
takes ``count`` cycles plus the pipeline's five.

**Codes in memory** (``code_store="memory"``): the chip keeps only the labels (``dataset``
carries a row's label, :func:`label_layout`) and a :class:`~hw.code_reader.CodeReader`
reads the codes from the code store at ``code_base`` through the ``codes`` read master:
each row of a job asks it for the codes of the job's drawn lanes (a partition's lane 0).
Up to 32 rows are in flight; a label loaded forgets the words the reader holds.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.avalon.bus import read_master_signature
from hw.checks import bits, check_integer, refuse_construction
from hw.code_reader import CodeReader

__all__ = ["RowGather", "job_layout", "beat_layout", "dataset_layout", "label_layout", "CODE_STORES",
           "code_store_members", "connect_code_store"]

#: Beats the output FIFO holds (the four stages' reads in flight included): its output
#: register and a storage of 8 words, a power of two, so no pointer can leave it.
FIFO_DEPTH = 9
#: The same with the codes in memory: rows in flight cover the memory's latency.
MEMORY_FIFO_DEPTH = 33
#: Where the codes are kept: ``"chip"`` (a memory word per row) or ``"memory"`` (an
#: external code store read by :class:`hw.code_reader.CodeReader`).
CODE_STORES = ("chip", "memory")


def dataset_layout(row_bits, features, code_bits, label_bits):
    """One row of the dataset: its index, its codes (feature order) and its label."""
    return data.StructLayout({"row": row_bits, "codes": data.ArrayLayout(code_bits, features),
                              "label": label_bits})


def code_store_members(inner):
    """The members through which ``inner`` (a row gather, or a block around one) reads its
    codes from memory (``codes``, ``code_base``), for a block around it to pass on; none
    when it keeps them on the chip."""
    return {name: inner.signature.members[name] for name in ("codes", "code_base")
            if name in inner.signature.members}


def connect_code_store(m, inner, outer):
    """``inner``'s code store members to ``outer``'s own (:func:`code_store_members`)."""
    if "codes" in inner.signature.members:
        wiring.connect(m, inner.codes, wiring.flipped(outer.codes))
        m.d.comb += inner.code_base.eq(outer.code_base)


def label_layout(row_bits, label_bits):
    """One row's label, all the dataset a row gather with its codes in memory holds."""
    return data.StructLayout({"row": row_bits, "label": label_bits})


def job_layout(row_bits, lanes, feature_bits, code_bits):
    """A node's pass: its bank and segment, the lanes' features (a partition's is the
    first), the lanes a gather draws (the codes read from memory) and a partition's
    threshold."""
    return data.StructLayout({
        "partition": 1, "bank": 1, "base": row_bits, "count": row_bits + 1,
        "features": data.ArrayLayout(feature_bits, lanes), "drawn": lanes, "threshold": code_bits,
    })


def beat_layout(row_bits, lanes, code_bits, classes, weight_bits):
    """One gathered row: its index, label one-hot, weight less one, and per lane the code
    of that lane's feature; ``last`` on the node's last row."""
    return data.StructLayout({
        "row": row_bits, "label_one_hot": classes, "weight_less_one": weight_bits,
        "codes": data.ArrayLayout(code_bits, lanes), "last": 1,
    })


class RowGather(wiring.Component):
    """A dataset on the chip, a tree's weights, two banks of node rows, and the gather and
    partition passes over a node's rows.

    Parameters
    ----------
    max_rows : int
        Rows of the dataset (2 to 65,536).
    features : int
        Features of the dataset (1 to 1,024).
    lanes : int
        Codes gathered per row (1 to 64).
    code_bits : int
        Width of a code (1 to 10).
    classes : int
        Number of classes (2 to 64).
    weight_bits : int
        Width of a row's weight (1 to 24).
    """

    def __init__(self, *, max_rows=4096, features=32, lanes=8, code_bits=8, classes=8, weight_bits=12,
                 code_store="chip", code_word_bits=512):
        try:
            check_integer("max_rows", max_rows, 2, 1 << 16)
            check_integer("features", features, 1, 1024)
            check_integer("lanes", lanes, 1, 64)
            check_integer("code_bits", code_bits, 1, 10)
            check_integer("classes", classes, 2, 64)
            check_integer("weight_bits", weight_bits, 1, 24)
            if code_store not in CODE_STORES:
                raise ValueError(f"code_store must be one of {CODE_STORES}, not {code_store!r}")
            self.row_bits, self.label_bits = bits(max_rows - 1), bits(classes - 1)
            self._reader = None
            if code_store == "memory":
                check_integer("code_word_bits", code_word_bits, 32, 1024)
                if code_word_bits & (code_word_bits - 1):
                    raise ValueError(f"code_word_bits must be a power of two, not {code_word_bits}")
                self._reader = CodeReader(
                    max_rows=max_rows, features=features, lanes=lanes, code_bits=code_bits,
                    tag_shape=self._tag_layout(weight_bits), word_bits=code_word_bits,
                    depth=MEMORY_FIFO_DEPTH)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        self.max_rows, self.features, self.lanes = max_rows, features, lanes
        self.code_bits, self.classes, self.weight_bits = code_bits, classes, weight_bits
        self.code_store, self.code_word_bits = code_store, code_word_bits
        self.feature_bits = bits(features - 1)
        members = {
            "dataset": In(stream.Signature(
                dataset_layout(self.row_bits, features, code_bits, self.label_bits) if code_store == "chip"
                else label_layout(self.row_bits, self.label_bits))),
            "weights": In(stream.Signature(data.StructLayout({"row": self.row_bits,
                                                             "weight": weight_bits}))),
            "roots": In(stream.Signature(data.StructLayout({"row": self.row_bits, "last": 1}))),
            "jobs": In(stream.Signature(job_layout(self.row_bits, lanes, self.feature_bits, code_bits))),
            "beats": Out(stream.Signature(beat_layout(self.row_bits, lanes, code_bits, classes,
                                                      weight_bits))),
            "partitioned": Out(stream.Signature(data.StructLayout({"left": self.row_bits + 1}))),
        }
        if self._reader is not None:
            members.update(codes=Out(read_master_signature(self._reader.address_bits, code_word_bits)),
                           code_base=In(self._reader.address_bits))
        super().__init__(members)

    def _tag_layout(self, weight_bits):
        """What a row's code request carries to its answer (codes in memory)."""
        return data.StructLayout({"row": self.row_bits, "label": self.label_bits, "weight": weight_bits,
                                  "last": 1})

    def elaborate(self, platform):
        m = Module()
        in_memory = self._reader is not None
        row_layout = data.StructLayout({"label": self.label_bits} if in_memory else
                                       {"codes": data.ArrayLayout(self.code_bits, self.features),
                                        "label": self.label_bits})
        m.submodules.rows = rows = Memory(shape=row_layout, depth=self.max_rows, init=[])
        m.submodules.weights = weights = Memory(shape=self.weight_bits, depth=self.max_rows, init=[])
        banks = [Memory(shape=self.row_bits, depth=self.max_rows, init=[]) for _ in range(2)]
        m.submodules.bank0, m.submodules.bank1 = banks
        depth = MEMORY_FIFO_DEPTH if in_memory else FIFO_DEPTH
        m.submodules.fifo = fifo = SyncFIFOBuffered(width=len(self.beats.payload.as_value()), depth=depth)
        rows_write, rows_read = rows.write_port(), rows.read_port()
        weights_write, weights_read = weights.write_port(), weights.read_port()
        bank_writes = [bank.write_port() for bank in banks]
        bank_reads = [bank.read_port() for bank in banks]

        job, active, idle = Signal.like(self.jobs.payload), Signal(), Signal()
        self._loads(m, idle, rows_write, weights_write, bank_writes[0])
        # Stage 0 issues a row's bank read; stage 1 has the row id (the dataset and weight
        # reads issued); stage 2 registers the row's word and weight off the block RAMs;
        # stage 3 selects each lane's code into the beat; stage 4 has the beat (or the
        # partition's write). Reads are issued while the FIFO has room for all in flight.
        # (Codes in memory: stage 2 asks the code reader instead; its answer is the beat.)
        position = Signal(self.row_bits + 1)
        stages = [Signal(name=f"stage{k}_valid") for k in (1, 2, 3, 4)]
        lasts = [Signal(name=f"stage{k}_last") for k in (1, 2, 3, 4)]
        in_flight = Signal(range(depth + 1))
        issue = Signal()
        m.d.comb += issue.eq(active & (position < job.count) & (fifo.level + in_flight < depth))
        with m.If(issue):
            m.d.sync += position.eq(position + 1)
        m.d.sync += [stages[0].eq(issue), lasts[0].eq(position == job.count - 1),
                     *[stage.eq(before) for stage, before in zip(stages[1:], stages)],
                     *[last.eq(before) for last, before in zip(lasts[1:], lasts)]]
        for k, read in enumerate(bank_reads):
            m.d.comb += [read.addr.eq(job.base + position), read.en.eq(issue & (job.bank == k))]
        row_id = Signal(self.row_bits)
        m.d.comb += row_id.eq(Mux(job.bank, bank_reads[1].data, bank_reads[0].data))
        m.d.comb += [rows_read.addr.eq(row_id), weights_read.addr.eq(row_id)]
        row_ids = [Signal(self.row_bits, name=f"stage{k}_row") for k in (2, 3, 4)]
        m.d.sync += [row_ids[0].eq(row_id), row_ids[1].eq(row_ids[0]), row_ids[2].eq(row_ids[1])]

        beat = Signal(self.beats.payload.shape())
        if in_memory:
            beat_valid, beat_last, beat_row = self._codes_from_memory(m, job, stages[1], lasts[1], row_ids[0],
                                                                      rows_read, weights_read, beat, idle)
            m.d.sync += in_flight.eq(in_flight + issue - beat_valid)
        else:
            word, weight = Signal.like(rows_read.data, name="word"), Signal(self.weight_bits, name="weight")
            m.d.sync += [word.eq(rows_read.data), weight.eq(weights_read.data)]
            m.d.sync += [beat.row.eq(row_ids[1]), beat.last.eq(lasts[2]),
                         beat.label_one_hot.eq(1 << word.label), beat.weight_less_one.eq(weight - 1),
                         *[beat.codes[k].eq(word.codes[job.features[k]]) for k in range(self.lanes)]]
            m.d.comb += in_flight.eq(sum(stages))
            beat_valid, beat_last, beat_row = stages[3], lasts[3], row_ids[2]
        m.d.comb += [fifo.w_data.eq(beat), fifo.w_en.eq(beat_valid & ~job.partition),
                     self.beats.payload.eq(fifo.r_data), self.beats.valid.eq(fifo.r_rdy),
                     fifo.r_en.eq(self.beats.ready)]

        done = self._partition(m, job, beat_valid, beat_last, beat, beat_row, bank_writes)
        m.d.comb += idle.eq(~active & (in_flight == 0) & ~self.partitioned.valid)
        m.d.comb += self.jobs.ready.eq(idle)
        with m.If(self.jobs.valid & idle):
            m.d.sync += [job.eq(self.jobs.payload), active.eq(self.jobs.payload.count != 0),
                         position.eq(0)]
        with m.If(issue & (position == job.count - 1)):
            m.d.sync += active.eq(0)
        # (a partition of no rows sends none left at once)
        job_in = self.jobs.payload
        empty_partition = self.jobs.valid & idle & job_in.partition & (job_in.count == 0)
        with m.If(empty_partition):
            m.d.sync += self.partitioned.payload.left.eq(0)
        with m.If(done | empty_partition):
            m.d.sync += self.partitioned.valid.eq(1)
        with m.Elif(self.partitioned.ready):
            m.d.sync += self.partitioned.valid.eq(0)
        return m

    def _codes_from_memory(self, m, job, valid, last, row, rows_read, weights_read, beat, idle):
        """Stage 2 asks the code reader for the row's codes of the job's lanes (its label,
        weight and place carried along); its answer becomes the beat. Returns the beat's
        valid, last and row."""
        m.submodules.reader = reader = self._reader
        wiring.connect(m, reader.bus, wiring.flipped(self.codes))
        request = reader.requests.payload
        m.d.comb += [reader.base.eq(self.code_base), reader.invalidate.eq(self.dataset.valid & idle),
                     reader.requests.valid.eq(valid), request.row.eq(row), request.features.eq(job.features),
                     request.lanes.eq(Mux(job.partition, 1, job.drawn)),
                     request.tag.row.eq(row), request.tag.label.eq(rows_read.data.label),
                     request.tag.weight.eq(weights_read.data), request.tag.last.eq(last),
                     reader.answers.ready.eq(1)]
        beat_valid = Signal()
        answer = reader.answers.payload
        m.d.sync += [beat_valid.eq(reader.answers.valid), beat.row.eq(answer.tag.row),
                     beat.last.eq(answer.tag.last), beat.label_one_hot.eq(1 << answer.tag.label),
                     beat.weight_less_one.eq(answer.tag.weight - 1), beat.codes.eq(answer.codes)]
        return beat_valid, beat.last, beat.row

    def _partition(self, m, job, valid, last, beat, row, bank_writes):
        """The partition's writes into the other bank (stage 3): left rows upwards from
        the base, right rows downwards from the segment's end. Returns the cycle its last
        row is written."""
        left, right = Signal(self.row_bits + 1), Signal(self.row_bits + 1)
        goes_left = beat.codes[0] <= job.threshold
        writing = valid & job.partition
        for k, write in enumerate(bank_writes[:2]):
            with m.If(writing & (job.bank != k)):
                m.d.comb += [write.addr.eq(Mux(goes_left, job.base + left,
                                               job.base + job.count - 1 - right)),
                             write.data.eq(row), write.en.eq(1)]
        with m.If(writing):
            m.d.sync += [left.eq(left + goes_left), right.eq(right + ~goes_left)]
            with m.If(last):
                m.d.sync += [left.eq(0), right.eq(0)]
                # (a job starts only once the count before was taken: never while it waits)
                with m.If(~self.partitioned.valid):
                    m.d.sync += self.partitioned.payload.left.eq(left + goes_left)
        return writing & last

    def _loads(self, m, idle, rows_write, weights_write, roots_write):
        """The dataset's rows, a tree's weights and its root rows, taken while no job runs."""
        m.d.comb += [self.dataset.ready.eq(idle), self.weights.ready.eq(idle), self.roots.ready.eq(idle),
                     rows_write.addr.eq(self.dataset.p.row),
                     rows_write.data.label.eq(self.dataset.p.label),
                     *([] if self._reader is not None else [rows_write.data.codes.eq(self.dataset.p.codes)]),
                     rows_write.en.eq(self.dataset.valid & idle),
                     weights_write.addr.eq(self.weights.p.row),
                     weights_write.data.eq(self.weights.p.weight),
                     weights_write.en.eq(self.weights.valid & idle)]
        root_position = Signal(self.row_bits)
        with m.If(self.roots.valid & idle):
            m.d.comb += [roots_write.addr.eq(root_position), roots_write.data.eq(self.roots.p.row),
                         roots_write.en.eq(1)]
            m.d.sync += root_position.eq(Mux(self.roots.p.last, 0, root_position + 1))
