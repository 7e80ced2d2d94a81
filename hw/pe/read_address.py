"""The read addresses of the PE's node and review memories, selected by registers alone.

The controller's FSM keeps one register per group of states (``ADDRESS_SELECTS``), set with
every move, so the state register's decode never reaches the block RAMs' address pins.
"""

from amaranth.hdl import Mux

__all__ = ["ADDRESS_SELECTS", "read_addresses"]

#: The groups of states that select the node and review memories' read addresses. Each
#: has a register of its own, ``state_is_<group>``, set with every move of the FSM
#: (:meth:`hw.pe.controller.Controller.goto`), so it equals "the state is one of these"
#: without a decode of the state register on the way to the block RAMs' address pins.
#: Idle is in none (the registers reset to 0 with the state). A formal invariant
#: (:func:`hw.formal.invariants.pe_invariants`) checks each against the state.
ADDRESS_SELECTS = {
    "leaving": ("Review the node", "Decide", "Write the right child"),
    "ahead": ("Read a node", "Wait for the scans", "Write the left child"),
    "level_end": ("End of the level",),
    "partition_job": ("Read a partition job",),
    "partition_wait": ("Wait for the partition",),
    "writing": ("Write the tree",),
}


def read_addresses(m, s, at):
    """Drive the node and review memories' read addresses of the PE whose shared signals
    are ``s``, into module ``m``, from ``at`` (group name -> its register)."""
    _node_read_address(m, s, at)
    _review_read_address(m, s, at)


def _node_read_address(m, s, at):
    """The node memory (banked: two cycles from address to record, as the review memory's
    bits) is read at the review memory's address, but while the tree is written and in
    the level's end before it (a level that made no child, ``childless``, a register):
    the writer's first read, of the root (``write_index`` is 0 from the root's write on),
    is made there. The selects are registers (``ADDRESS_SELECTS``): the state's decode
    there fanned out to every bank's block RAM address pins (the system's seed 1, 88.3
    MHz)."""
    writing = at["writing"] | (at["level_end"] & s.childless)
    m.d.comb += s.node_read.read_addr.eq(Mux(writing, s.write_index, s.review_address))


def _review_read_address(m, s, at):
    """The review memory's read address, an AND-OR of four registers by registers alone
    (no state's condition reaches it, nor the state's decode: ``ADDRESS_SELECTS``).
    The bits read in a cycle are those of the node reviewed two cycles later
    (``s.review_bits``): a review of node ``n`` in cycle ``t`` needs ``n`` read in
    ``t - 2`` and, for the leaf after it, ``n + 1`` in ``t - 1``, so every state that
    can come two or one cycles before a review reads accordingly:

    - where a node is left for the next (``Review the node``, ``Decide``, ``Write the
      right child``), the node after the next, or at the level's end the next level's
      first (``End of the level`` can come between);
    - a cycle before a review or a decision (``Read a node``, ``Wait for the scans``,
      ``Write the left child``), the next node;
    - at a level's end, ``level_end`` or ``level_end + 1`` for the next level's first
      two nodes, as ``next_level`` can come now or after the partition;
    - node 0 (the root) in every other state, before the root's review."""
    end_now = ((at["leaving"] & s.next_is_end) | (at["partition_job"] & s.lanes_draining)
               | at["partition_wait"])
    after = at["leaving"] & ~s.next_is_end
    end_next = at["level_end"] | (at["partition_job"] & ~s.lanes_draining)
    width = len(s.review_address)
    def term(select, value):
        return Mux(select, value, 0)[:width]
    m.d.comb += s.review_address.eq(term(end_now, s.level_end) | term(after, s.node_after)
                                    | term(at["ahead"], s.node_next)
                                    | term(end_next, s.level_end_next))
