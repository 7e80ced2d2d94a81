"""Pass engine: the datapath of the planned out-of-core PE (``docs/out_of_core.md``), a
node's passes of lanes and its partition through the row gather, the histogram lanes and
the pass combiner.

Reference: ``sw.methods.forest.histogram`` (``_draw_lazily`` with ``lanes``, then
``_best_of_node`` and the partition of ``_grow_children``). A PE's controller sends jobs:

* a **gather pass** (``partition`` low): a node's segment of a bank, the features its
  lanes drew (``drawn``: a mask of the lanes drawn), the non-constant features still
  needed, whether the pass is the node's first, and the node's weighted class totals. The
  :class:`~hw.row_gather.RowGather` gathers the node's rows once; every drawn lane
  (:class:`~hw.histogram_lane.HistogramLane`) takes each row's code of its feature, with
  the node's totals and rows as its histogram's header, and hands its split to the
  :class:`~hw.pass_combiner.PassCombiner`, which answers the pass on ``results``: the
  lanes used, the last of them, and the node's best so far. A pass over no rows draws no
  lane (a lane's scanner waits for a segment's entries): its result uses none.
* a **partition** (``partition`` high): the node's rows split by ``features[0] <=
  threshold`` into the other bank (left upwards, right downwards); the rows going left
  come out on ``partitioned``.

The row gather's beats go to the drawn lanes side by side: a beat leaves once every
drawn lane took it, each lane's ``valid`` held until that lane took it. A job is taken
once the one before has handed out all it sends (its job, its headers, its beats), so
each beat belongs to the job in the register. Loads (``dataset``, ``weights``, ``roots``)
go to the row gather as they are.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hw.checks import bits, check_integer, refuse_construction
from hw.histogram_lane import HistogramLane
from hw.pass_combiner import PassCombiner, pass_result_layout
from hw.row_gather import RowGather, code_store_members, connect_code_store

__all__ = ["PassEngine", "engine_job_layout", "pass_overhead_cycles"]


def pass_overhead_cycles(splits):
    """Cycles a gather pass takes, without stalls, beyond one per row and one per cell of
    its lanes' fullest histogram, when ``splits`` of its lanes find a split: at most
    ``24 + 3 (splits - 1) + 2`` (``+ 2`` from the second split on; 24 for none or one).
    Measured by the testbench (``pass_cycles_without_stalls``, which holds the engine to
    it within 4 cycles): the job's register, the row gather's pipeline and output FIFO,
    the histogram unit's turnaround (``hw.histogram.TURNAROUND_CYCLES``), the scanner's
    last score and compare, the pass combiner's collection and choice, the lane
    combiner's compare of each split after the first (a split taken at most every three
    cycles, ``hw.pe.combiner``), and the result's offer."""
    return 24 + (3 * (splits - 1) + 2 if splits > 1 else 0)


def engine_job_layout(row_bits, lanes, feature_bits, code_bits, classes, count_bits):
    """A job: the row gather's (bank, segment, features, a partition's threshold), the
    pass header's (lanes drawn, features needed, first pass) and the node's class totals."""
    return data.StructLayout({
        "partition": 1, "bank": 1, "base": row_bits, "count": row_bits + 1,
        "features": data.ArrayLayout(feature_bits, lanes), "threshold": code_bits,
        "drawn": lanes, "needed": range(lanes + 1), "first": 1,
        "class_counts": data.ArrayLayout(count_bits, classes),
    })


