"""cocotb testbench of ``forest_top`` (``hw.top.ForestTop``) through its Avalon-MM interfaces only.

A register master (``cocotbext-avalon``) on the slave ``csr``; one memory behind both DMA
masters with random ``waitrequest`` and random read latency (``sim.support.avalon``). The
host puts the dataset and test rows in memory, programs the DMA jobs, trains, waits for the
interrupt, reads the trees and predictions back from memory and compares them with the
golden model (as ``sim/tb_system.py``); the thesis datasets sonar and ctg the same way, on
a build that holds them; with a separate core clock (``separate_core_clock``), both clocks
run at the settings' periods. Settings: ``random_forests``, ``iris``, ``datasets`` (names),
``test_rows``, ``figures`` (a JSON file for the datasets' figures), ``bus_period_ps``,
``core_period_ps``, ``waitrequest_probability``, ``max_latency``.
"""

import dataclasses
import json
import random

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, First, RisingEdge
from cocotb.utils import get_sim_time
from cocotbext.avalon import AvalonMMBus, AvalonMMMasterBFM

from hw.avalon.bus import words_per_beat
from hw.inference import InferenceGeometry
from hw.system import IDENTIFIER, REGISTERS, STATUS_BITS
from hw.top import DMA_STATUS_BITS, IRQ_CAUSES, READ_TARGETS, TOP_REGISTERS, WRITE_TARGETS
from hw.trainer import dataset_layout, forest_node_layout
from sim.runner import testbench_parameters
from sim.support.avalon import RandomMemory, SparseMemory, beats_to_words, words_to_beats
from sim.support.testbench import CLOCK_IMPL, CLOCK_PERIOD_NS
from sim.support.trees import (PECapacity, assert_trees_equal, bits, dataset_beats,
                               depth_overflow_expected, inbag_overflow_expected, quantised_dataset,
                               random_forest_case, tree_from_nodes, tree_inputs)
from sw.methods.forest.model import TrainingParameters, forest_class_counts, forest_votes, train_forest

ALL_REGISTERS = {**REGISTERS, **TOP_REGISTERS}
#: Where the host puts its buffers in the memory model (byte addresses).
BASES = {"dataset": 0x0001_0000, "rows": 0x0010_0000, "trees_in": 0x0020_0000,
         "trees": 0x0040_0000, "predictions": 0x0080_0000}


#: (bus, core) clock periods in ps the builds with a separate core clock are simulated at:
#: a 100 MHz bus with a 77 MHz core, and the reverse.
CLOCK_PAIRS = [(10_000, 12_988), (12_988, 10_000)]


class AcceleratorError(RuntimeError):
    """An error cause of the interrupt, with the flags that rose."""


