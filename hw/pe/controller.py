"""The PE's controller: a named-state FSM that grows the tree level by level.

The states are opened by the methods of :class:`Controller`, grouped by phase: the fill
of the lists, the review of a node (leaf decision, feature draws, scans), the decision
and the children, the level's partition and the tree's writing. Every state but
``Idle`` keeps the PE ``busy``, and in every state a ``start`` (re)begins a tree.
"""

from contextlib import contextmanager

from amaranth.hdl import Cat, Const, Mux, Signal

from hw.lane import LaneCommand
from hw.pe.read_address import ADDRESS_SELECTS, read_addresses

__all__ = ["Controller"]


class Controller:
    """Builds the controller FSM of a :class:`hw.pe.ProcessingElement` into its module.

    ``pe`` is the PE being elaborated, ``m`` its module and ``s`` the namespace of its
    shared signals and parts (built by the PE's ``elaborate``). :meth:`build` returns the
    FSM (its ``encoding`` names the states).
    """

    def __init__(self, pe, m, s):
        self.pe = pe
        self.g = pe.geometry
        self.m = m
        self.s = s
        self.selects = {group: Signal(name=f"state_is_{group}") for group in ADDRESS_SELECTS}

    def build(self):
        m, s, pe = self.m, self.s, self.pe
        # The configuration loads on a start or, a cycle after a promotion, from the queued
        # one: its wide enable is an OR of two registers, outside the state machine (every
        # state's start took it, so the state's decode reached the enable, and with it the
        # PE's state routed across the die and back: the system's path, 87.7 MHz).
        m.d.sync += [s.take_queued.eq(0), s.input_bad.eq(0)]     # (pulses, set in a state)
        with m.If(pe.start):
            m.d.sync += s.config.eq(s.port_config)
        with m.Elif(s.take_queued):
            m.d.sync += s.config.eq(s.queued_config)
        with self.m.FSM(init="Idle") as fsm:
            self._fill_states()
            self._review_states()
            self._draw_states()
            self._decide_states()
            self._partition_states()
            self._write_states()
        # Busy in every state but Idle: one compare of the state register (an OR of the
        # other states' decodes was shared with their cones and reached the in-bag
        # builder's reset through eight LUT levels).
        self.m.d.comb += self.pe.busy.eq(~fsm.ongoing("Idle"))
        read_addresses(m, s, self.selects)
        return fsm

    # ------------------------------------------------------------------ helpers
    @contextmanager
    def state(self, name):
        """A controller state, where a start wins over its own moves."""
        with self.m.State(name):
            yield
            self.on_start()

    def goto(self, name):
        """``m.next = name``, and the address selects (``ADDRESS_SELECTS``) of state
        ``name`` into their registers in the same place (so under the same conditions)."""
        self.m.next = name
        self.m.d.sync += [self.selects[group].eq(name in states)
                          for group, states in ADDRESS_SELECTS.items()]

    def on_start(self):
        """A start (re)begins a tree from any state; it wins over the state's own moves."""
        m, s, pe = self.m, self.s, self.pe
        port_config = s.port_config
        with m.If(pe.start):
            # The configuration is taken whether or not it passes its check, so the check
            # never reaches its wide enable; nor the next state: a failed check starts
            # nothing (no pulse, of a promotion in this cycle either) and the state after
            # the start returns to Idle on the registered verdict (``start_refused``).
            m.d.sync += [pe.bad_config.eq(s.config_bad), s.start_refused.eq(s.config_bad),
                         pe.bad_input.eq(0), pe.node_overflow.eq(0), pe.depth_overflow.eq(0),
                         pe.inbag_overflow.eq(0), pe.done.eq(0),
                         s.cycles_restart.eq(1), s.draw_valid.eq(0), s.take_queued.eq(0),
                         s.lane_go.eq(0), s.start_inbag.eq(~s.config_bad),
                         s.start_prologue.eq(port_config.sparse & ~s.config_bad)]
            with m.If(port_config.sparse):
                self.goto("Wait for the prologue")
            with m.Else():
                self.goto("Draw the bootstrap")
            # Whatever was queued or prefetched is abandoned with the running tree (the
            # sparse fill stops writing on the start itself).
            m.d.sync += [s.queued.eq(0), s.inbag_for_queued.eq(0), s.prefetched.eq(0),
                         s.past_prologue.eq(0)]

    def promote(self):
        """The running tree is written and a tree is queued: it takes over in the next
        cycle (``Take the queued tree``), where its configuration loads."""
        m, s = self.m, self.s
        m.d.comb += s.promoting.eq(1)
        m.d.sync += [s.take_queued.eq(1), s.queued.eq(0), s.start_refused.eq(0),
                     s.past_prologue.eq(0), s.cycles_restart.eq(1)]
        self.goto("Take the queued tree")

    def take_queued(self):
        """The cycle after a promotion: the configuration loads from the queued one, and the
        in-bag builder turns to it (its inputs switch in the same cycle, so a prologue run
        ahead for the queued tree sees the same values throughout)."""
        m, s = self.m, self.s
        m.d.sync += [s.inbag_for_queued.eq(0), s.prefetched.eq(0)]
        with m.If(s.queued_config.sparse):
            with m.If(~s.prefetched):
                m.d.sync += [s.start_inbag.eq(1), s.start_prologue.eq(1)]
            self.goto("Wait for the prologue")
        with m.Else():
            m.d.sync += s.start_inbag.eq(1)
            self.goto("Draw the bootstrap")

    def command_lanes(self, command, lane=None):
        """The lanes (or only lane number ``lane``, a value) get ``command`` in the next
        cycle, from registers (``lane_go``, one bit per lane, and ``lane_command``): the
        state the controller enters then is the one the command belongs to."""
        m, s = self.m, self.s
        every = Const((1 << len(s.lane_go)) - 1, len(s.lane_go))
        m.d.sync += [s.lane_go.eq(every if lane is None else Const(1, len(s.lane_go)) << lane),
                     s.lane_command.eq(command)]

    def abort(self, flag):
        self.m.d.sync += [flag.eq(1), self.s.queued.eq(0), self.s.draw_valid.eq(0)]
        self.goto("Idle")

    def set_node(self, node, level_end=None):
        """``node`` (and ``level_end``, if given) from the next cycle, with the registers
        kept beside them: ``node + 1``, ``node + 2``, whether ``node + 1`` is the level's
        end, ``level_end + 1``. ``node`` is ``"next"`` for ``node + 1`` (from those
        registers, no adder before them) or a register's value."""
        m, s = self.m, self.s
        end = s.level_end if level_end is None else level_end
        if isinstance(node, str):
            node, plus1, plus2 = s.node_next, s.node_after, s.node_after + 1
        else:
            plus1, plus2 = node + 1, node + 2
        m.d.sync += [s.node.eq(node), s.node_next.eq(plus1), s.node_after.eq(plus2),
                     s.next_is_end.eq(plus1 == end)]
        if level_end is not None:
            m.d.sync += [s.level_end.eq(level_end), s.level_end_next.eq(level_end + 1)]

    def review_next(self):
        """Go on to the level's next node, ``node + 1``: its record is read now, so it is
        reviewed in the next cycle (or the level ends). The review bits read now are the
        next node's, or, at the level's end, those of the next level's first node (two
        cycles before its review, as ``End of the level`` can be the one between)."""
        m, s = self.m, self.s
        self.set_node("next")
        with m.If(s.next_is_end):
            self.goto("End of the level")
        with m.Else():
            self.goto("Review the node")

    def next_level(self):
        """The level's partition is done: the next level, or the tree is written if the
        level made no children. Its first record was read two cycles ahead, at the review
        memory's address (``level_end``), whatever they decide (in vain before the tree
        is written), so the node memory's address waits for no compare."""
        m, s = self.m, self.s
        m.d.sync += s.jobs_queued.eq(0)
        self.set_node(s.level_end, level_end=s.next_node)
        m.d.sync += s.childless.eq(1)
        with m.If(s.level_end == s.next_node):
            # (the root's record was read in this cycle: see ``build``)
            m.d.sync += [s.write_index.eq(1), s.write_staged.eq(1), s.write_staged_index.eq(0),
                         s.write_banked.eq(0), s.write_held.eq(0), *s.write_out.clear()]
            self.goto("Write the tree")
        with m.Else():
            self.goto("Review the node")

    # ------------------------------------------------------------------ the fill
    def _fill_states(self):
        """From a start to the root: the bootstrap, the tree's feature (thesis mode) or the
        sparse fill's prologue, the lists' fill and the root's record."""
        m, s, pe, g = self.m, self.s, self.pe, self.g
        inbag, config = s.inbag, s.config
        with self.state("Idle"):
            pass

        with self.state("Draw the bootstrap"):
            with m.If(s.start_refused):
                self.goto("Idle")
            with m.Elif(inbag.weights_ready & (inbag.inbag_rows > g.max_inbag_rows)):
                # More distinct rows than a list holds: stop before the fill writes any.
                self.abort(pe.inbag_overflow)
            with m.Elif(inbag.weights_ready):
                m.d.sync += [s.lists_requested.eq(0), s.lists_received.eq(0),
                             [base.eq(0) for base in s.fill_bases],
                             [address.eq(0) for address in s.fill_addresses],
                             s.input_position.eq(0), s.clear_index.eq(0), s.root_counts.eq(0)]
                with m.If(config.thesis_mode):
                    m.d.sync += [s.lists_needed.eq(1), s.draw_valid.eq(1),
                                 s.draw_bound.eq(config.n_features)]
                    self.goto("Draw the tree's feature")
                with m.Else():
                    m.d.sync += s.lists_needed.eq((config.n_features + (g.feature_lanes - 1)) >> g.lane_bits)
                    self.goto("Fill the lists")

        with self.state("Draw the tree's feature"):
            # The request comes from registers (``draw_valid``, ``draw_bound``, set when
            # the bootstrap was drawn; ``_sparse_fill`` joins it to the in-bag builder).
            m.d.comb += inbag.draws.ready.eq(1)
            with m.If(inbag.draw_requests.ready):
                m.d.sync += s.draw_valid.eq(0)
            with m.If(inbag.draws.valid):
                m.d.sync += s.tree_feature.eq(inbag.draws.p.value)
                self.goto("Fill the lists")

        with self.state("Wait for the prologue"):
            # The sparse fill's prologue (maybe run ahead while the last tree trained).
            sparse = s.sparse
            with m.If(s.start_refused):
                self.goto("Idle")
            with m.Elif(sparse.ready):
                m.d.comb += s.prologue_taken.eq(1)
                with m.If(sparse.bad):
                    self.abort(pe.bad_input)
                with m.Else():
                    # The root is written at once; the sorted rows go into lane 0 while
                    # it is reviewed, each long before the root's scan reads it.
                    m.d.comb += sparse.begin_write.eq(1)
                    m.d.sync += [s.tree_feature.eq(sparse.feature), s.root_counts.eq(sparse.counts)]
                    self.goto("Write the root")

        self._fill_lists_state()

        # The root's rows are final in the cycle before "Write the root" (the fill's or the
        # prologue's last), so their compares with the sample limits come from a register.
        root_rows = Mux(config.sparse, s.sparse.drawn_count, inbag.inbag_rows)
        m.d.sync += s.root_too_small.eq(pe._too_small(s, root_rows))
        with self.state("Write the root"):
            root_leaf = pe._is_leaf(s, s.root_counts, root_rows, 0, too_small=s.root_too_small)
            m.d.comb += [s.node_write.addr.eq(0), s.node_write.en.eq(1),
                         s.node_write.data.counts.eq(s.root_counts),
                         s.node_write.data.n_rows.eq(root_rows),
                         *pe._review_bits(s, root_leaf, 0)]
            self.set_node(Const(0, len(s.node)), level_end=Const(1, len(s.level_end)))
            m.d.sync += [s.next_node.eq(1), s.nodes_full.eq(1 + 2 > g.max_nodes), s.jobs_queued.eq(0),
                         s.childless.eq(1), s.write_index.eq(0),
                         s.past_prologue.eq(config.thesis_mode)]
            self.goto("Root written")

        with self.state("Root written"):
            # The root's record and review bits reach their memories at the end of this
            # cycle (the write registers); both are read now (both memories' reads see
            # a write of their own cycle), two cycles before the root's review.
            self.goto("Read a node")

    def _fill_lists_state(self):
        """The requested slots' presorted words through the filter into the lanes."""
        m, s, pe, g = self.m, self.s, self.pe, self.g
        inbag, config, lane_bits = s.inbag, s.config, g.lane_bits
        with self.state("Fill the lists"):
            m.d.comb += [
                pe.list_requests.valid.eq(s.lists_requested < s.lists_needed),
                pe.list_requests.p.slot.eq(Mux(config.thesis_mode, s.tree_feature >> lane_bits,
                                               s.lists_requested)),
                inbag.presorted.valid.eq(pe.presorted.valid),
                pe.presorted.ready.eq(inbag.presorted.ready),
                inbag.inbag.ready.eq(1),
            ]
            with m.If(pe.list_requests.valid & pe.list_requests.ready):
                m.d.sync += s.lists_requested.eq(s.lists_requested + 1)
            # Malformed lists stop the tree: every list has n_rows entries, labels < classes.
            # The verdict is registered and stops the tree a cycle later (the list's last
            # word is counted at that edge, so the fill cannot be done before it): the
            # transfer depends on the state through the in-bag builder's ready, and its
            # check reached the state register's enable across the die and back (the
            # system's seed 3 of the twenty-seventh round, 93.0 MHz).
            with m.If(pe.presorted.valid & pe.presorted.ready):
                at_end = s.input_position == config.n_rows - 1
                m.d.sync += s.input_position.eq(Mux(at_end, 0, s.input_position + 1))
                with m.If(at_end):
                    m.d.sync += s.lists_received.eq(s.lists_received + 1)
                if g.classes < (1 << g.label_bits):
                    bad_label = Cat(inbag.lane_mask[index] & (pe.presorted.p.entries[index].label >= g.classes)
                                    for index in range(g.feature_lanes)).any()
                else:
                    bad_label = Const(0)
                m.d.sync += s.input_bad.eq((pe.presorted.p.last != at_end) | bad_label)
            # The permutation memory of the feature draws is cleared on the way.
            with m.If(s.clear_index < config.n_features):
                m.d.comb += [s.permutation_write.addr.eq(s.clear_index), s.permutation_write.data.eq(0),
                             s.permutation_write.en.eq(1)]
                m.d.sync += s.clear_index.eq(s.clear_index + 1)
            with m.If(inbag.inbag.valid):
                fill_entries, fill_present = s.fill_entries, s.fill_present
                for index, lane in enumerate(s.lanes):
                    with m.If(fill_present[index]):
                        m.d.comb += s.fill_wanted[index].eq(1)
                        with m.If(fill_entries[index].last):
                            next_base = s.fill_bases[index] + g.max_inbag_rows
                            m.d.sync += [s.fill_bases[index].eq(next_base),
                                         s.fill_addresses[index].eq(next_base)]
                        with m.Else():
                            m.d.sync += s.fill_addresses[index].eq(s.fill_addresses[index] + 1)
                # The root's class counts from the first list (feature 0, or the tree's).
                with m.If(fill_present[0] & (s.fill_bases[0] == 0)):
                    label = fill_entries[0].code[g.code_bits:]
                    m.d.sync += s.root_counts[label].eq(s.root_counts[label] + fill_entries[0].weight)
            with m.If(s.input_bad):
                self.abort(pe.bad_input)
            # Done when every slot was taken to its end and the filter has written its
            # last in-bag entries (rows of weight 0 may follow the last in-bag row).
            with m.Elif((s.lists_received == s.lists_needed) & ~inbag.filtering &
                        (s.clear_index >= config.n_features)):
                self.goto("Write the root")

    # ------------------------------------------------------------------ one level: every node in index order
    def _review_states(self):
        """Read a node's record, decide whether it is a leaf, find its constant features."""
        m, s, pe = self.m, self.s, self.pe
        config, combiner = s.config, s.combiner
        with self.state("Read a node"):
            with m.If(s.node == s.level_end):
                self.goto("End of the level")
            with m.Else():
                self.goto("Review the node")

        with self.state("Review the node"):
            # The next node's record is read whatever this one turns out to be (its
            # address never waits for this record's read).
            record = s.node_read.read_data
            # The combiner is cleared whatever the node turns out to be (nothing reads it
            # before this node's decision; a leaf's clear is harmless), so the review
            # memory's read reaches none of its registers' resets.
            m.d.comb += combiner.clear.eq(1)
            m.d.sync += [s.current.eq(record), s.segment_start.eq(record.start),
                         s.segment_length.eq(record.n_rows)]
            review = s.review_bits
            with m.If(review.leaf):
                self.review_next()
            with m.Elif(review.deepest):
                # (aborted in a state of its own: the review memory's read reaches no
                # more than the next state, not the queue and the flags)
                self.goto("Too deep")
            with m.Else():
                m.d.sync += [s.visited.eq(0), s.position.eq(0), s.tag.eq(s.node_next)]
                # Thesis mode needs no constant check: a constant segment of the tree's
                # feature has no boundary, so its scan finds no split, as the model. Its
                # one list is lane 0, slot 0, visited at once by a SCAN command (the lane
                # reads the segment and totals registered here in the next cycle).
                with m.If(config.thesis_mode):
                    self.command_lanes(LaneCommand.SCAN, 0)
                    m.d.sync += s.visited.eq(1)
                    self.goto("Wait for the scans")
                with m.Else():
                    self.command_lanes(LaneCommand.CONSTANT)
                    self.goto("Check constant features")

        with self.state("Too deep"):
            self.abort(pe.depth_overflow)

        with self.state("Check constant features"):
            self.goto("Wait for the constant check")

        with self.state("Wait for the constant check"):
            with m.If(~s.lanes_busy):
                wanted = Mux(config.features_per_split < s.nonconstant_total,
                             config.features_per_split, s.nonconstant_total)
                m.d.sync += [s.wanted.eq(wanted), s.draw_valid.eq(s.any_nonconstant),
                             s.draw_bound.eq(config.n_features)]
                self.goto("Draw a feature")

    def _draw_states(self):
        """Draw the node's features one by one and send the non-constant ones to their
        lanes' scans, then wait for every scan's result."""
        m, s, g = self.m, self.s, self.g
        inbag, lanes, lane_bits = s.inbag, s.lanes, g.lane_bits
        with self.state("Draw a feature"):
            # The request comes from registers: ``draw_valid`` (a feature is still wanted)
            # and ``draw_bound`` (n_features - position), set in the state before.
            m.d.comb += inbag.draws.ready.eq(1)
            with m.If(s.visited == s.wanted):
                self.goto("Wait for the scans")
            with m.If(s.draw_valid & inbag.draw_requests.ready):
                m.d.sync += s.draw_valid.eq(0)
            with m.If(inbag.draws.valid):
                m.d.comb += [s.chosen_read.addr.eq(inbag.draws.p.value + s.position),
                             s.position_read.addr.eq(s.position)]
                m.d.sync += s.drawn_feature.eq(inbag.draws.p.value + s.position)
                self.goto("Swap")

        with self.state("Swap"):
            # Partial Fisher-Yates on a permutation whose untouched entries are the identity
            # (entries written for another node carry another tag).
            chosen_index = s.drawn_feature
            chosen, displaced = s.chosen_read.data, s.position_read.data
            feature = Mux(chosen.tag == s.tag, chosen.feature, chosen_index)
            moved = Mux(displaced.tag == s.tag, displaced.feature, s.position)
            m.d.comb += [s.permutation_write.addr.eq(chosen_index), s.permutation_write.en.eq(1),
                         s.permutation_write.data.tag.eq(s.tag), s.permutation_write.data.feature.eq(moved)]
            for lane in lanes:
                m.d.comb += lane.constant_slot.eq(feature >> lane_bits)
            m.d.sync += s.drawn_feature.eq(feature)
            self.goto("Visit the drawn feature")

        with self.state("Visit the drawn feature"):
            drawn_feature = s.drawn_feature
            for lane in lanes:
                m.d.comb += lane.constant_slot.eq(drawn_feature >> lane_bits)
            drawn_lane = drawn_feature[:lane_bits] if lane_bits else Const(0)
            visiting = Signal()                 # the drawn feature is not constant
            for index, lane in enumerate(lanes):
                with m.If(drawn_lane == index):
                    m.d.comb += visiting.eq(~lane.constant_flag)
                    with m.If(~lane.constant_flag):
                        m.d.comb += [lane.jobs.valid.eq(1),
                                     lane.jobs.p.slot.eq(drawn_feature >> lane_bits),
                                     lane.jobs.p.visit.eq(s.visited)]
            # The next draw's request, registered for "Draw a feature".
            m.d.sync += [s.visited.eq(s.visited + visiting), s.position.eq(s.position + 1),
                         s.draw_valid.eq(s.visited + visiting < s.wanted),
                         s.draw_bound.eq(s.draw_bound - 1)]
            self.goto("Draw a feature")

        with self.state("Wait for the scans"):
            # The next node's first draw bound, shown to the generator from now on.
            m.d.sync += s.draw_bound.eq(s.config.n_features)
            with m.If(s.combiner.combined == s.visited):
                self.goto("Decide")

    def _decide_states(self):
        """The node's best split: its record, its children's records and its partition job."""
        m, s, pe, g = self.m, self.s, self.pe, self.g
        combiner, current, node_write = s.combiner, s.current, s.node_write
        best_split = combiner.split
        with self.state("Decide"):
            m.d.sync += s.left_child_decisions
            with m.If(~combiner.found):
                self.review_next()
            with m.Elif(s.nodes_full):
                self.abort(pe.node_overflow)
            with m.Else():
                m.d.comb += [node_write.addr.eq(s.node), node_write.en.eq(1),
                             node_write.data.eq(current),
                             node_write.data.split.eq(1), node_write.data.feature.eq(s.split_feature),
                             node_write.data.threshold.eq(best_split.threshold),
                             node_write.data.left.eq(s.next_node)]
                self.goto("Write the left child")

        with self.state("Write the left child"):
            m.d.sync += s.right_child_decision
            m.d.comb += [node_write.addr.eq(s.next_node), node_write.en.eq(1),
                         node_write.data.counts.eq(s.left_counts),
                         node_write.data.n_rows.eq(s.rows_left),
                         node_write.data.depth.eq(s.child_depth),
                         node_write.data.start.eq(current.start),
                         *pe._review_bits(s, s.left_is_leaf, s.child_depth)]
            self.goto("Write the right child")

        with self.state("Write the right child"):
            m.d.comb += [node_write.addr.eq(s.next_node + 1), node_write.en.eq(1),
                         node_write.data.counts.eq(s.right_counts),
                         node_write.data.n_rows.eq(s.rows_right),
                         node_write.data.depth.eq(s.child_depth),
                         node_write.data.start.eq(current.start + s.rows_left),
                         *pe._review_bits(s, s.right_is_leaf, s.child_depth)]
            # Whether two more children fit is known before the next Decide needs it.
            m.d.sync += [s.next_node.eq(s.next_node + 2), s.childless.eq(0),
                         s.nodes_full.eq(s.next_node + 4 > g.max_nodes)]
            # Children that will both be leaves need no partition (nothing reads them);
            # one list (thesis mode) is partitioned by construction.
            with m.If(~s.config.thesis_mode & ~s.children_both_leaves):
                job_write = s.job_write
                m.d.comb += [job_write.addr.eq(s.jobs_queued), job_write.en.eq(1),
                             job_write.data.feature.eq(combiner.feature),
                             job_write.data.threshold.eq(best_split.threshold),
                             job_write.data.start.eq(current.start),
                             job_write.data.length.eq(current.n_rows)]
                m.d.sync += s.jobs_queued.eq(s.jobs_queued + 1)
            self.review_next()

    # ------------------------------------------------------------------ the level's partition
    def _partition_states(self):
        """Per split of the level: its go-left bits, then a stable partition of every list."""
        m, s, g = self.m, self.s, self.g
        lane_bits = g.lane_bits
        with self.state("End of the level"):
            m.d.sync += s.job_index.eq(0)
            with m.If(s.jobs_queued == 0):
                self.next_level()
            with m.Else():
                self.goto("Read a partition job")

        with self.state("Read a partition job"):
            # The next level's first record (``node``) is read whether or not the lanes
            # have drained (only the transition waits for them, not the address).
            m.d.comb += s.job_read.addr.eq(s.job_index)
            with m.If(s.job_index == s.jobs_queued):
                with m.If(~s.lanes_draining):     # the next level reads the lists
                    self.next_level()
            with m.Else():
                self.goto("Load the partition job")

        with self.state("Load the partition job"):
            m.d.comb += s.job_read.addr.eq(s.job_index)
            job = s.job_read.data
            m.d.sync += [s.segment_start.eq(job.start), s.segment_length.eq(job.length),
                         s.threshold.eq(job.threshold), s.go_left_slot.eq(job.feature >> lane_bits)]
            self.command_lanes(LaneCommand.GO_LEFT, job.feature[:lane_bits] if lane_bits else 0)
            self.goto("Go left")

        with self.state("Go left"):
            self.goto("Wait for the go-left bits")

        with self.state("Wait for the go-left bits"):
            with m.If(~s.lanes_busy):
                self.command_lanes(LaneCommand.PARTITION)
                self.goto("Partition the lists")

        with self.state("Partition the lists"):
            self.goto("Wait for the partition")

        with self.state("Wait for the partition"):
            with m.If(~s.lanes_busy):
                m.d.sync += s.job_index.eq(s.job_index + 1)
                self.goto("Read a partition job")

    # ------------------------------------------------------------------ the tree writer
    def _write_states(self):
        """The node records out on ``nodes``; then the queued tree, if any, takes over."""
        m, s, pe = self.m, self.s, self.pe
        writing = s.sparse.writing
        with self.state("Write the tree"):
            # (A tree whose root is a leaf may get here before its sorted rows are all
            # in lane 0: it waits, so the next tree finds the prologue registers free.)
            # A pipeline of registers: every stage moves when the next has room, the last
            # (the skid register) empty; so the node memory's read enable never depends
            # on ``nodes.ready``, and the node goes out formatted from a register.
            out = s.write_out
            # The node memory's two read stages move together (``advance``).
            held_moves = out.feed(m, s.write_held, s.formatted, pe.nodes.ready & ~writing)
            banked_moves = s.write_banked & (~s.write_held | held_moves)
            advance = ~s.write_banked | banked_moves
            m.d.comb += [s.node_read.read_en.eq(advance), pe.nodes.valid.eq(out.valid & ~writing)]
            with m.If(advance):
                m.d.sync += [s.write_staged.eq(s.write_index < s.next_node),
                             s.write_staged_index.eq(s.write_index),
                             s.write_banked.eq(s.write_staged), s.write_banked_index.eq(s.write_staged_index)]
                with m.If(s.write_index < s.next_node):
                    m.d.sync += s.write_index.eq(s.write_index + 1)
            with m.If(banked_moves):
                m.d.sync += [s.write_held.eq(1), s.write_held_record.eq(s.node_read.read_data),
                             s.write_held_index.eq(s.write_banked_index)]
            with m.Elif(held_moves):
                m.d.sync += s.write_held.eq(0)
            with m.If(out.valid & ~writing & pe.nodes.ready & out.payload.last):
                m.d.comb += s.finishing.eq(1)
                with m.If(s.queued):
                    self.promote()
                with m.Else():
                    m.d.sync += pe.done.eq(1)
                    self.goto("Idle")
        with self.state("Take the queued tree"):
            self.take_queued()
