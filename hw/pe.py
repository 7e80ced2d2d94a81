"""The training processing element: trains one tree at a time, bit-identical to the golden model.

Reference: ``sw.methods.forest.model.train_tree`` (the algorithm is ``docs/algorithm.md``; the design, its
cycle model and measurements are ``docs/gateware.md``). One PE is

* an :class:`hw.inbag.InBagBuilder` that draws the tree's bootstrap from the tree's own
  generator (which then goes on to draw the node features) and filters every presorted
  list it is sent down to the in-bag rows with their weights;
* ``feature_lanes`` :class:`hw.lane.FeatureLane` s, each holding the in-bag lists of every
  ``feature_lanes``-th feature with its own Gini calculator and partition unit;
* a node memory in breadth-first creation order (no heap: ``max_nodes`` entries), the
  level's partition jobs, and a controller (a named-state FSM) that grows the tree level
  by level exactly as the model: leaf decision, per-node feature draws (partial
  Fisher-Yates over a tagged permutation memory, constant features skipped), scans of the
  visited features on their lanes in parallel, the best split with the model's
  tie-breaks, children, then per split the go-left bits and a stable partition of every
  list;
* a tree writer that streams the finished node list out in the model's node format.

Thesis mode (one feature per tree, ``thesis_mode = 1``) is a configuration of
the same PE: only the tree's feature is filled (into lane 0, slot 0), and no partition is
needed (the split feature's own list is already partitioned). With a bootstrap of at most
``sparse_rows`` draws (the thesis's 16) no list is read at all: the PE keeps the distinct
drawn rows with their weights, asks for their codes (``code_requests`` / ``codes``, the
dataset bank addressed {feature, row}) and insertion-sorts them by (code, row), which is
exactly the in-bag list the filter would give, in a few cycles per row instead of one per
dataset row.
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, ResetInserter, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.checks import check_integer, refuse_construction
from hw.inbag import InBagBuilder
from hw.lane import FeatureLane, LaneCommand, lane_slots
from hw.partition import decision_layout

__all__ = ["ProcessingElement", "list_request_layout", "presorted_word_layout", "node_layout",
           "code_request_layout", "code_answer_layout"]


def list_request_layout(slot_bits):
    """The PE asks for the presorted lists of one slot: features ``slot * lanes`` to
    ``slot * lanes + lanes - 1``, side by side."""
    return data.StructLayout({"slot": slot_bits})


def presorted_word_layout(lanes, row_bits, code_bits, label_bits):
    """One word of a requested slot: per lane the entry at one sorted position of that
    lane's feature (ascending codes), ``last`` on the final position. Lanes past the
    dataset's features carry anything."""
    entry = data.StructLayout({"row": row_bits, "code": code_bits, "label": label_bits})
    return data.StructLayout({"entries": data.ArrayLayout(entry, lanes), "last": 1})


def code_request_layout(feature_bits, row_bits):
    """The PE asks for the code of one (feature, row) (the sparse fill of small bootstraps)."""
    return data.StructLayout({"feature": feature_bits, "row": row_bits})


def code_answer_layout(code_bits, label_bits):
    """The code of the requested (feature, row) and the row's label."""
    return data.StructLayout({"code": code_bits, "label": label_bits})


def node_layout(*, node_bits, feature_bits, code_bits, classes, count_bits, position_bits,
                depth_bits):
    """One node of a trained tree, in the golden model's format (``sw.methods.forest.model.Tree``)."""
    return data.StructLayout({
        "index": node_bits,
        "leaf": 1,
        "feature": feature_bits,
        "threshold": code_bits,
        "left_child": node_bits,
        "right_child": node_bits,
        "class_counts": data.ArrayLayout(count_bits, classes),
        "majority": max(1, (classes - 1).bit_length()),
        "n_samples": count_bits,
        "n_rows": position_bits,
        "depth": depth_bits,
        "last": 1,
    })


