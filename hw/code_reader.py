"""Code reader: a dataset's codes read from external memory (the board's DDR4) for the
row gather, the code store of the out-of-core plan (``docs/out_of_core.md``).

**The code store** (:class:`CodeStoreFormat`, ``docs/registers.md``) is feature-major: a
code takes a slot of ``slot_bits`` (``code_bits`` rounded up to a power of two), a memory
word of ``word_bits`` holds ``codes_per_word`` slots, and row ``r``'s code of feature ``f``
is slot ``r % codes_per_word`` of word ``f * column_words + r // codes_per_word``, where a
column has ``column_words`` words (the build's rows rounded up to a power of two, at
least one word). The word's byte address is ``base + word * word_bits / 8``.

**A request** is a row, the lanes' features, the mask of lanes it wants and a tag. Each
lane keeps the last word it read; a wanted lane whose word is another is read: one
Avalon-MM read a cycle, at most ``reads_in_flight`` outstanding (a read is issued only
while the answer FIFO has room for every outstanding answer, so the memory's latency may
vary and ``readdatavalid`` is never refused). **The answers** come in request order: each
lane's code of its feature (a lane not wanted gives whatever its word holds) and the tag.
A node's rows come in row order or its reverse (the bootstrap's roots ascend, a partition
keeps the order for the left child and reverses it for the right), so near the root a
lane reads one word per ``codes_per_word`` rows, and a deep node one word per row.

``invalidate`` forgets every lane's word (a new dataset: its memory rewritten); it must
come while no request is in flight. ``requests.ready`` is low only when ``depth``
requests wait. A request takes a cycle, or one a word it reads; it is answered a few
cycles after its last word comes back.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.wiring import In, Out
import numpy as np

from hw.avalon.bus import read_master_signature
from hw.checks import bits, check_integer, refuse_construction

__all__ = ["CodeReader", "CodeStoreFormat", "request_layout", "answer_layout"]


class CodeStoreFormat:
    """Where each code lies in the code store of a build (``max_rows``, ``features``,
    ``code_bits``) whose memory words are ``word_bits`` wide."""

    def __init__(self, max_rows, features, code_bits, word_bits):
        self.features, self.code_bits, self.word_bits = features, code_bits, word_bits
        self.slot_bits = 1 << (code_bits - 1).bit_length()
        self.codes_per_word = word_bits // self.slot_bits
        self.offset_bits = self.codes_per_word.bit_length() - 1
        self.column_bits = max(0, bits(max_rows - 1) - self.offset_bits)
        self.column_words = 1 << self.column_bits
        self.word_bytes = word_bits // 8
        self.size_bytes = features * self.column_words * self.word_bytes

    def word(self, feature, row):
        """The index of the word that holds row ``row``'s code of ``feature``."""
        return (feature << self.column_bits) | (row >> self.offset_bits)

    def image(self, codes):
        """The store's bytes for ``codes`` (rows x features, at most the build's); rows and
        features past them as 0."""
        codes = np.asarray(codes, dtype=np.int64)
        rows = self.column_words * self.codes_per_word
        if codes.ndim != 2 or codes.shape[0] > rows or codes.shape[1] > self.features:
            raise ValueError(f"codes of shape {codes.shape} do not fit a store of {rows} rows "
                             f"x {self.features} features")
        if codes.size and (codes.min() < 0 or codes.max() >> self.code_bits):
            raise ValueError(f"codes must be between 0 and {(1 << self.code_bits) - 1}")
        padded = np.zeros((self.features, rows), dtype=np.int64)
        padded[:codes.shape[1], :codes.shape[0]] = codes.T
        # each code's slot as little-endian bits, then 8 bits a byte
        slot_bits = (padded[..., None] >> np.arange(self.slot_bits)) & 1
        return np.packbits(slot_bits.astype(np.uint8).reshape(-1), bitorder="little").tobytes()


def request_layout(row_bits, lanes, feature_bits, tag_shape):
    """A row, its lanes' features, the lanes wanted and a tag carried to the answer."""
    return data.StructLayout({"row": row_bits, "features": data.ArrayLayout(feature_bits, lanes),
                              "lanes": lanes, "tag": tag_shape})