class TopHost:
    """The host program of ``forest_top``, over Avalon-MM only."""

    def __init__(self, dut, design, rng, waitrequest_probability=0.3, latency=(1, 8)):
        self.dut, self.design, self.rng = dut, design, rng
        self.bus_period_ps = CLOCK_PERIOD_NS * 1000
        self.capacity = capacity = PECapacity(design)
        self.geometry = InferenceGeometry(
            max_trees=design["max_trees"], max_nodes_per_tree=capacity.max_nodes,
            feature_capacity=capacity.feature_capacity, code_bits=capacity.code_bits,
            classes=capacity.classes, count_bits=capacity.count_bits, max_depth=capacity.max_depth,
            traversal_stages=min(design.get("traversal_stages", 1), capacity.max_depth + 1))
        self.layouts = {
            "dataset": dataset_layout(capacity.code_bits, capacity.label_bits, capacity.feature_lanes),
            "trees_in": self.geometry.node_layout, "rows": self.geometry.row_layout,
            "trees": forest_node_layout(bits(design["max_trees"] - 1), capacity.node_layout),
            "predictions": self.geometry.prediction_layout}
        self.memory = SparseMemory()
        self.master = AvalonMMMasterBFM(AvalonMMBus.from_prefix(dut, "csr_"), dut.clk, dut.rst)
        self.models = [RandomMemory(dut, name, self.memory, rng, latency=latency,
                                    waitrequest_probability=waitrequest_probability)
                       for name in ("mem_read", "mem_write")]

    def cycle(self):
        """Bus clock cycles since the simulation began."""
        return int(get_sim_time("ps")) // self.bus_period_ps

    def start(self):
        self.master.start()
        for model in self.models:
            model.start()

    # ---------------------------------------------------------------- registers
    async def write(self, name, value):
        address, access, width, _ = ALL_REGISTERS[name]
        if access == "R":
            raise ValueError(f"register {name} is read-only")
        await self.master.write(address, int(value))

    async def read(self, name):
        return await self.master.read(ALL_REGISTERS[name][0])

    async def flags(self, name, names):
        word = await self.read(name)
        return {flag for bit, flag in enumerate(names) if word >> bit & 1}

    async def wait_for(self, cause, budget=20_000_000, poll=128):
        """Wait for the interrupt cause ``cause``; clear it. An error cause raises. A rise of
        ``irq`` is taken at once (``writes_at_irq``: the words the memory had accepted from
        the write master then); while ``irq`` is high for another cause, it is polled."""
        waited = 0
        while True:
            if int(self.dut.irq.value):
                await ClockCycles(self.dut.clk, poll)
            else:
                await First(RisingEdge(self.dut.irq), ClockCycles(self.dut.clk, poll))
            waited += poll
            if int(self.dut.irq.value):
                self.writes_at_irq = self.models[1].accepted_writes
                raised = await self.flags("IRQ_STATUS", IRQ_CAUSES)
                if "error" in raised:
                    status = await self.flags("STATUS", STATUS_BITS)
                    dma = await self.flags("DMA_STATUS", DMA_STATUS_BITS)
                    raise AcceleratorError(f"interrupt with error (waiting for {cause}): STATUS "
                                           f"{sorted(status)}, DMA_STATUS {sorted(dma)}")
                if cause in raised:
                    await self.write("IRQ_STATUS", 1 << IRQ_CAUSES.index(cause))
                    return
            if waited > budget:
                raise AssertionError(f"no {cause} interrupt within {budget} cycles")

    # ---------------------------------------------------------------- DMA jobs
    def put(self, stream, beats):
        words = beats_to_words(self.layouts[stream], beats)
        self.memory.write_words(BASES[stream], words)
        return len(beats)

    def get(self, stream, count):
        words = self.memory.read_words(BASES[stream], count * words_per_beat(self.layouts[stream]))
        return words_to_beats(self.layouts[stream], words)

    async def read_job(self, stream, beats):
        target = next(key for key, name in READ_TARGETS.items() if name == stream)
        await self.write("READ_BASE", BASES[stream])
        await self.write("READ_BEATS", beats)
        await self.write("READ_START", target)
        await self.wait_for("read_done")
        assert await self.read("READ_COUNT") == beats

    async def arm_writer(self, stream, limit):
        target = next(key for key, name in WRITE_TARGETS.items() if name == stream)
        await self.write("WRITE_BASE", BASES[stream])
        await self.write("WRITE_LIMIT", limit)
        await self.write("WRITE_START", target)

    # ---------------------------------------------------------------- host sequences
    async def check_identity(self):
        assert await self.read("ID") == IDENTIFIER
        for stream, layout in self.layouts.items():
            assert await self.read(f"{stream.upper()}_WORDS") == words_per_beat(layout), stream
        await self.write("IRQ_ENABLE", (1 << len(IRQ_CAUSES)) - 1)

    async def load_dataset(self, codes, labels):
        await self.write("N_FEATURES", codes.shape[1])
        beats = self.put("dataset", list(dataset_beats(codes, labels, self.capacity.feature_lanes)))
        await self.read_job("dataset", beats)
        await self.write("N_ROWS", codes.shape[0])

    async def configure(self, params, seed, n_trees):
        inputs = tree_inputs(params)
        for name, value in [("SEED", seed), ("N_TREES", n_trees), ("N_SAMPLES", inputs["n_samples"]),
                            ("FLAGS", inputs["bootstrap"] | inputs["thesis_mode"] << 1
                             | inputs["depth_limited"] << 2 | 1 << 3),
                            ("FEATURES_PER_SPLIT", inputs["features_per_split"]),
                            ("DEPTH_LIMIT", inputs["depth_limit"]),
                            ("MIN_SAMPLES_SPLIT", inputs["min_samples_split"]),
                            ("MIN_SAMPLES_LEAF", inputs["min_samples_leaf"])]:
            await self.write(name, value)

    async def train(self, params, seed, n_trees, limit=None):
        """Train with the trees written to memory; return them in tree order. ``self.figures``
        then holds the job's cycles (from ``CONTROL`` written to *trained* seen), ``CYCLES``, ``SORT_CYCLES`` and the nodes and bytes written back."""
        await self.configure(params, seed, n_trees)
        await self.arm_writer("trees", limit if limit is not None else n_trees * self.capacity.max_nodes)
        began, writes = self.cycle(), self.models[1].accepted_writes
        await self.write("CONTROL", 1)
        await self.wait_for("trained")
        ended = self.cycle()
        status = await self.flags("STATUS", STATUS_BITS)
        assert not status & {"busy", "bad_config", "tree_error"}, status
        written = await self.read("WRITE_COUNT")
        words = written * words_per_beat(self.layouts["trees"])
        assert self.writes_at_irq - writes == words, \
            f"trained raised with {self.writes_at_irq - writes} of the trees' {words} words written"
        self.figures = {"bus_cycles": ended - began, "training_cycles": await self.read("CYCLES"),
                        "sort_cycles": await self.read("SORT_CYCLES"), "nodes": written,
                        "trees_bytes": written * 4 * words_per_beat(self.layouts["trees"])}
        groups = {}
        for beat in self.get("trees", written):
            groups.setdefault(beat["tree"], []).append(beat["node"])
        return [tree_from_nodes(groups[index], self.capacity, params.n_classes, f"tree {index}")
                for index in range(n_trees)]

    async def predict(self, codes, labels):
        """Test rows from memory, predictions to memory; return (classes, votes, sums)."""
        n_rows, n_features = codes.shape
        beats = [{"code": int(codes[row, feature]), "label": int(labels[row]) if feature == n_features - 1 else 0,
                  "has_label": int(feature == n_features - 1), "last": int(feature == n_features - 1)}
                 for row in range(n_rows) for feature in range(n_features)]
        self.put("rows", beats)
        await self.arm_writer("predictions", n_rows)
        await self.write("CONTROL", 2)
        await self.write("READ_BASE", BASES["rows"])
        await self.write("READ_BEATS", len(beats))
        await self.write("READ_START", 3)
        await self.wait_for("write_done")
        await self.write("IRQ_STATUS", 1 << IRQ_CAUSES.index("read_done"))
        g = self.geometry
        got = self.get("predictions", n_rows)
        assert not any(p["error"] for p in got), "the inference engine flagged rows as errors"
        votes = np.array([[(p["votes"] >> (c * g.vote_bits)) & ((1 << g.vote_bits) - 1) for c in range(g.classes)]
                          for p in got], dtype=np.int64)
        sums = np.array([[(p["class_count_sums"] >> (c * g.sum_bits)) & ((1 << g.sum_bits) - 1)
                          for c in range(g.classes)] for p in got], dtype=np.int64)
        return np.array([p["predicted_class"] for p in got]), votes, sums


