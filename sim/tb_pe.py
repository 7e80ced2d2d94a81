"""cocotb testbench of ``hw.pe.ProcessingElement`` against ``sw.methods.forest.model.train_tree``.

Every case trains one tree in the simulated PE and compares its whole node list (feature,
threshold code, children, class counts, majority class, weighted samples, distinct rows,
depth) with the golden model's tree; cases are random (data, parameters, seed, tree
index, thesis or forest mode), corner cases and real datasets.

Settings (from the runner): ``random_cases``, ``datasets`` (names for ``sw.data.datasets``),
``dataset_trees``, ``idle_probability``, ``stall_probability``, ``report`` (a JSON file to
write the per-tree cycle counts to).
"""

import collections
import dataclasses

import cocotb
import numpy as np
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

from hw.pe import code_answer_layout, code_request_layout, list_request_layout, presorted_word_layout
from sim.coverage import bins, coverage_for
from sim.support.testbench import StreamTestbench
from sim.support.trees import (PECapacity, assert_trees_equal, configure_tree_inputs, depth_overflow_expected,
                       inbag_overflow_expected, quantised_dataset, tree_budget, tree_from_nodes)
from sw.methods.forest.model import TrainingParameters, inbag_row_count, presorted_order, train_tree

#: The PE's status flags; a tree ends on ``done`` or one of the errors.
FLAGS = ("bad_config", "bad_input", "node_overflow", "depth_overflow", "inbag_overflow", "done")
FINISHED = {**{name: 0 for name in FLAGS}, "done": 1}


