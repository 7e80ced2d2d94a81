"""The processing element's top: its ports, its parts and how they are joined.

The parts are :class:`hw.inbag.InBagBuilder`, the :class:`hw.lane.FeatureLane` s, the
node, job and permutation memories, the :class:`~hw.pe.combiner.LaneCombiner` of the
lanes' scan results, the :class:`~hw.pe.sparse.SparseFill` of small thesis-mode
bootstraps, the :class:`~hw.pe.writer.NodeFormatter` of the tree writer, and the
controller FSM (:class:`~hw.pe.controller.Controller`). The widths and layouts are those
of :class:`~hw.pe.layouts.PEGeometry`.
"""

from types import SimpleNamespace

from amaranth.hdl import Cat, Const, Module, Mux, ResetInserter, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.data import StructLayout
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.checks import refuse_construction
from hw.inbag import InBagBuilder
from hw.lane import FeatureLane, LaneCommand, lane_slots
from hw.partition import decision_layout
from hw.pe.node_memory import TransparentBankedMemory
from hw.pe.combiner import LaneCombiner
from hw.pe.controller import Controller
from hw.checks import bits
from hw.pe.layouts import (PEGeometry, code_answer_layout, code_request_layout, list_request_layout,
                           presorted_word_layout)
from hw.pe.sparse import SparseFill
from hw.pe.writer import NodeFormatter
from hw.skid import SkidOutput

__all__ = ["ProcessingElement"]