class TopTestbench:
    def __init__(self, dut):
        self.dut = dut
        self.settings = testbench_parameters()
        self.design = self.settings["design"]
        self.rng = random.Random(cocotb.RANDOM_SEED)
        self.host = TopHost(dut, self.design, self.rng,
                            waitrequest_probability=self.settings.get("waitrequest_probability", 0.3),
                            latency=(1, self.settings.get("max_latency", 8)))

    async def begin(self):
        """Clocks, reset, identity. A build with a separate core clock gets ``core_clk`` at
        ``core_period_ps`` (default 13,000: 77 MHz) beside ``clk`` at ``bus_period_ps``
        (default 10,000: 100 MHz); both resets are held together."""
        dut, separate = self.dut, self.design.get("separate_core_clock", False)
        self.host.bus_period_ps = self.settings.get("bus_period_ps", CLOCK_PERIOD_NS * 1000)
        Clock(dut.clk, self.host.bus_period_ps, unit="ps", impl=CLOCK_IMPL).start()
        resets = [dut.rst]
        if separate:
            Clock(dut.core_clk, self.settings.get("core_period_ps", 13_000), unit="ps", impl=CLOCK_IMPL).start()
            resets.append(dut.core_rst)
        self.host.start()
        for reset in resets:
            reset.value = 1
        await ClockCycles(dut.clk, 6 if separate else 2)
        for reset in resets:
            reset.value = 0
        await self.host.check_identity()

    def random_forest(self):
        return random_forest_case(self.rng, self.host.capacity, self.design["max_trees"])

    async def check_train_and_predict(self, codes, labels, params, seed, n_trees, label, *, load=True,
                                      test_rows=None):
        """Load (unless ``load`` is false: the dataset is in the banks), train and compare the
        trees, then predict ``test_rows`` rows of the dataset (all by default) and 5 random
        rows and compare votes, classes, class-count sums and the accuracy counter."""
        host = self.host
        if any(depth_overflow_expected(codes, labels, params, seed, tree, host.capacity.max_depth)
               for tree in range(n_trees)):
            params = dataclasses.replace(params, max_depth=host.capacity.max_depth)
        if load:
            await host.load_dataset(codes, labels)
        expected = train_forest(codes, labels, params, seed, n_trees)
        trees = await host.train(params, seed, n_trees)
        for index, (got, want) in enumerate(zip(trees, expected)):
            assert_trees_equal(got, want, f"{label} tree {index}")
        assert await host.read("TREES_DONE") == n_trees
        chosen = sorted(self.rng.sample(range(len(labels)), test_rows)) if test_rows else slice(None)
        test = np.vstack([codes[chosen], np.array([[self.rng.randint(0, (1 << host.capacity.code_bits) - 1)
                                                    for _ in range(codes.shape[1])] for _ in range(5)])])
        test_labels = np.concatenate([labels[chosen], [self.rng.randrange(params.n_classes) for _ in range(5)]])
        predicted, votes, sums = await host.predict(test, test_labels)
        want_votes = forest_votes(expected, test, params.n_classes)
        assert np.array_equal(votes[:, :params.n_classes], want_votes), f"{label}: votes differ"
        assert not votes[:, params.n_classes:].any(), f"{label}: votes for absent classes"
        assert np.array_equal(predicted, want_votes.argmax(axis=1)), f"{label}: predictions differ"
        assert np.array_equal(sums[:, :params.n_classes], forest_class_counts(expected, test, params.n_classes)), \
            f"{label}: class-count sums differ"
        correct = int(np.count_nonzero(want_votes.argmax(axis=1) == test_labels))
        assert await host.read("ROWS_CORRECT") == correct, f"{label}: on-chip accuracy counter"
        return expected

    async def check_dataset(self, name, seed=2026, n_trees=None):
        """A thesis dataset (``sw.data``, rank-quantised to the build's codes) loaded once through
        the read master, then a forest-mode forest (scikit-learn's defaults: unlimited depth,
        sqrt of the features per split) and a thesis-mode one trained, written back and
        predicted through Avalon only. Returns the figures of the three jobs."""
        host, capacity = self.host, self.host.capacity
        n_trees = n_trees or self.design["max_trees"]
        codes, labels, n_classes = quantised_dataset(name, capacity.code_bits)
        (n_rows, n_features), most = codes.shape, self.design["max_trees"]
        if n_rows > capacity.max_rows or n_features > capacity.feature_capacity or n_classes > capacity.classes \
                or n_trees > most:
            raise ValueError(f"{name} ({n_rows} rows, {n_features} features, {n_classes} classes, {n_trees} "
                             f"trees) does not fit the build ({capacity.max_rows} rows, {capacity.feature_capacity} "
                             f"features, {capacity.classes} classes, {most} trees)")
        reads, began = host.models[0].accepted_reads, host.cycle()
        await host.load_dataset(codes, labels)
        figures = [{"dataset": name, "job": "load", "rows": n_rows, "features": n_features,
                    "bus_cycles": host.cycle() - began, "bytes": 4 * (host.models[0].accepted_reads - reads)}]
        for mode, params in [
                ("forest", TrainingParameters(n_classes=n_classes, max_depth=None, max_samples=n_rows,
                                              features_per_split=max(1, int(n_features ** 0.5)))),
                ("thesis", TrainingParameters(n_classes=n_classes, max_depth=4, max_samples=16, thesis_mode=True))]:
            too_many = [tree for tree in range(n_trees)
                        if inbag_overflow_expected(n_rows, params, seed, tree, capacity.max_inbag_rows)]
            if too_many:
                raise ValueError(f"{name}: the bootstraps of trees {too_many} (seed {seed}) draw more distinct "
                                 f"rows than the build's lists hold ({capacity.max_inbag_rows})")
            await self.check_train_and_predict(codes, labels, params, seed, n_trees, f"{name} ({mode} mode)",
                                               load=False, test_rows=self.settings.get("test_rows"))
            figures.append({"dataset": name, "job": f"{mode} mode", "trees": n_trees, **host.figures})
        for record in figures:
            self.dut._log.info("figures: %s", record)
        return figures


