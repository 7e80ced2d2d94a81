"""The forest trainer's dispatch: which PE takes the next tree, and the registers that
start or queue it (``hw.trainer.ForestTrainer``, its Train state decides when).

Both work from registers only, so the dispatch decision waits on no PE's logic and no PE's
start waits on the dispatch decision: the decision lands in a PE's ``start`` or ``queue``
register, and the PE acts on it a cycle later (a cycle per tree started; none when queued).
"""

from amaranth.hdl import Cat, Mux, Signal

__all__ = ["dispatch_candidate", "dispatch_pulses"]


def dispatch_pulses(m, s):
    """Per PE, a ``start`` and a ``queue`` register (one-cycle pulses, set by the dispatch):
    the dispatch and a far PE lie apart on the chip. By the time a pulse reaches its PE,
    ``pe_tree`` (start) or ``queued_tree`` (queue) holds the tree's index."""
    count = len(s.pes)
    s.start_pulse = [Signal(name=f"pe{index}_start") for index in range(count)]
    s.queue_pulse = [Signal(name=f"pe{index}_queue") for index in range(count)]
    m.d.sync += [pulse.eq(0) for pulse in s.start_pulse + s.queue_pulse]
    for index, pe in enumerate(s.pes):
        m.d.comb += [pe.start.eq(s.start_pulse[index]), pe.queue.eq(s.queue_pulse[index]),
                     pe.tree_index.eq(Mux(pe.queue, s.queued_tree[index], s.pe_tree[index]))]


def dispatch_candidate(m, s):
    """The PE the next tree goes to, chosen a cycle ahead from registers: the lowest free
    PE, else the lowest that can queue a tree behind its running one. Checked again against
    that one PE as it is dispatched (the choice may be a cycle old): ``candidate_free``."""
    pes, count = s.pes, len(s.pes)
    s.candidate = candidate = Signal(range(count), name="candidate")
    s.candidate_starts = candidate_starts = Signal(name="candidate_starts")
    s.candidate_valid = candidate_valid = Signal(name="candidate_valid")
    m.d.sync += candidate_valid.eq(0)
    for index in reversed(range(count)):
        with m.If(~s.has_queued[index] & pes[index].queue_ready):
            m.d.sync += [candidate.eq(index), candidate_starts.eq(0), candidate_valid.eq(1)]
    for index in reversed(range(count)):
        with m.If(~s.assigned[index]):
            m.d.sync += [candidate.eq(index), candidate_starts.eq(1), candidate_valid.eq(1)]
    # A PE that could queue a cycle ago still can, unless its running tree's last node may
    # go out when the queue pulse reaches it, a cycle on (the PE refuses a queue in that
    # cycle): the merge is locked on it, or is unlocked and may lock on it now. From the
    # trainer's registers and the PE's output valid, not its ``queue_ready`` or error flags
    # (a PE whose flag rose this cycle may be handed a tree; ``pe_failed`` stops the forest
    # a cycle later, so none is waited for).
    can_queue = Cat(~s.has_queued[index] & Mux(s.locked, s.owner != index, ~pes[index].nodes.valid)
                    for index in range(count))
    s.candidate_free = Mux(candidate_starts, ~s.assigned.bit_select(candidate, 1),
                           can_queue.bit_select(candidate, 1))
