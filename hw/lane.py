"""One feature lane of the processing element: a list bank, a Gini calculator and a partition unit.

A lane holds the in-bag lists of the features ``f`` with ``f % lanes == lane``, feature
``f`` in *slot* ``f // lanes``: slot ``s`` occupies bank addresses
``s * list_rows .. s * list_rows + list_rows - 1``, entry ``i`` of the list at offset ``i``.
Every node of a tree is a segment ``[start, start + length)`` at the same offsets in every
list (``docs/algorithm.md`` section 4), so one (start, length) pair addresses a node in all
slots of all lanes.

The lane works on commands from the PE controller, one at a time:

* ``CONSTANT``: for every used slot, compare the codes of the segment's first and last
  entries (the list is sorted, so equal means constant) and keep one flag per slot;
  ``nonconstant`` counts the slots that are not constant. 2 cycles per slot.
* scan jobs (stream ``jobs``, taken whenever no command runs): stream the segment of one
  slot into the Gini calculator and offer its best split on ``results``, tagged with the
  job's visit index. The job's segment read starts as soon as the job is queued (and
  the reader free), its header goes to the calculator when it takes it, so a job takes
  the calculator's segment latency (``GiniScanner``), one cycle more when at most one
  class is present (the first entry is read two cycles after the header), and the lane
  is idle again the cycle after its result is taken.
* ``SCAN``: a scan of slot 0 as visit 0, without a job (thesis mode's one list: the
  controller decides it from the node's review bits, and a command is a register
  where a job would pass the queue's counters). Its read begins with the command, its
  header goes with it or as soon as the calculator takes it (``Send the header``).
* ``GO_LEFT``: stream the segment of one slot and emit, per row, whether its code is at most
  the threshold (``decisions_out``): the go-left bits of a split on this lane's feature.
  Its read begins a cycle after the command, at the reader's address register (loaded with
  the command: the slot's offset plus the segment start).
* ``PARTITION``: stream the segment of every used slot, back to back, through the partition
  unit (which learnt the go-left bits on ``decisions_in``); its writes put the stably
  partitioned rows back in place. The command ends when the last entry is in, about
  ``slots x (length + 3)`` cycles; the last slot's rows going right are written after it
  (``draining``), while the PE computes the next job's go-left bits.

Entries in the bank carry ``code`` packed with the label above it
(``packed = code | label << code_bits``), so the Gini calculator needs no label memory.
The bank stores an entry without its ``last`` flag (the reader knows where a segment
ends) and with ``weight - 1`` (an in-bag entry weighs at least 1): a bit narrower each,
which puts the 2,048-row PEs' 42-bit entries into the 40-bit M20K configuration.
"""

from types import SimpleNamespace

from amaranth.hdl import Array, Const, Module, Mux, Signal
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.gini import GiniScanner, split_layout
from hw.inbag import inbag_layout
from hw.partition import PartitionUnit, decision_layout
from hw.skid import SkidOutput

__all__ = ["LaneCommand", "FeatureLane", "lane_slots", "job_layout", "result_layout"]


class LaneCommand(enum.Enum, shape=2):
    SCAN = 0
    CONSTANT = 1
    GO_LEFT = 2
    PARTITION = 3