class PETestbench(StreamTestbench):
    def __init__(self, dut):
        super().__init__(dut)
        self.capacity = capacity = PECapacity(self.design)
        for name in ("max_rows", "max_samples", "max_inbag_rows", "feature_capacity", "classes",
                     "code_bits", "max_depth", "max_nodes", "label_bits", "count_bits"):
            setattr(self, name, getattr(capacity, name))
        self.lanes = capacity.feature_lanes
        self.requests = self.sink("list_requests", list_request_layout(capacity.slot_bits))
        self.presorted = self.source("presorted", presorted_word_layout(self.lanes, capacity.row_bits,
                                                                         self.code_bits, self.label_bits))
        self.nodes = self.sink("nodes", capacity.node_layout)
        self.last_bit = capacity.node_layout["last"].offset
        self.code_requests = self.sink("code_requests", code_request_layout(capacity.feature_bits,
                                                                            capacity.row_bits))
        self.codes = self.source("codes", code_answer_layout(self.code_bits, self.label_bits))
        self.served = 0
        self.looked_up = 0
        self.lists = None               # feature -> list of presorted entries
        self.cycle_log = []
        self.outcomes = collections.Counter()
        self.coverage = coverage_for(self)

    async def begin(self):
        await super().begin()
        cocotb.start_soon(self.serve_lists())

    async def reset(self, cycles=2):
        await super().reset(cycles)
        self.served = 0
        self.looked_up = 0

    async def serve_lists(self):
        """Answer every list request with that slot's presorted lists side by side (a word
        per position; lanes past the features carry random entries, which the PE must
        ignore), and every code look-up with the code and label of that (feature, row)."""
        while True:
            await RisingEdge(self.dut.clk)
            while self.served < len(self.requests.received):
                slot = self.requests.received[self.served]["slot"]
                self.served += 1
                features = range(slot * self.lanes, (slot + 1) * self.lanes)
                lane0 = self.lists[features[0]] if features[0] < len(self.lists) else []
                for position in range(max(1, len(lane0))):
                    entries = [self.lists[feature][position]
                               if feature < len(self.lists) and position < len(self.lists[feature])
                               else self.junk_entry() for feature in features]
                    last = lane0[position]["last"] if position < len(lane0) else 1
                    self.presorted.send({"entries": entries, "last": last})
            while self.looked_up < len(self.code_requests.received):
                request = self.code_requests.received[self.looked_up]
                self.looked_up += 1
                self.codes.send({"code": int(self.data[0][request["row"], request["feature"]]),
                                 "label": int(self.data[1][request["row"]])})

    def junk_entry(self):
        """An entry of no list: any row, code and label the ports can carry."""
        capacity = self.capacity
        return {"row": self.rng.getrandbits(capacity.row_bits), "code": self.rng.getrandbits(self.code_bits),
                "label": self.rng.getrandbits(self.label_bits)}

    def configure(self, n_rows, n_features, params, seed, tree_index):
        dut = self.dut
        dut.seed.value = seed
        dut.tree_index.value = tree_index
        dut.n_rows.value = n_rows
        dut.n_features.value = n_features
        configure_tree_inputs(dut, params)

    def forget(self):
        """Drop what the streams hold of earlier trees."""
        self.requests.clear()
        self.code_requests.clear()
        self.codes.clear()
        self.looked_up = 0
        self.nodes.clear()
        self.presorted.clear()
        self.served = 0

    async def start(self):
        # Before the start (no stale input reaches the new tree) and in its cycle (a node
        # of the abandoned tree may go out in the very cycle the start is taken).
        self.forget()
        await RisingEdge(self.dut.clk)
        self.dut.start.value = 1
        await RisingEdge(self.dut.clk)
        self.dut.start.value = 0
        self.forget()

    def prepare_lists(self, codes, labels):
        self.data = (np.asarray(codes), np.asarray(labels))
        order = presorted_order(codes)
        n_rows = codes.shape[0]
        self.lists = [[{"row": int(row), "code": int(codes[row, feature]), "label": int(labels[row]),
                        "last": int(position == n_rows - 1)}
                       for position, row in enumerate(order[feature])]
                      for feature in range(codes.shape[1])]

    async def wait_until_finished(self, budget, label):
        dut = self.dut
        waited = 0
        while waited < budget:
            await ClockCycles(dut.clk, 16)
            waited += 16
            await ReadOnly()
            if any(int(getattr(dut, name).value) for name in FLAGS):
                await RisingEdge(dut.clk)
                return
        raise AssertionError(f"{label}: the PE did not finish within {budget} cycles "
                             f"({len(self.nodes.received)} nodes out)")

    def slots_filled(self, thesis_mode, n_features):
        """Slots of lists a tree fills: the tree's feature alone in thesis mode, every
        feature ``lanes`` at a time otherwise."""
        return 1 if thesis_mode else -(-n_features // self.lanes)

    def budget(self, n_rows, n_features, depth, lists):
        """Generous cycles for one tree of this size (a hang shows as running past it)."""
        return tree_budget(n_rows, n_features, depth, lists, self.design["feature_lanes"])

    def dataset_params(self, n_rows, n_features, n_classes, thesis):
        """Thesis mode (16 draws, depth 4, one feature per tree) or forest mode (a full
        bootstrap, sqrt(F) features per node) for a real dataset."""
        if thesis:
            return TrainingParameters(n_classes=n_classes, max_depth=4, max_samples=16,
                                      thesis_mode=True)
        return TrainingParameters(n_classes=n_classes, max_depth=self.settings.get("dataset_depth"),
                                  max_samples=min(n_rows, self.max_samples, self.max_inbag_rows),
                                  features_per_split=max(1, int(n_features ** 0.5)))

    def fitting_bootstrap(self, params, n_rows):
        """``params`` with at most ``max_inbag_rows`` draws if they could overflow a list."""
        if params.bootstrap and min(params.max_samples, n_rows) > self.max_inbag_rows:
            return dataclasses.replace(params, max_samples=self.max_inbag_rows)
        return params

    def expected_overflow(self, codes, labels, params, seed, tree_index):
        """Whether an unlimited tree would need a node deeper than the PE holds."""
        return depth_overflow_expected(codes, labels, params, seed, tree_index, self.max_depth)

    async def check_tree(self, codes, labels, params, seed, tree_index, label):
        """Train one tree in the PE and compare it with the golden model, node by node."""
        codes = np.asarray(codes, dtype=np.int64)
        labels = np.asarray(labels, dtype=np.int64)
        n_rows, n_features = codes.shape
        self.prepare_lists(codes, labels)
        self.configure(n_rows, n_features, params, seed, tree_index)
        inbag_over = inbag_overflow_expected(n_rows, params, seed, tree_index, self.max_inbag_rows)
        overflow = not inbag_over and self.expected_overflow(codes, labels, params, seed, tree_index)
        expected = None if overflow or inbag_over else train_tree(codes, labels, params, seed, tree_index)
        depth = self.max_depth if expected is None else int(expected.depth.max())
        lists = self.slots_filled(params.thesis_mode, n_features)
        await self.start()
        await self.wait_until_finished(self.budget(n_rows, n_features, depth, lists), label)
        await ReadOnly()
        flags = {name: int(getattr(self.dut, name).value) for name in FLAGS}
        cycles = int(self.dut.cycles.value)
        await RisingEdge(self.dut.clk)
        # Every list the PE asked for must have been taken whole (nothing left for the next tree).
        assert self.presorted.idle, f"{label}: {len(self.presorted.queue)} presorted entries were left unread"
        assert self.codes.idle, f"{label}: {len(self.codes.queue)} code answers were left unread"
        sparse = (params.thesis_mode and params.bootstrap
                  and params.max_samples <= self.design.get("sparse_rows", 0))
        assert inbag_over or ((len(self.code_requests.received) > 0) == sparse
                              and (len(self.requests.received) > 0) != sparse), \
            f"{label}: the sparse fill should {'' if sparse else 'not '}have been used"
        outcome = "inbag_overflow" if inbag_over else "depth_overflow" if overflow else "done"
        self.outcomes[outcome] += 1
        self.coverage.record(bins.pe_tree, expected, params, n_rows, n_features, outcome, self.capacity, sparse)
        if inbag_over:
            # Stopped after the draws, before the fill: no list asked for, no node out.
            assert flags == {**FINISHED, "inbag_overflow": 1, "done": 0}, \
                f"{label}: expected inbag_overflow, got {flags}"
            assert not self.requests.received and not self.nodes.received, \
                f"{label}: {len(self.requests.received)} lists asked for, {len(self.nodes.received)} nodes out"
            return None
        if overflow:
            assert flags["depth_overflow"] == 1 and flags["done"] == 0, f"{label}: expected depth_overflow, got {flags}"
            return None
        assert flags == FINISHED, \
            f"{label}: flags {flags}"
        assert_trees_equal(tree_from_nodes(self.nodes.received, self.capacity, params.n_classes, label),
                           expected, label)
        inbag = int(expected.n_rows[0])
        self.cycle_log.append({"label": label, "cycles": cycles, "n_rows": n_rows, "n_features": n_features,
                               "n_samples": params.max_samples if params.bootstrap else 0,
                               "inbag": inbag, "depth": int(expected.depth.max()),
                               "nodes": int(expected.n_nodes),
                               "mode": "thesis" if params.thesis_mode else "forest", "lanes": self.design["feature_lanes"],
                               "lists": lists})
        return cycles

    # ------------------------------------------------------------------ serialised pipeline
    async def queue_next(self, n_rows, n_features, params, seed, tree_index):
        """Hand the next tree over on ``queue`` as soon as ``queue_ready``; if the PE has
        gone idle before that (the running tree ended first), start it instead."""
        dut = self.dut
        await RisingEdge(dut.clk)
        self.configure(n_rows, n_features, params, seed, tree_index)
        dut.queue.value = 1
        while True:
            await ReadOnly()
            ready, busy = int(dut.queue_ready.value), int(dut.busy.value)
            await RisingEdge(dut.clk)
            if ready:
                dut.queue.value = 0
                return "queued"
            if not busy:
                dut.queue.value = 0
                dut.start.value = 1
                await RisingEdge(dut.clk)
                dut.start.value = 0
                return "started"

    async def watch_tree_ends(self, ends):
        """Record (cycle, ``cycles``) of every tree's last node as it goes out."""
        dut = self.dut
        cycle = 0
        while True:
            await RisingEdge(dut.clk)
            cycle += 1
            await ReadOnly()
            if int(dut.nodes__valid.value) and int(dut.nodes__ready.value) and \
                    (int(dut.nodes__payload.value) >> self.last_bit) & 1:
                ends.append((cycle, int(dut.cycles.value)))

    async def check_sequence(self, codes, labels, trees, label, max_delay=0):
        """Train ``trees`` [(params, seed, tree_index)] on one dataset back to back: the
        first is started, every next one queued while the one before trains (after up to
        ``max_delay`` random cycles). Every tree is compared with the model; returns how
        each tree was handed over and (cycle, cycles) at each tree's end."""
        codes = np.asarray(codes, dtype=np.int64)
        labels = np.asarray(labels, dtype=np.int64)
        n_rows, n_features = codes.shape
        self.prepare_lists(codes, labels)
        expected = [train_tree(codes, labels, params, seed, tree_index) for params, seed, tree_index in trees]
        ends = []
        watcher = cocotb.start_soon(self.watch_tree_ends(ends))
        self.configure(n_rows, n_features, *trees[0])
        await self.start()
        how = ["started"]
        for params, seed, tree_index in trees[1:]:
            if max_delay:
                await ClockCycles(self.dut.clk, self.rng.randint(0, max_delay))
            how.append(await self.queue_next(n_rows, n_features, params, seed, tree_index))
        budget = sum(self.budget(n_rows, n_features, int(tree.depth.max()), n_features) for tree in expected)
        await self.wait_until_finished(budget, label)
        await ReadOnly()
        flags = {name: int(getattr(self.dut, name).value) for name in FLAGS}
        await RisingEdge(self.dut.clk)
        watcher.cancel()
        assert flags == FINISHED, \
            f"{label}: flags {flags}"
        assert self.presorted.idle and self.codes.idle, f"{label}: input left unread"
        beats, start = self.nodes.received, 0
        for index, tree in enumerate(expected):
            assert start < len(beats), f"{label}: only {index} of {len(expected)} trees came out"
            end = next((position for position in range(start, len(beats)) if beats[position]["last"]), None)
            assert end is not None, f"{label}: tree {index} has no last node"
            assert_trees_equal(tree_from_nodes(beats[start:end + 1], self.capacity, trees[index][0].n_classes,
                                               f"{label} tree {index}"), tree, f"{label} tree {index}")
            start = end + 1
        assert start == len(beats), f"{label}: {len(beats) - start} nodes after the last tree"
        assert len(ends) == len(expected), f"{label}: {len(ends)} tree ends seen"
        return how, ends, expected

    # ------------------------------------------------------------------ case generators
    def random_case(self, thesis_probability=0.25):
        rng = self.rng
        n_rows = rng.choice([2, 3] + [rng.randint(2, self.max_rows), rng.randint(8, min(40, self.max_rows)),
                                      self.max_rows] * 3)
        n_features = rng.choice([1] + [rng.randint(1, self.feature_capacity), self.feature_capacity] * 2)
        n_classes = rng.randint(2, self.classes)
        top = rng.choice([1, 2, 3, 7, rng.randint(1, (1 << self.code_bits) - 1), (1 << self.code_bits) - 1])
        codes = np.array([[rng.randint(0, top) for _ in range(n_features)] for _ in range(n_rows)],
                         dtype=np.int64).reshape(n_rows, n_features)
        if rng.random() < 0.2 and n_features > 1:           # some constant features
            codes[:, rng.randrange(n_features)] = rng.randint(0, top)
        labels = np.array([rng.randrange(n_classes) for _ in range(n_rows)], dtype=np.int64)
        if rng.random() < 0.1:
            labels[:] = rng.randrange(n_classes)             # one class only: a root leaf
        params = self.random_params(n_rows, n_features, n_classes, thesis_probability)
        return codes, labels, params, rng.getrandbits(32), rng.getrandbits(len(self.dut.tree_index))

    def random_params(self, n_rows, n_features, n_classes, thesis_probability=0.25):
        """Random training parameters that fit the build for data of this shape (a bootstrap
        may draw more distinct rows than a list holds: ``check_tree`` then expects
        ``inbag_overflow``)."""
        rng = self.rng
        thesis = rng.random() < thesis_probability
        bootstrap = rng.random() < 0.8
        list_limit = min(self.max_inbag_rows, self.max_samples)
        if bootstrap:
            # A bootstrap may draw more rows than a list holds: the PE raises inbag_overflow
            # when the distinct ones do not fit (check_tree expects it from the model).
            max_samples = rng.choice([1, 16] + [n_rows, rng.randint(1, self.max_samples), self.max_samples] * 3)
            max_samples = max(1, min(max_samples, self.max_samples))
        else:
            max_samples = 1
            if n_rows > self.max_inbag_rows:
                bootstrap, max_samples = True, list_limit
        max_depth = rng.choice([None, 1, 2, 4, rng.randint(1, self.max_depth), self.max_depth])
        if thesis:
            max_depth = rng.choice([4, max_depth])
            if bootstrap and rng.random() < 0.7:             # small bootstraps: the sparse fill
                max_samples = min(self.max_samples, rng.choice([16, rng.randint(1, 33)]))
            if bootstrap and max_samples <= self.design.get("sparse_rows", 0) \
                    and min(max_samples, n_rows) > self.max_inbag_rows:
                max_samples = self.max_inbag_rows    # a sparse fill is refused unless its draws fit a list
        params = TrainingParameters(
            n_classes=n_classes, max_depth=max_depth, max_samples=max_samples, bootstrap=bootstrap,
            features_per_split=rng.choice([1, rng.randint(1, n_features), n_features, max(1, int(n_features ** 0.5))]),
            thesis_mode=thesis,
            min_samples_split=rng.choice([2, 2, 3, rng.randint(2, 10)]),
            min_samples_leaf=rng.choice([1, 1, 2, rng.randint(1, 5)]))
        return params


@cocotb.test()
async def random_trees_match_model(dut):
    tb = PETestbench(dut)
    await tb.begin()
    for case in range(tb.settings.get("random_cases", 20)):
        codes, labels, params, seed, tree_index = tb.random_case()
        await tb.check_tree(codes, labels, params, seed, tree_index,
                            f"case {case} ({codes.shape}, {params})")
    dut._log.info(f"tree outcomes: {dict(tb.outcomes)}")
    tb.write_report()


@cocotb.test()
async def corner_cases_match_model(dut):
    tb = PETestbench(dut)
    await tb.begin()
    rng = np.random.default_rng(7)
    F = tb.feature_capacity
    full = min(tb.max_rows, tb.max_inbag_rows)
    few = min(20, tb.max_rows)                      # builds of fewer rows: the limit cases
    cases = {
        "two rows": (rng.integers(0, 4, (2, F)), [0, 1], dict(max_samples=2)),
        "all codes equal": (np.full((few, F), 3), rng.integers(0, 2, few), dict(max_samples=few)),
        "one class": (rng.integers(0, 9, (few, F)), np.zeros(few, int), dict(max_samples=few)),
        "every class": (rng.integers(0, 50, (min(60, full), F)), np.arange(min(60, full)) % tb.classes,
                        dict(max_samples=min(60, full))),
        "maximum weights (every draw on two rows)": (rng.integers(0, 5, (2, F)), [0, 1],
                                                     dict(max_samples=tb.max_samples)),
        "full capacity, no bootstrap": (rng.integers(0, 1 << tb.code_bits, (full, F)),
                                        rng.integers(0, tb.classes, full), dict(bootstrap=False)),
        "min_samples_leaf too large": (rng.integers(0, 9, (10, F)), rng.integers(0, 2, 10),
                                       dict(max_samples=10, min_samples_leaf=6)),
        "thesis: 16 samples, depth 4": (rng.integers(0, 1 << tb.code_bits, (min(150, tb.max_rows), F)),
                                        rng.integers(0, min(3, tb.classes), min(150, tb.max_rows)),
                                        dict(max_samples=16, max_depth=4, thesis_mode=True)),
        "thesis: 16 samples, few distinct codes (ties in the sparse sort)": (
            rng.integers(0, 3, (min(150, tb.max_rows), F)), rng.integers(0, min(3, tb.classes), min(150, tb.max_rows)),
            dict(max_samples=16, max_depth=4, thesis_mode=True)),
        "thesis: bootstrap one more than the sparse fill holds": (
            rng.integers(0, 4, (min(150, tb.max_rows), F)), rng.integers(0, 2, min(150, tb.max_rows)),
            dict(max_samples=tb.design.get("sparse_rows", 0) + 1, max_depth=4, thesis_mode=True)),
        "deepest tree the PE holds": (np.arange(full)[:, None].repeat(F, 1), np.arange(full) % 2,
                                      dict(bootstrap=False, max_depth=tb.max_depth, features_per_split=F)),
    }
    seeds = {label: 2026 for label in cases}
    if tb.max_inbag_rows < min(tb.max_rows, tb.max_samples):
        # Lists shorter than the bootstrap can be: bootstraps whose distinct rows fill a list
        # exactly and overflow it by one (seeds found with the model), on the number of rows
        # whose expected distinct count is nearest.
        draws = tb.max_samples
        n_rows = min(range(2, tb.max_rows + 1),
                     key=lambda n: abs(n * (1 - (1 - 1 / n) ** draws) - tb.max_inbag_rows - 0.5))
        probe = TrainingParameters(n_classes=2, max_samples=draws)
        for extra, label in ((0, "bootstrap fills a list exactly"), (1, "bootstrap one row over a list")):
            seed = next((seed for seed in range(20_000)
                         if inbag_row_count(n_rows, probe, seed, 11) == tb.max_inbag_rows + extra), None)
            assert seed is not None, f"{label}: no seed among 20,000 on {n_rows} rows"
            cases[label] = (rng.integers(0, 1 << tb.code_bits, (n_rows, F)), rng.integers(0, 2, n_rows),
                            dict(max_samples=draws))
            seeds[label] = seed
    for label, (codes, labels, overrides) in cases.items():
        codes, labels = np.asarray(codes), np.asarray(labels)
        n_classes = max(2, int(labels.max()) + 1)
        settings = dict(n_classes=n_classes, max_depth=None, max_samples=len(labels), bootstrap=True,
                        features_per_split=max(1, int(F ** 0.5)), thesis_mode=False)
        settings.update(overrides)
        settings["max_samples"] = max(1, min(settings["max_samples"], tb.max_samples))
        await tb.check_tree(codes, labels, TrainingParameters(**settings), seeds[label], 11, label)
    if tb.max_inbag_rows < min(tb.max_rows, tb.max_samples):
        assert tb.outcomes["inbag_overflow"] >= 1, tb.outcomes
    tb.write_report()


@cocotb.test()
async def datasets_match_model(dut):
    """Trees on real datasets (quantised with the rank quantiser, as the estimator does)."""
    tb = PETestbench(dut)
    await tb.begin()
    for name in tb.settings.get("datasets", []):
        codes, labels, n_classes = quantised_dataset(name, tb.code_bits)
        n_rows, n_features = codes.shape
        assert n_rows <= tb.max_rows and n_features <= tb.feature_capacity and n_classes <= tb.classes, \
            f"{name} {codes.shape} with {n_classes} classes does not fit the PE built for the test"
        for tree in range(tb.settings.get("dataset_trees", 2)):
            thesis = tree % 2 == 1
            params = tb.dataset_params(n_rows, n_features, n_classes, thesis)
            await tb.check_tree(codes, labels, params, 1234 + tree, tree,
                                f"{name} tree {tree} ({'thesis' if thesis else 'forest'} mode)")
    tb.write_report()


@cocotb.test()
async def queued_trees_match_model(dut):
    """The serialised pipeline: sequences of 2 to 5 trees on one random dataset, mixed
    thesis mode (sparse fill and list filter) and forest mode, each next tree queued while
    the one before trains (at once, or after a random delay); every tree is compared with
    the model node by node."""
    tb = PETestbench(dut)
    await tb.begin()
    handed = {"queued": 0, "started": 0}
    for sequence in range(tb.settings.get("queued_sequences", 8)):
        codes, labels, params, seed, tree_index = tb.random_case(thesis_probability=0.6)
        trees = [(params, seed, tree_index)]
        for _ in range(tb.rng.randint(1, 4)):
            trees.append((tb.random_params(*codes.shape, params.n_classes, thesis_probability=0.6),
                          tb.rng.getrandbits(32), tb.rng.getrandbits(len(dut.tree_index))))
        # Trees that would outgrow the PE stop with an error and drop the queue: limit them
        # (depth), or draw no more rows than a list holds (in-bag rows).
        trees = [(tb.fitting_bootstrap(p, codes.shape[0]), s, t) for p, s, t in trees]
        trees = [(dataclasses.replace(p, max_depth=tb.max_depth)
                  if tb.expected_overflow(codes, labels, p, s, t) else p, s, t) for p, s, t in trees]
        max_delay = tb.rng.choice([0, 0, 50, 400])
        how, _, _ = await tb.check_sequence(codes, labels, trees, f"sequence {sequence}", max_delay)
        if max_delay == 0:
            assert how[1:] == ["queued"] * (len(trees) - 1), f"sequence {sequence}: {how}"
        for way in how[1:]:
            handed[way] += 1
    assert handed["queued"] > 0, handed


@cocotb.test()
async def queued_dataset_trees_latency_and_steady_state(dut):
    """Latency and steady state on real datasets: per dataset and mode, ``dataset_trees``
    trees back to back, each queued while the one before trains; the first of each run is
    started from idle (its ``cycles`` is the single-tree latency), the interval between
    the ends of consecutive queued trees is the steady-state time per tree."""
    tb = PETestbench(dut)
    await tb.begin()
    for name in tb.settings.get("datasets", []):
        codes, labels, n_classes = quantised_dataset(name, tb.code_bits)
        n_rows, n_features = codes.shape
        for mode in ("forest", "thesis"):
            params = tb.dataset_params(n_rows, n_features, n_classes, mode == "thesis")
            count = tb.settings.get("dataset_trees", 4)
            trees = [(params, 4321, tree) for tree in range(count)]
            label = f"{name} ({mode} mode)"
            runs = []
            for tree in trees:                              # each tree alone: the latency
                how, ends, expected = await tb.check_sequence(codes, labels, [tree], label + " alone")
                runs.append(("alone", ends[0][1], None, expected[0]))
            how, ends, expected = await tb.check_sequence(codes, labels, trees, label + " queued")
            assert how[1:] == ["queued"] * (count - 1), f"{label}: {how}"
            for index, tree in enumerate(expected):
                runs.append((how[index], ends[index][1],
                             ends[index][0] - ends[index - 1][0] if index else None, tree))
            for handover, cycles, interval, tree in runs:
                tb.cycle_log.append({
                    "label": f"{name} tree", "mode": mode, "handover": handover,
                    "cycles": cycles, "interval": interval,
                    "n_rows": n_rows, "n_features": n_features,
                    "n_samples": params.max_samples if params.bootstrap else 0,
                    "inbag": int(tree.n_rows[0]), "depth": int(tree.depth.max()), "nodes": int(tree.n_nodes),
                    "lanes": tb.design["feature_lanes"],
                    "lists": tb.slots_filled(mode, n_features)})
    tb.write_report()


@cocotb.test()
async def bad_configurations_and_inputs_are_flagged(dut):
    tb = PETestbench(dut)
    await tb.begin()
    good = TrainingParameters(n_classes=2, max_depth=3, max_samples=8, features_per_split=1)
    codes = np.array([[i % 5] * tb.feature_capacity for i in range(8)])
    labels = np.arange(8) % 2
    bad = [("n_rows 0", dict(n_rows=0)), ("n_features 0", dict(n_features=0)),
           ("n_samples 0", dict(n_samples=0)), ("features_per_split 0", dict(features_per_split=0)),
           ("min_samples_split 1", dict(min_samples_split=1)), ("min_samples_leaf 0", dict(min_samples_leaf=0))]
    if tb.feature_capacity + 1 < 1 << len(dut.n_features):
        bad.append(("too many features", dict(n_features=tb.feature_capacity + 1)))
    if tb.max_rows + 1 < 1 << len(dut.n_rows):
        bad.append(("too many rows", dict(n_rows=tb.max_rows + 1)))
    if tb.max_samples + 1 < 1 << len(dut.n_samples):
        bad.append(("too many samples", dict(n_samples=tb.max_samples + 1)))
    if tb.max_depth + 1 < 1 << len(dut.depth_limit):
        bad.append(("depth beyond capacity", dict(depth_limit=tb.max_depth + 1)))
    for label, overrides in bad:
        tb.configure(8, tb.feature_capacity, good, 1, 1)
        for name, value in overrides.items():
            getattr(dut, name).value = value
        await tb.start()
        await ClockCycles(dut.clk, 40)
        await ReadOnly()
        assert int(dut.bad_config.value) == 1, f"{label}: bad_config not raised"
        assert int(dut.busy.value) == 0 and len(tb.requests.received) == 0, f"{label}: a tree started"
        await RisingEdge(dut.clk)
    # A list of the wrong length and a label beyond the classes raise bad_input.
    tb.prepare_lists(codes, labels)
    tb.lists[0] = tb.lists[0][:-1] + [dict(tb.lists[0][-1], last=0)] + [dict(tb.lists[0][-1])]
    tb.configure(8, tb.feature_capacity, good, 1, 1)
    await tb.start()
    await tb.wait_until_finished(2000, "wrong list length")
    assert int(dut.bad_input.value) == 1 and int(dut.done.value) == 0, "wrong list length not flagged"
    if tb.classes < 1 << tb.label_bits:
        tb.prepare_lists(codes, labels)
        tb.lists[0][3]["label"] = tb.classes
        await tb.start()
        await tb.wait_until_finished(2000, "label out of range")
        assert int(dut.bad_input.value) == 1, "label beyond the classes not flagged"
    # The node memory: a PE built with few nodes refuses to overflow it.
    # And after all of that, a good tree trains correctly.
    await tb.check_tree(codes, labels, good, 1, 1, "after bad configurations")


@cocotb.test()
async def reset_and_restart_in_the_middle(dut):
    tb = PETestbench(dut)
    await tb.begin()
    for case in range(tb.settings.get("reset_cases", 4)):
        codes, labels, params, seed, tree_index = tb.random_case()
        tb.prepare_lists(codes, labels)
        tb.configure(codes.shape[0], codes.shape[1], params, seed, tree_index)
        await tb.start()
        if case % 4 >= 2:                                   # with a tree queued behind it
            await tb.queue_next(codes.shape[0], codes.shape[1],
                                tb.random_params(*codes.shape, params.n_classes, thesis_probability=0.6),
                                tb.rng.getrandbits(32), 1)
        await ClockCycles(dut.clk, tb.rng.randint(1, 40 * codes.shape[0] * codes.shape[1] + 50))
        if case % 2 == 0:
            await tb.reset()                                # reset in the middle of work
        # else: a start while busy abandons the tree (check_tree starts again)
        codes, labels, params, seed, tree_index = tb.random_case()
        await tb.check_tree(codes, labels, params, seed, tree_index, f"after interruption {case}")
