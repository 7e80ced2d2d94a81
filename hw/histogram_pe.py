"""Histogram PE: one tree grown from class histograms on the pass engine, the planned
out-of-core PE's controller (``docs/out_of_core.md``).

Reference: ``sw.methods.forest.histogram.train_tree_from_histograms`` with ``lanes``, forest
mode, ``min_samples_leaf = 1`` (the histogram lanes' setting). A host loads the dataset
(``dataset``: each row's codes and label) and sends ``start`` per tree: its rows and
bootstrap (``n_rows``, ``max_samples``, ``bootstrap``), its parameters and its stream
(forest seed, tree index). The PE starts its own generator
(:class:`hw.rewind_rng.RewindableRandom`) on the tree's stream, draws the bootstrap with
its :class:`hw.bootstrap.BootstrapUnit` (the weights and root rows go to the pass engine,
the root's class totals and rows into the node memory) and grows the tree:

* **Nodes in breadth-first order are node ids.** Children get the next two ids, so the
  node memory read at a head pointer is the queue: a node is taken when the head reaches
  it, and the tree is done when the head passes the last id given. A node at depth ``d``
  lies in bank ``d mod 2`` (the root in bank 0; a partition writes the other bank).
* **Leaf decisions** as ``sw.methods.forest.model.leaf_decision``: fewer rows than
  ``min_samples_split`` or than 2, at most one class present, or ``max_depth`` reached.
* **The lazy draw in passes** (``_draw_lazily``): features are drawn one at a time from
  the generator (each draw with the stream position after it) into a partial Fisher-Yates permutation, a pass of ``lanes`` at a time, and each
  pass is gathered, with the features still needed, on the pass engine. After the
  node's last pass the generator is rewound (``rewinds``) to the position after the last
  used lane's draw, when it stands past it. The permutation's entries are tagged with the
  node that wrote them, so no node clears it; a tree's start clears it once.
* **A split node** is partitioned by its best split into the other bank, its children's
  records (segment, class totals, depth) written at the next two ids.
* **Searched ahead.** Before a split node is partitioned, the next node to search in the
  queue (past at most ``AHEAD_LEAVES`` leaves; none if the split's children leave no
  room) has its first pass drawn (the stream's order is unchanged: the split node's
  rewind came before, leaves draw nothing) and sent to the engine ahead of the partition,
  so the lanes scan it while the row gather partitions; when the head reaches it, it
  goes straight to its pass's result.

Each node leaves as a record on ``nodes`` when it is done, in node order; ``last`` marks
the tree's final node. A split that needs more node ids than ``max_nodes`` stops the tree
with ``overflow`` (sticky until the next ``start``) and no further record. A start the
build cannot serve (no features or more than ``features``, no feature a split,
``max_depth`` 0 or past the build's, more rows than ``max_rows``, ``min_samples_split``
below 2) is taken and refused with ``bad_start`` (until the next start): no tree.

The bootstrap and the tree run one after the other: the next tree's bootstrap does not
overlap this tree's growth.
"""

from types import SimpleNamespace

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.bootstrap import BootstrapUnit
from hw.checks import bits, check_integer, refuse_construction
from hw.pass_engine import PassEngine
from hw.row_gather import code_store_members, connect_code_store
from hw.rewind_rng import POSITION_BITS, RewindableRandom

__all__ = ["HistogramPE", "start_layout", "node_record_layout", "POSITION_BITS", "AHEAD_LEAVES"]

#: Leaves the read-ahead passes over to find the next node to search (each costs two
#: cycles before the split node's partition is sent).
AHEAD_LEAVES = 7


def start_layout(count_bits, row_bits, feature_bits, depth_bits, tree_index_bits):
    """A tree's start: its rows and bootstrap, its parameters and its stream (forest
    seed, tree index)."""
    return data.StructLayout({
        "n_rows": row_bits + 1, "max_samples": count_bits, "bootstrap": 1,
        "n_features": feature_bits + 1, "features_per_split": feature_bits + 1,
        "max_depth": depth_bits, "min_samples_split": row_bits + 1, "seed": POSITION_BITS,
        "tree_index": tree_index_bits,
    })


