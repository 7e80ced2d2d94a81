"""Inference engine: streams test rows through the stored trees and votes.

Reference: ``sw.methods.forest.model.predict_tree``, ``forest_votes`` (+ argmax, ties to the lowest
class) and ``forest_class_counts``. Trees are kept in the golden model's compact node
format (breadth-first node list, root = 0, right child = left child + 1), one tree per
block of ``max_nodes_per_tree`` node slots.

How a row is traversed. Every (row, tree) pair is a *context* that takes one step per
pipeline stage. A stage is ``STEP_CYCLES`` (5) registers long, so that no cycle holds more
than one of its slow parts: read the node memory (the context's own copy, banked:
:mod:`hw.banked`, two cycles), register the node word it returns, look up the row's code
of the node's feature, then move to the left or the right child. After the last stage a context that has not reached a leaf goes round
again; a finished context retires there (its vote, and its leaf's class counts, are added
to its row) and frees the slot for the next (row, tree) pair. So:

* ``traversal_stages = max_depth + 1``: the traversal is pipelined by depth; every pair
  passes the pipeline once and one new pair enters per cycle (one row per ``n_trees``
  cycles), at the price of one node-memory copy per stage.
* ``traversal_stages = 1``: one node memory, still one tree step per cycle (five
  contexts interleave in the five-cycle stage), a pair takes ``leaf depth + 1`` rounds.
* In between, a pair takes ``ceil((leaf depth + 1) / traversal_stages)`` rounds.

Rows arrive one feature code per beat (``last`` on the final feature, label there) and
are written into one of two row buffers, so a row loads while the previous one is being
traversed; predictions leave in row order.
"""

from types import SimpleNamespace

from amaranth.hdl import Array, Cat, Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.arith import carry_save_sum
from hw.banked import READ_LATENCY, BankedMemory
from hw.checks import bits, check_integer, refuse_construction

__all__ = ["InferenceEngine", "InferenceGeometry", "STEP_CYCLES", "MAX_NODES_PER_TREE"]

#: The most nodes a stored tree may have (``max_nodes_per_tree``).
MAX_NODES_PER_TREE = 1 << 16

#: Row buffers (rows in flight between loading and emitting their prediction).
ROW_BUFFERS = 2
#: Cycles a context spends in one traversal stage (one tree step): read the banked node
#: memory, register its word, read the row's code, decide. A stage holds this many contexts.
STEP_CYCLES = 3 + READ_LATENCY


def _delayed(m, value, cycles, name):
    """``value`` through ``cycles`` registers (the last one returned)."""
    for index in range(cycles):
        register = Signal(value.shape(), name=f"{name}_{index}")
        m.d.sync += register.eq(value)
        value = register
    return value


