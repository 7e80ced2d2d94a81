"""The list rotor: one read port per lane of the presorted bank serves every PE's lists.

Reference: none of its own (it moves words; ``sw.methods.forest.model`` never sees it): a
PE receives each list it asks for whole, in presorted order, and the forest is the same
for any timing (``docs/algorithm.md`` section 3).

The rotor streams the slots' lists one after another (slot 0 .. used - 1, then slot 0
again), one word per cycle, each word one sorted position of a slot with every lane's
entry side by side. A PE's request names a slot; the PE locks on at that slot's first
word and takes the list to its last word. Its next request is accepted while it takes a
list (one waits at a time) and locks on as soon as that list ends, so consecutive slots
(a forest-mode fill) follow without a gap. Every PE locked on the same word takes it at
once. While no PE is locked, the rotor jumps to the first word of the slot the
lowest-numbered waiting PE wants, in a cycle of its own unless it stands there already (a
lone PE waits that cycle at most); otherwise a PE waits for its slot to come round (at
most ``ceil(F / lanes)`` lists).

Built for many PEs (``docs/timing.md``): which PEs take a word is decided when it is
read, from registers; the word leaves the bank into a broadcast register per group of
:data:`GROUP` PEs and from there into each PE's own FIFO of :data:`CREDITS` words. The
rotor reads a word only when every PE that takes it has a free place counted for it
(a credit, returned when the PE takes the word from its FIFO), so no PE's ``ready``
reaches the bank, and no PE waits for another's unless its FIFO is full. The bank reads
every cycle at the rotor's address, a register.
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, ResetInserter, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out


__all__ = ["ListRotor", "GROUP", "CREDITS"]

#: PEs served by one copy of the broadcast register.
GROUP = 8
#: Words a PE's FIFO holds with a bank read in one cycle: a word's credit comes back four
#: cycles after it was read when the PE takes it at once (read, broadcast register, FIFO,
#: taken), so four keep one word per cycle flowing; each further cycle of the bank's read
#: latency adds one.
CREDITS = 4


class ListRotor(wiring.Component):
    """Serves ``pes`` PEs' list requests from one read port per lane.

    Members
    -------
    requests : In(stream.Signature(request_layout)).array(pes)
    words : Out(stream.Signature(word_layout)).array(pes)
        Each PE's requests and its lists' words.
    pe_busy : In(pes)
        A PE that is not busy drops its request and its list a cycle later (an error,
        the next forest), when the rotor's register of it falls.
    n_rows, slots_used : In
        Words per list, and slots in use (held while the forest trains).
    clear : In(1)
        A new forest: nothing wanted, locked, read or held.
    read_addresses : Out
        The bank's read port of each lane (``slot * max_rows + position``), all one
        address; the ports read every cycle.
    read_data : In(entry layout).array(lanes)
        The entry each lane's port read ``read_latency`` cycles before (1: a block RAM's
        port; 2: :class:`hw.banked.BankedMemory`, every bank's word registered before the
        bank's is selected).
    """

    def __init__(self, *, pes, slots, max_rows, row_bits, request_layout, word_layout, address_bits,
                 read_latency=1):
        if read_latency < 1:
            raise ValueError(f"read_latency must be at least 1, not {read_latency}")
        self._pes, self._slots, self._max_rows = pes, slots, max_rows
        self._read_latency = read_latency
        self._credits = CREDITS + read_latency - 1
        self._word = word_layout
        lanes = word_layout["entries"].shape.length
        super().__init__({
            "requests": In(stream.Signature(request_layout)).array(pes),
            "words": Out(stream.Signature(word_layout)).array(pes),
            "pe_busy": In(pes),
            "n_rows": In(row_bits + 1),
            "slots_used": In(range(slots + 1)),
            "clear": In(1),
            "read_addresses": Out(address_bits).array(lanes),
            "read_data": In(word_layout["entries"].shape.elem_shape).array(lanes),
        })

    def elaborate(self, platform):
        m = Module()
        pes, slots, row_bits = self._pes, self._slots, len(self.n_rows) - 1
        # The word the rotor reads next.
        rotor_slot = Signal(range(slots), name="rotor_slot")
        rotor_position = Signal(row_bits + 1, name="rotor_position")
        want_valid = Signal(pes)
        want_slot = [Signal(range(slots), name=f"want{index}_slot") for index in range(pes)]
        locked = Signal(pes)
        # Which PEs are busy, a cycle late, for everything the rotor does: no PE's state
        # reaches the rotor's logic (nor, through it, a LUT the packer shares with the PE's
        # own: the system's path, 87.7 MHz). A PE that stops is still counted in that
        # cycle; what it was given then is dropped a cycle later with its request, its
        # lock, its FIFO and its credits. A PE asks for lists only well after its start
        # (its bootstrap comes first), so a late drop never meets its next tree's request.
        self._busy = busy = Signal(pes, name="busy")
        m.d.sync += busy.eq(self.pe_busy)
        credits = [Signal(range(self._credits + 1), init=self._credits, name=f"credits{index}")
                   for index in range(pes)]
        # The lowest waiting PE's slot, registered (the jump follows a request a cycle late).
        jump_wanted, jump_slot = Signal(name="jump_wanted"), Signal(range(slots), name="jump_slot")
        # The bank address of the rotor's next word and of the jump's, each held in a
        # register (slot * max_rows from a table of constants: max_rows need not be a power
        # of two).
        offsets = Array(Const(slot * self._max_rows, len(self.read_addresses[0])) for slot in range(slots))
        rotor_address = Signal.like(self.read_addresses[0], name="rotor_address")
        jump_address = Signal.like(self.read_addresses[0], name="jump_address")
        m.d.sync += jump_wanted.eq(want_valid.any())
        for index in reversed(range(pes)):
            with m.If(want_valid[index]):
                m.d.sync += [jump_slot.eq(want_slot[index]), jump_address.eq(offsets[want_slot[index]])]

        # The jump takes a cycle of its own: it moves the rotor to the first word of the
        # slot wanted, and that word is issued in the next cycle like any other, so the
        # read decision sees the rotor's registers only, never a choice between two words.
        # A rotor already at that first word (the next slot of a forest-mode fill) issues
        # it at once.
        first = Signal(init=1, name="first")            # rotor_position == 0
        last = Signal(name="last")
        m.d.comb += last.eq(rotor_position == self.n_rows - 1)
        at_jump = first & (rotor_slot == jump_slot)
        jump = ~locked.any() & jump_wanted & ~at_jump
        locking = Signal(pes)
        taking = Signal(pes)
        for index in range(pes):
            m.d.comb += [
                locking[index].eq(want_valid[index] & ~locked[index] & first &
                                  (rotor_slot == want_slot[index]) & busy[index]),
                taking[index].eq((locked[index] | locking[index]) & busy[index]),
            ]
        blocked = Cat(taking[index] & (credits[index] == 0) for index in range(pes)).any()
        issue = Signal()
        m.d.comb += issue.eq((locked.any() | (jump_wanted & at_jump)) & ~blocked)
        # The bank's ports read every cycle at the rotor's address, a register (no enable:
        # whether a word is issued, decided from every PE's lock and credits, never
        # reaches the bank); a word read is used only in the cycle after it was issued.
        for address in self.read_addresses:
            m.d.comb += address.eq(rotor_address)
        with m.If(jump):
            m.d.sync += [rotor_slot.eq(jump_slot), rotor_position.eq(0), rotor_address.eq(jump_address),
                         first.eq(1)]
        with m.Elif(issue):
            with m.If(last):
                next_slot = Mux(rotor_slot + 1 >= self.slots_used, 0, rotor_slot + 1)
                m.d.sync += [rotor_position.eq(0), rotor_slot.eq(next_slot),
                             rotor_address.eq(offsets[next_slot]), first.eq(1)]
            with m.Else():
                m.d.sync += [rotor_position.eq(rotor_position + 1), rotor_address.eq(rotor_address + 1),
                             first.eq(0)]

        # Requests and locks, decided as the word is read.
        for index, request in enumerate(self.requests):
            took = issue & taking[index]
            finishing = took & last
            locks = issue & locking[index]
            # A request waits behind the list the PE is locked on: its acceptance depends on
            # this PE's registers only, so no other PE's state reaches this PE's handshake.
            m.d.comb += request.ready.eq(~want_valid[index])
            m.d.sync += locked[index].eq((locked[index] | locks) & ~finishing)
            with m.If(request.valid & request.ready):
                m.d.sync += [want_valid[index].eq(1), want_slot[index].eq(request.p.slot)]
            with m.Elif(locks):
                m.d.sync += want_valid[index].eq(0)
            with m.If(~busy[index]):
                m.d.sync += [locked[index].eq(0), want_valid[index].eq(0)]

        self._deliver(m, Mux(issue, taking, 0), last, credits)
        with m.If(self.clear):
            m.d.sync += [rotor_slot.eq(0), rotor_position.eq(0), rotor_address.eq(0), first.eq(1),
                         want_valid.eq(0), locked.eq(0), jump_wanted.eq(0)]
        return m

    def _deliver(self, m, takers, last, credits):
        """The word read, to the PEs that take it: the bank's read, a broadcast register per
        group of PEs, each PE's FIFO. A credit is spent as a word is read for a PE and
        given back as the PE takes a word from its FIFO."""
        pes, busy = self._pes, self._busy
        read_valid, read_takers = Signal(name="read_valid"), Signal(pes, name="read_takers")
        read_last = Signal(name="read_last")
        # (``takers`` counts only PEs busy a cycle ago; one that stopped since loses the
        # word with its FIFO a cycle later)
        m.d.sync += [read_valid.eq(takers.any()), read_takers.eq(takers),
                     read_last.eq(last)]
        # A bank read over more cycles: the takers wait as long, a stopped PE dropped at
        # each cycle (as at the broadcast register), so no word reaches its next tree.
        for stage in range(1, self._read_latency):
            valid, takers_late, last_late = (Signal(name=f"read{stage}_valid"),
                                             Signal(pes, name=f"read{stage}_takers"),
                                             Signal(name=f"read{stage}_last"))
            m.d.sync += [valid.eq(read_valid), takers_late.eq(Mux(self.clear, 0, read_takers & busy)),
                         last_late.eq(read_last)]
            read_valid, read_takers, read_last = valid, takers_late, last_late
        word = Signal(self._word)
        m.d.comb += [word.entries[lane].eq(data) for lane, data in enumerate(self.read_data)]
        m.d.comb += word.last.eq(read_last)
        for group in range(0, pes, GROUP):
            members = range(group, min(group + GROUP, pes))
            held = Signal(self._word, name=f"broadcast{group // GROUP}")
            held_takers = Signal(pes, name=f"broadcast{group // GROUP}_takers")
            m.d.sync += [held.eq(word), held_takers.eq(Mux(read_valid, read_takers, 0))]
            for index in members:
                fifo = SyncFIFO(width=len(word.as_value()), depth=self._credits)
                m.submodules[f"fifo{index}"] = ResetInserter(self.clear | ~busy[index])(fifo)
                out = self.words[index]
                pop = fifo.r_rdy & out.ready
                m.d.comb += [fifo.w_data.eq(held), fifo.w_en.eq(held_takers[index] & busy[index]),
                             out.valid.eq(fifo.r_rdy), out.p.eq(fifo.r_data), fifo.r_en.eq(out.ready)]
                m.d.sync += credits[index].eq(credits[index] - takers[index] + pop)
                with m.If(self.clear | ~busy[index]):     # (its FIFO is reset too)
                    m.d.sync += [credits[index].eq(self._credits), held_takers[index].eq(0)]