@cocotb.test()
async def random_forests_through_avalon_match_model(dut):
    tb = TopTestbench(dut)
    await tb.begin()
    for case in range(tb.settings.get("random_forests", 3)):
        await tb.check_train_and_predict(*tb.random_forest(), f"forest {case}")
    reads, writes = tb.host.models
    assert reads.waitrequest_cycles and writes.waitrequest_cycles, "waitrequest never held"


@cocotb.test()
async def iris_through_avalon_matches_model(dut):
    tb = TopTestbench(dut)
    if not tb.settings.get("iris", True):
        return
    from sklearn.datasets import load_iris
    from sw.methods.forest.quantize import RankQuantizer
    await tb.begin()
    X, y = load_iris(return_X_y=True)
    codes = RankQuantizer(code_bits=tb.design["code_bits"]).fit_transform(X).astype(np.int64)
    params = TrainingParameters(n_classes=3, max_depth=None, max_samples=len(y), features_per_split=2)
    await tb.check_train_and_predict(codes, y.astype(np.int64), params, 2026, 3, "iris")


@cocotb.test()
async def forest_from_memory_predicts_as_model(dut):
    tb = TopTestbench(dut)
    await tb.begin()
    codes, labels, params, seed, _ = tb.random_forest()
    params = dataclasses.replace(params, max_depth=3)
    trees = train_forest(codes, labels, params, seed, 3)
    host, count_bits = tb.host, tb.host.capacity.count_bits
    beats = [{"tree": index, "node": node, "leaf": int(tree.left_child[node] < 0),
              "feature": max(0, int(tree.feature[node])), "threshold": max(0, int(tree.threshold_code[node])),
              "left_child": max(0, int(tree.left_child[node])), "majority_class": int(tree.majority_class[node]),
              "class_counts": sum(int(c) << (k * count_bits) for k, c in enumerate(tree.class_counts[node]))}
             for index, tree in enumerate(trees) for node in range(tree.n_nodes)]
    await host.read_job("trees_in", host.put("trees_in", beats))
    await host.write("N_TREES", 3)
    _, votes, _ = await host.predict(codes, labels)
    assert np.array_equal(votes[:, :params.n_classes], forest_votes(trees, codes, params.n_classes))