def _bits(maximum):
    """Bits to hold 0 .. maximum."""
    return max(1, int(maximum).bit_length())


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
        entries of registers and comparators (about 1,000 ALMs at 16 rows), which the
        default builds' resource estimates leave out (docs/gateware.md).

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
            check_integer("max_rows", max_rows, 2, 1 << 20)
            check_integer("max_samples", max_samples, 1, 1 << 20)
            if max_inbag_rows is None:
                max_inbag_rows = max_rows
            check_integer("max_inbag_rows", max_inbag_rows, 1, max_rows)
            check_integer("feature_capacity", feature_capacity, 1, 4096)
            check_integer("feature_lanes", feature_lanes, 1, 64)
            if feature_lanes & (feature_lanes - 1):
                raise ValueError(f"feature_lanes must be a power of two, not {feature_lanes}")
            if feature_lanes > 1 and feature_lanes >= 2 * feature_capacity:
                raise ValueError(f"feature_lanes must be at most feature_capacity ({feature_capacity}) "
                                 f"rounded up to a power of two, not {feature_lanes}")
            check_integer("code_bits", code_bits, 1, 24)
            check_integer("classes", classes, 2, 64)
            check_integer("max_depth", max_depth, 1, 255)
            largest_tree = min(2 * max_inbag_rows - 1, (1 << (max_depth + 1)) - 1)
            if max_nodes is None:
                max_nodes = largest_tree
            check_integer("max_nodes", max_nodes, 1, 1 << 20)
            check_integer("tree_index_bits", tree_index_bits, 1, 32)
            check_integer("sparse_rows", sparse_rows, 0, 64)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        self.max_rows = max_rows
        self.max_samples = max_samples
        self.max_inbag_rows = max_inbag_rows
        self.feature_capacity = feature_capacity
        self.feature_lanes = feature_lanes
        self.code_bits = code_bits
        self.classes = classes
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.tree_index_bits = tree_index_bits
        self.sparse_rows = sparse_rows

        self.lane_bits = (feature_lanes - 1).bit_length()
        self.slots = -(-feature_capacity // feature_lanes)
        self.slot_bits = max(1, (self.slots - 1).bit_length())
        self.row_bits = (max_rows - 1).bit_length()
        self.weight_bits = max_samples.bit_length()
        self.label_bits = max(1, (classes - 1).bit_length())
        self.feature_bits = max(1, (feature_capacity - 1).bit_length())
        self.position_bits = _bits(max_inbag_rows)
        self.count_bits = _bits(max(max_samples, max_inbag_rows))
        self.depth_bits = _bits(max_depth)
        self.node_bits = max(1, (max_nodes - 1).bit_length())
        self.visit_bits = max(1, (feature_capacity - 1).bit_length())
        self.node_layout = node_layout(
            node_bits=self.node_bits, feature_bits=self.feature_bits, code_bits=code_bits,
            classes=classes, count_bits=self.count_bits, position_bits=self.position_bits,
            depth_bits=self.depth_bits)
        super().__init__({
            "seed": In(32),
            "tree_index": In(tree_index_bits),
            "n_rows": In(self.row_bits + 1),
            "n_features": In(_bits(feature_capacity)),
            "n_samples": In(self.weight_bits),
            "bootstrap": In(1),
            "features_per_split": In(_bits(feature_capacity)),
            "thesis_mode": In(1),
            "depth_limited": In(1),
            "depth_limit": In(self.depth_bits),
            "min_samples_split": In(self.row_bits + 2),
            "min_samples_leaf": In(self.row_bits + 1),
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
            "list_requests": Out(stream.Signature(list_request_layout(self.slot_bits))),
            "presorted": In(stream.Signature(presorted_word_layout(feature_lanes, self.row_bits, code_bits,
                                                                   self.label_bits))),
            "nodes": Out(stream.Signature(self.node_layout)),
            "code_requests": Out(stream.Signature(code_request_layout(self.feature_bits, self.row_bits))),
            "codes": In(stream.Signature(code_answer_layout(code_bits, self.label_bits))),
        })

    def elaborate(self, platform):
        m = Module()
        classes, code_bits, count_bits = self.classes, self.code_bits, self.count_bits
        lanes_n, lane_bits = self.feature_lanes, self.lane_bits
        counts_layout = data.ArrayLayout(count_bits, classes)

        # ---------------------------------------------------------------- submodules
        inbag = InBagBuilder(
            max_rows=self.max_rows, max_samples=self.max_samples,
            code_bits=code_bits + self.label_bits, tree_index_bits=self.tree_index_bits,
            draw_bound_bits=max(self.row_bits + 1, _bits(self.feature_capacity)), lanes=lanes_n)
        # A start while busy resets the in-bag builder (a draw in flight, a half-done
        # clearing pass, a list half filtered), so nothing of an abandoned tree reaches the
        # next one; its weight generation survives resets, so no reset forces a clearing
        # pass (an interrupted one is redone). Either way the builder starts one cycle
        # later, from the latched configuration.
        m.submodules.inbag = ResetInserter(self.start & self.busy)(inbag)
        start_inbag = Signal()
        m.d.sync += start_inbag.eq(0)
        m.d.comb += inbag.start.eq(start_inbag)
        finishing = Signal()            # the running tree's last node goes out this cycle
        promoting = Signal()            # ... and the queued tree takes over from it
        lanes = []
        for index in range(lanes_n):
            # Lane l holds features l, l + lanes, ...: the last slot may be empty in some lanes.
            lane = FeatureLane(slots=self.slots, bank_slots=lane_slots(self.feature_capacity, index, lanes_n),
                               list_rows=self.max_inbag_rows,
                               max_rows=self.max_rows, max_samples=self.max_samples,
                               code_bits=code_bits, classes=classes, count_bits=count_bits,
                               visit_bits=self.visit_bits)
            # A start abandons whatever the lanes were doing (queued jobs, results, commands).
            m.submodules[f"lane{index}"] = ResetInserter(self.start | promoting)(lane)
            lanes.append(lane)

        record_layout = data.StructLayout({
            "split": 1, "feature": self.feature_bits, "threshold": code_bits,
            "left": self.node_bits, "counts": counts_layout, "n_rows": self.position_bits,
            "depth": self.depth_bits, "start": self.position_bits,
        })
        m.submodules.node_memory = node_memory = Memory(shape=record_layout, depth=self.max_nodes,
                                                        init=[])
        node_write = node_memory.write_port()
        node_read = node_memory.read_port()
        job_layout = data.StructLayout({"feature": self.feature_bits, "threshold": code_bits,
                                        "start": self.position_bits, "length": self.position_bits})
        # A partition job is a split node of the level (at least two in-bag rows each, in
        # disjoint segments), so a level holds at most max_inbag_rows // 2 of them.
        job_depth = max(1, min(self.max_nodes, self.max_inbag_rows // 2))
        m.submodules.job_memory = job_memory = Memory(shape=job_layout, depth=job_depth, init=[])
        job_write = job_memory.write_port()
        job_read = job_memory.read_port()
        tag_bits = _bits(self.max_nodes)
        permutation_layout = data.StructLayout({"tag": tag_bits, "feature": self.feature_bits})
        m.submodules.permutation = permutation = Memory(shape=permutation_layout,
                                                        depth=self.feature_capacity, init=[])
        permutation_write = permutation.write_port()
        chosen_read = permutation.read_port()
        position_read = permutation.read_port()

        # ---------------------------------------------------------------- configuration
        # The running tree's configuration, and the queued tree's (the serialised pipeline:
        # a tree handed over on ``queue`` while this one trains).
        config_layout = data.StructLayout({
            "seed": 32, "tree_index": self.tree_index_bits, "n_rows": len(self.n_rows),
            "n_features": len(self.n_features), "n_samples": len(self.n_samples), "bootstrap": 1,
            "features_per_split": len(self.features_per_split), "thesis_mode": 1, "depth_limited": 1,
            "depth_limit": len(self.depth_limit), "min_samples_split": len(self.min_samples_split),
            "min_samples_leaf": len(self.min_samples_leaf), "sparse": 1,
        })
        port_config = Signal(config_layout)
        m.d.comb += port_config.eq(Cat(
            self.seed, self.tree_index, self.n_rows, self.n_features, self.n_samples, self.bootstrap,
            self.features_per_split, self.thesis_mode, self.depth_limited, self.depth_limit,
            self.min_samples_split, self.min_samples_leaf,
            self.thesis_mode & self.bootstrap & (self.n_samples <= self.sparse_rows)))
        config = Signal(config_layout)
        queued_config = Signal(config_layout)
        queued = Signal()
        n_rows = config.n_rows
        seed = config.seed
        tree_index = config.tree_index
        n_samples = config.n_samples
        bootstrap = config.bootstrap
        n_features = config.n_features
        features_per_split = config.features_per_split
        thesis_mode = config.thesis_mode
        depth_limited = config.depth_limited
        depth_limit = config.depth_limit
        min_samples_split = config.min_samples_split
        min_samples_leaf = config.min_samples_leaf
        sparse = config.sparse
        cycles = Signal(32)
        m.d.comb += self.cycles.eq(cycles)
        with m.If(self.busy):
            m.d.sync += cycles.eq(cycles + 1)

        def slots_used(lane_index):
            """Lists held by a lane: features lane, lane + lanes, ... below n_features."""
            used = Signal(_bits(self.slots), name=f"slots_used{lane_index}")
            count = (n_features + (lanes_n - 1 - lane_index)) >> lane_bits
            m.d.comb += used.eq(Mux(thesis_mode, int(lane_index == 0), count))
            return used

        def is_leaf(counts, rows, depth):
            """leaf_decision of the model, before any draw."""
            nonzero = sum((counts[c] != 0).as_unsigned() for c in range(classes))
            too_small = (rows < min_samples_split) | (rows < (min_samples_leaf << 1))
            return (depth_limited & (depth >= depth_limit)) | too_small | (nonzero <= 1)

        # ---------------------------------------------------------------- state
        tree_feature = Signal(self.feature_bits)
        # The prologue of a sparse-fill tree (bootstrap draws, the tree's feature, code
        # look-ups, insertion sort) runs in its own state machine, for the running tree or,
        # ahead of time, for the queued one (the serialised pipeline).
        start_prologue = Signal()       # pulse, with start_inbag: the prologue begins
        inbag_for_queued = Signal()     # the in-bag builder works for the queued tree
        prefetched = Signal()           # the queued tree's prologue has been started
        past_prologue = Signal()        # the running thesis-mode tree is done with the builder
        prologue_drawing = Signal()
        prologue_ready = Signal()
        prologue_taken = Signal()
        prologue_asked = Signal()
        prologue_bad = Signal()
        prologue_feature = Signal(self.feature_bits)
        m.d.sync += start_prologue.eq(0)
        lists_needed = Signal(_bits(self.slots))        # slots of lists to fill
        lists_requested = Signal.like(lists_needed)
        lists_received = Signal.like(lists_needed)     # slots taken up to their last position
        # Per lane, where its next in-bag entry goes (slot, position).
        fill_slots = [Signal(range(self.slots), name=f"fill{index}_slot") for index in range(lanes_n)]
        fill_positions = [Signal(self.position_bits, name=f"fill{index}_position")
                          for index in range(lanes_n)]
        input_position = Signal(self.row_bits + 1)
        clear_index = Signal(_bits(self.feature_capacity))
        root_counts = Signal(counts_layout)

        next_node = Signal(self.node_bits + 1)          # nodes created so far
        node = Signal(self.node_bits + 1)               # node under review
        level_end = Signal(self.node_bits + 1)
        current = Signal(record_layout)
        segment_start = Signal(self.position_bits)
        segment_length = Signal(self.position_bits)
        threshold = Signal(code_bits)
        go_left_lane = Signal(max(1, lane_bits))
        go_left_slot = Signal(range(self.slots))
        jobs_queued = Signal(self.node_bits + 1)
        job_index = Signal(self.node_bits + 1)

        wanted = Signal(_bits(self.feature_capacity))
        visited = Signal(_bits(self.feature_capacity))
        position = Signal(_bits(self.feature_capacity))
        tag = Signal(tag_bits)
        drawn_feature = Signal(self.feature_bits)
        draw_asked = Signal()
        combined = Signal(_bits(self.feature_capacity))

        best_found = Signal()
        best_visit = Signal(self.visit_bits)
        best_feature = Signal(self.feature_bits)
        best_split = Signal(lanes[0].results.p.split.shape())

        # Lane inputs shared by all lanes.
        lane_command = Signal(LaneCommand)
        lane_go = Signal()
        for index, lane in enumerate(lanes):
            m.d.comb += [
                lane.segment_start.eq(segment_start), lane.segment_length.eq(segment_length),
                lane.slots_used.eq(slots_used(index)), lane.go_left_slot.eq(go_left_slot),
                lane.threshold.eq(threshold), lane.totals.eq(current.counts),
                lane.min_samples_leaf.eq(min_samples_leaf), lane.command.eq(lane_command),
            ]
        lanes_busy = Signal()
        m.d.comb += lanes_busy.eq(Cat(lane.busy for lane in lanes).any())
        # A lane's last list of a partition job drains while the next job starts.
        lanes_draining = Signal()
        m.d.comb += lanes_draining.eq(Cat(lane.draining for lane in lanes).any())
        nonconstant_total = Signal(_bits(self.feature_capacity))
        m.d.comb += nonconstant_total.eq(sum(lane.nonconstant for lane in lanes))

        # Go-left bits from one lane to every lane's partition unit.
        source = Signal(decision_layout(self.row_bits))
        source_valid = Signal()
        m.d.comb += [source_valid.eq(Cat(lane.decisions_out.valid for lane in lanes).any())]
        for lane in lanes:
            with m.If(lane.decisions_out.valid):
                m.d.comb += source.eq(lane.decisions_out.p)
        all_take = Cat(lane.decisions_in.ready for lane in lanes).all()
        for lane in lanes:
            m.d.comb += [lane.decisions_in.valid.eq(source_valid), lane.decisions_in.p.eq(source),
                         lane.decisions_out.ready.eq(all_take)]

        # ---------------------------------------------------------------- combiner
        # Results arrive in any order; the order key (highest score, then first visit) is
        # the model's, so the order they are combined in does not matter.
        result_valid = Cat(lane.results.valid for lane in lanes)
        chosen_lane = Signal(max(1, lane_bits))
        for index in reversed(range(lanes_n)):
            with m.If(lanes[index].results.valid):
                m.d.comb += chosen_lane.eq(index)
        chosen = Signal(lanes[0].results.p.shape())
        for index, lane in enumerate(lanes):
            with m.If(chosen_lane == index):
                m.d.comb += [chosen.eq(lane.results.p), lane.results.ready.eq(1)]
        candidate = chosen.split
        cross_new = Signal(len(candidate.numerator) + len(candidate.denominator))
        cross_best = Signal.like(cross_new)
        m.d.comb += [cross_new.eq(candidate.numerator * best_split.denominator),
                     cross_best.eq(best_split.numerator * candidate.denominator)]
        better = (~best_found | (cross_new > cross_best) |
                  ((cross_new == cross_best) & (chosen.visit < best_visit)))
        with m.If(result_valid.any()):
            m.d.sync += combined.eq(combined + 1)
            with m.If(candidate.found & better):
                m.d.sync += [best_found.eq(1), best_visit.eq(chosen.visit), best_split.eq(candidate),
                             best_feature.eq(Cat(chosen_lane[:lane_bits], chosen.slot)
                                             if lane_bits else chosen.slot)]

        # ---------------------------------------------------------------- fill path
        m.d.comb += [
            inbag.seed.eq(Mux(inbag_for_queued, queued_config.seed, seed)),
            inbag.tree_index.eq(Mux(inbag_for_queued, queued_config.tree_index, tree_index)),
            inbag.n_rows.eq(Mux(inbag_for_queued, queued_config.n_rows, n_rows)),
            inbag.n_samples.eq(Mux(inbag_for_queued, queued_config.n_samples, n_samples)),
            inbag.bootstrap.eq(Mux(inbag_for_queued, queued_config.bootstrap, bootstrap)),
            inbag.presorted.p.last.eq(self.presorted.p.last),
        ]
        # The lanes of the arriving word that carry a list: in forest mode the slot's
        # features below n_features, in thesis mode the tree's feature alone.
        tree_lane = tree_feature[:lane_bits] if lane_bits else Const(0)
        for index in range(lanes_n):
            entry = self.presorted.p.entries[index]
            m.d.comb += [inbag.presorted.p.entries[index].row.eq(entry.row),
                         inbag.presorted.p.entries[index].code.eq(Cat(entry.code, entry.label)),
                         inbag.lane_mask[index].eq(Mux(thesis_mode, tree_lane == index,
                                                       (lists_received << lane_bits) + index < n_features))]
        # In-bag entries to the lanes: lane i takes entry i (forest mode); in thesis mode
        # lane 0 takes the tree's feature's entry, into slot 0.
        inbag_word = inbag.inbag.p
        fill_entries = [Signal(inbag.inbag.p.entries[0].shape(), name=f"fill{index}_entry")
                        for index in range(lanes_n)]
        fill_present = Signal(lanes_n)
        for index, lane in enumerate(lanes):
            if index == 0:
                m.d.comb += [fill_entries[0].eq(Mux(thesis_mode, inbag_word.entries[tree_lane],
                                                    inbag_word.entries[0])),
                             fill_present[0].eq(Mux(thesis_mode, inbag_word.present.bit_select(tree_lane, 1),
                                                    inbag_word.present[0]))]
            else:
                m.d.comb += [fill_entries[index].eq(inbag_word.entries[index]),
                             fill_present[index].eq(~thesis_mode & inbag_word.present[index])]
            m.d.comb += [lane.fill_address.eq(fill_slots[index] * self.max_inbag_rows + fill_positions[index]),
                         lane.fill_entry.eq(fill_entries[index])]

        # ---------------------------------------------------------------- node records
        left_counts = best_split.left_counts
        right_counts = Signal(counts_layout)
        for c in range(classes):
            m.d.comb += right_counts[c].eq(current.counts[c] - left_counts[c])
        rows_left = best_split.rows_left
        rows_right = current.n_rows - rows_left
        child_depth = current.depth + 1
        children_both_leaves = (is_leaf(left_counts, rows_left, child_depth) &
                                is_leaf(right_counts, rows_right, child_depth))
        split_feature = Mux(thesis_mode, tree_feature, best_feature)

        # ---------------------------------------------------------------- sparse fill
        # Thesis-mode bootstraps of at most sparse_rows draws: the distinct drawn rows and
        # their weights are kept here as they are drawn, their codes looked up, and the
        # rows insertion-sorted by (code, row): the tree's in-bag list without a filter.
        S = max(1, self.sparse_rows)
        drawn_rows = [Signal(self.row_bits, name=f"drawn_row{k}") for k in range(S)]
        drawn_weights = [Signal(self.weight_bits, name=f"drawn_weight{k}") for k in range(S)]
        drawn_count = Signal(range(S + 1))
        looked_up = Signal(range(S + 1))
        answered = Signal(range(S + 1))
        sorted_rows = [Signal(self.row_bits, name=f"sorted_row{k}") for k in range(S)]
        sorted_codes = [Signal(code_bits, name=f"sorted_code{k}") for k in range(S)]
        sorted_labels = [Signal(self.label_bits, name=f"sorted_label{k}") for k in range(S)]
        sorted_weights = [Signal(self.weight_bits, name=f"sorted_weight{k}") for k in range(S)]
        sparse_write = Signal(range(S + 1))
        sparse_writing = Signal()       # the sorted rows are being written into lane 0
        prologue_counts = Signal(counts_layout)     # the root's class totals, as looked up
        with m.If(prologue_drawing & inbag.drawn):
            matches = [(k < drawn_count) & (drawn_rows[k] == inbag.drawn_row) for k in range(S)]
            for k in range(S):
                with m.If(matches[k]):
                    m.d.sync += drawn_weights[k].eq(drawn_weights[k] + 1)
            with m.If(~Cat(matches).any()):
                for k in range(S):
                    with m.If(drawn_count == k):
                        m.d.sync += [drawn_rows[k].eq(inbag.drawn_row), drawn_weights[k].eq(1)]
                m.d.sync += drawn_count.eq(drawn_count + 1)
        new_row = Array(drawn_rows)[answered]
        new_weight = Array(drawn_weights)[answered]
        new_code = self.codes.p.code
        goes_before = [Signal(name=f"goes_before{k}") for k in range(S)]
        for k in range(S):
            m.d.comb += goes_before[k].eq((k >= answered) | (new_code < sorted_codes[k]) |
                                          ((new_code == sorted_codes[k]) & (new_row < sorted_rows[k])))

        def insert():
            """Insert the answered row: entries from its place on move up by one."""
            for k in range(S):
                with m.If(goes_before[k]):
                    if k == 0:
                        source = (new_row, new_code, self.codes.p.label, new_weight)
                    else:
                        source = tuple(Mux(goes_before[k - 1], entry[k - 1], new)
                                       for entry, new in zip(
                                           (sorted_rows, sorted_codes, sorted_labels, sorted_weights),
                                           (new_row, new_code, self.codes.p.label, new_weight)))
                    m.d.sync += [sorted_rows[k].eq(source[0]), sorted_codes[k].eq(source[1]),
                                 sorted_labels[k].eq(source[2]), sorted_weights[k].eq(source[3])]

        # ---------------------------------------------------------------- tree writer
        write_index = Signal(self.node_bits + 1)
        write_staged = Signal()
        write_staged_index = Signal(self.node_bits + 1)
        record = node_read.data
        majority = Signal(self.label_bits)
        top = record.counts[0]
        for c in range(1, classes):
            bigger = record.counts[c] > top
            top = Mux(bigger, record.counts[c], top)
        best_count = top
        for c in reversed(range(classes)):
            with m.If(record.counts[c] == best_count):
                m.d.comb += majority.eq(c)
        m.d.comb += [
            self.nodes.p.index.eq(write_staged_index),
            self.nodes.p.leaf.eq(~record.split),
            self.nodes.p.feature.eq(Mux(record.split, record.feature, 0)),
            self.nodes.p.threshold.eq(Mux(record.split, record.threshold, 0)),
            self.nodes.p.left_child.eq(Mux(record.split, record.left, 0)),
            self.nodes.p.right_child.eq(Mux(record.split, record.left + 1, 0)),
            self.nodes.p.class_counts.eq(record.counts),
            self.nodes.p.majority.eq(majority),
            self.nodes.p.n_samples.eq(sum(record.counts[c] for c in range(classes))),
            self.nodes.p.n_rows.eq(record.n_rows),
            self.nodes.p.depth.eq(record.depth),
            self.nodes.p.last.eq(write_staged_index == next_node - 1),
        ]

        # ---------------------------------------------------------------- start
        in_bag_bound = Mux(self.bootstrap, Mux(self.n_samples < self.n_rows, self.n_samples, self.n_rows),
                           self.n_rows)
        config_bad = (
            (self.n_rows == 0) | (self.n_rows > self.max_rows) |
            (self.n_features == 0) | (self.n_features > self.feature_capacity) |
            (self.bootstrap & ((self.n_samples == 0) | (self.n_samples > self.max_samples))) |
            # Known before the draws: all rows in the bag, or a sparse fill (few draws).
            ((~self.bootstrap | port_config.sparse) & (in_bag_bound > self.max_inbag_rows)) |
            (self.features_per_split == 0) | (self.min_samples_split < 2) | (self.min_samples_leaf == 0) |
            (self.depth_limited & (self.depth_limit > self.max_depth)))

        def on_start():
            """A start (re)begins a tree from any state; it wins over the state's own moves."""
            with m.If(self.start):
                m.d.sync += [self.bad_config.eq(config_bad), self.bad_input.eq(0),
                             self.node_overflow.eq(0), self.depth_overflow.eq(0),
                             self.inbag_overflow.eq(0), self.done.eq(0),
                             cycles.eq(0)]
                with m.If(config_bad):
                    m.next = "Idle"
                with m.Else():
                    m.d.sync += [start_inbag.eq(1), start_prologue.eq(port_config.sparse),
                                 config.eq(port_config)]
                    with m.If(port_config.sparse):
                        m.next = "Wait for the prologue"
                    with m.Else():
                        m.next = "Draw the bootstrap"
                # Whatever was queued or prefetched is abandoned with the running tree.
                m.d.sync += [queued.eq(0), inbag_for_queued.eq(0), prefetched.eq(0),
                             past_prologue.eq(0), sparse_writing.eq(0)]

        def promote():
            """The running tree is written and a tree is queued: it takes over at once."""
            m.d.comb += promoting.eq(1)
            m.d.sync += [config.eq(queued_config), queued.eq(0), inbag_for_queued.eq(0),
                         prefetched.eq(0), past_prologue.eq(0), cycles.eq(0)]
            with m.If(queued_config.sparse):
                with m.If(~prefetched):
                    m.d.sync += [start_inbag.eq(1), start_prologue.eq(1)]
                m.next = "Wait for the prologue"
            with m.Else():
                m.d.sync += start_inbag.eq(1)
                m.next = "Draw the bootstrap"

        # ---------------------------------------------------------------- queue
        # A tree can be queued while one trains (not in the cycle its last node goes out).
        # A queued sparse-fill tree has its prologue run ahead once the running tree no
        # longer needs the in-bag builder (thesis mode, from its root on).
        m.d.comb += self.queue_ready.eq(self.busy & ~queued & ~finishing)
        with m.If(self.queue & self.queue_ready & ~self.start):
            with m.If(config_bad):
                m.d.sync += self.bad_config.eq(1)
            with m.Else():
                m.d.sync += [queued_config.eq(port_config), queued.eq(1)]
        with m.If(queued & queued_config.sparse & ~prefetched & past_prologue & ~sparse_writing &
                  ~finishing & ~self.start):
            m.d.sync += [start_inbag.eq(1), start_prologue.eq(1), inbag_for_queued.eq(1),
                         prefetched.eq(1)]

        # ---------------------------------------------------------------- prologue
        prologue_bound = Mux(inbag_for_queued, queued_config.n_features, n_features)
        with m.FSM(init="Idle", name="prologue"):
            def prologue_control():
                with m.If(start_prologue):
                    m.d.sync += [drawn_count.eq(0), prologue_bad.eq(0), prologue_counts.eq(0)]
                    m.next = "Draw the bootstrap"
                with m.Elif(self.start):
                    m.next = "Idle"

            with m.State("Idle"):
                prologue_control()

            with m.State("Draw the bootstrap"):
                m.d.comb += prologue_drawing.eq(1)
                with m.If(inbag.weights_ready):
                    m.d.sync += [prologue_asked.eq(0), looked_up.eq(0), answered.eq(0)]
                    m.next = "Draw the tree's feature"
                prologue_control()

            with m.State("Draw the tree's feature"):
                m.d.comb += [inbag.draw_requests.valid.eq(~prologue_asked),
                             inbag.draw_requests.p.bound.eq(prologue_bound), inbag.draws.ready.eq(1)]
                with m.If(inbag.draw_requests.ready):
                    m.d.sync += prologue_asked.eq(1)
                with m.If(inbag.draws.valid):
                    m.d.sync += prologue_feature.eq(inbag.draws.p.value)
                    m.next = "Look up the drawn rows"
                prologue_control()

            with m.State("Look up the drawn rows"):
                m.d.comb += [self.code_requests.valid.eq(looked_up < drawn_count),
                             self.code_requests.p.feature.eq(prologue_feature),
                             self.code_requests.p.row.eq(Array(drawn_rows)[looked_up]),
                             self.codes.ready.eq(1)]
                with m.If(self.code_requests.valid & self.code_requests.ready):
                    m.d.sync += looked_up.eq(looked_up + 1)
                with m.If(self.codes.valid):
                    insert()
                    label = self.codes.p.label
                    m.d.sync += [answered.eq(answered + 1),
                                 prologue_counts[label].eq(prologue_counts[label] + new_weight)]
                    if classes < (1 << self.label_bits):
                        with m.If(self.codes.p.label >= classes):
                            m.d.sync += prologue_bad.eq(1)
                with m.If(answered == drawn_count):
                    m.next = "Ready"
                prologue_control()

            with m.State("Ready"):
                m.d.comb += prologue_ready.eq(1)
                with m.If(prologue_taken):
                    m.next = "Idle"
                prologue_control()


        # ---------------------------------------------------------------- sparse writer
        # The sorted rows into lane 0, slot 0, one per cycle from the root's write on: the
        # root's scan starts reading slot 0 at least four cycles later, one entry per cycle,
        # so it never overtakes. The prologue registers stay the running tree's until this
        # ends (a queued tree's prologue waits for it), and so does the tree's end.
        with m.If(sparse_writing):
            sparse_label = Array(sorted_labels)[sparse_write]
            m.d.comb += [lanes[0].fill_enable.eq(1), lanes[0].fill_address.eq(sparse_write),
                         lanes[0].fill_entry.row.eq(Array(sorted_rows)[sparse_write]),
                         lanes[0].fill_entry.code.eq(Cat(Array(sorted_codes)[sparse_write], sparse_label)),
                         lanes[0].fill_entry.weight.eq(Array(sorted_weights)[sparse_write])]
            m.d.sync += sparse_write.eq(sparse_write + 1)
            with m.If(sparse_write == drawn_count - 1):
                m.d.sync += sparse_writing.eq(0)

        # ---------------------------------------------------------------- controller
        def abort(flag):
            m.d.sync += [flag.eq(1), queued.eq(0)]
            m.next = "Idle"

        def review_next(index):
            """Go on to node ``index`` of the level: its record is read now, so it is
            reviewed in the next cycle (or the level ends)."""
            m.d.sync += node.eq(index)
            m.d.comb += node_read.addr.eq(index)
            with m.If(index == level_end):
                m.next = "End of the level"
            with m.Else():
                m.next = "Review the node"

        with m.FSM(init="Idle") as fsm:
            with m.State("Idle"):
                pass
                on_start()

            with m.State("Draw the bootstrap"):
                m.d.comb += self.busy.eq(1)
                with m.If(inbag.weights_ready & (inbag.inbag_rows > self.max_inbag_rows)):
                    # More distinct rows than a list holds: stop before the fill writes any.
                    abort(self.inbag_overflow)
                with m.Elif(inbag.weights_ready):
                    m.d.sync += [lists_requested.eq(0), lists_received.eq(0),
                                 [slot.eq(0) for slot in fill_slots],
                                 [position.eq(0) for position in fill_positions],
                                 input_position.eq(0), clear_index.eq(0), root_counts.eq(0),
                                 draw_asked.eq(0)]
                    with m.If(thesis_mode):
                        m.d.sync += lists_needed.eq(1)
                        m.next = "Draw the tree's feature"
                    with m.Else():
                        m.d.sync += lists_needed.eq((n_features + (lanes_n - 1)) >> lane_bits)
                        m.next = "Fill the lists"
                on_start()

            with m.State("Draw the tree's feature"):
                m.d.comb += [self.busy.eq(1), inbag.draw_requests.valid.eq(~draw_asked),
                             inbag.draw_requests.p.bound.eq(n_features), inbag.draws.ready.eq(1)]
                with m.If(inbag.draw_requests.ready):
                    m.d.sync += draw_asked.eq(1)
                with m.If(inbag.draws.valid):
                    m.d.sync += [tree_feature.eq(inbag.draws.p.value), draw_asked.eq(0)]
                    m.next = "Fill the lists"
                on_start()

            with m.State("Wait for the prologue"):
                # The sparse fill's prologue (maybe run ahead while the last tree trained).
                m.d.comb += self.busy.eq(1)
                with m.If(prologue_ready):
                    m.d.comb += prologue_taken.eq(1)
                    with m.If(prologue_bad):
                        abort(self.bad_input)
                    with m.Else():
                        # The root is written at once; the sorted rows go into lane 0 while
                        # it is reviewed (below), each long before the root's scan reads it.
                        m.d.sync += [tree_feature.eq(prologue_feature), sparse_write.eq(0),
                                     sparse_writing.eq(1), root_counts.eq(prologue_counts)]
                        m.next = "Write the root"
                on_start()

            with m.State("Fill the lists"):
                m.d.comb += [
                    self.busy.eq(1),
                    self.list_requests.valid.eq(lists_requested < lists_needed),
                    self.list_requests.p.slot.eq(Mux(thesis_mode, tree_feature >> lane_bits, lists_requested)),
                    inbag.presorted.valid.eq(self.presorted.valid),
                    self.presorted.ready.eq(inbag.presorted.ready),
                    inbag.inbag.ready.eq(1),
                ]
                with m.If(self.list_requests.valid & self.list_requests.ready):
                    m.d.sync += lists_requested.eq(lists_requested + 1)
                # Malformed lists stop the tree: every list has n_rows entries, labels < classes.
                input_bad = Signal()
                with m.If(self.presorted.valid & self.presorted.ready):
                    at_end = input_position == n_rows - 1
                    m.d.sync += input_position.eq(Mux(at_end, 0, input_position + 1))
                    with m.If(at_end):
                        m.d.sync += lists_received.eq(lists_received + 1)
                    if classes < (1 << self.label_bits):
                        bad_label = Cat(inbag.lane_mask[index] & (self.presorted.p.entries[index].label >= classes)
                                        for index in range(lanes_n)).any()
                    else:
                        bad_label = Const(0)
                    m.d.comb += input_bad.eq((self.presorted.p.last != at_end) | bad_label)
                # The permutation memory of the feature draws is cleared on the way.
                with m.If(clear_index < n_features):
                    m.d.comb += [permutation_write.addr.eq(clear_index), permutation_write.data.eq(0),
                                 permutation_write.en.eq(1)]
                    m.d.sync += clear_index.eq(clear_index + 1)
                with m.If(inbag.inbag.valid):
                    for index, lane in enumerate(lanes):
                        with m.If(fill_present[index]):
                            m.d.comb += lane.fill_enable.eq(1)
                            with m.If(fill_entries[index].last):
                                m.d.sync += [fill_slots[index].eq(fill_slots[index] + 1),
                                             fill_positions[index].eq(0)]
                            with m.Else():
                                m.d.sync += fill_positions[index].eq(fill_positions[index] + 1)
                    # The root's class counts from the first list (feature 0, or the tree's).
                    with m.If(fill_present[0] & (fill_slots[0] == 0)):
                        label = fill_entries[0].code[code_bits:]
                        m.d.sync += root_counts[label].eq(root_counts[label] + fill_entries[0].weight)
                with m.If(input_bad):
                    abort(self.bad_input)
                # Done when every slot was taken to its end and the filter has written its
                # last in-bag entries (rows of weight 0 may follow the last in-bag row).
                with m.Elif((lists_received == lists_needed) & ~inbag.filtering &
                            (clear_index >= n_features)):
                    m.next = "Write the root"
                on_start()

            with m.State("Write the root"):
                m.d.comb += [self.busy.eq(1), node_write.addr.eq(0), node_write.en.eq(1),
                             node_write.data.counts.eq(root_counts),
                             node_write.data.n_rows.eq(Mux(sparse, drawn_count, inbag.inbag_rows))]
                m.d.sync += [next_node.eq(1), node.eq(0), level_end.eq(1), jobs_queued.eq(0),
                             past_prologue.eq(thesis_mode)]
                m.next = "Read a node"
                on_start()

            # --- one level: every node in index order ---
            with m.State("Read a node"):
                m.d.comb += [self.busy.eq(1), node_read.addr.eq(node)]
                with m.If(node == level_end):
                    m.next = "End of the level"
                with m.Else():
                    m.next = "Review the node"
                on_start()

            with m.State("Review the node"):
                m.d.comb += [self.busy.eq(1), node_read.addr.eq(node)]
                m.d.sync += [current.eq(record), segment_start.eq(record.start),
                             segment_length.eq(record.n_rows)]
                leaf = is_leaf(record.counts, record.n_rows, record.depth)
                with m.If(leaf):
                    review_next(node + 1)
                with m.Elif(~depth_limited & (record.depth == self.max_depth)):
                    abort(self.depth_overflow)
                with m.Else():
                    m.d.sync += [best_found.eq(0), combined.eq(0), visited.eq(0), position.eq(0),
                                 tag.eq(node + 1), draw_asked.eq(0)]
                    # Thesis mode needs no constant check: a constant segment of the tree's
                    # feature has no boundary, so its scan finds no split, as the model. Its
                    # one list is lane 0, slot 0, visited at once (the lane reads the segment
                    # and totals registered here when it sends the header, cycles later).
                    with m.If(thesis_mode):
                        m.d.comb += [lanes[0].jobs.valid.eq(1), lanes[0].jobs.p.slot.eq(0),
                                     lanes[0].jobs.p.visit.eq(0)]
                        m.d.sync += visited.eq(1)
                        m.next = "Wait for the scans"
                    with m.Else():
                        m.next = "Check constant features"
                on_start()

            with m.State("Check constant features"):
                m.d.comb += [self.busy.eq(1), lane_go.eq(1), lane_command.eq(LaneCommand.CONSTANT)]
                m.next = "Wait for the constant check"
                on_start()

            with m.State("Wait for the constant check"):
                m.d.comb += self.busy.eq(1)
                with m.If(~lanes_busy):
                    m.d.sync += wanted.eq(Mux(features_per_split < nonconstant_total,
                                              features_per_split, nonconstant_total))
                    m.next = "Draw a feature"
                on_start()

            with m.State("Draw a feature"):
                m.d.comb += [self.busy.eq(1), inbag.draws.ready.eq(1),
                             inbag.draw_requests.valid.eq((visited < wanted) & ~draw_asked),
                             inbag.draw_requests.p.bound.eq(n_features - position)]
                with m.If(visited == wanted):
                    m.next = "Wait for the scans"
                with m.If(inbag.draw_requests.valid & inbag.draw_requests.ready):
                    m.d.sync += draw_asked.eq(1)
                with m.If(inbag.draws.valid):
                    m.d.comb += [chosen_read.addr.eq(inbag.draws.p.value + position),
                                 position_read.addr.eq(position)]
                    m.d.sync += [drawn_feature.eq(inbag.draws.p.value + position), draw_asked.eq(0)]
                    m.next = "Swap"
                on_start()

            with m.State("Swap"):
                # Partial Fisher-Yates on a permutation whose untouched entries are the identity
                # (entries written for another node carry another tag).
                m.d.comb += self.busy.eq(1)
                chosen_index = drawn_feature
                feature = Mux(chosen_read.data.tag == tag, chosen_read.data.feature, chosen_index)
                moved = Mux(position_read.data.tag == tag, position_read.data.feature, position)
                m.d.comb += [permutation_write.addr.eq(chosen_index), permutation_write.en.eq(1),
                             permutation_write.data.tag.eq(tag), permutation_write.data.feature.eq(moved)]
                for lane in lanes:
                    m.d.comb += lane.constant_slot.eq(feature >> lane_bits)
                m.d.sync += drawn_feature.eq(feature)
                m.next = "Visit the drawn feature"
                on_start()

            with m.State("Visit the drawn feature"):
                m.d.comb += self.busy.eq(1)
                for lane in lanes:
                    m.d.comb += lane.constant_slot.eq(drawn_feature >> lane_bits)
                drawn_lane = drawn_feature[:lane_bits] if lane_bits else Const(0)
                for index, lane in enumerate(lanes):
                    with m.If(drawn_lane == index):
                        with m.If(~lane.constant_flag):
                            m.d.comb += [lane.jobs.valid.eq(1),
                                         lane.jobs.p.slot.eq(drawn_feature >> lane_bits),
                                         lane.jobs.p.visit.eq(visited)]
                            m.d.sync += visited.eq(visited + 1)
                m.d.sync += position.eq(position + 1)
                m.next = "Draw a feature"
                on_start()

            with m.State("Wait for the scans"):
                m.d.comb += self.busy.eq(1)
                with m.If(combined == visited):
                    m.next = "Decide"
                on_start()

            with m.State("Decide"):
                m.d.comb += self.busy.eq(1)
                with m.If(~best_found):
                    review_next(node + 1)
                with m.Elif(next_node + 2 > self.max_nodes):
                    abort(self.node_overflow)
                with m.Else():
                    m.d.comb += [node_write.addr.eq(node), node_write.en.eq(1),
                                 node_write.data.eq(current),
                                 node_write.data.split.eq(1), node_write.data.feature.eq(split_feature),
                                 node_write.data.threshold.eq(best_split.threshold),
                                 node_write.data.left.eq(next_node)]
                    m.next = "Write the left child"
                on_start()

            with m.State("Write the left child"):
                m.d.comb += [self.busy.eq(1), node_write.addr.eq(next_node), node_write.en.eq(1),
                             node_write.data.counts.eq(left_counts),
                             node_write.data.n_rows.eq(rows_left),
                             node_write.data.depth.eq(child_depth),
                             node_write.data.start.eq(current.start)]
                m.next = "Write the right child"
                on_start()

            with m.State("Write the right child"):
                m.d.comb += [self.busy.eq(1), node_write.addr.eq(next_node + 1), node_write.en.eq(1),
                             node_write.data.counts.eq(right_counts),
                             node_write.data.n_rows.eq(rows_right),
                             node_write.data.depth.eq(child_depth),
                             node_write.data.start.eq(current.start + rows_left)]
                m.d.sync += next_node.eq(next_node + 2)
                # Children that will both be leaves need no partition (nothing reads them);
                # one list (thesis mode) is partitioned by construction.
                with m.If(~thesis_mode & ~children_both_leaves):
                    m.d.comb += [job_write.addr.eq(jobs_queued), job_write.en.eq(1),
                                 job_write.data.feature.eq(best_feature),
                                 job_write.data.threshold.eq(best_split.threshold),
                                 job_write.data.start.eq(current.start),
                                 job_write.data.length.eq(current.n_rows)]
                    m.d.sync += jobs_queued.eq(jobs_queued + 1)
                review_next(node + 1)
                on_start()

            # --- the level's partition: per split, go-left bits then every list ---
            def next_level():
                """The level's partition is done: the next level (its first record is read
                now), or the tree is written if the level made no children."""
                m.d.sync += [jobs_queued.eq(0), node.eq(level_end), level_end.eq(next_node)]
                with m.If(level_end == next_node):
                    m.d.sync += [write_index.eq(0), write_staged.eq(0)]
                    m.next = "Write the tree"
                with m.Else():
                    m.d.comb += node_read.addr.eq(level_end)
                    m.next = "Review the node"

            with m.State("End of the level"):
                m.d.comb += self.busy.eq(1)
                m.d.sync += job_index.eq(0)
                with m.If(jobs_queued == 0):
                    next_level()
                with m.Else():
                    m.next = "Read a partition job"
                on_start()

            with m.State("Read a partition job"):
                m.d.comb += [self.busy.eq(1), job_read.addr.eq(job_index)]
                with m.If(job_index == jobs_queued):
                    with m.If(~lanes_draining):     # the next level reads the lists
                        next_level()
                with m.Else():
                    m.next = "Load the partition job"
                on_start()

            with m.State("Load the partition job"):
                m.d.comb += [self.busy.eq(1), job_read.addr.eq(job_index)]
                job = job_read.data
                m.d.sync += [segment_start.eq(job.start), segment_length.eq(job.length),
                             threshold.eq(job.threshold), go_left_slot.eq(job.feature >> lane_bits),
                             go_left_lane.eq(job.feature[:lane_bits] if lane_bits else 0)]
                m.next = "Go left"
                on_start()

            with m.State("Go left"):
                m.d.comb += [self.busy.eq(1), lane_command.eq(LaneCommand.GO_LEFT)]
                for index, lane in enumerate(lanes):
                    m.d.comb += lane.go.eq(go_left_lane == index)
                m.next = "Wait for the go-left bits"
                on_start()

            with m.State("Wait for the go-left bits"):
                m.d.comb += self.busy.eq(1)
                with m.If(~lanes_busy):
                    m.next = "Partition the lists"
                on_start()

            with m.State("Partition the lists"):
                m.d.comb += [self.busy.eq(1), lane_go.eq(1), lane_command.eq(LaneCommand.PARTITION)]
                m.next = "Wait for the partition"
                on_start()

            with m.State("Wait for the partition"):
                m.d.comb += self.busy.eq(1)
                with m.If(~lanes_busy):
                    m.d.sync += job_index.eq(job_index + 1)
                    m.next = "Read a partition job"
                on_start()

            # --- the tree writer ---
            with m.State("Write the tree"):
                m.d.comb += self.busy.eq(1)
                # (A tree whose root is a leaf may get here before its sorted rows are all
                # in lane 0: it waits, so the next tree finds the prologue registers free.)
                advance = (~write_staged | self.nodes.ready) & ~sparse_writing
                m.d.comb += [node_read.addr.eq(write_index), node_read.en.eq(advance),
                             self.nodes.valid.eq(write_staged & ~sparse_writing)]
                with m.If(advance):
                    m.d.sync += [write_staged.eq(write_index < next_node),
                                 write_staged_index.eq(write_index)]
                    with m.If(write_index < next_node):
                        m.d.sync += write_index.eq(write_index + 1)
                with m.If(write_staged & ~sparse_writing & self.nodes.ready & self.nodes.p.last):
                    m.d.comb += finishing.eq(1)
                    with m.If(queued):
                        promote()
                    with m.Else():
                        m.d.sync += self.done.eq(1)
                        m.next = "Idle"
                on_start()

        for lane in lanes:
            with m.If(lane_go):
                m.d.comb += lane.go.eq(1)

        # The controller's state encoding (value of ``fsm_state`` -> name), for profiling.
        self.controller_states = {value: name for name, value in fsm.encoding.items()}
        return m