class InferenceGeometry:
    """Parameters of an :class:`InferenceEngine`, checked, with every width and layout.

    The testbench builds one from the design parameters to speak the same layouts.
    Raises ``TypeError``/``ValueError`` naming the parameter for values out of range.
    """

    def __init__(self, *, max_trees=256, max_nodes_per_tree=31, feature_capacity=64, code_bits=16,
                 classes=8, count_bits=13, max_depth=4, traversal_stages=None,
                 class_count_sums=True):
        check_integer("max_trees", max_trees, 1, 1 << 16)
        check_integer("max_nodes_per_tree", max_nodes_per_tree, 1, MAX_NODES_PER_TREE)
        check_integer("feature_capacity", feature_capacity, 1, 1 << 12)
        check_integer("code_bits", code_bits, 1, 32)
        check_integer("classes", classes, 2, 256)
        check_integer("count_bits", count_bits, 1, 32)
        check_integer("max_depth", max_depth, 0, 255)
        if traversal_stages is None:
            traversal_stages = max_depth + 1
        check_integer("traversal_stages", traversal_stages, 1, max_depth + 1)
        if not isinstance(class_count_sums, bool):
            raise TypeError(f"class_count_sums must be True or False, not {class_count_sums!r}")
        self.max_trees = max_trees
        self.max_nodes_per_tree = max_nodes_per_tree
        self.feature_capacity = feature_capacity
        self.code_bits = code_bits
        self.classes = classes
        self.count_bits = count_bits
        self.max_depth = max_depth
        self.traversal_stages = traversal_stages
        self.class_count_sums = class_count_sums

        self.tree_bits = bits(max_trees - 1)
        self.node_bits = bits(max_nodes_per_tree - 1)
        self.feature_bits = bits(feature_capacity - 1)
        self.class_bits = bits(classes - 1)
        self.vote_bits = bits(max_trees)
        self.sum_bits = count_bits + bits(max_trees)
        self.n_trees_bits = bits(max_trees)
        self.feature_count_bits = bits(feature_capacity)
        self.step_bits = bits(max_depth)
        self.node_memory_depth = max_trees * max_nodes_per_tree
        self.address_bits = bits(self.node_memory_depth - 1)

        node_fields = {
            "tree": self.tree_bits, "node": self.node_bits, "leaf": 1,
            "feature": self.feature_bits, "threshold": code_bits,
            "left_child": self.node_bits, "majority_class": self.class_bits,
        }
        if class_count_sums:
            node_fields["class_counts"] = data.ArrayLayout(count_bits, classes)
        #: One node written into the node memory (``nodes`` stream).
        self.node_layout = data.StructLayout(node_fields)
        #: One feature code of a test row (``rows`` stream); label fields read on ``last``.
        self.row_layout = data.StructLayout({"code": code_bits, "label": self.class_bits,
                                             "has_label": 1, "last": 1})
        prediction_fields = {"predicted_class": self.class_bits,
                             "votes": data.ArrayLayout(self.vote_bits, classes)}
        if class_count_sums:
            prediction_fields["class_count_sums"] = data.ArrayLayout(self.sum_bits, classes)
        prediction_fields.update({"error": 1, "has_label": 1, "correct": 1})
        #: One prediction per row (``predictions`` stream).
        self.prediction_layout = data.StructLayout(prediction_fields)
        #: A node as stored (the node memory word; class counts are kept apart).
        self.stored_node_layout = data.StructLayout({
            "leaf": 1, "feature": self.feature_bits, "threshold": code_bits,
            "left_child": self.node_bits, "majority_class": self.class_bits})
        #: A (row, tree) context travelling through the traversal stages.
        self.context_layout = data.StructLayout({
            "valid": 1, "done": 1, "fault": 1, "buffer": 1,
            "base": self.address_bits, "address": self.address_bits, "steps": self.step_bits,
            "majority_class": self.class_bits})

    def parameters(self):
        return {name: getattr(self, name) for name in (
            "max_trees", "max_nodes_per_tree", "feature_capacity", "code_bits", "classes",
            "count_bits", "max_depth", "traversal_stages", "class_count_sums")}


def signed_digits(constant):
    """``constant`` (>= 0) as ``[(shift, sign)]`` with ``sum(sign << shift) == constant``, no
    two digits adjacent (the non-adjacent form: the fewest nonzero digits)."""
    digits, shift = [], 0
    while constant:
        if constant & 1:
            sign = 2 - (constant & 3)                   # 1 when ...01, -1 when ...11
            digits.append((shift, sign))
            constant -= sign
        constant >>= 1
        shift += 1
    return digits


def _times_constant_plus(m, value, constant, addend):
    """``value * constant + addend`` from the signed digits of ``constant``, as shifted
    copies of ``value`` added and subtracted by :func:`hw.arith.carry_save_sum` (no
    multiplier, one carry chain: 2,559 nodes a tree is 2^11 + 2^9 - 1)."""
    digits = signed_digits(constant)
    plus = [(shift, value) for shift, sign in digits if sign > 0] + [(0, addend)]
    minus = [(shift, value) for shift, sign in digits if sign < 0]
    return carry_save_sum(m, plus, minus)