def answer_layout(lanes, code_bits, tag_shape):
    """Each lane's code and the request's tag."""
    return data.StructLayout({"codes": data.ArrayLayout(code_bits, lanes), "tag": tag_shape})


def _lowest(mask):
    """The lowest set bit of ``mask``, one-hot (0 for none)."""
    return (mask & (~mask + 1))[:len(mask)]


class CodeReader(wiring.Component):
    """Answers code requests from a code store in memory over an Avalon-MM read master.

    Parameters
    ----------
    max_rows, features, lanes, code_bits : int
        As the row gather's (rows 2 to 65,536, features 1 to 1,024, lanes 1 to 64, code bits
        1 to 10).
    tag_shape : shape
        The tag a request carries to its answer.
    word_bits : int
        Width of a memory word (32 to 1,024, a power of two).
    address_bits : int
        Width of a byte address (16 to 64): the store must lie below ``2**address_bits``.
    depth : int
        Requests that may wait (2 to 1,024).
    reads_in_flight : int
        Reads issued and not yet taken (1 to 256).
    """

    def __init__(self, *, max_rows, features, lanes, code_bits, tag_shape, word_bits=512,
                 address_bits=32, depth=32, reads_in_flight=64):
        try:
            check_integer("max_rows", max_rows, 2, 1 << 16)
            check_integer("features", features, 1, 1024)
            check_integer("lanes", lanes, 1, 64)
            check_integer("code_bits", code_bits, 1, 10)
            check_integer("word_bits", word_bits, 32, 1024)
            if word_bits & (word_bits - 1):
                raise ValueError(f"word_bits must be a power of two, not {word_bits}")
            check_integer("address_bits", address_bits, 16, 64)
            check_integer("depth", depth, 2, 1024)
            check_integer("reads_in_flight", reads_in_flight, 1, 256)
            self.format = CodeStoreFormat(max_rows, features, code_bits, word_bits)
            if self.format.size_bytes > 1 << address_bits:
                raise ValueError(f"a code store of {self.format.size_bytes} bytes does not fit "
                                 f"{address_bits}-bit addresses")
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        self.max_rows, self.features, self.lanes, self.code_bits = max_rows, features, lanes, code_bits
        self.word_bits, self.address_bits = word_bits, address_bits
        self.depth, self.reads_in_flight = depth, reads_in_flight
        self.row_bits, self.feature_bits = bits(max_rows - 1), bits(features - 1)
        super().__init__({
            "requests": In(stream.Signature(request_layout(self.row_bits, lanes, self.feature_bits, tag_shape))),
            "answers": Out(stream.Signature(answer_layout(lanes, code_bits, tag_shape))),
            "bus": Out(read_master_signature(address_bits, word_bits)),
            "base": In(address_bits),
            "invalidate": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        fmt, lanes = self.format, self.lanes
        m.submodules.requests = queue = SyncFIFOBuffered(width=len(self.requests.payload.as_value()),
                                                          depth=self.depth)
        record = data.StructLayout({"mask": lanes, "offset": fmt.offset_bits,
                                    "tag": self.requests.payload.tag.shape()})
        m.submodules.records = records = SyncFIFOBuffered(width=record.size, depth=self.depth)
        m.submodules.words = words = SyncFIFOBuffered(width=self.word_bits, depth=self.reads_in_flight)
        m.d.comb += [queue.w_data.eq(self.requests.payload), queue.w_en.eq(self.requests.valid),
                     self.requests.ready.eq(queue.w_rdy),
                     words.w_data.eq(self.bus.readdata), words.w_en.eq(self.bus.readdatavalid)]

        # The issue side: the lanes the request in hand still has to read. A request's record
        # (its lanes to fill, its slot, its tag) goes to the answer side as it is taken, so
        # its words fill the lanes as they come back.
        head = Signal(self.requests.payload.shape())
        m.d.comb += head.eq(queue.r_data)
        word_index_bits = self.feature_bits + fmt.column_bits
        remaining = Signal(lanes)
        addresses = [Signal(word_index_bits, name=f"address{j}") for j in range(lanes)]
        held = [Signal(word_index_bits, name=f"held{j}") for j in range(lanes)]
        held_valid = Signal(lanes)
        outstanding = Signal(range(self.reads_in_flight + 1))
        next_lane = _lowest(remaining)
        word = Signal(word_index_bits)
        for j in range(lanes):
            with m.If(next_lane[j]):
                m.d.comb += word.eq(addresses[j])
        low = fmt.word_bytes.bit_length() - 1
        m.d.comb += [self.bus.read.eq(remaining.any() & (outstanding < self.reads_in_flight)),
                     self.bus.address.eq(self.base + (word << low))]
        accepted = self.bus.read & ~self.bus.waitrequest
        with m.If(accepted):
            m.d.sync += remaining.eq(remaining & ~next_lane)
            for j in range(lanes):
                with m.If(next_lane[j]):
                    m.d.sync += [held[j].eq(word), held_valid[j].eq(1)]
        # The next request is taken when no read is left, or with the last one; it is then
        # compared with the lanes' words as that read leaves them.
        last_read = remaining.any() & (remaining == next_lane)
        load = Signal()
        m.d.comb += [load.eq(queue.r_rdy & records.w_rdy & (~remaining.any() | (last_read & accepted))),
                     queue.r_en.eq(load), records.w_en.eq(load)]
        wanted = []
        for j in range(lanes):
            address = Cat(head.row[fmt.offset_bits:fmt.offset_bits + fmt.column_bits], head.features[j])
            leaving = last_read & next_lane[j]
            holds = Mux(leaving, word == address, held_valid[j] & (held[j] == address))
            wanted.append(head.lanes[j] & ~holds)
            with m.If(load):
                m.d.sync += addresses[j].eq(address)
        incoming = Signal(record, name="incoming")
        m.d.comb += [incoming.mask.eq(Cat(*wanted)), incoming.offset.eq(head.row[:fmt.offset_bits]),
                     incoming.tag.eq(head.tag), records.w_data.eq(incoming)]
        with m.If(load):                        # (after the read: the new request's lanes win)
            m.d.sync += remaining.eq(incoming.mask)

        with m.If(self.invalidate):
            m.d.sync += held_valid.eq(0)

        # The answer side: the record in hand, the lanes still to fill from the words read.
        taken = self._answers(m, records, words, record)
        m.d.sync += outstanding.eq(outstanding + accepted - taken)
        return m

    def _answers(self, m, records, words, record):
        """Fills each wanted lane's word from the words read, in order, and answers; returns
        the signal that takes a word."""
        fmt, lanes = self.format, self.lanes
        pending, pending_valid, unfilled = Signal(record, name="pending"), Signal(), Signal(lanes)
        lane_words = [Signal(self.word_bits, name=f"word{j}") for j in range(lanes)]
        fill_lane = _lowest(unfilled)
        fill = Signal()
        m.d.comb += [fill.eq(pending_valid & unfilled.any() & words.r_rdy), words.r_en.eq(fill)]
        with m.If(fill):
            m.d.sync += unfilled.eq(unfilled & ~fill_lane)
            for j in range(lanes):
                with m.If(fill_lane[j]):
                    m.d.sync += lane_words[j].eq(words.r_data)
        # (answered with the last word it waits for, that word taken straight from the FIFO)
        last_fill = fill & (unfilled == fill_lane)
        answer = Signal()
        m.d.comb += answer.eq(pending_valid & (~unfilled.any() | last_fill) &
                              (~self.answers.valid | self.answers.ready))
        with m.If(answer):
            m.d.sync += [self.answers.valid.eq(1), self.answers.payload.tag.eq(pending.tag),
                         *[self.answers.payload.codes[j].eq(
                             Mux(last_fill & fill_lane[j], words.r_data, lane_words[j])
                             .word_select(pending.offset, fmt.slot_bits)[:self.code_bits])
                           for j in range(lanes)]]
        with m.Elif(self.answers.ready):
            m.d.sync += self.answers.valid.eq(0)
        take = Signal()
        m.d.comb += [take.eq(records.r_rdy & (~pending_valid | answer)), records.r_en.eq(take)]
        with m.If(take):
            incoming = Signal(record)
            m.d.comb += incoming.eq(records.r_data)
            m.d.sync += [pending.eq(incoming), unfilled.eq(incoming.mask), pending_valid.eq(1)]
        with m.Elif(answer):
            m.d.sync += pending_valid.eq(0)
        return fill