def lane_slots(features, lane, lanes):
    """Lists lane ``lane`` of ``lanes`` holds for ``features`` features (features ``lane``,
    ``lane + lanes``, ...; at least one slot, so that every bank has a depth)."""
    return max(1, -(-(features - lane) // lanes))


def job_layout(slot_bits, visit_bits):
    """A scan job: which slot, and the feature's place in the node's visit order."""
    return data.StructLayout({"slot": slot_bits, "visit": visit_bits})


def result_layout(slot_bits, visit_bits, classes, code_bits, count_bits, position_bits):
    """A scan result: the job (slot, visit index) and the segment's best split."""
    return data.StructLayout({
        "slot": slot_bits,
        "visit": visit_bits,
        "split": split_layout(classes, code_bits, count_bits, position_bits),
    })


class FeatureLane(wiring.Component):
    """Bank of in-bag lists plus the per-lane units (see the module docstring).

    Parameters (all checked by :class:`hw.pe.ProcessingElement`)
    ----------
    slots : int
        Slots the lane is addressed with (features per lane, rounded up over all lanes).
    bank_slots : int or None
        Lists the bank stores (this lane's features; default ``slots``): a lane past the
        last feature in some slot never uses that slot, so its bank leaves it out.
    list_rows : int
        Capacity of one list (largest number of distinct in-bag rows).
    row_bits, weight_bits, code_bits, label_bits, count_bits : int
    classes : int
    visit_bits : int
    """

    def __init__(self, *, slots, list_rows, max_rows, max_samples, code_bits, classes, count_bits,
                 visit_bits, bank_slots=None):
        self.slots = slots
        self.bank_slots = slots if bank_slots is None else bank_slots
        self.list_rows = list_rows
        self.max_rows = max_rows
        self.max_samples = max_samples
        self.code_bits = code_bits
        self.classes = classes
        self.label_bits = max(1, (classes - 1).bit_length())
        self.packed_bits = code_bits + self.label_bits
        self.count_bits = count_bits
        self.visit_bits = visit_bits
        self.row_bits = (max_rows - 1).bit_length()
        self.weight_bits = max_samples.bit_length()
        self.slot_bits = max(1, (slots - 1).bit_length())
        self.position_bits = list_rows.bit_length()         # 0 .. list_rows
        self.entry_layout = inbag_layout(self.packed_bits, self.row_bits, self.weight_bits)
        # What the bank holds of an entry: no last flag, the weight less one.
        self.stored_layout = data.StructLayout({"row": self.row_bits, "code": self.packed_bits,
                                                "weight_less_one": (max_samples - 1).bit_length()})
        self.address_bits = max(1, (slots * list_rows - 1).bit_length())
        super().__init__({
            # Filling the lists (driven by the PE while it streams in-bag lists).
            "fill_enable": In(1),
            "fill_address": In(self.address_bits),
            "fill_entry": In(self.entry_layout),
            # Commands.
            "command": In(LaneCommand),
            "go": In(1),
            "busy": Out(1),
            "segment_start": In(self.position_bits),
            "segment_length": In(self.position_bits),
            "slots_used": In(self.slot_bits + 1),
            "go_left_slot": In(self.slot_bits),
            "threshold": In(code_bits),
            "totals": In(data.ArrayLayout(count_bits, classes)),
            "min_samples_leaf": In(self.position_bits),
            # Constant flags.
            "nonconstant": Out(self.slot_bits + 1),
            "constant_slot": In(self.slot_bits),
            "constant_flag": Out(1),
            # Scanning.
            "jobs": In(stream.Signature(job_layout(self.slot_bits, visit_bits))),
            "results": Out(stream.Signature(result_layout(self.slot_bits, visit_bits, classes, code_bits,
                                                          count_bits, self.position_bits))),
            # Partitioning.
            "decisions_out": Out(stream.Signature(decision_layout(self.row_bits))),
            "decisions_in": In(stream.Signature(decision_layout(self.row_bits))),
            "draining": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        s = SimpleNamespace()           # the units, registers and wires the states share
        self._units(m, s)
        self._command_registers(s)
        self._segment_reader(m, s)
        self._bank_writes(m, s)
        self._constant_check_registers(m, s)

        m.d.comb += [self.results.p.visit.eq(s.job.visit), self.results.p.slot.eq(s.job.slot)]
        m.d.comb += self.results.p.split.eq(s.scanner.splits.p)
        # The header's payload whatever the state (only its valid depends on it): the
        # scanner loads the payload in every cycle it waits, and its sum of the totals was
        # the end of a path from this FSM's state (a 2-PE trainer placed at 98.6 MHz).
        m.d.comb += [s.scanner.segments.p.class_counts.eq(self.totals),
                     s.scanner.segments.p.rows.eq(self.segment_length)]

        with m.FSM(init="Idle"):
            self._idle(m, s)
            self._header(m, s)
            self._check_constant_features(m, s)
            self._scan(m, s)
            self._go_left(m, s)
            self._partition(m, s)
        return m

    def _units(self, m, s):
        """The list bank, the constant flags, the Gini scanner, the partition unit, the job queue."""
        m.submodules.bank = bank = Memory(shape=self.stored_layout,
                                         depth=self.bank_slots * self.list_rows, init=[])
        s.bank_write = bank.write_port()
        s.bank_read = bank.read_port()
        m.submodules.constants = constants = Memory(shape=1, depth=self.slots, init=[])
        s.constant_write = constants.write_port()
        constant_read = constants.read_port()
        m.d.comb += [constant_read.addr.eq(self.constant_slot), self.constant_flag.eq(constant_read.data)]

        m.submodules.scanner = s.scanner = GiniScanner(
            classes=self.classes, count_bits=self.count_bits, code_bits=self.code_bits,
            row_bits=self.position_bits)
        m.submodules.partition = s.partition = PartitionUnit(
            max_rows=self.max_rows, max_samples=self.max_samples, code_bits=self.packed_bits,
            address_bits=self.address_bits, max_segment=self.list_rows)
        # A job is queued with its segment's bank addresses, worked out as it comes in, so
        # a queued job's read begins from the queue's output through no slot select.
        s.queue_layout = data.StructLayout({
            "job": job_layout(self.slot_bits, self.visit_bits),
            "base": self.address_bits, "base_next": self.address_bits})
        m.submodules.job_queue = s.job_queue = SyncFIFO(width=s.queue_layout.size, depth=self.slots)
        pushed = Signal(s.queue_layout)
        s.offset = Array(Const(slot * self.list_rows, self.address_bits) for slot in range(self.slots))
        offset = s.offset[self.jobs.p.slot]
        m.d.comb += [pushed.job.eq(self.jobs.payload),
                     pushed.base.eq(offset + self.segment_start),
                     pushed.base_next.eq(offset + self.segment_start + 1)]
        m.d.comb += [
            s.job_queue.w_data.eq(pushed), s.job_queue.w_en.eq(self.jobs.valid),
            self.jobs.ready.eq(s.job_queue.w_rdy),
            s.scanner.min_samples_leaf.eq(self.min_samples_leaf),
        ]
        wiring.connect(m, wiring.flipped(self.decisions_in), s.partition.decisions)

    def _command_registers(self, s):
        """The command's operands, held while it runs."""
        s.start = Signal.like(self.segment_start)
        s.length = Signal.like(self.segment_length)
        s.slots_used = Signal.like(self.slots_used)
        s.slot = Signal(self.slot_bits + 1)
        s.job = Signal(job_layout(self.slot_bits, self.visit_bits))
        s.threshold = Signal(self.code_bits)
        s.segment_base = Signal(self.address_bits)     # the partitioned slot's first address
        s.prefetched = Signal()                        # the queued job's read has begun

    def _begin(self, m, s, address, following, length, rest):
        """Begin a segment read at ``address`` (``following`` is ``address + 1``, ``rest``
        is ``length - 1``: each worked out before the reader's select, not after it), or,
        with ``address`` None, at the reader's own address register, loaded beforehand
        (a go-left's slot, a partition's next slot): the bank's read address then selects
        among three sources, not six."""
        m.d.comb += [s.begin_read.eq(1), s.begin_length.eq(length), s.begin_rest.eq(rest)]
        if address is not None:
            m.d.comb += [s.begin_moves.eq(1), s.begin_address.eq(address),
                         s.begin_following.eq(following)]

    def _segment_reader(self, m, s):
        """The segment reader: streams bank[address .. address + remaining) to whichever
        consumer the state selects, from an output register (``s.entry``, valid while
        ``s.staged``) with a skid register behind it (:class:`hw.skid.SkidOutput`), so the
        bank's read enable is a function of registers only and the consumer sees an entry
        through no block-RAM output multiplexer (the registers hold the entry as stored,
        and its weight gets its one back on the way out, after them). The read port only moves when the entry it holds
        can move on, so back-pressure never loses an entry. A begin resets the reader
        whatever it holds (a begin of length 0 empties it)."""
        s.read_address = read_address = Signal(self.address_bits, name="read_address")
        remaining = Signal(self.position_bits)
        remaining_zero = Signal(init=1)         # remaining == 0, registered beside it
        staged = Signal()                       # bank_read.data holds an entry
        staged_last = Signal()
        s.consumer_ready = Signal()
        s.begin_read = Signal()
        s.begin_moves = Signal()                # the begin sets the address (else it reads on)
        s.begin_address = Signal(self.address_bits)
        s.begin_following = Signal(self.address_bits)
        s.begin_length = Signal(self.position_bits)
        s.begin_rest = Signal(self.position_bits)
        held_layout = data.StructLayout({"stored": self.stored_layout, "last": 1})
        read = Signal(held_layout)
        m.d.comb += [read.stored.eq(s.bank_read.data), read.last.eq(staged_last)]
        # ``s.entry`` (with ``last``) is offered while ``s.staged``; its weight gets its
        # one back after the output register, not between the bank and the register.
        output = SkidOutput(held_layout, name="entry")
        staged_moves = output.feed(m, staged, read, s.consumer_ready)
        s.staged = output.valid
        s.entry = Signal(self.entry_layout)
        held = output.payload
        # The scanner's copies of the label (one-hot) and of the weight (complemented), loaded
        # with the output register, so they are placed by the scanner's class select and
        # products, not by the bank (the trainer's seed 1 and the cmc PE's seeds 1 and 2 of
        # the twenty-seventh round ended on that route).
        s.entry_label_one_hot = output.copy(
            m, self.classes, lambda incoming: (Const(1, 1) << incoming.stored.code[self.code_bits:])[:self.classes],
            name="entry_label_one_hot")
        s.entry_weight_complement = output.copy(
            m, len(held.stored.weight_less_one), lambda incoming: ~incoming.stored.weight_less_one,
            name="entry_weight_complement")
        m.d.comb += [s.entry.row.eq(held.stored.row), s.entry.code.eq(held.stored.code),
                     s.entry.weight.eq(held.stored.weight_less_one + 1), s.entry.last.eq(held.last)]
        advance = ~staged | staged_moves
        # A segment's first read is made in the cycle it begins (the reader is empty then),
        # from its address as it is worked out, so the output register costs no cycle.
        # (the next address and count are selected, not computed after the select)
        address = Mux(s.begin_moves, s.begin_address, read_address)
        following = Mux(s.begin_moves, s.begin_following, read_address + 1)
        count = Mux(s.begin_read, s.begin_length, remaining)
        rest = Mux(s.begin_read, s.begin_rest, remaining - 1)
        m.d.comb += [s.bank_read.addr.eq(address), s.bank_read.en.eq(advance | s.begin_read)]
        with m.If(advance | s.begin_read):
            m.d.sync += [staged.eq(count != 0), staged_last.eq(count == 1),
                         remaining.eq(Mux(count != 0, rest, 0)), remaining_zero.eq(count <= 1)]
            with m.If(count != 0):
                m.d.sync += read_address.eq(following)
        with m.If(s.begin_read):
            m.d.sync += output.clear()
        # (a flag, not a compare of ``remaining``: a queued job's read begins on it, and the
        # begin selects the bank's read address)
        s.reader_idle = ~staged & remaining_zero        # every entry read from the bank
        s.staged_last = s.entry.last
        s.entry_code = s.entry.code[:self.code_bits]
        # The constant check reads the bank directly (two reads per slot, no stream).
        s.read_code = s.bank_read.data.code[:self.code_bits]

    def _store(self, m, source):
        """An entry as the bank holds it (its weight is at least 1)."""
        stored = Signal(self.stored_layout)
        m.d.comb += [stored.row.eq(source.row), stored.code.eq(source.code),
                     stored.weight_less_one.eq(source.weight - 1)]
        return stored

    def _bank_writes(self, m, s):
        """Write port: the fill from outside, or the partition unit's writes (the PE never
        fills while a partition drains; the fill would win)."""
        partition, bank_write = s.partition, s.bank_write
        fill_stored = self._store(m, self.fill_entry)
        partitioned_stored = self._store(m, partition.writes.p.entry)
        m.d.comb += [partition.writes.ready.eq(~self.fill_enable), self.draining.eq(~partition.idle)]
        with m.If(self.fill_enable):
            m.d.comb += [bank_write.addr.eq(self.fill_address), bank_write.data.eq(fill_stored),
                         bank_write.en.eq(1)]
        with m.Elif(partition.writes.valid):
            m.d.comb += [bank_write.addr.eq(partition.writes.p.address),
                         bank_write.data.eq(partitioned_stored), bank_write.en.eq(1)]

    def _constant_check_registers(self, m, s):
        """Constant check pipeline: a slot's first and last codes are read, registered as
        read, then compared (``checked``)."""
        s.check_index = Signal(self.slot_bits + 2)      # next read: slot = index // 2
        s.check_pending = Signal()
        s.check_pending_index = Signal.like(s.check_index)
        s.first_code = Signal(self.code_bits)
        s.last_code = Signal(self.code_bits)
        s.checked = Signal()                            # first_code and last_code of a slot
        s.checked_slot = Signal(self.slot_bits + 1)
        # The steps from a slot's first entry to its last and from there to the next
        # slot's first (registers: no adder before the bank). The next read's address is
        # the reader's own address register, so the bank's address select has no input
        # of the check's and decodes no state of it (the reader stays empty meanwhile).
        s.check_to_last = Signal(self.address_bits)
        s.check_to_next = Signal(self.address_bits)
        s.nonconstant = Signal.like(self.nonconstant)
        m.d.comb += self.nonconstant.eq(s.nonconstant)

    def _idle(self, m, s):
        with m.State("Idle"):
            m.d.comb += s.job_queue.r_en.eq(~self.go & s.scanner.segments.ready)
            queued = s.queue_layout(s.job_queue.r_data)
            with m.If(self.go):
                m.d.sync += [s.start.eq(self.segment_start), s.length.eq(self.segment_length),
                             s.slots_used.eq(self.slots_used), s.threshold.eq(self.threshold),
                             s.slot.eq(0), s.prefetched.eq(0)]
                # A command's first segment read begins with it (a begin of length 0
                # empties the reader of a job read ahead, should one be there).
                self._begin(m, s, self.segment_start, self.segment_start + 1, 0, 0)
                with m.Switch(self.command):
                    with m.Case(LaneCommand.SCAN):
                        m.d.comb += [s.begin_length.eq(self.segment_length),
                                     s.begin_rest.eq(self.segment_length - 1)]
                        m.d.sync += s.job.eq(0)
                        with m.If(s.scanner.segments.ready):
                            self._send_header(m, s)
                            m.next = "Scan the segment"
                        with m.Else():
                            m.next = "Send the header"
                    with m.Case(LaneCommand.CONSTANT):
                        m.d.sync += [s.check_index.eq(0), s.check_pending.eq(0), s.nonconstant.eq(0),
                                     s.read_address.eq(self.segment_start),
                                     s.check_to_last.eq(self.segment_length - 1),
                                     s.check_to_next.eq(self.list_rows + 1 - self.segment_length)]
                        m.next = "Check constant features"
                    with m.Case(LaneCommand.GO_LEFT):
                        # (the begin of length 0 leaves the address register alone)
                        m.d.sync += s.read_address.eq(s.offset[self.go_left_slot] + self.segment_start)
                        m.next = "Begin go left"
                    with m.Case(LaneCommand.PARTITION):
                        with m.If(self.slots_used != 0):
                            m.d.comb += [s.begin_length.eq(self.segment_length),
                                         s.begin_rest.eq(self.segment_length - 1)]
                            m.d.sync += s.segment_base.eq(self.segment_start)
                            m.next = "Partition"
            with m.Else():
                # A queued job's segment read begins as soon as the job is there, whether
                # or not the scanner takes its header yet (the reader holds the entries),
                # unless it was begun while the job before it was finishing.
                with m.If(s.job_queue.r_rdy & ~s.prefetched):
                    self._begin(m, s, queued.base, queued.base_next,
                                self.segment_length, self.segment_length - 1)
                    m.d.sync += s.prefetched.eq(1)
                # Its header goes to the scanner when the scanner takes it (it waits in its
                # first state whenever the lane is idle).
                with m.If(s.job_queue.r_rdy & s.scanner.segments.ready):
                    self._send_header(m, s)
                    m.d.sync += [s.job.eq(queued.job), s.prefetched.eq(0)]
                    m.next = "Scan the segment"

    def _header(self, m, s):
        with m.State("Send the header"):
            with m.If(s.scanner.segments.ready):
                self._send_header(m, s)
                m.next = "Scan the segment"

    def _check_constant_features(self, m, s):
        with m.State("Check constant features"):
            m.d.comb += self.busy.eq(1)
            check_slot = s.check_index[1:]
            issuing = check_slot < s.slots_used
            # The bank is read at the reader's address register (the reader, emptied by
            # the command's begin of length 0, keeps its read enable up meanwhile).
            m.d.sync += [s.check_pending.eq(issuing), s.check_pending_index.eq(s.check_index),
                         s.checked.eq(0)]
            with m.If(issuing):
                # the slot's last entry next, or the next slot's first
                m.d.sync += [s.check_index.eq(s.check_index + 1),
                             s.read_address.eq(s.read_address +
                                                Mux(s.check_index[0], s.check_to_next, s.check_to_last))]
            with m.If(s.check_pending):
                with m.If(~s.check_pending_index[0]):
                    m.d.sync += s.first_code.eq(s.read_code)
                with m.Else():
                    m.d.sync += [s.last_code.eq(s.read_code), s.checked.eq(1),
                                 s.checked_slot.eq(s.check_pending_index[1:])]
            with m.If(s.checked):
                is_constant = s.first_code == s.last_code
                m.d.comb += [s.constant_write.addr.eq(s.checked_slot),
                             s.constant_write.data.eq(is_constant), s.constant_write.en.eq(1)]
                with m.If(~is_constant):
                    m.d.sync += s.nonconstant.eq(s.nonconstant + 1)
            with m.If(~issuing & ~s.check_pending & ~s.checked):
                m.next = "Idle"

    def _send_header(self, m, s):
        """Offer the scanner a segment's header (its entries are read already, or from
        this cycle on). The node's totals and segment are held by the controller while it
        scans; the scanner takes a header in every cycle the lane is idle."""
        m.d.comb += s.scanner.segments.valid.eq(1)

    def _scan(self, m, s):
        """Scanning one slot's segment for the best split."""
        scanner = s.scanner
        # The payloads go to their consumers whatever the state (only valid and ready
        # depend on it), so no state decode lies between the reader's registers and the
        # scanner's products.
        m.d.comb += [scanner.entries.p.code.eq(s.entry_code), scanner.entries.p.label_one_hot.eq(s.entry_label_one_hot),
                     scanner.entries.p.weight_less_one.eq(~s.entry_weight_complement),
                     scanner.entries.p.last.eq(s.staged_last)]
        with m.State("Scan the segment"):
            m.d.comb += [scanner.entries.valid.eq(s.staged),
                         s.consumer_ready.eq(scanner.entries.ready)]
            with m.If(s.staged & s.staged_last & scanner.entries.ready):
                m.next = "Offer the result"
        with m.State("Offer the result"):
            m.d.comb += [self.results.valid.eq(scanner.splits.valid),
                         scanner.splits.ready.eq(self.results.ready)]
            # The next queued job's segment is read while the scanner finishes this one
            # (its entries wait in the reader), so its header finds them on their way.
            queued = s.queue_layout(s.job_queue.r_data)
            with m.If(s.job_queue.r_rdy & ~s.prefetched & s.reader_idle):
                self._begin(m, s, queued.base, queued.base_next,
                            self.segment_length, self.segment_length - 1)
                m.d.sync += s.prefetched.eq(1)
            with m.If(scanner.splits.valid & self.results.ready):
                m.next = "Idle"

    def _go_left(self, m, s):
        """Go-left bits of a split on this lane's feature."""
        m.d.comb += [self.decisions_out.p.row.eq(s.entry.row),
                     self.decisions_out.p.left.eq(s.entry_code <= s.threshold)]
        with m.State("Begin go left"):
            # (a cycle after the command: the reader's address register holds the slot's
            # segment start, loaded with the command)
            m.d.comb += self.busy.eq(1)
            self._begin(m, s, None, None, s.length, s.length - 1)
            m.next = "Go left"
        with m.State("Go left"):
            m.d.comb += [
                self.busy.eq(1),
                self.decisions_out.valid.eq(s.staged),
                s.consumer_ready.eq(self.decisions_out.ready),
            ]
            with m.If(s.staged & s.staged_last & self.decisions_out.ready):
                m.next = "Idle"

    def _partition(self, m, s):
        """Stable partition of every used slot, written back in place."""
        partition = s.partition
        with m.State("Start a partition"):
            # The next slot's read begins from registers (a cycle between slots): begun as
            # the slot before's last entry is taken, the partition unit's ``ready`` would
            # run into the bank's read address.
            m.d.comb += self.busy.eq(1)
            with m.If(s.slot == s.slots_used):
                m.next = "Idle"
            with m.Else():
                self._begin(m, s, None, None, s.length, s.length - 1)
                m.next = "Partition"
        m.d.comb += [partition.segment_in.p.entry.eq(s.entry),
                     partition.segment_in.p.base.eq(s.segment_base)]
        with m.State("Partition"):
            m.d.comb += [
                self.busy.eq(1),
                partition.segment_in.valid.eq(s.staged),
                s.consumer_ready.eq(partition.segment_in.ready),
            ]
            with m.If(s.staged & s.staged_last & partition.segment_in.ready):
                # (the next slot's read begins at the reader's address register)
                following_slot = s.segment_base + self.list_rows
                m.d.sync += [s.slot.eq(s.slot + 1), s.segment_base.eq(following_slot),
                             s.read_address.eq(following_slot)]
                m.next = "Start a partition"