class InferenceEngine(wiring.Component):
    """Majority-vote inference of a stored forest over streamed test rows.

    Parameters
    ----------
    max_trees : int
        Trees the node memory holds (1 to 65536).
    max_nodes_per_tree : int
        Node slots per tree (1 to 65536); a thesis tree of depth 4 has at most 31 nodes.
    feature_capacity : int
        Largest number of features of a row (1 to 4096).
    code_bits : int
        Width of a feature code and of a threshold (1 to 32).
    classes : int
        Number of classes the votes are counted for (2 to 256).
    count_bits : int
        Width of a node's stored class counts (1 to 32).
    max_depth : int
        Deepest leaf (root = 0) a traversal may reach (0 to 255); deeper traversals are
        stopped and flagged, so a corrupt tree can never hang the engine.
    traversal_stages : int or None
        Pipeline stages, each with its own node-memory copy (1 to max_depth + 1; default
        max_depth + 1, fully pipelined by depth).
    class_count_sums : bool
        Store every node's class counts and output their sums over the trees
        (``sw.methods.forest.model.forest_class_counts``) with each prediction.

    Members
    -------
    nodes : In(stream.Signature(geometry.node_layout))
        Writes one node per cycle (always ready). Load trees while no row is in flight.
        A node outside the built capacity (tree, node index, a split's feature or right
        child, majority class) is refused and sets ``bad_node``.
    n_trees : In(bits(max_trees))
        Trees in the forest (1 to max_trees), read when a row's last feature arrives.
    rows : In(stream.Signature(geometry.row_layout))
        A test row: its feature codes in feature order, one per beat, ``last`` on the final
        one, which also carries ``label`` and ``has_label``.
    predictions : Out(stream.Signature(geometry.prediction_layout))
        One per row, in row order: the majority class (ties: lowest class), the votes per
        class, the class-count sums (if built), ``error`` (the row's result is invalid:
        see the flags), ``has_label`` and ``correct`` (label given and predicted).
    rows_seen, rows_labelled, rows_correct : Out(32)
        Predictions delivered, those with a label, those whose label was predicted.
    bad_config : Out(1)
        ``n_trees`` is 0 or above ``max_trees`` now (rows get error predictions).
    bad_node, bad_row, bad_feature, depth_exceeded : Out(1)
        Sticky until reset or ``clear``: a node write was refused; a row had more than
        ``feature_capacity`` features; a split's feature was not among the row's features; a
        traversal went below ``max_depth``.
    clear : In(1)
        Clears the sticky flags and the accuracy counters.
    idle : Out(1)
        No row is being loaded, traversed or waiting to be delivered.
    """

    def __init__(self, **parameters):
        try:
            self.geometry = InferenceGeometry(**parameters)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        g = self.geometry
        super().__init__({
            "nodes": In(stream.Signature(g.node_layout)),
            "n_trees": In(g.n_trees_bits),
            "rows": In(stream.Signature(g.row_layout)),
            "predictions": Out(stream.Signature(g.prediction_layout)),
            "rows_seen": Out(32),
            "rows_labelled": Out(32),
            "rows_correct": Out(32),
            "bad_config": Out(1),
            "bad_node": Out(1),
            "bad_row": Out(1),
            "bad_feature": Out(1),
            "depth_exceeded": Out(1),
            "clear": In(1),
            "idle": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        node_reads, counts_read = self._node_memories(m)
        rows = self._row_buffers(m)
        load_count, load_overflow = self._load_rows(m, rows)
        read_stage, leaving, leaving_continues = self._traversal_stages(m, rows, node_reads)
        self._issue(m, rows, read_stage, leaving, leaving_continues)
        self._retire(m, rows, leaving, counts_read)
        output, output_valid = self._predictions(m, rows)

        # ---- Accuracy counters, flags ----------------------------------------------------
        with m.If(self.predictions.valid & self.predictions.ready):
            m.d.sync += [self.rows_seen.eq(self.rows_seen + 1),
                         self.rows_labelled.eq(self.rows_labelled + output.has_label),
                         self.rows_correct.eq(self.rows_correct + output.correct)]
        with m.If(self.clear):
            m.d.sync += [self.rows_seen.eq(0), self.rows_labelled.eq(0), self.rows_correct.eq(0),
                         self.bad_node.eq(0), self.bad_row.eq(0), self.bad_feature.eq(0),
                         self.depth_exceeded.eq(0)]
        m.d.comb += self.idle.eq(~Cat(*rows.busy).any() & (load_count == 0) & ~load_overflow &
                                 ~output_valid)
        return m

    def _node_memories(self, m):
        """Node memories, one copy per stage, plus the class counts, and their write path.

        Returns the node read ports (one per stage) and the class-count read port (or None).
        """
        g = self.geometry
        node_reads = []
        node_writes = []
        for stage in range(g.traversal_stages):
            memory = BankedMemory(shape=g.stored_node_layout, depth=g.node_memory_depth)
            m.submodules[f"nodes_{stage}"] = memory
            node_writes.append(memory)
            node_reads.append(memory)
        counts_read = None
        if g.class_count_sums:
            counts_memory = BankedMemory(shape=data.ArrayLayout(g.count_bits, g.classes),
                                         depth=g.node_memory_depth)
            m.submodules.class_counts = counts_memory
            counts_write = counts_read = counts_memory

        # A node write is registered as it arrives (so no path from the node stream's
        # producer reaches the checks), checked and registered with its address, then
        # written: two cycles from the stream to the memory.
        m.d.comb += self.nodes.ready.eq(1)
        node_in = Signal(g.node_layout)
        node_in_valid = Signal()
        m.d.sync += [node_in.eq(self.nodes.p), node_in_valid.eq(self.nodes.valid)]
        node_refused = ((node_in.tree >= g.max_trees) | (node_in.node >= g.max_nodes_per_tree) |
                        (node_in.majority_class >= g.classes) |
                        (~node_in.leaf & ((node_in.feature >= g.feature_capacity) |
                                          (node_in.left_child + 1 >= g.max_nodes_per_tree))))
        write_valid = Signal()
        write_address = Signal(g.address_bits)
        write_node = Signal(g.stored_node_layout)
        m.d.sync += write_valid.eq(node_in_valid & ~node_refused)
        m.d.sync += [
            write_address.eq(_times_constant_plus(m, node_in.tree, g.max_nodes_per_tree, node_in.node)),
            write_node.leaf.eq(node_in.leaf), write_node.feature.eq(node_in.feature),
            write_node.threshold.eq(node_in.threshold), write_node.left_child.eq(node_in.left_child),
            write_node.majority_class.eq(node_in.majority_class),
        ]
        for memory in node_writes:
            m.d.comb += [memory.write_addr.eq(write_address), memory.write_data.eq(write_node),
                         memory.write_en.eq(write_valid)]
        if g.class_count_sums:
            write_counts = Signal(data.ArrayLayout(g.count_bits, g.classes))
            m.d.sync += write_counts.eq(node_in.class_counts)
            m.d.comb += [counts_write.write_addr.eq(write_address),
                         counts_write.write_data.eq(write_counts), counts_write.write_en.eq(write_valid)]
        with m.If(node_in_valid & node_refused):
            m.d.sync += self.bad_node.eq(1)
        return node_reads, counts_read

    def _row_buffers(self, m):
        """The codes of the rows in flight and each row buffer's state and results."""
        g = self.geometry
        buffers = range(ROW_BUFFERS)
        # Codes of the two rows in flight, address {buffer, feature}; one combinational
        # read port per stage.
        codes = Memory(shape=g.code_bits, depth=ROW_BUFFERS << g.feature_bits, init=[])
        m.submodules.row_codes = codes
        code_write = codes.write_port()
        code_reads = [codes.read_port(domain="comb") for _ in range(g.traversal_stages)]

        # Per buffer: a row is in it (from its last feature until its prediction is taken),
        # all its trees have been issued, trees to issue, features, label, results.
        return SimpleNamespace(
            code_write=code_write,
            code_reads=code_reads,
            busy=[Signal(name=f"busy_{b}") for b in buffers],
            issued=[Signal(name=f"issued_{b}") for b in buffers],
            trees=[Signal(g.n_trees_bits, name=f"trees_{b}") for b in buffers],
            retired=[Signal(g.n_trees_bits, name=f"retired_{b}") for b in buffers],
            features=[Signal(g.feature_count_bits, name=f"features_{b}") for b in buffers],
            label=[Signal(g.class_bits, name=f"label_{b}") for b in buffers],
            has_label=[Signal(name=f"has_label_{b}") for b in buffers],
            row_error=[Signal(name=f"row_error_{b}") for b in buffers],
            votes=[[Signal(g.vote_bits, name=f"votes_{b}_{c}") for c in range(g.classes)]
                   for b in buffers],
            sums=[[Signal(g.sum_bits, name=f"sums_{b}_{c}") for c in range(g.classes)]
                  for b in buffers],
            best_class=[Signal(g.class_bits, name=f"best_class_{b}") for b in buffers],
            best_votes=[Signal(g.vote_bits, name=f"best_votes_{b}") for b in buffers],
        )

    def _load_rows(self, m, rows):
        """Loading a row, one feature per beat; returns (load_count, load_overflow)."""
        g = self.geometry
        load_buffer = Signal()
        load_count = Signal(g.feature_count_bits)     # features written so far
        load_overflow = Signal()                      # more features than feature_capacity
        m.d.comb += self.bad_config.eq((self.n_trees == 0) | (self.n_trees > g.max_trees))
        m.d.comb += self.rows.ready.eq(~Array(rows.busy)[load_buffer])
        # The cycle a row's last feature is taken, and its buffer (for the seam's last-tree flag).
        rows.loaded, rows.load_buffer = Signal(), load_buffer
        m.d.comb += rows.loaded.eq(self.rows.valid & self.rows.ready & self.rows.p.last)
        with m.If(self.rows.valid & self.rows.ready):
            room = load_count < g.feature_capacity
            m.d.comb += [rows.code_write.addr.eq(Cat(load_count[:g.feature_bits], load_buffer)),
                         rows.code_write.data.eq(self.rows.p.code), rows.code_write.en.eq(room)]
            with m.If(room):
                m.d.sync += load_count.eq(load_count + 1)
            overflow = load_overflow | ~room
            m.d.sync += load_overflow.eq(overflow)
            with m.If(self.rows.p.last):
                refused = overflow | self.bad_config
                m.d.sync += [load_count.eq(0), load_overflow.eq(0), load_buffer.eq(~load_buffer)]
                with m.If(overflow):
                    m.d.sync += self.bad_row.eq(1)
                for b in range(ROW_BUFFERS):
                    with m.If(load_buffer == b):
                        m.d.sync += [
                            rows.busy[b].eq(1), rows.issued[b].eq(0), rows.retired[b].eq(0),
                            rows.trees[b].eq(0),
                            rows.features[b].eq(load_count + room),
                            rows.label[b].eq(self.rows.p.label),
                            rows.has_label[b].eq(self.rows.p.has_label),
                            rows.row_error[b].eq(refused), rows.best_class[b].eq(0),
                            rows.best_votes[b].eq(0),
                            *[vote.eq(0) for vote in rows.votes[b]],
                            *[total.eq(0) for total in rows.sums[b]],
                        ]
                        with m.If(~refused):
                            m.d.sync += rows.trees[b].eq(self.n_trees)
        return load_count, load_overflow

    def _traversal_stages(self, m, rows, node_reads):
        """The traversal pipeline; returns its entry registers and the context leaving it.

        A stage is ``STEP_CYCLES`` registers long: address the node memory, register the
        node word it returns, read the row's code of the node's feature, and decide.
        """
        g = self.geometry
        stages = g.traversal_stages
        read_stage = [Signal(g.context_layout, name=f"stage{s}_read") for s in range(stages)]
        leaving = None
        for s in range(stages):
            context = read_stage[s]
            # Cycles 1 and 2: the node memory is read (its banks, then the bank's word). The
            # context carries the node's address (base + node), added a cycle ahead, so the
            # address fanning out to every bank comes straight from a register.
            m.d.comb += node_reads[s].read_addr.eq(context.address)
            fetch = _delayed(m, context, READ_LATENCY, f"stage{s}_fetch")
            # Cycle 3: the node word is registered.
            look = Signal(g.context_layout, name=f"stage{s}_look")
            look_node = Signal(g.stored_node_layout, name=f"stage{s}_look_node")
            m.d.sync += [look.eq(fetch), look_node.eq(node_reads[s].read_data)]
            # Cycle 4: the row's code of the node's feature, and whether the row has it.
            m.d.comb += rows.code_reads[s].addr.eq(Cat(look_node.feature, look.buffer))
            here = Signal(g.context_layout, name=f"stage{s}_decide")
            node = Signal(g.stored_node_layout, name=f"stage{s}_node")
            code = Signal(g.code_bits, name=f"stage{s}_code")
            missing = Signal(name=f"stage{s}_missing")
            at_depth = Signal(name=f"stage{s}_at_depth")
            left_address = Signal(g.address_bits, name=f"stage{s}_left_address")
            missing_now = look_node.feature >= Array(rows.features)[look.buffer]
            at_depth_now = look.steps == g.max_depth
            m.d.sync += [here.eq(look), node.eq(look_node), code.eq(rows.code_reads[s].data),
                         left_address.eq(look.base + look_node.left_child),
                         missing.eq(missing_now), at_depth.eq(at_depth_now)]
            # Whether the context steps to a child (not done, not finishing here), decided
            # a cycle ahead: the seam's choice between recirculating it and issuing a new
            # pair, which enables the whole entry register, comes from a register.
            continues = Signal(name=f"stage{s}_continues")
            m.d.sync += continues.eq(look.valid & ~look.done & ~look_node.leaf & ~missing_now & ~at_depth_now)
            # Cycle 5: leaf, fault or the step to a child.
            following = Signal(g.context_layout, name=f"stage{s}_next")
            m.d.comb += following.eq(here)
            with m.If(here.valid & ~here.done):
                with m.If(node.leaf):
                    m.d.comb += [following.done.eq(1), following.majority_class.eq(node.majority_class)]
                with m.Elif(missing):
                    m.d.comb += [following.done.eq(1), following.fault.eq(1)]
                    m.d.sync += self.bad_feature.eq(1)
                with m.Elif(at_depth):
                    m.d.comb += [following.done.eq(1), following.fault.eq(1)]
                    m.d.sync += self.depth_exceeded.eq(1)
                with m.Else():
                    m.d.comb += [following.address.eq(left_address + (code > node.threshold)),
                                 following.steps.eq(here.steps + 1)]
            if s + 1 < stages:
                m.d.sync += read_stage[s + 1].eq(following)
            else:
                leaving = following
                # (``leaving.valid & ~leaving.done``, from a register)
                leaving_continues = continues
        return read_stage, leaving, leaving_continues

    def _issue(self, m, rows, read_stage, leaving, leaving_continues):
        """The seam: recirculate an unfinished context, else issue a new (row, tree) pair.

        Whether the next pair is the buffer's last (``issue_last``) comes from a register,
        kept for the issue buffer's state in the next cycle from values known now, so the
        switch to the other buffer is one gate after the recirculation's register (the
        count's add and compare after it were the system's path, 95.3 MHz)."""
        g = self.geometry
        issue_buffer = Signal()
        issue_count = Signal(g.n_trees_bits)
        issue_base = Signal(g.address_bits)
        issue_last = Signal()
        recirculate = leaving_continues
        pending = Array(rows.busy)[issue_buffer] & ~Array(rows.issued)[issue_buffer]
        issue_trees = Array(rows.trees)[issue_buffer]
        empty = issue_trees == 0
        issue = Signal()
        switch = Signal()
        m.d.comb += [issue.eq(~recirculate & pending & ~empty),
                     switch.eq(pending & (empty | (~recirculate & issue_last)))]
        with m.If(recirculate):
            m.d.sync += read_stage[0].eq(leaving)
        with m.Elif(issue):
            m.d.sync += [read_stage[0].eq(0), read_stage[0].valid.eq(1),
                         read_stage[0].buffer.eq(issue_buffer), read_stage[0].base.eq(issue_base),
                         read_stage[0].address.eq(issue_base),
                         issue_count.eq(issue_count + 1),
                         issue_base.eq(issue_base + g.max_nodes_per_tree)]
        with m.Else():
            m.d.sync += read_stage[0].valid.eq(0)
        with m.If(switch):
            m.d.sync += [issue_count.eq(0), issue_base.eq(0), issue_buffer.eq(~issue_buffer)]
            for b in range(ROW_BUFFERS):
                with m.If(issue_buffer == b):
                    m.d.sync += rows.issued[b].eq(1)
        # The last-tree flag for the next cycle. A buffer being loaded is never pending and
        # its count is 0, so its flag is whether the forest has one tree (a refused row has
        # no trees and switches as empty whatever the flag); a buffer switched to, already
        # loaded, keeps its trees; an issue moves the count on by one.
        other_trees = Array(rows.trees)[~issue_buffer]
        with m.If(rows.loaded & (rows.load_buffer == (issue_buffer ^ switch))):
            m.d.sync += issue_last.eq(self.n_trees == 1)
        with m.Elif(switch):
            m.d.sync += issue_last.eq(other_trees == 1)
        with m.Elif(issue):
            m.d.sync += issue_last.eq(issue_count + 2 == issue_trees)

    def _retire(self, m, rows, leaving, counts_read):
        """Retiring a finished context: register, read the leaf's class counts, register
        them as they leave the memory, add up."""
        g = self.geometry
        retire_read = Signal(g.context_layout)
        retire_add = Signal(g.context_layout)
        m.d.sync += [retire_read.eq(leaving), retire_read.valid.eq(leaving.valid & leaving.done)]
        m.d.sync += retire_add.eq(_delayed(m, retire_read, READ_LATENCY, "retire_fetch"))
        leaf_counts = None
        if g.class_count_sums:
            m.d.comb += counts_read.read_addr.eq(retire_read.address)
            leaf_counts = Signal(data.ArrayLayout(g.count_bits, g.classes))
            m.d.sync += leaf_counts.eq(counts_read.read_data)
        with m.If(retire_add.valid):
            for b in range(ROW_BUFFERS):
                with m.If(retire_add.buffer == b):
                    m.d.sync += rows.retired[b].eq(rows.retired[b] + 1)
                    with m.If(retire_add.fault):
                        m.d.sync += rows.row_error[b].eq(1)
                    with m.Else():
                        self._vote(m, rows, b, retire_add.majority_class, leaf_counts)

    def _vote(self, m, rows, b, voted, leaf_counts):
        """Count buffer ``b``'s vote for class ``voted`` and add the leaf's class counts."""
        g = self.geometry
        votes, best_class, best_votes = rows.votes[b], rows.best_class[b], rows.best_votes[b]
        new_votes = Array(votes)[voted] + 1
        for c in range(g.classes):
            with m.If(voted == c):
                m.d.sync += votes[c].eq(new_votes)
            if g.class_count_sums:
                m.d.sync += rows.sums[b][c].eq(rows.sums[b][c] + leaf_counts[c])
        # Votes only grow, so the running argmax (ties: lowest class)
        # only changes to the class just voted for.
        with m.If((new_votes > best_votes) |
                  ((new_votes == best_votes) & (voted < best_class))):
            m.d.sync += [best_class.eq(voted), best_votes.eq(new_votes)]

    def _predictions(self, m, rows):
        """Predictions, in row order; returns the output register and its valid flag."""
        g = self.geometry
        emit_buffer = Signal()
        output_valid = Signal()
        output = Signal(g.prediction_layout)
        m.d.comb += [self.predictions.valid.eq(output_valid), self.predictions.payload.eq(output)]
        with m.If(self.predictions.ready):
            m.d.sync += output_valid.eq(0)
        complete = [rows.busy[b] & rows.issued[b] & (rows.retired[b] == rows.trees[b])
                    for b in range(ROW_BUFFERS)]
        with m.If((~output_valid | self.predictions.ready) & Array(complete)[emit_buffer]):
            m.d.sync += [output_valid.eq(1), emit_buffer.eq(~emit_buffer)]
            for b in range(ROW_BUFFERS):
                with m.If(emit_buffer == b):
                    error = rows.row_error[b]
                    best_class, has_label = rows.best_class[b], rows.has_label[b]
                    m.d.sync += [
                        rows.busy[b].eq(0),
                        output.predicted_class.eq(best_class),
                        output.votes.eq(Cat(*rows.votes[b])),
                        output.error.eq(error), output.has_label.eq(has_label),
                        output.correct.eq(has_label & ~error & (best_class == rows.label[b])),
                    ]
                    if g.class_count_sums:
                        m.d.sync += output.class_count_sums.eq(Cat(*rows.sums[b]))
        return output, output_valid
