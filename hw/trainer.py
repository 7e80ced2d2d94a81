"""Forest trainer: dataset banks, one presort per dataset, tree jobs dispatched to P PEs.

Reference: ``sw.methods.forest.model.train_forest``. The trained forest is the same for any number of
processing elements because tree ``t`` depends only on (data, configuration, seed, t)
(``docs/algorithm.md`` section 3).

Data path:

1. **Dataset banks.** The host streams the training set row by row on ``dataset``,
   one beat per slot of ``lanes`` features (``ceil(n_features / lanes)`` beats per row:
   beat ``s`` carries the codes of features ``s * lanes .. s * lanes + lanes - 1``, one
   per lane, those past ``n_features`` ignored; the row's label on every beat, taken from
   its first; ``last`` on the final beat of the final row). Each lane's code goes to its
   lane's bank in the same cycle, so a row takes ``ceil(n_features / lanes)`` cycles, not
   ``n_features``. Codes go to a bank addressed ``{feature, row}`` (thesis section 4.2),
   labels to a label bank. More rows or features than built for, or a row cut short,
   raise ``dataset_error``; nothing is written past the banks.
2. **Presort** (on ``start``): the banks are split by PE feature lane (feature ``f`` in
   lane ``f % lanes``, at ``(f // lanes) * max_rows + row``), and each lane has its own
   :class:`hw.sorter.RadixSorter`, through which its features' codes stream one feature
   after another; the sorted (row, code) pairs get their label and are written to the
   lane's presorted bank, so the lanes sort side by side and are read side by side.
   Once per dataset.
3. **Training.** Tree jobs ``0 .. n_trees - 1`` go to whichever PE is free, lowest PE
   first; with none free, the next tree is queued behind the running tree of the lowest
   PE that can take one (``ProcessingElement.queue``, the serialised pipeline: it starts
   as soon as that PE's tree is written, and a thesis-mode tree with the sparse fill has
   its prologue done while the tree before trains). Each PE has a list server that answers
   its requests for a slot's lists (``lanes`` features side by side, a word per position)
   from the presorted bank (one read port per PE), and the PEs' node streams are merged
   tree by tree onto ``nodes`` (each node tagged with its tree index).
"""

import inspect
from types import SimpleNamespace

from amaranth.hdl import Array, Cat, Module, Mux, ResetInserter, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.banked import READ_LATENCY as BANKED_READ_LATENCY, BankedMemory
from hw.checks import bits, check_integer, refuse_construction
from hw.code_lookups import code_lookups
from hw.dispatch import dispatch_candidate, dispatch_pulses
from hw.lane import lane_slots
from hw.pe import ProcessingElement
from hw.rotor import ListRotor
from hw.skid import SkidOutput
from hw.sorter import RadixSorter

__all__ = ["ForestTrainer", "LIMITS", "dataset_layout", "forest_node_layout"]

#: The keywords a ForestTrainer passes on to its processing elements, checked before the
#: first PE is made (a refused keyword leaves no half-made PE behind).
_PE_PARAMETERS = tuple(name for name in inspect.signature(ProcessingElement.__init__).parameters
                       if name != "self")


def dataset_layout(code_bits, label_bits, lanes):
    """One beat of the dataset stream: one slot of a row, i.e. the codes of ``lanes``
    consecutive features (``codes[lane]``), the row's label, ``last`` on the final beat."""
    return data.StructLayout({"codes": data.ArrayLayout(code_bits, lanes), "label": label_bits,
                              "last": 1})


def forest_node_layout(tree_bits, node_layout):
    """A node of the trained forest: the tree it belongs to and the PE's node record."""
    return data.StructLayout({"tree": tree_bits, "node": node_layout})


#: The range (inclusive) of the trainer's own parameters; the PEs' are ``hw.pe.LIMITS``.
LIMITS = {"pe_count": (1, 64), "max_trees": (1, 1 << 16), "radix_bits": (1, 12)}