def node_record_layout(node_bits, feature_bits, code_bits, classes, count_bits, row_bits, depth_bits):
    """A finished node: its id, whether it is split (its feature, threshold and left
    child; the right child is the next id), its class totals, rows and depth; ``last`` on
    the tree's final node."""
    return data.StructLayout({
        "node": node_bits, "split": 1, "feature": feature_bits, "threshold": code_bits,
        "left": node_bits, "class_counts": data.ArrayLayout(count_bits, classes),
        "rows": row_bits + 1, "depth": depth_bits, "last": 1,
    })


class HistogramPE(wiring.Component):
    """Grows one tree per ``start`` on a :class:`~hw.pass_engine.PassEngine`.

    Parameters
    ----------
    max_rows, features, lanes, code_bits, classes, count_bits, pass_bits : int
        As the pass engine's (which checks them).
    max_nodes : int
        Nodes a tree may have (3 to 65,536).
    max_depth : int
        The deepest ``max_depth`` a tree may ask for (1 to 255).
    tree_index_bits : int
        Width of a start's tree index (1 to 32).
    code_store, code_word_bits :
        As the pass engine's: with ``"memory"`` the dataset's codes are read from a code
        store in external memory (``codes``, ``code_base``) and ``dataset`` carries labels.
    """

    def __init__(self, *, max_rows=4096, features=32, lanes=4, code_bits=8, classes=8,
                 count_bits=13, pass_bits=4, max_nodes=1024, max_depth=32, tree_index_bits=16,
                 code_store="chip", code_word_bits=512):
        try:
            check_integer("max_nodes", max_nodes, 3, 1 << 16)
            check_integer("max_depth", max_depth, 1, 255)
            check_integer("tree_index_bits", tree_index_bits, 1, POSITION_BITS)
            self._engine = PassEngine(max_rows=max_rows, features=features, lanes=lanes,
                                      code_bits=code_bits, classes=classes, count_bits=count_bits,
                                      pass_bits=pass_bits, code_store=code_store,
                                      code_word_bits=code_word_bits)
            self._generator = RewindableRandom(
                bound_bits=max(self._engine.feature_bits, self._engine.row_bits) + 1,
                tree_index_bits=tree_index_bits)
            self._bootstrap = BootstrapUnit(max_rows=max_rows, classes=classes, count_bits=count_bits)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        engine = self._engine
        self.max_rows, self.features, self.lanes = max_rows, features, lanes
        self.code_bits, self.classes, self.count_bits = code_bits, classes, count_bits
        self.pass_bits, self.max_nodes, self.max_depth = pass_bits, max_nodes, max_depth
        self.tree_index_bits, self.code_store, self.code_word_bits = tree_index_bits, code_store, code_word_bits
        self.row_bits, self.feature_bits = engine.row_bits, engine.feature_bits
        self.node_bits, self.depth_bits = bits(max_nodes - 1), bits(max_depth)
        super().__init__({
            **code_store_members(engine),
            "dataset": engine.signature.members["dataset"],
            "start": In(stream.Signature(start_layout(count_bits, self.row_bits, self.feature_bits,
                                                      self.depth_bits, tree_index_bits))),
            "nodes": Out(stream.Signature(node_record_layout(
                self.node_bits, self.feature_bits, code_bits, classes, count_bits, self.row_bits,
                self.depth_bits))),
            "overflow": Out(1),
            "bad_start": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.engine = engine = self._engine
        m.submodules.generator = self._generator
        m.submodules.bootstrap = bootstrap = self._bootstrap
        wiring.connect(m, wiring.flipped(self.dataset), engine.dataset)
        connect_code_store(m, engine, self)
        for name in ("weights", "roots"):
            wiring.connect(m, getattr(bootstrap, name), getattr(engine, name))
        # (the labels copied into the bootstrap's class totals as the dataset loads)
        m.d.comb += [bootstrap.label_write.en.eq(self.dataset.valid & self.dataset.ready),
                     bootstrap.label_write.row.eq(self.dataset.p.row),
                     bootstrap.label_write.label.eq(self.dataset.p.label)]
        s = self._state(m)
        record_out, job = self.nodes.payload, engine.jobs.payload
        m.d.comb += [record_out.node.eq(s.head), record_out.split.eq(s.split),
                     record_out.feature.eq(s.best_feature), record_out.threshold.eq(s.best.threshold),
                     record_out.left.eq(s.tail - 2), record_out.class_counts.eq(s.node.class_counts),
                     record_out.rows.eq(s.node.count), record_out.depth.eq(s.node.depth),
                     record_out.last.eq(~s.split & (s.head + 1 == s.tail)),
                     job.bank.eq(s.node.depth[0]), job.base.eq(s.node.base), job.count.eq(s.node.count),
                     job.class_counts.eq(s.node.class_counts)]
        with m.FSM(name="histogram_pe") as fsm:
            self._start_states(m, s)
            self._draw_states(m, s)
            self._pass_states(m, s)
            self._split_states(m, s)
            self._ahead_states(m, s)
            with m.State("Offer the node"):
                m.d.comb += self.nodes.valid.eq(1)
                with m.If(self.nodes.ready):
                    with m.If(record_out.last):
                        m.next = "Wait for a tree"
                    with m.Else():
                        m.d.sync += s.head.eq(s.head + 1)
                        with m.If(s.ahead_drawn & (s.head + 1 == s.ahead_id)):
                            # the node drawn ahead: its first pass is on the engine
                            m.d.sync += [s.node.eq(s.next_node), s.split.eq(0), s.ahead_drawn.eq(0)]
                            m.next = "Wait for the pass"
                        with m.Else():
                            m.next = "Read the node"
        # The state register's value -> the state's name, for a testbench's profile.
        self.controller_states = {value: name for name, value in fsm.encoding.items()}
        return m

    def _state(self, m):
        """The memories and registers the states share."""
        s = SimpleNamespace()
        s.record = data.StructLayout({"base": self.row_bits, "count": self.row_bits + 1,
                                      "class_counts": data.ArrayLayout(self.count_bits, self.classes),
                                      "depth": self.depth_bits})
        # (a power of two deep, so the head, ``node_bits`` wide, is always an address in it)
        m.submodules.node_memory = node_memory = Memory(shape=s.record, depth=1 << self.node_bits, init=[])
        s.node_write, s.node_read = node_memory.write_port(), node_memory.read_port()
        # The partial Fisher-Yates permutation: an entry holds a feature when its tag is the
        # node's id; otherwise it is untouched (the identity). ``max_nodes`` is no node's id.
        entry = data.StructLayout({"tag": bits(self.max_nodes), "feature": self.feature_bits})
        m.submodules.permutation = permutation = Memory(shape=entry, depth=self.features, init=[])
        s.swap_write = permutation.write_port()
        s.chosen_read, s.position_read = permutation.read_port(), permutation.read_port()

        s.config = Signal.like(self.start.payload, name="config")
        # The node taken and the next id to give (at most ``max_nodes``).
        s.head, s.tail = Signal(self.node_bits, name="head"), Signal(self.node_bits + 1, name="tail")
        s.node = Signal(s.record)
        m.d.comb += s.node_read.addr.eq(s.head)
        # The node's draw: the permutation's position, the features visited, the pass's
        # lanes drawn, their features and the stream positions after their draws, the
        # position after the last used draw and after the last draw made.
        s.position, s.visited = Signal(self.feature_bits + 1, name="draw_position"), Signal(self.feature_bits + 1)
        s.lane, s.pass_index = Signal(range(self.lanes + 1), name="lane"), Signal(self.pass_bits)
        s.chosen = Signal(self.feature_bits)
        s.pass_features = Signal(data.ArrayLayout(self.feature_bits, self.lanes))
        s.pass_positions = Signal(data.ArrayLayout(POSITION_BITS, self.lanes))
        s.after_last, s.last_position = Signal(POSITION_BITS), Signal(POSITION_BITS)
        # The node's best split so far and its feature; the rows going left.
        s.best = Signal.like(self._engine.results.payload.split)
        s.split, s.best_feature = Signal(), Signal(self.feature_bits)
        s.left = Signal(self.row_bits + 1)
        s.clear_index = Signal(range(self.features))
        # The node whose features are being drawn (its id tags the permutation), and the
        # next node read ahead while a split node is partitioned: a leaf, or its first
        # pass drawn (``prefetch`` while drawing it).
        s.draw_node = Signal(self.node_bits)
        s.next_node, s.ahead_id = Signal(s.record), Signal(self.node_bits)
        s.prefetch, s.ahead_drawn = Signal(), Signal()
        s.leaves_passed = Signal(range(AHEAD_LEAVES + 1))
        # A pass's draws are requested ahead of their takes: the requests made in this pass
        # and the stream position (in the permutation) of the next request.
        s.requested = Signal(range(self.lanes + 1), name="requested")
        s.request_position = Signal(self.feature_bits + 1, name="request_position")
        s.drawing = Signal()
        requests = self._generator.requests
        m.d.comb += [requests.valid.eq(s.drawing & (s.requested != self.lanes) &
                                       (s.request_position != s.config.n_features)),
                     requests.payload.bound.eq(s.config.n_features - s.request_position)]
        with m.If(s.drawing & requests.valid & requests.ready):
            m.d.sync += [s.requested.eq(s.requested + 1), s.request_position.eq(s.request_position + 1)]
        return s

    @staticmethod
    def _leaf(record, config):
        """Whether a node's record makes it a leaf (``leaf_decision``)."""
        present = Cat(*[count != 0 for count in record.class_counts])
        return ((record.count < config.min_samples_split) | (record.count < 2) |
                ((present & (present - 1)) == 0) | (record.depth >= config.max_depth))

    def _start_states(self, m, s):
        """A tree's start (the root's record), the permutation's clearing, and a node's
        read and leaf decision."""
        generator, bootstrap = self._generator, self._bootstrap
        with m.State("Wait for a tree"):
            start = self.start.payload
            m.d.comb += self.start.ready.eq(bootstrap.start.ready)
            # A start the build cannot serve is taken and refused: no tree, ``bad_start``.
            # (a root's weights must sum below 2**count_bits: ``max_samples`` always does)
            bad = ((start.n_features == 0) | (start.n_features > self.features) |
                   (start.features_per_split == 0) | (start.max_depth == 0) |
                   (start.max_depth > self.max_depth) | (start.n_rows == 0) | (start.n_rows > self.max_rows) |
                   (start.bootstrap & (start.max_samples == 0)) |
                   (~start.bootstrap & (start.n_rows >= 1 << self.count_bits)) |
                   (start.min_samples_split < 2))
            with m.If(self.start.valid & self.start.ready):
                m.d.sync += self.bad_start.eq(bad)
            with m.If(self.start.valid & self.start.ready & ~bad):
                # The tree's stream from its first word: the bootstrap draws first.
                m.d.comb += [generator.start.eq(1), generator.seed.eq(start.seed),
                             generator.tree_index.eq(start.tree_index), generator.position.eq(0),
                             bootstrap.start.valid.eq(1), bootstrap.start.p.n_rows.eq(start.n_rows),
                             bootstrap.start.p.max_samples.eq(start.max_samples),
                             bootstrap.start.p.bootstrap.eq(start.bootstrap)]
                # (the draw's counters set to one point at once: the new tree's features may
                # be fewer than the last one's, and the invariants of the draw hold throughout)
                m.d.sync += [s.config.eq(start), s.head.eq(0), s.tail.eq(1), s.clear_index.eq(0),
                             *self._new_draw(s, 0), self.overflow.eq(0), s.prefetch.eq(0),
                             s.ahead_drawn.eq(0)]
                m.next = "Clear the permutation"
        with m.State("Clear the permutation"):
            m.d.comb += [s.swap_write.addr.eq(s.clear_index), s.swap_write.data.tag.eq(self.max_nodes),
                         s.swap_write.en.eq(1)]
            m.d.sync += s.clear_index.eq(s.clear_index + 1)
            with m.If(s.clear_index == self.features - 1):
                m.next = "Wait for the bootstrap"
        with m.State("Wait for the bootstrap"):
            # The bootstrap unit draws from the generator; its root is the tree's first node.
            requests, draws, done = generator.requests, generator.draws, bootstrap.done
            m.d.comb += [requests.valid.eq(bootstrap.requests.valid),
                         requests.payload.bound.eq(bootstrap.requests.payload.bound),
                         bootstrap.requests.ready.eq(requests.ready),
                         bootstrap.draws.valid.eq(draws.valid), bootstrap.draws.p.value.eq(draws.p.value),
                         bootstrap.draws.p.position.eq(draws.p.position),
                         draws.ready.eq(bootstrap.draws.ready), done.ready.eq(1)]
            with m.If(done.valid):
                m.d.comb += [s.node_write.addr.eq(0), s.node_write.en.eq(1), s.node_write.data.base.eq(0),
                             s.node_write.data.count.eq(done.payload.rows),
                             s.node_write.data.class_counts.eq(done.payload.class_counts),
                             s.node_write.data.depth.eq(0)]
                m.d.sync += s.last_position.eq(done.payload.position)
                m.next = "Read the node"
        with m.State("Read the node"):
            # (the node memory's read address is the head: its record is out next cycle)
            m.next = "Decide"
        with m.State("Decide"):
            record = s.node_read.data
            m.d.sync += [s.node.eq(record), s.split.eq(0)]
            with m.If(~s.ahead_drawn):         # (a leaf before the node drawn ahead keeps its draw)
                m.d.sync += self._new_draw(s, s.head)
            with m.If(self._leaf(record, s.config)):
                m.next = "Offer the node"
            with m.Else():
                m.next = "Take the draw"

    @staticmethod
    def _new_draw(s, node):
        """The assignments that start node ``node``'s draw (and its first pass's)."""
        return [s.position.eq(0), s.visited.eq(0), s.lane.eq(0), s.pass_index.eq(0),
                s.after_last.eq(s.last_position), s.draw_node.eq(node),
                s.requested.eq(0), s.request_position.eq(0)]

    def _ahead_states(self, m, s):
        """Before a split node is partitioned, the next node to search in the queue (past
        at most :data:`AHEAD_LEAVES` leaves; none when the split's children leave no room)
        is read and decided, and its first pass drawn and sent: the draws are the ones it
        would make after the split node's record (the stream's order is the nodes' order:
        leaves draw nothing), and its pass is gathered before the partition, so the lanes
        scan it while the row gather partitions. The two touch different segments (a
        node's children take its own segment)."""
        with m.State("Read the next node"):
            m.d.comb += s.node_read.addr.eq(s.ahead_id)
            m.next = "Decide the next node"
        with m.State("Decide the next node"):
            record = s.node_read.data
            m.d.sync += [s.next_node.eq(record), *self._new_draw(s, s.ahead_id)]
            with m.If(self._leaf(record, s.config)):
                with m.If((s.ahead_id + 1 != s.tail) & (s.leaves_passed != AHEAD_LEAVES)):
                    m.d.sync += [s.ahead_id.eq(s.ahead_id + 1), s.leaves_passed.eq(s.leaves_passed + 1)]
                    m.next = "Read the next node"
                with m.Else():
                    m.next = "Partition"
            with m.Else():
                m.d.sync += s.prefetch.eq(1)
                m.next = "Take the draw"
        with m.State("Gather the next pass"):
            job, ahead = self._engine.jobs.payload, s.next_node
            self._pass_job(m, s)
            m.d.comb += [job.bank.eq(ahead.depth[0]), job.base.eq(ahead.base), job.count.eq(ahead.count),
                         job.class_counts.eq(ahead.class_counts)]
            with m.If(self._engine.jobs.ready):
                m.d.sync += [s.prefetch.eq(0), s.ahead_drawn.eq(1)]
                m.next = "Partition"

    def _pass_job(self, m, s):
        """Offer the pass drawn (its segment is set by the state)."""
        job, still = self._engine.jobs.payload, s.config.features_per_split - s.visited
        m.d.comb += [self._engine.jobs.valid.eq(1), job.partition.eq(0), job.features.eq(s.pass_features),
                     job.drawn.eq((1 << s.lane) - 1), job.first.eq(s.pass_index == 0),
                     job.needed.eq(Mux(still < self.lanes, still, self.lanes))]

    def _draw_states(self, m, s):
        """A pass's features drawn from the generator into the permutation, a lane at a
        time: its draws (``lanes``, or the features left) are requested as fast as the
        generator takes them, each bounded by the features left at its position, while
        they are taken and swapped in order, two cycles each."""
        with m.State("Take the draw"):
            m.d.comb += s.drawing.eq(1)
            draws = self._generator.draws
            draw = draws.payload
            # (only a draw whose request was taken: the pass ends with no request pending)
            m.d.comb += [draws.ready.eq(s.lane < s.requested), s.chosen_read.addr.eq(draw.value + s.position),
                         s.position_read.addr.eq(s.position)]
            with m.If(draws.valid & draws.ready):
                m.d.sync += [s.chosen.eq(draw.value + s.position), s.last_position.eq(draw.position),
                             s.pass_positions[s.lane].eq(draw.position)]
                m.next = "Swap"
        with m.State("Swap"):
            m.d.comb += s.drawing.eq(1)
            chosen, displaced = s.chosen_read.data, s.position_read.data
            feature = Mux(chosen.tag == s.draw_node, chosen.feature, s.chosen)
            m.d.comb += [s.swap_write.addr.eq(s.chosen), s.swap_write.en.eq(1),
                         s.swap_write.data.tag.eq(s.draw_node),
                         s.swap_write.data.feature.eq(Mux(displaced.tag == s.draw_node, displaced.feature,
                                                          s.position))]
            m.d.sync += [s.pass_features[s.lane].eq(feature), s.lane.eq(s.lane + 1),
                         s.position.eq(s.position + 1)]
            with m.If((s.lane == self.lanes - 1) | (s.position + 1 == s.config.n_features)):
                with m.If(s.prefetch):                  # the next node's first pass, drawn ahead
                    m.next = "Gather the next pass"
                with m.Else():
                    m.next = "Gather the pass"
            with m.Else():
                m.next = "Take the draw"

    def _pass_states(self, m, s):
        """The pass gathered on the engine, its result, and the generator's rewind after
        the node's last pass."""
        engine, config = self._engine, s.config
        with m.State("Gather the pass"):
            self._pass_job(m, s)
            with m.If(engine.jobs.ready):
                m.next = "Wait for the pass"
        with m.State("Wait for the pass"):
            result = engine.results.payload
            m.d.comb += engine.results.ready.eq(1)
            with m.If(engine.results.valid):
                m.d.sync += [s.visited.eq(s.visited + result.used), s.pass_index.eq(s.pass_index + 1),
                             s.lane.eq(0), s.best.eq(result.split), s.split.eq(result.found),
                             s.requested.eq(0), s.request_position.eq(s.position)]
                with m.If(result.used != 0):
                    m.d.sync += s.after_last.eq(s.pass_positions[result.last_used])
                with m.If(result.found & (result.pass_index == s.pass_index)):
                    m.d.sync += s.best_feature.eq(s.pass_features[result.lane])
                with m.If((s.visited + result.used < config.features_per_split) &
                          (s.position < config.n_features)):
                    m.next = "Take the draw"
                with m.Else():
                    m.next = "Rewind"
        with m.State("Rewind"):
            # Only when the stream stands past the last used draw.
            rewinds = self._generator.rewinds
            m.d.comb += [rewinds.valid.eq(s.last_position != s.after_last),
                         rewinds.payload.position.eq(s.after_last)]
            with m.If(~rewinds.valid | rewinds.ready):
                m.d.sync += s.last_position.eq(s.after_last)
                # Another node waits and the split's children leave room for it: read it ahead.
                with m.If(s.split & (s.head + 1 != s.tail) & (s.tail + 2 <= self.max_nodes)):
                    m.d.sync += [s.ahead_id.eq(s.head + 1), s.leaves_passed.eq(0)]
                    m.next = "Read the next node"
                with m.Elif(s.split):
                    m.next = "Partition"
                with m.Else():
                    m.next = "Offer the node"

    def _split_states(self, m, s):
        """The node's rows partitioned by its split, and its children's records."""
        engine = self._engine
        with m.State("Partition"):
            job = engine.jobs.payload
            m.d.comb += [engine.jobs.valid.eq(1), job.partition.eq(1), job.features[0].eq(s.best_feature),
                         job.threshold.eq(s.best.threshold)]
            with m.If(engine.jobs.ready):
                m.next = "Wait for the partition"
        with m.State("Wait for the partition"):
            m.d.comb += engine.partitioned.ready.eq(1)
            with m.If(engine.partitioned.valid):
                m.d.sync += s.left.eq(engine.partitioned.payload.left)
                with m.If(s.tail + 2 > self.max_nodes):
                    m.d.sync += self.overflow.eq(1)
                    m.next = "Wait for a tree"
                with m.Else():
                    m.next = "Write the left child"
        write, child = s.node_write, s.node_write.data
        with m.State("Write the left child"):
            m.d.comb += [write.addr.eq(s.tail), write.en.eq(1), child.base.eq(s.node.base),
                         child.count.eq(s.left), child.class_counts.eq(s.best.left_counts),
                         child.depth.eq(s.node.depth + 1)]
            m.next = "Write the right child"
        with m.State("Write the right child"):
            m.d.comb += [write.addr.eq(s.tail + 1), write.en.eq(1), child.base.eq(s.node.base + s.left),
                         child.count.eq(s.node.count - s.left), child.depth.eq(s.node.depth + 1),
                         *[child.class_counts[c].eq(s.node.class_counts[c] - s.best.left_counts[c])
                           for c in range(self.classes)]]
            m.d.sync += s.tail.eq(s.tail + 2)
            m.next = "Offer the node"