class ProcessingElement(wiring.Component):
    """Trains one tree per ``start``, bit-identical to ``sw.methods.forest.model.train_tree``.

    Parameters
    ----------
    max_rows : int
        Rows of the dataset the PE can address (2 to 2**20).
    max_samples : int
        Largest bootstrap size (draws per tree), 1 to 2**20.
    max_inbag_rows : int or None
        Capacity of one in-bag list (distinct in-bag rows); default ``max_rows``. A tree
        without bootstrap whose ``n_rows`` exceed it, or a sparse-fill tree whose draws
        could, is refused (``bad_config``); a bootstrap that turns out to hold more
        distinct rows raises ``inbag_overflow`` before any list is written. A bootstrap of
        ``n`` draws from ``n`` rows holds about ``0.632 n`` distinct rows (standard
        deviation ``0.31 sqrt(n)``), so lists much shorter than ``max_rows`` hold every
        bootstrap but with a vanishing probability (``sw.experiments.pe_fit.inbag_capacity``;
        docs/gateware.md).
    feature_capacity : int
        Features of the dataset the PE holds lists for (1 to 4096).
    feature_lanes : int
        Lanes working in parallel, a power of two from 1 to 64 (at most ``feature_capacity``
        rounded up to a power of two).
    code_bits : int
        Width of a feature code (1 to 24).
    classes : int
        Classes the PE counts (2 to 64).
    max_depth : int
        Deepest node depth the PE can hold (1 to 255); deeper trees need ``max_depth``
        as a limit, an unlimited tree that would grow deeper raises ``depth_overflow``.
    max_nodes : int or None
        Node memory entries per tree; default the most a tree can have,
        ``min(2 * max_inbag_rows - 1, 2 ** (max_depth + 1) - 1)``.
    tree_index_bits : int
        Width of the tree index (1 to 32).
    sparse_rows : int
        Largest thesis-mode bootstrap filled by code look-ups and an insertion sort
        instead of a list filter (0 to 64; 0, the default: never). Costs ``sparse_rows``
        entries of registers and comparators, which the default builds' resource
        estimates leave out (docs/gateware.md gives the cost).

    Members
    -------
    seed, tree_index, n_rows, n_features, n_samples, bootstrap, features_per_split,
    thesis_mode, depth_limited, depth_limit, min_samples_split, min_samples_leaf : In
        The tree's configuration, sampled on ``start``.
    start : In(1)
        Begin a tree (from any state; anything in progress, queued tree included, is
        abandoned).
    queue, queue_ready : In(1), Out(1)
        The serialised pipeline: while a tree trains, the next tree's configuration is
        taken on ``queue`` when ``queue_ready`` (a handshake, like a stream's valid and
        ready). The queued tree starts the cycle after the running tree's last node goes
        out, with no ``start``. A queued thesis-mode tree with the sparse fill has its
        whole prologue (bootstrap, feature draw, code look-ups, sort) done ahead, while a
        thesis-mode tree runs its levels. A queued configuration out of range raises
        ``bad_config`` and is not queued.
    busy, done : Out(1)
        Training or writing a tree; the last tree was written completely and none is
        queued.
    bad_config, bad_input, node_overflow, depth_overflow, inbag_overflow : Out(1)
        Sticky until the next ``start``: the configuration was out of range (nothing
        started), a presorted list was malformed (length or label), the node memory or
        the depth range would have been exceeded, the bootstrap drew more distinct rows
        than ``max_inbag_rows`` (training stopped, no tree written).
    cycles : Out(32)
        Cycles from ``start`` (or from the previous tree's end, for a queued tree) to the
        end of the tree (or the error).
    list_requests : Out(stream.Signature(list_request_layout(...)))
        Slots whose presorted lists the PE wants, in the order it will read them: every
        slot in forest mode, the tree's feature's slot in thesis mode.
    presorted : In(stream.Signature(presorted_word_layout(...)))
        The requested slots, back to back, ``n_rows`` words each (one word carries the
        slot's ``feature_lanes`` lists at one position, so a forest-mode tree's lists are
        filled in ``ceil(n_features / feature_lanes) * n_rows`` cycles).
    nodes : Out(stream.Signature(node_layout(...)))
        The trained tree, node 0 first, ``last`` on the final node.
    code_requests : Out(stream.Signature(code_request_layout(...)))
    codes : In(stream.Signature(code_answer_layout(...)))
        The sparse fill's look-ups, answered in order.
    """

    def __init__(self, *, max_rows=256, max_samples=256, max_inbag_rows=None, feature_capacity=16,
                 feature_lanes=4, code_bits=16, classes=4, max_depth=16, max_nodes=None,
                 tree_index_bits=16, sparse_rows=0):
        try:
            geometry = PEGeometry(
                max_rows=max_rows, max_samples=max_samples, max_inbag_rows=max_inbag_rows,
                feature_capacity=feature_capacity, feature_lanes=feature_lanes, code_bits=code_bits,
                classes=classes, max_depth=max_depth, max_nodes=max_nodes,
                tree_index_bits=tree_index_bits, sparse_rows=sparse_rows)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        self.geometry = g = geometry
        for name in ("max_rows", "max_samples", "max_inbag_rows", "feature_capacity", "feature_lanes",
                     "code_bits", "classes", "max_depth", "max_nodes", "tree_index_bits", "sparse_rows",
                     "lane_bits", "slots", "slot_bits", "row_bits", "weight_bits", "label_bits",
                     "feature_bits", "position_bits", "count_bits", "depth_bits", "node_bits",
                     "visit_bits", "node_layout"):
            setattr(self, name, getattr(g, name))
        super().__init__({
            "seed": In(32),
            "tree_index": In(tree_index_bits),
            "n_rows": In(g.row_bits + 1),
            "n_features": In(g.feature_count_bits),
            "n_samples": In(g.weight_bits),
            "bootstrap": In(1),
            "features_per_split": In(g.feature_count_bits),
            "thesis_mode": In(1),
            "depth_limited": In(1),
            "depth_limit": In(g.depth_bits),
            "min_samples_split": In(g.row_bits + 2),
            "min_samples_leaf": In(g.row_bits + 1),
            "start": In(1),
            "queue": In(1),
            "queue_ready": Out(1),
            "busy": Out(1),
            "done": Out(1),
            "bad_config": Out(1),
            "bad_input": Out(1),
            "node_overflow": Out(1),
            "depth_overflow": Out(1),
            "inbag_overflow": Out(1),
            "cycles": Out(32),
            "list_requests": Out(stream.Signature(list_request_layout(g.slot_bits))),
            "presorted": In(stream.Signature(presorted_word_layout(g.feature_lanes, g.row_bits, g.code_bits,
                                                                   g.label_bits))),
            "nodes": Out(stream.Signature(g.node_layout)),
            "code_requests": Out(stream.Signature(code_request_layout(g.feature_bits, g.row_bits))),
            "codes": In(stream.Signature(code_answer_layout(g.code_bits, g.label_bits))),
        })

    def elaborate(self, platform):
        m = Module()
        s = SimpleNamespace()   # the signals and parts shared by the sections below
        self._submodules(m, s)
        self._configuration(m, s)
        self._state(m, s)
        self._lane_wiring(m, s)
        self._fill_path(m, s)
        self._node_records(m, s)
        self._sparse_fill(m, s)
        self._start_and_queue(m, s)
        fsm = Controller(self, m, s).build()
        for index, lane in enumerate(s.lanes):
            m.d.comb += lane.go.eq(s.lane_go[index])

        # The controller's state encoding (value of ``fsm_state`` -> name), for profiling.
        self.controller_states = {value: name for name, value in fsm.encoding.items()}
        return m

    def _submodules(self, m, s):
        """The in-bag builder, the lanes and the memories."""
        g = self.geometry
        s.inbag = inbag = InBagBuilder(
            max_rows=g.max_rows, max_samples=g.max_samples,
            code_bits=g.code_bits + g.label_bits, tree_index_bits=g.tree_index_bits,
            draw_bound_bits=_draw_bound_bits(g), lanes=g.feature_lanes)
        # A start while busy resets the in-bag builder (a draw in flight, a half-done
        # clearing pass, a list half filtered), so nothing of an abandoned tree reaches the
        # next one; its weight generation survives resets, so no reset forces a clearing
        # pass (an interrupted one is redone). Either way the builder starts one cycle
        # later, from the latched configuration.
        m.submodules.inbag = ResetInserter(self.start & self.busy)(inbag)
        s.start_inbag = Signal()
        m.d.sync += s.start_inbag.eq(0)
        m.d.comb += inbag.start.eq(s.start_inbag)
        s.finishing = Signal()          # the running tree's last node goes out this cycle
        s.promoting = Signal()          # ... and the queued tree takes over from it
        s.lanes = []
        # The lanes are reset in the cycle after a start or a promotion, from a register
        # (the controller's state reaches no lane register's reset). Nothing the new
        # tree does in that cycle involves a lane (it draws its bootstrap or waits for
        # its prologue), and a result an abandoned lane offers then is dropped with the
        # combiner's clear at the tree's first review.
        s.lanes_reset = Signal()
        m.d.sync += s.lanes_reset.eq(self.start | s.promoting)
        for index in range(g.feature_lanes):
            # Lane l holds features l, l + lanes, ...: the last slot may be empty in some lanes.
            lane = FeatureLane(slots=g.slots,
                               bank_slots=lane_slots(g.feature_capacity, index, g.feature_lanes),
                               list_rows=g.max_inbag_rows,
                               max_rows=g.max_rows, max_samples=g.max_samples,
                               code_bits=g.code_bits, classes=g.classes, count_bits=g.count_bits,
                               visit_bits=g.visit_bits)
            # A start abandons whatever the lanes were doing (queued jobs, results, commands).
            m.submodules[f"lane{index}"] = ResetInserter(s.lanes_reset)(lane)
            s.lanes.append(lane)

        # The node memory is banked (``hw.pe.node_memory``: every bank's word registered as it
        # leaves its block RAMs, then the addressed bank's selected): a one-cycle read
        # ended in the multiplexer over its block RAMs before the review's registers (the
        # system's path, 97.1 MHz). Banks of 512 records, one block RAM deep on either
        # chip (DP16KD 512 x 36, M20K 512 x 40). It is read two cycles ahead of a review,
        # at the review memory's address, and by the tree writer; as the review memory,
        # a read sees the write of its own cycle (a child reviewed right after the level
        # that wrote it, in thesis mode; the root).
        m.submodules.node_memory = node_memory = TransparentBankedMemory(
            shape=g.record_layout, depth=g.max_nodes, bank_depth=512)
        # The controller's writes (the root, a decision, the children) are selected by its
        # state in their cycle; they reach the node and review memories a cycle later, from
        # registers, so the memories' write ports see no state decode (``docs/timing.md``).
        s.node_write = Signal(StructLayout({"addr": len(node_memory.write_addr), "en": 1,
                                            "data": g.record_layout}))
        m.d.sync += [node_memory.write_addr.eq(s.node_write.addr), node_memory.write_en.eq(s.node_write.en),
                     node_memory.write_data.eq(s.node_write.data)]
        s.node_read = node_memory
        # The review bits of every node, written at the node memory's addresses. They are
        # read two cycles ahead of their review into a register (``review_bits``), so the
        # memory's output reaches no further than that register; the controller says
        # which node's bits to read (``review_address``).
        m.submodules.review_memory = review_memory = Memory(shape=g.review_layout, depth=g.max_nodes,
                                                            init=[])
        # (transparent: a node's bits can be read in the cycle they are written, the root's)
        review_write = review_memory.write_port()
        review_read = review_memory.read_port(transparent_for=(review_write,))
        s.review_data = Signal(g.review_layout)
        s.review_address = Signal.like(review_read.addr)
        s.review_bits = Signal(g.review_layout)
        review_staged = Signal(g.review_layout)
        m.d.sync += review_staged.eq(s.review_data)
        m.d.comb += [review_write.addr.eq(node_memory.write_addr), review_write.en.eq(node_memory.write_en),
                     review_write.data.eq(review_staged), review_read.addr.eq(s.review_address)]
        m.d.sync += s.review_bits.eq(review_read.data)
        m.submodules.job_memory = job_memory = Memory(shape=g.job_layout, depth=g.job_depth, init=[])
        s.job_write = job_memory.write_port()
        s.job_read = job_memory.read_port()
        m.submodules.permutation = permutation = Memory(shape=g.permutation_layout,
                                                        depth=g.feature_capacity, init=[])
        s.permutation_write = permutation.write_port()
        s.chosen_read = permutation.read_port()
        s.position_read = permutation.read_port()

    def _configuration(self, m, s):
        """The running tree's configuration, and the queued tree's (the serialised pipeline:
        a tree handed over on ``queue`` while this one trains); the configuration check."""
        g = self.geometry
        s.port_config = port_config = Signal(g.config_layout)
        m.d.comb += port_config.eq(Cat(
            self.seed, self.tree_index, self.n_rows, self.n_features, self.n_samples, self.bootstrap,
            self.features_per_split, self.thesis_mode, self.depth_limited, self.depth_limit,
            self.min_samples_split, self.min_samples_leaf,
            self.thesis_mode & self.bootstrap & (self.n_samples <= g.sparse_rows)))
        s.config = Signal(g.config_layout)
        s.queued_config = Signal(g.config_layout)
        s.queued = Signal()
        s.take_queued = Signal()        # the cycle after a promotion: the queued tree's turn
        s.cycles = Signal(32)
        # A start or a promotion restarts the count a cycle later, from a register: the
        # start's and the promotion's decodes reach no counter bit (the count read at a
        # tree's end is the same; only the cycle after the restart shows a stale count).
        s.cycles_restart = Signal()
        m.d.comb += self.cycles.eq(s.cycles)
        m.d.sync += s.cycles_restart.eq(0)
        with m.If(s.cycles_restart):
            m.d.sync += s.cycles.eq(self.busy)
        with m.Elif(self.busy):
            m.d.sync += s.cycles.eq(s.cycles + 1)

        # More in-bag rows than a list holds: min(n_samples, n_rows) with a bootstrap, else
        # n_rows, above max_inbag_rows; as compares with the constant only (no carry chain
        # on the path from the configuration to the start's next state).
        too_many_inbag = (self.n_rows > g.max_inbag_rows) & (~self.bootstrap | (self.n_samples > g.max_inbag_rows))
        s.config_bad = (
            (self.n_rows == 0) | (self.n_rows > g.max_rows) |
            (self.n_features == 0) | (self.n_features > g.feature_capacity) |
            (self.bootstrap & ((self.n_samples == 0) | (self.n_samples > g.max_samples))) |
            # Known before the draws: all rows in the bag, or a sparse fill (few draws).
            ((~self.bootstrap | port_config.sparse) & too_many_inbag) |
            (self.features_per_split == 0) | (self.min_samples_split < 2) | (self.min_samples_leaf == 0) |
            (self.depth_limited & (self.depth_limit > g.max_depth)))

    def _too_small(self, s, rows):
        """A node of ``rows`` rows is too small to split (the model's sample limits)."""
        return (rows < s.config.min_samples_split) | (rows < (s.config.min_samples_leaf << 1))

    def _is_leaf(self, s, counts, rows, depth, *, too_small=None):
        """leaf_decision of the model, before any draw (``too_small``: ``_too_small`` of
        ``rows``, when a register holds it)."""
        config = s.config
        nonzero = sum((counts[c] != 0).as_unsigned() for c in range(self.classes))
        if too_small is None:
            too_small = self._too_small(s, rows)
        return (config.depth_limited & (depth >= config.depth_limit)) | too_small | (nonzero <= 1)

    def _review_bits(self, s, leaf, depth):
        """The statements setting a node's review bits as its record is written: ``leaf``
        (``_is_leaf`` of the node) and ``deepest``. Its review reads them instead of
        working them out from the record."""
        return [s.review_data.leaf.eq(leaf),
                s.review_data.deepest.eq(~s.config.depth_limited & (depth == self.geometry.max_depth))]

    def _state(self, m, s):
        """The controller's registers."""
        g = self.geometry
        count_bits = g.feature_count_bits
        s.tree_feature = Signal(g.feature_bits)
        # The prologue of a sparse-fill tree runs in its own state machine (SparseFill), for
        # the running tree or, ahead of time, for the queued one (the serialised pipeline).
        s.start_prologue = Signal()     # pulse, with start_inbag: the prologue begins
        s.inbag_for_queued = Signal()   # the in-bag builder works for the queued tree
        s.prefetched = Signal()         # the queued tree's prologue has been started
        s.past_prologue = Signal()      # the running thesis-mode tree is done with the builder
        s.prologue_taken = Signal()
        m.d.sync += s.start_prologue.eq(0)
        s.lists_needed = Signal(bits(g.slots))          # slots of lists to fill
        s.lists_requested = Signal.like(s.lists_needed)
        s.lists_received = Signal.like(s.lists_needed)  # slots taken up to their last position
        # Per lane, where its next in-bag entry goes: its bank address, slot x list rows +
        # position, kept as a register, and the slot's base, which moves by a list's rows at
        # each list's end (no multiply before the bank's write address).
        fill_address_bits = max(1, (g.slots * g.max_inbag_rows - 1).bit_length())
        s.fill_bases = [Signal(fill_address_bits, name=f"fill{index}_base") for index in range(g.feature_lanes)]
        s.fill_addresses = [Signal(fill_address_bits, name=f"fill{index}_address")
                            for index in range(g.feature_lanes)]
        s.input_position = Signal(g.row_bits + 1)
        s.input_bad = Signal()                          # a malformed presorted word, a cycle late
        s.clear_index = Signal(count_bits)
        s.root_counts = Signal(g.counts_layout)
        s.root_too_small = Signal()                     # _too_small of the root's rows, a cycle late

        s.next_node = Signal(g.node_bits + 1)           # nodes created so far
        s.childless = Signal()                          # no child made in this level yet
        s.nodes_full = Signal()                         # next_node + 2 > max_nodes, registered
        s.start_refused = Signal()                      # the last start's configuration failed
        s.node = Signal(g.node_bits + 1)                # node under review
        s.level_end = Signal(g.node_bits + 1)
        # node + 1, node + 2, node + 1 == level_end and level_end + 1 as registers, kept
        # with node and level_end (``Controller.set_node``), so that the node and review
        # memories' read addresses are selects of registers (init: node = level_end = 0).
        s.node_next = Signal(g.node_bits + 2, init=1)
        s.node_after = Signal(g.node_bits + 2, init=2)
        s.next_is_end = Signal()
        s.level_end_next = Signal(g.node_bits + 2, init=1)
        s.current = Signal(g.record_layout)
        s.segment_start = Signal(g.position_bits)
        s.segment_length = Signal(g.position_bits)
        s.threshold = Signal(g.code_bits)
        s.go_left_slot = Signal(range(g.slots))
        s.jobs_queued = Signal(g.node_bits + 1)
        s.job_index = Signal(g.node_bits + 1)

        s.wanted = Signal(count_bits)
        s.visited = Signal(count_bits)
        s.position = Signal(count_bits)
        s.tag = Signal(g.tag_bits)
        s.drawn_feature = Signal(g.feature_bits)
        # The controller's draw request, from registers (a feature of the node, or the
        # tree's feature in thesis mode without the sparse fill).
        s.draw_valid = Signal(name="draw_valid")
        s.draw_bound = Signal(_draw_bound_bits(g), name="draw_bound")

        # The tree writer's pipeline (``Write the tree``): the node memory's two read
        # stages, moving together (``write_staged``, then ``write_banked``), the record
        # registered (``write_held``), then the formatted node in the output register
        # (``write_out``) with a skid register.
        s.write_index = Signal(g.node_bits + 1)
        s.write_staged = Signal()
        s.write_staged_index = Signal(g.node_bits + 1)
        s.write_banked = Signal()
        s.write_banked_index = Signal(g.node_bits + 1)
        s.write_held = Signal()
        s.write_held_record = Signal(g.record_layout)
        s.write_held_index = Signal(g.node_bits + 1)
        s.write_out = SkidOutput(g.node_layout, name="write_out")

    def _lane_wiring(self, m, s):
        """Inputs shared by all lanes, their status, the go-left bits and the result combiner."""
        g = self.geometry
        lanes, config = s.lanes, s.config
        # A command to the lanes, from registers (the controller's ``command_lanes``).
        s.lane_command = Signal(LaneCommand)
        s.lane_go = Signal(g.feature_lanes)
        m.d.sync += s.lane_go.eq(0)
        for index, lane in enumerate(lanes):
            # Lists held by a lane: features lane, lane + lanes, ... below n_features.
            slots_used = Signal(bits(g.slots), name=f"slots_used{index}")
            count = (config.n_features + (g.feature_lanes - 1 - index)) >> g.lane_bits
            m.d.comb += slots_used.eq(Mux(config.thesis_mode, int(index == 0), count))
            m.d.comb += [
                lane.segment_start.eq(s.segment_start), lane.segment_length.eq(s.segment_length),
                lane.slots_used.eq(slots_used), lane.go_left_slot.eq(s.go_left_slot),
                lane.threshold.eq(s.threshold), lane.totals.eq(s.current.counts),
                lane.min_samples_leaf.eq(config.min_samples_leaf), lane.command.eq(s.lane_command),
            ]
        s.lanes_busy = Signal()
        m.d.comb += s.lanes_busy.eq(Cat(lane.busy for lane in lanes).any())
        # A lane's last list of a partition job drains while the next job starts. Whether
        # any lane is busy or draining, registered: the level's end waits on a register
        # near the controller, not on the far lanes' partition units through the next
        # state into the review memory's address. Once the lanes are no longer busy their
        # draining only falls, so a cycle-old value is late by at most a cycle, never early.
        s.lanes_draining = Signal()
        m.d.sync += s.lanes_draining.eq(Cat(Cat(lane.draining, lane.busy).any() for lane in lanes).any())
        # The lanes' non-constant slots, summed a cycle late: a lane's count is final a
        # cycle before it is idle again, so the sum is final when the lanes are idle.
        s.nonconstant_total = Signal(g.feature_count_bits, name="nonconstant_total")
        s.any_nonconstant = Signal(name="any_nonconstant")
        m.d.sync += [s.nonconstant_total.eq(sum(lane.nonconstant for lane in lanes)),
                     s.any_nonconstant.eq(Cat(lane.nonconstant != 0 for lane in lanes).any())]

        # Go-left bits from one lane to every lane's partition unit, through a register: the
        # compare and the select over lanes in one cycle, the wires to every lane's go-left
        # memory in the next. The register moves when it is empty or every lane takes it.
        source = Signal(decision_layout(g.row_bits))
        source_valid = Signal()
        m.d.comb += [source_valid.eq(Cat(lane.decisions_out.valid for lane in lanes).any())]
        for lane in lanes:
            with m.If(lane.decisions_out.valid):
                m.d.comb += source.eq(lane.decisions_out.p)
        s.broadcast = Signal(decision_layout(g.row_bits))
        s.broadcast_valid = Signal()
        all_take = Cat(lane.decisions_in.ready for lane in lanes).all()
        moves = ~s.broadcast_valid | all_take
        with m.If(moves):
            m.d.sync += [s.broadcast.eq(source), s.broadcast_valid.eq(source_valid)]
        for lane in lanes:
            m.d.comb += [lane.decisions_in.valid.eq(s.broadcast_valid),
                         lane.decisions_in.p.eq(s.broadcast),
                         lane.decisions_out.ready.eq(moves)]

        m.submodules.combiner = s.combiner = combiner = LaneCombiner(
            result_shape=lanes[0].results.p.shape(), lanes=g.feature_lanes, lane_bits=g.lane_bits,
            visit_bits=g.visit_bits, feature_bits=g.feature_bits, count_bits=g.feature_count_bits)
        for index, lane in enumerate(lanes):
            wiring.connect(m, lane.results, combiner.results[index])

    def _fill_path(self, m, s):
        """Presorted words through the in-bag builder's filter into the lanes."""
        g = self.geometry
        inbag, config, queued_config = s.inbag, s.config, s.queued_config
        lane_bits, thesis_mode = g.lane_bits, config.thesis_mode
        m.d.comb += [
            inbag.seed.eq(Mux(s.inbag_for_queued, queued_config.seed, config.seed)),
            inbag.tree_index.eq(Mux(s.inbag_for_queued, queued_config.tree_index, config.tree_index)),
            inbag.n_rows.eq(Mux(s.inbag_for_queued, queued_config.n_rows, config.n_rows)),
            inbag.n_samples.eq(Mux(s.inbag_for_queued, queued_config.n_samples, config.n_samples)),
            inbag.bootstrap.eq(Mux(s.inbag_for_queued, queued_config.bootstrap, config.bootstrap)),
            inbag.presorted.p.last.eq(self.presorted.p.last),
        ]
        # The lanes of the arriving word that carry a list: in forest mode the slot's
        # features below n_features, in thesis mode the tree's feature alone.
        tree_lane = s.tree_feature[:lane_bits] if lane_bits else Const(0)
        for index in range(g.feature_lanes):
            entry = self.presorted.p.entries[index]
            m.d.comb += [inbag.presorted.p.entries[index].row.eq(entry.row),
                         inbag.presorted.p.entries[index].code.eq(Cat(entry.code, entry.label)),
                         inbag.lane_mask[index].eq(Mux(thesis_mode, tree_lane == index,
                                                       (s.lists_received << lane_bits) + index
                                                       < config.n_features))]
        # In-bag entries to the lanes: lane i takes entry i (forest mode); in thesis mode
        # lane 0 takes the tree's feature's entry, into slot 0.
        inbag_word = inbag.inbag.p
        s.fill_entries = fill_entries = [Signal(inbag.inbag.p.entries[0].shape(), name=f"fill{index}_entry")
                                         for index in range(g.feature_lanes)]
        s.fill_present = fill_present = Signal(g.feature_lanes)
        for index, lane in enumerate(s.lanes):
            if index == 0:
                m.d.comb += [fill_entries[0].eq(Mux(thesis_mode, inbag_word.entries[tree_lane],
                                                    inbag_word.entries[0])),
                             fill_present[0].eq(Mux(thesis_mode, inbag_word.present.bit_select(tree_lane, 1),
                                                    inbag_word.present[0]))]
            else:
                m.d.comb += [fill_entries[index].eq(inbag_word.entries[index]),
                             fill_present[index].eq(~thesis_mode & inbag_word.present[index])]
        # The lanes write what the controller filled a cycle before, from registers: the
        # bank's write port and the partition unit's write handshake see no state decode.
        # (The PE reads no list until a node is reviewed, cycles after the fill's end.)
        s.fill_wanted = Signal(g.feature_lanes)
        for index, lane in enumerate(s.lanes):
            write = Signal(name=f"fill{index}_write")
            write_address = Signal.like(s.fill_addresses[index], name=f"fill{index}_write_address")
            write_entry = Signal.like(fill_entries[index], name=f"fill{index}_write_entry")
            m.d.sync += [write.eq(s.fill_wanted[index]), write_address.eq(s.fill_addresses[index]),
                         write_entry.eq(fill_entries[index])]
            m.d.comb += [lane.fill_enable.eq(write), lane.fill_address.eq(write_address),
                         lane.fill_entry.eq(write_entry)]

    def _node_records(self, m, s):
        """The children of a split, and the node records as nodes of the golden model."""
        g = self.geometry
        best_split, current = s.combiner.split, s.current
        s.left_counts = left_counts = best_split.left_counts
        s.rows_left = rows_left = best_split.rows_left
        s.child_depth = child_depth = current.depth + 1
        # The right child's counts and rows, registered in ``Decide`` (the best split is
        # final then); the children's leaf decisions, the left one's registered in
        # ``Decide``, the right one's from those registers in ``Write the left child``
        # (no subtraction on its way), each written into its record (and the partition
        # decision) after it.
        s.right_counts = right_counts = Signal(g.counts_layout, name="right_counts")
        s.rows_right = rows_right = Signal(len(current.n_rows), name="rows_right")
        s.left_is_leaf, s.right_is_leaf = Signal(name="left_is_leaf"), Signal(name="right_is_leaf")
        s.left_child_decisions = [
            *(right_counts[c].eq(current.counts[c] - left_counts[c]) for c in range(g.classes)),
            rows_right.eq(current.n_rows - rows_left),
            s.left_is_leaf.eq(self._is_leaf(s, left_counts, rows_left, child_depth))]
        s.right_child_decision = s.right_is_leaf.eq(self._is_leaf(s, right_counts, rows_right, child_depth))
        s.children_both_leaves = s.left_is_leaf & s.right_is_leaf
        s.split_feature = Mux(s.config.thesis_mode, s.tree_feature, s.combiner.feature)

        m.submodules.node_formatter = formatter = NodeFormatter(g)
        m.d.comb += [formatter.record.eq(s.write_held_record), formatter.index.eq(s.write_held_index),
                     formatter.created.eq(s.next_node), self.nodes.p.eq(s.write_out.payload)]
        s.formatted = formatter.node

    def _sparse_fill(self, m, s):
        """The sparse fill (its draws go to the in-bag builder unless the controller draws)."""
        g, inbag = self.geometry, s.inbag
        m.submodules.sparse = s.sparse = sparse = SparseFill(
            g, draw_bound_bits=_draw_bound_bits(g), entry_layout=s.lanes[0].entry_layout)
        m.d.comb += [
            sparse.start_prologue.eq(s.start_prologue), sparse.start.eq(self.start),
            sparse.weights_ready.eq(inbag.weights_ready), sparse.drawn.eq(inbag.drawn),
            sparse.drawn_row.eq(inbag.drawn_row),
            sparse.bound.eq(Mux(s.inbag_for_queued, s.queued_config.n_features, s.config.n_features)),
            # The controller's request or the sparse fill's, each from registers (the two
            # never request at once: the sparse fill draws before the running tree's
            # first draw or, for a queued tree, once a thesis-mode tree is past its root).
            inbag.draw_requests.valid.eq(s.draw_valid | sparse.draw_requests.valid),
            # Between requests the controller's next bound is shown, so the generator
            # has its masks ready (``hw.rng``).
            inbag.draw_requests.p.bound.eq(Mux(sparse.draw_requests.valid,
                                               sparse.draw_requests.p.bound, s.draw_bound)),
            sparse.draw_requests.ready.eq(inbag.draw_requests.ready & ~s.draw_valid),
            sparse.draws.valid.eq(inbag.draws.valid), sparse.draws.p.eq(inbag.draws.p),
            inbag.draws.ready.eq(sparse.draws.ready),
            sparse.taken.eq(s.prologue_taken),
        ]
        wiring.connect(m, sparse.code_requests, wiring.flipped(self.code_requests))
        wiring.connect(m, wiring.flipped(self.codes), sparse.codes)
        lane = s.lanes[0]
        with m.If(sparse.writing):
            m.d.comb += [lane.fill_enable.eq(1), lane.fill_address.eq(sparse.fill_address),
                         lane.fill_entry.row.eq(sparse.fill_entry.row),
                         lane.fill_entry.code.eq(sparse.fill_entry.code),
                         lane.fill_entry.weight.eq(sparse.fill_entry.weight)]

    def _start_and_queue(self, m, s):
        """The serialised pipeline: a tree can be queued while one trains (not in the cycle
        its last node goes out). A queued sparse-fill tree has its prologue run ahead once
        the running tree no longer needs the in-bag builder (thesis mode, from its root on)."""
        queued, queued_config = s.queued, s.queued_config
        m.d.comb += self.queue_ready.eq(self.busy & ~queued & ~s.finishing)
        with m.If(self.queue & self.queue_ready & ~self.start):
            with m.If(s.config_bad):
                m.d.sync += self.bad_config.eq(1)
            with m.Else():
                m.d.sync += [queued_config.eq(s.port_config), queued.eq(1)]
        with m.If(queued & queued_config.sparse & ~s.prefetched & s.past_prologue & ~s.sparse.writing &
                  ~s.finishing & ~self.start):
            m.d.sync += [s.start_inbag.eq(1), s.start_prologue.eq(1), s.inbag_for_queued.eq(1),
                         s.prefetched.eq(1)]


def _draw_bound_bits(geometry):
    """Width of the in-bag builder's draw bound: rows (bootstrap) and features (draws)."""
    return max(geometry.row_bits + 1, bits(geometry.feature_capacity))