class ForestTrainer(wiring.Component):
    """Trains ``n_trees`` trees on ``pe_count`` processing elements (see the module docstring).

    Parameters
    ----------
    pe_count : int
        Processing elements working in parallel (1 to 64).
    max_trees : int
        Most trees per forest (1 to 2**16).
    radix_bits : int
        Digit width of the presorting radix sorter (1 to 12).
    **pe_parameters
        Parameters of :class:`hw.pe.ProcessingElement` (all PEs are the same).

    Members
    -------
    seed, n_rows, n_features, n_trees, n_samples, bootstrap, features_per_split,
    thesis_mode, depth_limited, depth_limit, min_samples_split, min_samples_leaf : In
        The forest's configuration, sampled on ``start``.
    dataset : In(stream.Signature(dataset_layout(...)))
        The training set, row by row (``ceil(n_features / lanes)`` beats per row, each
        with one code per lane; ``n_features`` held while it streams), accepted while not
        busy, one beat per cycle.
    start : In(1)
        Presort the dataset and train the forest.
    nodes : Out(stream.Signature(forest_node_layout(...)))
        The trees, each tree's nodes together and in order, trees in the order they finish.
    busy, done : Out(1)
    bad_config, dataset_error, start_while_busy, tree_error : Out(1)
        Sticky: a configuration out of range or a start without a loaded dataset of that
        size (nothing started; cleared by the next good start), a malformed dataset stream
        (cleared by the next dataset), a start while busy (ignored; cleared by the next
        accepted start), a PE stopped on an error (``tree_error``: a tree needs more levels
        or nodes, or its bootstrap more distinct rows, than built for; no tree is dispatched
        after it, a tree already going out on ``nodes`` goes out whole, and the next start
        clears the PEs).
    cycles, sort_cycles : Out(32)
        Cycles from ``start`` to the end of the forest, and of the presort alone.
    trees_done : Out(bits(max_trees))
        Trees written so far (as wide as ``n_trees``: a forest of ``max_trees`` trees finishes).
    """

    def __init__(self, *, pe_count=2, max_trees=1024, radix_bits=8, **pe_parameters):
        try:
            check_integer("pe_count", pe_count, *LIMITS["pe_count"])
            check_integer("max_trees", max_trees, *LIMITS["max_trees"])
            check_integer("radix_bits", radix_bits, *LIMITS["radix_bits"])
            unknown = sorted(set(pe_parameters) - set(_PE_PARAMETERS))
            if unknown:
                raise TypeError(f"ForestTrainer has no parameter {unknown[0]!r} (its own: pe_count, "
                                f"max_trees, radix_bits; its PEs': {', '.join(_PE_PARAMETERS)})")
            pe_parameters.setdefault("tree_index_bits", bits(max_trees - 1))
            if (1 << pe_parameters["tree_index_bits"]) < max_trees:
                raise ValueError(f"tree_index_bits ({pe_parameters['tree_index_bits']}) cannot "
                                 f"number {max_trees} trees")
            self._prototype = ProcessingElement(**pe_parameters)
            self._prototype._MustUse__silence = True
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        self.pe_count = pe_count
        self.max_trees = max_trees
        self.radix_bits = radix_bits
        self.pe_parameters = pe_parameters
        pe = self._prototype
        self.max_rows, self.feature_capacity = pe.max_rows, pe.feature_capacity
        self.code_bits, self.classes = pe.code_bits, pe.classes
        self.row_bits, self.label_bits = pe.row_bits, pe.label_bits
        self.tree_bits = bits(max_trees - 1)
        super().__init__({
            "seed": In(32),
            "n_rows": In(pe.row_bits + 1),
            "n_features": In(bits(pe.feature_capacity)),
            "n_trees": In(bits(max_trees)),
            "n_samples": In(pe.weight_bits),
            "bootstrap": In(1),
            "features_per_split": In(bits(pe.feature_capacity)),
            "thesis_mode": In(1),
            "depth_limited": In(1),
            "depth_limit": In(pe.depth_bits),
            "min_samples_split": In(pe.row_bits + 2),
            "min_samples_leaf": In(pe.row_bits + 1),
            "dataset": In(stream.Signature(dataset_layout(pe.code_bits, pe.label_bits,
                                                          pe.feature_lanes))),
            "start": In(1),
            "nodes": Out(stream.Signature(forest_node_layout(self.tree_bits, pe.node_layout))),
            "busy": Out(1),
            "done": Out(1),
            "bad_config": Out(1),
            "dataset_error": Out(1),
            "start_while_busy": Out(1),
            "tree_error": Out(1),
            "cycles": Out(32),
            "sort_cycles": Out(32),
            "trees_done": Out(bits(max_trees)),
        })

    def elaborate(self, platform):
        m = Module()
        s = SimpleNamespace()   # the signals and parts shared by the sections below
        self._banks(m, s)
        self._configuration(m, s)
        self._dataset_stream(m, s)
        self._presort_signals(m, s)
        self._list_rotor(m, s)
        code_lookups(m, s, self.max_rows)
        self._dispatcher(m, s)
        return m

    def _banks(self, m, s):
        """The PEs, and the dataset's banks, split by lane as the PEs' lists are."""
        max_rows, feature_capacity, code_bits = self.max_rows, self.feature_capacity, self.code_bits
        label_bits, row_bits = self.label_bits, self.row_bits
        # An accepted start clears whatever a forest stopped on tree_error left behind: trees
        # still running or queued in the PEs, their error flags, lists half served.
        # The PEs are reset in the cycle after, each from a register of its own (the
        # start's configuration check reaches no PE register), and what takes a PE's output
        # (the rotor, the code look-ups, the error flags) clears in that cycle, from the
        # same register: what an old PE does in the start's own cycle is reset with it.
        begin = Signal()
        pes, pe_resets = [], []
        for index in range(self.pe_count):
            pe = ProcessingElement(**self.pe_parameters)
            reset = Signal(name=f"pe{index}_reset")
            m.d.sync += reset.eq(begin)
            m.submodules[f"pe{index}"] = ResetInserter(reset)(pe)
            pes.append(pe)
            pe_resets.append(reset)
        s.clearing = pe_resets[0]

        # Every bank is split by lane as the PEs' lists are: lane k holds the slots of
        # features k, k + lanes, ... (feature f in lane f % lanes, at (f // lanes) *
        # max_rows + row), so each lane has its own sorter and the presorted bank is read
        # side by side at one address (a slot's lists at one position). An address past a
        # short lane's slots reads anything, in a lane the PE ignores.
        lanes, lane_bits, slots = self._prototype.feature_lanes, self._prototype.lane_bits, self._prototype.slots
        lane_depths = [lane_slots(feature_capacity, lane, lanes) * max_rows for lane in range(lanes)]
        entry = data.StructLayout({"row": row_bits, "code": code_bits, "label": label_bits})
        code_writes, code_reads = [], []
        presorted_writes = []
        presorted_reads = []            # one port per lane: the list rotor serves every PE
        # Each PE looks up codes for its sparse (thesis-mode) fill: own read ports. Every
        # read port is a copy of the lane's code bank (as a memory of several read ports
        # is built), banked: a one-cycle read ended in a multiplexer over block RAMs before
        # the presort's feed register (the system's path, 91.5 MHz).
        code_lookups = [[] for _ in pes]
        for lane, depth in enumerate(lane_depths):
            copies = [BankedMemory(shape=code_bits, depth=depth) for _ in range(1 + len(pes))]
            write = SimpleNamespace(addr=Signal.like(copies[0].write_addr, name=f"codes{lane}_addr"),
                                    data=Signal(code_bits, name=f"codes{lane}_data"),
                                    en=Signal(name=f"codes{lane}_en"))
            for index, copy in enumerate(copies):
                m.submodules[f"codes{lane}_{index}"] = copy
                m.d.comb += [copy.write_addr.eq(write.addr), copy.write_data.eq(write.data),
                             copy.write_en.eq(write.en)]
            code_writes.append(write)
            code_reads.append(copies[0])
            for ports, copy in zip(code_lookups, copies[1:]):
                ports.append(copy)
            # Banked (every bank's word registered, then the addressed bank's selected): the
            # one-cycle read ended in a multiplexer over block RAMs across the chip before
            # the rotor's broadcast register (the system's path, 94.0 MHz).
            memory = BankedMemory(shape=entry, depth=depth)
            m.submodules[f"presorted{lane}"] = memory
            presorted_writes.append(memory)
            presorted_reads.append(memory)
        m.submodules.labels = labels = Memory(shape=label_bits, depth=max_rows, init=[])
        label_write = labels.write_port()
        label_reads = [labels.read_port() for _ in range(lanes)]        # one per sorter
        label_lookups = [labels.read_port() for _ in pes]

        s.begin, s.pes, s.lanes, s.lane_bits, s.slots = begin, pes, lanes, lane_bits, slots
        s.code_writes, s.code_reads, s.presorted_writes = code_writes, code_reads, presorted_writes
        s.presorted_reads, s.code_lookups, s.label_write = presorted_reads, code_lookups, label_write
        s.label_reads, s.label_lookups = label_reads, label_lookups

    def _configuration(self, m, s):
        """The forest's configuration, held from start on, and the cycle counter."""
        row_bits = self.row_bits
        begin, pes, slots = s.begin, s.pes, s.slots
        n_rows = Signal.like(self.n_rows)
        n_features = Signal.like(self.n_features)
        n_trees = Signal.like(self.n_trees)
        loaded_rows = Signal(row_bits + 2)
        loaded_features = Signal.like(self.n_features)
        load_row = Signal(row_bits + 2)
        load_slot = Signal(range(slots + 1))
        cycles = Signal(32)
        m.d.comb += self.cycles.eq(cycles)
        with m.If(self.busy):
            m.d.sync += cycles.eq(cycles + 1)
        # The trees' configuration is held from start on (PEs sample it at each tree's start).
        tree_config = {name: Signal.like(getattr(self, name), name=f"config_{name}")
                       for name in ("seed", "n_samples", "bootstrap", "features_per_split",
                                    "thesis_mode", "depth_limited", "depth_limit",
                                    "min_samples_split", "min_samples_leaf")}
        with m.If(begin):
            m.d.sync += [register.eq(getattr(self, name)) for name, register in tree_config.items()]
        for pe in pes:
            m.d.comb += [pe.n_rows.eq(n_rows), pe.n_features.eq(n_features)]
            m.d.comb += [getattr(pe, name).eq(register) for name, register in tree_config.items()]

        s.n_rows, s.n_features, s.n_trees, s.loaded_rows = n_rows, n_features, n_trees, loaded_rows
        s.loaded_features, s.load_row, s.load_slot, s.cycles = loaded_features, load_row, load_slot, cycles

    def _dataset_stream(self, m, s):
        """The dataset stream into the code and label banks."""
        max_rows, feature_capacity = self.max_rows, self.feature_capacity
        lanes, lane_bits, code_writes, label_write = s.lanes, s.lane_bits, s.code_writes, s.label_write
        loaded_rows, loaded_features = s.loaded_rows, s.loaded_features
        load_row, load_slot = s.load_row, s.load_slot
        # Row by row, one beat per slot (ceil(n_features / lanes) beats per row; the
        # configuration input n_features is held while the dataset streams in), each lane's
        # code written to its own bank; start checks that n_rows and n_features match what
        # came. The writes go through registers (address, data, enable): the enable's
        # compares with n_features reach no bank's write enable in the beat's cycle. A bank
        # is written a cycle after its beat, before any start can read it (the presort
        # reads from the cycle after a start, which comes after the last beat at the earliest).
        staged_writes = [(Signal.like(write.addr, name=f"codes{lane}_write_addr"),
                          Signal.like(write.data, name=f"codes{lane}_write_data"),
                          Signal(name=f"codes{lane}_write_en")) for lane, write in enumerate(code_writes)]
        staged_label = (Signal.like(label_write.addr, name="labels_write_addr"),
                        Signal.like(label_write.data, name="labels_write_data"), Signal(name="labels_write_en"))
        for write, (addr, value, en) in zip([*code_writes, label_write], [*staged_writes, staged_label]):
            m.d.comb += [write.addr.eq(addr), write.data.eq(value), write.en.eq(en)]
            m.d.sync += en.eq(0)
        with m.If(~self.busy):
            m.d.comb += self.dataset.ready.eq(1)
            with m.If(self.dataset.valid):
                beat = self.dataset.p
                with m.If((load_row == 0) & (load_slot == 0)):
                    m.d.sync += [self.dataset_error.eq(0), loaded_rows.eq(0), loaded_features.eq(0)]
                first_feature = load_slot << lane_bits
                in_range = ((load_row < max_rows) & (first_feature < feature_capacity) &
                            (self.n_features != 0) & (self.n_features <= feature_capacity))
                with m.If(in_range):
                    for lane, (addr, value, en) in enumerate(staged_writes):
                        m.d.sync += [addr.eq(load_slot * max_rows + load_row), value.eq(beat.codes[lane]),
                                     en.eq(first_feature + lane < self.n_features)]
                    with m.If(load_slot == 0):
                        addr, value, en = staged_label
                        m.d.sync += [addr.eq(load_row), value.eq(beat.label), en.eq(1)]
                with m.Else():
                    m.d.sync += self.dataset_error.eq(1)
                row_end = first_feature + lanes >= self.n_features
                with m.If(beat.last):
                    with m.If(~row_end):
                        m.d.sync += self.dataset_error.eq(1)          # the last row cut short
                    m.d.sync += [loaded_rows.eq(load_row + 1), loaded_features.eq(self.n_features),
                                 load_row.eq(0), load_slot.eq(0)]
                with m.Elif(row_end):
                    m.d.sync += [load_row.eq(load_row + 1), load_slot.eq(0)]
                with m.Else():
                    m.d.sync += load_slot.eq(load_slot + 1)

    def _presort_signals(self, m, s):
        """The lanes' sorters and the counters of the presort."""
        max_rows, code_bits, row_bits = self.max_rows, self.code_bits, self.row_bits
        lanes, lane_bits, slots, n_features = s.lanes, s.lane_bits, s.slots, s.n_features
        # One sorter per lane, sorting that lane's features one after another.
        sorters = []
        for lane in range(lanes):
            sorter = RadixSorter(max_rows=max_rows, code_bits=code_bits, radix_bits=self.radix_bits)
            m.submodules[f"sorter{lane}"] = ResetInserter(self.start & ~self.busy)(sorter)
            sorters.append(sorter)
        slot_shape = range(slots + 1)
        sort_slot = [Signal(slot_shape, name=f"sort{lane}_slot") for lane in range(lanes)]
        feed_row = [Signal(row_bits + 2, name=f"feed{lane}_row") for lane in range(lanes)]
        feed_staged = [Signal(name=f"feed{lane}_staged") for lane in range(lanes)]
        feed_last = [Signal(name=f"feed{lane}_last") for lane in range(lanes)]
        feed_held = [Signal(name=f"feed{lane}_held") for lane in range(lanes)]
        feed_held_last = [Signal(name=f"feed{lane}_held_last") for lane in range(lanes)]
        s.feeds = [SkidOutput(sorters[lane].codes.p.shape(), name=f"feed{lane}_out")
                   for lane in range(lanes)]
        out_position = [Signal(row_bits + 2, name=f"out{lane}_position") for lane in range(lanes)]
        out_slot = [Signal(slot_shape, name=f"out{lane}_slot") for lane in range(lanes)]
        pending = [Signal(name=f"pending{lane}") for lane in range(lanes)]
        pending_row = [Signal(row_bits, name=f"pending{lane}_row") for lane in range(lanes)]
        pending_code = [Signal(code_bits, name=f"pending{lane}_code") for lane in range(lanes)]
        pending_address = [Signal(range(slots * max_rows + 1), name=f"pending{lane}_address")
                           for lane in range(lanes)]
        # The presorted bank's write is registered (``word``): the label leaves its block
        # RAM into a register, not straight into the presorted bank's.
        word_valid = [Signal(name=f"presorted{lane}_word_valid") for lane in range(lanes)]
        word = [Signal.like(s.presorted_writes[lane].write_data, name=f"presorted{lane}_word")
                for lane in range(lanes)]
        word_address = [Signal.like(pending_address[lane], name=f"presorted{lane}_word_address")
                        for lane in range(lanes)]
        m.d.sync += [flag.eq(0) for flag in pending + word_valid]
        # Features of each lane: f = lane + lanes * slot < n_features.
        lane_features = [Signal(slot_shape, name=f"lane{lane}_features") for lane in range(lanes)]
        for lane in range(lanes):
            m.d.comb += lane_features[lane].eq(Mux(n_features > lane,
                                                   (n_features - lane + (lanes - 1)) >> lane_bits, 0))

        s.sorters, s.sort_slot, s.feed_row, s.feed_staged = sorters, sort_slot, feed_row, feed_staged
        s.feed_held, s.feed_held_last = feed_held, feed_held_last
        s.feed_last, s.out_position, s.out_slot, s.pending = feed_last, out_position, out_slot, pending
        s.pending_row, s.pending_code, s.pending_address = pending_row, pending_code, pending_address
        s.lane_features, s.word_valid, s.word, s.word_address = lane_features, word_valid, word, word_address

    def _list_rotor(self, m, s):
        """The list rotor (:class:`hw.rotor.ListRotor`): the presorted bank's words to the
        PEs' list requests, one read port per lane serving every PE."""
        pes, presorted_reads = s.pes, s.presorted_reads
        prototype = self._prototype
        m.submodules.rotor = rotor = ListRotor(
            pes=len(pes), slots=s.slots, max_rows=self.max_rows, row_bits=self.row_bits,
            request_layout=prototype.list_requests.p.shape(), word_layout=prototype.presorted.p.shape(),
            address_bits=len(presorted_reads[0].read_addr), read_latency=BANKED_READ_LATENCY)
        for index, pe in enumerate(pes):
            wiring.connect(m, pe.list_requests, rotor.requests[index])
            wiring.connect(m, rotor.words[index], pe.presorted)
            m.d.comb += rotor.pe_busy[index].eq(pe.busy)
        m.d.comb += [rotor.n_rows.eq(s.n_rows), rotor.slots_used.eq(s.lane_features[0]),
                     rotor.clear.eq(s.clearing)]
        for port, address, read in zip(presorted_reads, rotor.read_addresses, rotor.read_data):
            m.d.comb += [port.read_addr.eq(address), read.eq(port.read_data)]

    def _dispatcher(self, m, s):
        """Tree jobs to the PEs and their trees onto ``nodes``: the forest's FSM."""
        pes = s.pes
        next_tree = Signal(self.tree_bits + 1)
        # next_tree < n_trees as a register: the dispatch (a PE's start) waits on no carry chain
        last_tree, more_trees = Signal(self.tree_bits, name="last_tree"), Signal(name="more_trees")
        trees_done = Signal.like(self.trees_done)
        m.d.comb += self.trees_done.eq(trees_done)
        assigned = Signal(self.pe_count)
        pe_tree = [Signal(self.tree_bits, name=f"pe{index}_tree") for index in range(self.pe_count)]
        # The serialised pipeline: a busy PE takes its next tree on queue while it trains.
        has_queued = Signal(self.pe_count)
        queued_tree = [Signal(self.tree_bits, name=f"pe{index}_queued_tree") for index in range(self.pe_count)]
        owner = Signal(range(self.pe_count))
        locked = Signal()
        # A PE's error flags, gathered a cycle late (a registered OR over the PEs).
        pe_failed = Signal()
        m.d.sync += pe_failed.eq(Cat(_stopped_on_error(pe) for pe in pes).any() &
                                 ~s.clearing)

        s.next_tree, s.trees_done, s.assigned, s.pe_tree = next_tree, trees_done, assigned, pe_tree
        s.last_tree, s.more_trees, s.pe_failed = last_tree, more_trees, pe_failed
        s.has_queued, s.queued_tree, s.owner, s.locked = has_queued, queued_tree, owner, locked
        dispatch_pulses(m, s)
        dispatch_candidate(m, s)
        self._merge_output(m, s)
        with m.FSM(init="Idle"):
            self._idle_state(m, s)
            self._presort_state(m, s)
            self._train_state(m, s)

        with m.If(self.start & self.busy):
            m.d.sync += self.start_while_busy.eq(1)

    def _idle_state(self, m, s):
        """Idle: a good start latches the configuration and begins the presort."""
        begin, n_rows, n_features, n_trees = s.begin, s.n_rows, s.n_features, s.n_trees
        loaded_rows, loaded_features, cycles = s.loaded_rows, s.loaded_features, s.cycles
        sort_slot, feed_row, out_position, out_slot = s.sort_slot, s.feed_row, s.out_position, s.out_slot
        next_tree, trees_done, assigned, has_queued = s.next_tree, s.trees_done, s.assigned, s.has_queued
        locked = s.locked
        with m.State("Idle"):
            with m.If(self.start):
                config_bad = ((self.n_rows == 0) | (self.n_rows != loaded_rows) |
                              (self.n_features == 0) | (self.n_features != loaded_features) |
                              (self.n_trees == 0) | (self.n_trees > self.max_trees) |
                              self.dataset_error)
                m.d.sync += [self.bad_config.eq(config_bad), self.start_while_busy.eq(0),
                             self.tree_error.eq(0), self.done.eq(0)]
                with m.If(~config_bad):
                    m.d.comb += begin.eq(1)
                    m.d.sync += [n_rows.eq(self.n_rows), n_features.eq(self.n_features),
                                 n_trees.eq(self.n_trees), cycles.eq(0),
                                 [counter.eq(0) for counter in sort_slot + feed_row + out_position + out_slot],
                                 [flag.eq(0) for flag in s.feed_staged + s.feed_held],
                                 [feed.clear() for feed in s.feeds],
                                 next_tree.eq(0), trees_done.eq(0), assigned.eq(0), has_queued.eq(0),
                                 locked.eq(0), s.last_tree.eq(self.n_trees - 1), s.more_trees.eq(1)]
                    m.next = "Presort"

    def _presort_state(self, m, s):
        """Presort: every lane's features through its sorter into the presorted bank."""
        max_rows = self.max_rows
        lanes, code_reads, presorted_writes = s.lanes, s.code_reads, s.presorted_writes
        label_reads, n_rows, cycles, sorters = s.label_reads, s.n_rows, s.cycles, s.sorters
        sort_slot, feed_row, feed_staged, feed_last = s.sort_slot, s.feed_row, s.feed_staged, s.feed_last
        out_position, out_slot, pending, pending_row = s.out_position, s.out_slot, s.pending, s.pending_row
        pending_code, pending_address, lane_features = s.pending_code, s.pending_address, s.lane_features
        with m.State("Presort"):
            m.d.comb += self.busy.eq(1)
            m.d.sync += self.sort_cycles.eq(cycles + 1)
            for lane, sorter in enumerate(sorters):
                # Feed: the codes of the lane's features, slot by slot, one per cycle, read
                # from the code bank (its read, ``feed_staged``, and its banks' registers,
                # ``feed_held``, moving together) into an output register (the sorter's
                # digit addresses its counters: no block-RAM output multiplexer in front).
                code_read, feed = code_reads[lane], s.feeds[lane]
                read = Signal(sorter.codes.p.shape(), name=f"feed{lane}_read")
                m.d.comb += [read.code.eq(code_read.read_data), read.last.eq(s.feed_held_last[lane])]
                staged_moves = feed.feed(m, s.feed_held[lane], read, sorter.codes.ready)
                feed_advance = ~s.feed_held[lane] | staged_moves
                m.d.comb += [code_read.read_addr.eq(sort_slot[lane] * max_rows + feed_row[lane]),
                             code_read.read_en.eq(feed_advance),
                             sorter.codes.valid.eq(feed.valid), sorter.codes.p.eq(feed.payload)]
                feeding = (feed_row[lane] < n_rows) & (sort_slot[lane] < lane_features[lane])
                with m.If(feed_advance):
                    m.d.sync += [feed_staged[lane].eq(feeding),
                                 feed_last[lane].eq(feed_row[lane] == n_rows - 1),
                                 s.feed_held[lane].eq(feed_staged[lane]),
                                 s.feed_held_last[lane].eq(feed_last[lane])]
                    with m.If(feeding):
                        with m.If(feed_row[lane] == n_rows - 1):
                            m.d.sync += [feed_row[lane].eq(0), sort_slot[lane].eq(sort_slot[lane] + 1)]
                        with m.Else():
                            m.d.sync += feed_row[lane].eq(feed_row[lane] + 1)
                # Sorted rows: read the label, then write (row, code, label).
                m.d.comb += [sorter.sorted.ready.eq(1), label_reads[lane].addr.eq(sorter.sorted.p.row)]
                with m.If(sorter.sorted.valid):
                    m.d.sync += [pending[lane].eq(1), pending_row[lane].eq(sorter.sorted.p.row),
                                 pending_code[lane].eq(sorter.sorted.p.code),
                                 pending_address[lane].eq(out_slot[lane] * max_rows + out_position[lane])]
                    with m.If(sorter.sorted.p.last):
                        m.d.sync += [out_position[lane].eq(0), out_slot[lane].eq(out_slot[lane] + 1)]
                    with m.Else():
                        m.d.sync += out_position[lane].eq(out_position[lane] + 1)
                with m.If(pending[lane]):
                    m.d.sync += [s.word_valid[lane].eq(1), s.word_address[lane].eq(pending_address[lane]),
                                 s.word[lane].row.eq(pending_row[lane]), s.word[lane].code.eq(pending_code[lane]),
                                 s.word[lane].label.eq(label_reads[lane].data)]
                write = presorted_writes[lane]
                m.d.comb += [write.write_addr.eq(s.word_address[lane]), write.write_en.eq(s.word_valid[lane]),
                             write.write_data.eq(s.word[lane])]
            sorted_all = Cat((out_slot[lane] == lane_features[lane]) & ~pending[lane] & ~s.word_valid[lane]
                             for lane in range(lanes)).all()
            with m.If(sorted_all):
                m.next = "Train"

    def _merge_output(self, m, s):
        """``nodes`` from an output register with a skid register behind it
        (:class:`hw.skid.SkidOutput`): the owner PE's ``ready`` is a register (the skid is
        empty), never ``nodes.ready``."""
        s.output = output = SkidOutput(self.nodes.p.shape(), name="out")
        m.d.comb += [self.nodes.valid.eq(output.valid), self.nodes.p.eq(output.payload)]
        s.chosen = Signal(self.nodes.p.shape(), name="chosen")
        m.d.comb += [s.chosen.tree.eq(Array(s.pe_tree)[s.owner]),
                     s.chosen.node.eq(Array(pe.nodes.p for pe in s.pes)[s.owner])]
        chosen_valid = Array(pe.nodes.valid for pe in s.pes)[s.owner]
        s.transfer = output.feed(m, s.locked & chosen_valid, s.chosen, self.nodes.ready)
        for index, pe in enumerate(s.pes):
            m.d.comb += pe.nodes.ready.eq(s.locked & (s.owner == index) & ~output.skid_valid)
        with m.If(output.valid & self.nodes.ready & output.payload.node.last):
            m.d.sync += s.trees_done.eq(s.trees_done + 1)
        with m.If(s.clearing):     # (empty in Idle already: a forest ends on its last node out)
            m.d.sync += output.clear()

    def _train_state(self, m, s):
        """Train: dispatch trees to the PEs and merge their trees onto ``nodes``."""
        pes, n_trees, next_tree, trees_done = s.pes, s.n_trees, s.next_tree, s.trees_done
        assigned, pe_tree, has_queued, queued_tree = s.assigned, s.pe_tree, s.has_queued, s.queued_tree
        owner, locked, pe_failed = s.owner, s.locked, s.pe_failed
        with m.State("Train"):
            m.d.comb += self.busy.eq(1)
            # Dispatch: the candidate PE (the lowest free one, else the lowest that can
            # queue a tree behind its running tree) takes the next tree, if it still can.
            # A PE stopped on an error stops the forest: nothing more is dispatched, and
            # the tree being merged (from a sound PE) goes out whole before Idle.
            stopping = pe_failed | self.tree_error
            with m.If(s.more_trees & ~stopping & s.candidate_valid & s.candidate_free):
                m.d.sync += [next_tree.eq(next_tree + 1), s.more_trees.eq(next_tree != s.last_tree)]
                for index in range(self.pe_count):
                    with m.If(s.candidate == index):
                        with m.If(s.candidate_starts):
                            m.d.sync += [assigned[index].eq(1), pe_tree[index].eq(next_tree),
                                         s.start_pulse[index].eq(1)]
                        with m.Else():
                            m.d.sync += [has_queued[index].eq(1), queued_tree[index].eq(next_tree),
                                         s.queue_pulse[index].eq(1)]
                # (the candidate is a cycle old: the next one is worked out without it)
                m.d.sync += s.candidate_valid.eq(0)
            # Merge: one PE's tree at a time, through the output register.
            with m.If(~locked & ~stopping):
                for index in reversed(range(self.pe_count)):
                    with m.If(pes[index].nodes.valid):
                        m.d.sync += [owner.eq(index), locked.eq(1)]
            with m.Elif(locked & s.transfer & s.chosen.node.last):
                m.d.sync += locked.eq(0)
                for index in range(self.pe_count):
                    with m.If(owner == index):
                        # A queued tree takes over in the PE at once.
                        with m.If(has_queued[index]):
                            m.d.sync += [pe_tree[index].eq(queued_tree[index]), has_queued[index].eq(0)]
                        with m.Else():
                            m.d.sync += assigned[index].eq(0)
            with m.If(pe_failed):
                m.d.sync += self.tree_error.eq(1)
            with m.If(stopping):
                with m.If(~locked & ~s.output.valid & ~s.output.skid_valid):
                    m.next = "Idle"
            with m.Elif(trees_done == n_trees):
                m.d.sync += self.done.eq(1)
                m.next = "Idle"


def _stopped_on_error(pe):
    """A PE's error flags, any of them up (registers of the PE): it stopped its tree."""
    return pe.bad_input | pe.node_overflow | pe.depth_overflow | pe.inbag_overflow | pe.bad_config