@cocotb.skipif(not testbench_parameters().get("datasets"), reason="no datasets in the settings")
@cocotb.test()
async def datasets_through_avalon_match_model(dut):
    """The thesis datasets of the settings (``datasets``), trained and predicted through
    Avalon only; the figures go to the file ``figures`` names (JSON), if any."""
    tb = TopTestbench(dut)
    await tb.begin()
    figures = []
    for name in tb.settings["datasets"]:
        figures += await tb.check_dataset(name)
    if tb.settings.get("figures"):
        with open(tb.settings["figures"], "w") as file:
            json.dump(figures, file, indent=1)


@cocotb.test()
async def errors_raise_the_interrupt_and_clear(dut):
    tb = TopTestbench(dut)
    await tb.begin()
    host = tb.host
    error = 1 << IRQ_CAUSES.index("error")
    codes = np.arange(30).reshape(10, 3) % 7
    labels = np.arange(10) % 2
    params = TrainingParameters(n_classes=2, max_depth=3, max_samples=10, features_per_split=2)
    await host.load_dataset(codes, labels)
    # A bad configuration: the flag, the interrupt; write 1 to clear drops it.
    await host.configure(params, 1, 0)
    await host.write("CONTROL", 1)
    await ClockCycles(dut.clk, 10)
    assert "bad_config" in await host.flags("STATUS", STATUS_BITS)
    assert int(dut.irq.value) and await host.read("IRQ_STATUS") & error
    await host.write("IRQ_STATUS", error)
    await ClockCycles(dut.clk, 2)
    assert not int(dut.irq.value) and not await host.read("IRQ_STATUS") & error
    # DMA refusals: an unaligned base, a bad target; masked, the cause is seen but irq stays low.
    await host.write("READ_BASE", BASES["dataset"] + 2)
    await host.write("READ_BEATS", 1)
    await host.write("READ_START", 1)
    await ClockCycles(dut.clk, 4)
    assert await host.flags("DMA_STATUS", DMA_STATUS_BITS) == {"read_unaligned"}
    assert int(dut.irq.value)
    await host.write("IRQ_STATUS", error)
    await host.write("IRQ_ENABLE", 0)
    await host.write("READ_BASE", BASES["dataset"])
    await host.write("READ_START", 7)
    await ClockCycles(dut.clk, 4)
    assert await host.flags("DMA_STATUS", DMA_STATUS_BITS) == {"read_bad_target"}
    assert await host.read("IRQ_STATUS") & error and not int(dut.irq.value)
    await host.write("IRQ_STATUS", (1 << len(IRQ_CAUSES)) - 1)
    await host.write("IRQ_ENABLE", (1 << len(IRQ_CAUSES)) - 1)
    # More trees than the buffer holds: the overflow is flagged, never silent.
    try:
        await host.train(params, 3, 2, limit=2)
    except AcceleratorError as failure:
        assert "write_overflow" in str(failure), failure
    else:
        raise AssertionError("a trees buffer overflow raised no error")
    while "busy" in await host.flags("STATUS", STATUS_BITS):
        await ClockCycles(dut.clk, 100)
    assert await host.read("WRITE_COUNT") == 2
    assert "write_overflow" in await host.flags("DMA_STATUS", DMA_STATUS_BITS)
    await host.write("IRQ_STATUS", (1 << len(IRQ_CAUSES)) - 1)
    # And a good forest afterwards.
    await tb.check_train_and_predict(codes, labels, params, 3, 2, "after errors")