class PassEngine(wiring.Component):
    """A node's gather passes through ``lanes`` histogram lanes, and its partition.

    Parameters
    ----------
    max_rows, features, code_bits, classes : int
        As :class:`~hw.row_gather.RowGather` (which checks them).
    lanes : int
        Histogram lanes, features gathered a pass (1 to 16, as the pass combiner).
    count_bits : int
        Width of a weighted class count: a node's weights sum below ``2**count_bits``
        (1 to 24); a row's weight is at most ``2**count_bits - 1``.
    pass_bits : int
        Width of a node's pass count (1 to 8): ``features`` are at most
        ``lanes * 2**pass_bits``, so every feature a node draws fits its passes.
    code_store, code_word_bits :
        Where the row gather keeps the codes (``"chip"`` or ``"memory"``: then its
        ``codes`` master and ``code_base`` are the engine's) and a memory word's width.
    """

    def __init__(self, *, max_rows=4096, features=32, lanes=4, code_bits=8, classes=8,
                 count_bits=13, pass_bits=4, code_store="chip", code_word_bits=512):
        try:
            check_integer("lanes", lanes, 1, 16)
            check_integer("count_bits", count_bits, 1, 24)
            check_integer("pass_bits", pass_bits, 1, 8)
            if isinstance(features, int) and features > lanes << pass_bits:
                raise ValueError(f"features must be at most lanes * 2**pass_bits = {lanes << pass_bits} "
                                 f"(a node draws them in at most 2**pass_bits passes), not {features}")
            self._gather = RowGather(max_rows=max_rows, features=features, lanes=lanes,
                                     code_bits=code_bits, classes=classes, weight_bits=count_bits,
                                     code_store=code_store, code_word_bits=code_word_bits)
            self._lanes = [HistogramLane(classes=classes, count_bits=count_bits, code_bits=code_bits,
                                         row_bits=bits(max_rows)) for _ in range(lanes)]
            self._combiner = PassCombiner(lanes=lanes, pass_bits=pass_bits, classes=classes,
                                          code_bits=code_bits, count_bits=count_bits)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        self.max_rows, self.features, self.lanes = max_rows, features, lanes
        self.code_bits, self.classes, self.count_bits, self.pass_bits = code_bits, classes, count_bits, pass_bits
        gather = self._gather
        self.row_bits, self.feature_bits = gather.row_bits, gather.feature_bits
        self.code_store, self.code_word_bits = code_store, code_word_bits
        super().__init__({
            **code_store_members(gather),
            "dataset": gather.signature.members["dataset"],
            "weights": In(stream.Signature(data.StructLayout({"row": self.row_bits,
                                                             "weight": count_bits}))),
            "roots": In(stream.Signature(data.StructLayout({"row": self.row_bits, "last": 1}))),
            "jobs": In(stream.Signature(engine_job_layout(self.row_bits, lanes, self.feature_bits,
                                                          code_bits, classes, count_bits))),
            "results": Out(stream.Signature(pass_result_layout(lanes, pass_bits, classes, code_bits,
                                                               count_bits))),
            "partitioned": Out(stream.Signature(data.StructLayout({"left": self.row_bits + 1}))),
        })

    def elaborate(self, platform):
        m = Module()
        gather, lanes, combiner = self._gather, self._lanes, self._combiner
        m.submodules.gather, m.submodules.combiner = gather, combiner
        for j, lane in enumerate(lanes):
            m.submodules[f"lane{j}"] = lane
            wiring.connect(m, lane.splits, combiner.splits[j])
        for name in ("dataset", "weights", "roots"):
            wiring.connect(m, wiring.flipped(getattr(self, name)), getattr(gather, name))
        connect_code_store(m, gather, self)
        wiring.connect(m, combiner.results, wiring.flipped(self.results))
        wiring.connect(m, gather.partitioned, wiring.flipped(self.partitioned))

        # The job in hand, and what it has still to send: its row gather job, its pass
        # header, its lanes' headers, its beats.
        job = Signal.like(self.jobs.payload)
        send_job, send_pass, send_headers = Signal(), Signal(), Signal(self.lanes)
        beats_due = Signal()
        m.d.comb += self.jobs.ready.eq(~send_job & ~send_pass & ~send_headers.any() & ~beats_due)
        with m.If(self.jobs.valid & self.jobs.ready):
            offered = self.jobs.payload
            drawn = Mux(offered.partition | (offered.count == 0), 0, offered.drawn)
            m.d.sync += [job.eq(offered), job.drawn.eq(drawn), send_job.eq(1),
                         send_pass.eq(~offered.partition), send_headers.eq(drawn),
                         beats_due.eq(~offered.partition & (offered.count != 0))]

        m.d.comb += [gather.jobs.valid.eq(send_job),
                     *[getattr(gather.jobs.payload, name).eq(getattr(job, name))
                       for name in ("partition", "bank", "base", "count", "features", "threshold")],
                     gather.jobs.payload.drawn.eq(job.drawn)]
        with m.If(send_job & gather.jobs.ready):
            m.d.sync += send_job.eq(0)
        m.d.comb += [combiner.passes.valid.eq(send_pass), combiner.passes.payload.drawn.eq(job.drawn),
                     combiner.passes.payload.needed.eq(job.needed),
                     combiner.passes.payload.first.eq(job.first)]
        with m.If(send_pass & combiner.passes.ready):
            m.d.sync += send_pass.eq(0)
        for j, lane in enumerate(lanes):
            m.d.comb += [lane.headers.valid.eq(send_headers[j]),
                         lane.headers.payload.class_counts.eq(job.class_counts),
                         lane.headers.payload.rows.eq(job.count)]
            with m.If(send_headers[j] & lane.headers.ready):
                m.d.sync += send_headers[j].eq(0)
        self._fan_out(m, gather.beats, job.drawn, beats_due)
        return m

    def _fan_out(self, m, beats, drawn, beats_due):
        """Each beat to every drawn lane, each taking its own feature's code."""
        taken = Signal(self.lanes)
        done = []
        for j, lane in enumerate(self._lanes):
            samples = lane.samples
            m.d.comb += [samples.valid.eq(beats.valid & drawn[j] & ~taken[j]),
                         samples.payload.code.eq(beats.payload.codes[j]),
                         samples.payload.label_one_hot.eq(beats.payload.label_one_hot),
                         samples.payload.weight_less_one.eq(beats.payload.weight_less_one),
                         samples.payload.last.eq(beats.payload.last)]
            done.append(~drawn[j] | taken[j] | samples.ready)
        m.d.comb += beats.ready.eq(Cat(*done).all())
        with m.If(beats.valid & beats.ready):
            m.d.sync += taken.eq(0)
            with m.If(beats.payload.last):
                m.d.sync += beats_due.eq(0)
        with m.Elif(beats.valid):
            m.d.sync += taken.eq(taken | Cat(*[lane.samples.valid & lane.samples.ready
                                               for lane in self._lanes]))