def _forest_top_build(parser, option, name):
    """(design, complete parameters) of a forest_top build named on the command line."""
    from hw.designs import BUILDS, DESIGNS
    design, parameters = BUILDS.get(name, (name, None))
    if design != "forest_top":
        parser.error(f"{option} {name} is not a build of forest_top "
                     f"(known: forest_top, {', '.join(k for k, v in BUILDS.items() if v[0] == 'forest_top')})")
    return design, {**DESIGNS[design][1], **(parameters or {})}


def main(argv=None):
    """``make avalon``: random forests and iris on one build of the catalogue, then the thesis
    datasets sonar and ctg on another, with their figures."""
    import argparse
    from sim.runner import BUILD_ROOT, simulate
    from sw.data.datasets import available
    parser = argparse.ArgumentParser(description="forest_top through Avalon-MM only, against the golden model")
    parser.add_argument("--build", default="forest_top_small",
                        help="forest_top or a BUILDS entry of it, for the random forests and iris "
                             "(default: %(default)s)")
    parser.add_argument("--forests", type=int, default=20, help="random forests (default: %(default)s)")
    parser.add_argument("--datasets", nargs="*", default=["sonar", "ctg"], metavar="NAME",
                        help="thesis datasets trained on --datasets-build (default: %(default)s; "
                             "none: give the option alone)")
    parser.add_argument("--datasets-build", default="forest_top_datasets",
                        help="the build that holds them (default: %(default)s)")
    parser.add_argument("--cdc-build", default="forest_top_small_cdc",
                        help="a build with a separate core clock, for the random forests and iris at "
                             "each pair of CLOCK_PAIRS (default: %(default)s; none: give 'none')")
    parser.add_argument("--seed", type=int, help="cocotb random seed, to reproduce a run")
    arguments = parser.parse_args(argv)
    design, parameters = _forest_top_build(parser, "--build", arguments.build)
    if arguments.forests < 1:
        parser.error(f"--forests {arguments.forests}: at least 1")
    missing = [name for name in arguments.datasets if not available(name)]
    if missing:
        parser.error(f"--datasets: {', '.join(missing)} not found; set HWFOREST_DATA_DIR to a folder holding "
                     f"them (docs/running.md)")
    tests, _ = simulate(design, "sim.tb_top", parameters=parameters,
                        testbench={"random_forests": arguments.forests, "iris": True}, seed=arguments.seed)
    print(f"forest_top ({arguments.build}): {tests - 1} cocotb tests passed (the datasets' one skipped), "
          f"{arguments.forests} random forests and iris bit-identical to the golden model through Avalon-MM")
    if arguments.cdc_build != "none":
        design, parameters = _forest_top_build(parser, "--cdc-build", arguments.cdc_build)
        if not parameters.get("separate_core_clock"):
            parser.error(f"--cdc-build {arguments.cdc_build} has no separate core clock")
        for bus, core in CLOCK_PAIRS:
            simulate(design, "sim.tb_top", parameters=parameters, seed=arguments.seed,
                     testbench={"random_forests": arguments.forests, "iris": True, "bus_period_ps": bus,
                                "core_period_ps": core})
            print(f"forest_top ({arguments.cdc_build}, bus clock {1e6 / bus:.0f} MHz, core clock "
                  f"{1e6 / core:.0f} MHz): {arguments.forests} random forests and iris bit-identical "
                  f"to the golden model through Avalon-MM")
    if arguments.datasets:
        design, parameters = _forest_top_build(parser, "--datasets-build", arguments.datasets_build)
        figures = BUILD_ROOT / "avalon_datasets.json"
        simulate(design, "sim.tb_top", parameters=parameters, testcase="datasets_through_avalon_match_model",
                 testbench={"datasets": arguments.datasets, "figures": str(figures)}, seed=arguments.seed)
        print(f"forest_top ({arguments.datasets_build}): {', '.join(arguments.datasets)} bit-identical to "
              f"the golden model through Avalon-MM, predictions equal")
        for record in json.loads(figures.read_text()):
            print("  " + ", ".join(f"{key} {value}" for key, value in record.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
