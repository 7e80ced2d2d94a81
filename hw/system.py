"""The whole accelerator: forest trainer, inference engine, register bank and host streams.

Host interface (documented in ``docs/registers.md``):

* a **register bank** of 32-bit words on a small synchronous bus (``csr``: address,
  write strobe and data, read strobe; read data one cycle after the strobe). amaranth-soc
  has no release on PyPI that works with Amaranth 0.5, so the bank is written out here;
  the bus maps one to one onto an Avalon-MM slave (address, write, writedata, read,
  readdata with a read latency of 1) for Platform Designer;
* ``dataset`` (in): the training set, row by row, into the trainer's banks;
* ``trees`` (out): every trained node, tagged with its tree (while ``EXPORT_TREES`` is set;
  otherwise the trees only go to the inference engine);
* ``trees_in`` (in): nodes of a forest from the host, written into the inference engine's
  node memory (accepted while no training runs), for inference without retraining;
* ``rows`` (in) and ``predictions`` (out): test rows through the stored forest;
* ``status`` (out): the ``STATUS`` word, for a wrapper's interrupt logic (``hw.top``).
"""

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hw.checks import check_integer, refuse_construction
from hw.trainer import ForestTrainer, dataset_layout, forest_node_layout
from hw.inference import MAX_NODES_PER_TREE, InferenceEngine, InferenceGeometry

__all__ = ["ForestSystem", "REGISTERS", "STATUS_BITS", "csr_signature", "IDENTIFIER"]

#: Read-only word at address 0: "HWRF".
IDENTIFIER = 0x48575246

#: The bits of ``STATUS`` (also the ``status`` output, which ``hw.top.ForestTop`` watches).
STATUS_BITS = ("busy", "done", "bad_config", "dataset_error", "start_while_busy",
                         "tree_error", "inference_idle", "inference_bad_config", "bad_node",
                         "bad_row", "bad_feature", "depth_exceeded", "value_too_wide")

#: The register map: name -> (address, access, width, meaning). ``R`` registers are
#: read-only, ``RW`` configuration registers are read back as written, ``W`` is a strobe.
REGISTERS = {
    "ID":                (0x00, "R", 32, "identifier 0x48575246 ('HWRF')"),
    "PE_COUNT":          (0x01, "R", 8, "processing elements built"),
    "MAX_ROWS":          (0x02, "R", 21, "largest dataset (rows) the banks hold"),
    "FEATURE_CAPACITY":      (0x03, "R", 13, "largest number of features"),
    "CLASSES":           (0x04, "R", 8, "classes counted"),
    "MAX_TREES":         (0x05, "R", 17, "most trees per forest"),
    "MAX_DEPTH":         (0x06, "R", 8, "deepest node a tree may have"),
    "CODE_BITS":         (0x07, "R", 8, "width of a feature code"),
    "MAX_SAMPLES":       (0x08, "R", 21, "largest bootstrap (draws per tree)"),
    "SEED":              (0x10, "RW", 32, "forest seed"),
    "N_ROWS":            (0x11, "RW", 21, "rows of the loaded dataset"),
    "N_FEATURES":        (0x12, "RW", 13, "features (set before streaming the dataset)"),
    "N_TREES":           (0x13, "RW", 17, "trees to train / stored for inference"),
    "N_SAMPLES":         (0x14, "RW", 21, "bootstrap draws per tree"),
    "FLAGS":             (0x15, "RW", 4, "bit 0 bootstrap, 1 thesis mode (one feature per tree), "
                                         "2 depth limited, 3 export trees on the trees stream"),
    "FEATURES_PER_SPLIT": (0x16, "RW", 13, "non-constant features searched per split (resolved max_features)"),
    "DEPTH_LIMIT":       (0x17, "RW", 8, "max_depth (with FLAGS bit 2)"),
    "MIN_SAMPLES_SPLIT": (0x18, "RW", 22, "min_samples_split"),
    "MIN_SAMPLES_LEAF":  (0x19, "RW", 21, "min_samples_leaf"),
    "CONTROL":           (0x20, "W", 2, "bit 0: start training; bit 1: clear the inference "
                                        "flags and accuracy counters"),
    "STATUS":            (0x21, "R", 13, "bit 0 busy, 1 done, 2 bad_config, 3 dataset_error, "
                                         "4 start_while_busy, 5 tree_error, 6 inference idle, "
                                         "7 inference bad_config, 8 bad_node, 9 bad_row, "
                                         "10 bad_feature, 11 depth_exceeded, 12 value_too_wide "
                                         "(a configuration register holds more bits than the "
                                         "hardware has: start refused)"),
    "CYCLES":            (0x22, "R", 32, "cycles of the last training (presort included)"),
    "SORT_CYCLES":       (0x23, "R", 32, "cycles of its presort"),
    "TREES_DONE":        (0x24, "R", 17, "trees written by the last training"),
    "ROWS_SEEN":         (0x25, "R", 32, "predictions delivered"),
    "ROWS_LABELLED":     (0x26, "R", 32, "of those, rows with a label"),
    "ROWS_CORRECT":      (0x27, "R", 32, "of those, rows whose label was predicted"),
}


def csr_signature(address_bits=8):
    """The register bus: read data is valid the cycle after ``read``."""
    return wiring.Signature({
        "address": Out(address_bits), "write": Out(1), "write_data": Out(32),
        "read": Out(1), "read_data": In(32),
    })


class ForestSystem(wiring.Component):
    """Forest trainer + inference engine behind the register map (see the module docstring).

    Parameters
    ----------
    pe_count, max_trees, radix_bits : int
        As :class:`hw.trainer.ForestTrainer`.
    traversal_stages : int or None
        Inference pipeline stages (:class:`hw.inference.InferenceEngine`); default 1.
    **pe_parameters
        As :class:`hw.pe.ProcessingElement`.
    """

    def __init__(self, *, pe_count=2, max_trees=256, radix_bits=8, traversal_stages=1,
                 **pe_parameters):
        try:
            check_integer("traversal_stages", traversal_stages, 1, 256)
            self._trainer = ForestTrainer(pe_count=pe_count, max_trees=max_trees,
                                          radix_bits=radix_bits, **pe_parameters)
            pe = self._trainer._prototype
            # The inference engine stores every node of a tree: a tree of max_nodes nodes
            # (by default the smaller of 2 * max_inbag_rows - 1 and 2 ** (max_depth + 1) - 1)
            # must fit, else the error names the system's parameter, not the engine's.
            try:
                check_integer("max_nodes", pe.max_nodes, 1, MAX_NODES_PER_TREE)
            except ValueError as error:
                self._trainer._MustUse__silence = True
                raise ValueError(f"{error} (the nodes of one tree, by default the smaller of "
                                 f"2 * max_inbag_rows - 1 and 2 ** (max_depth + 1) - 1: "
                                 f"the inference engine stores at most {MAX_NODES_PER_TREE})") from None
            self._geometry = InferenceGeometry(
                max_trees=max_trees, max_nodes_per_tree=pe.max_nodes,
                feature_capacity=pe.feature_capacity, code_bits=pe.code_bits, classes=pe.classes,
                count_bits=pe.count_bits, max_depth=pe.max_depth,
                traversal_stages=min(traversal_stages, pe.max_depth + 1), class_count_sums=True)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        self.pe = pe
        self.pe_count = pe_count
        self.max_trees = max_trees
        trainer = self._trainer
        g = self._geometry
        super().__init__({
            "csr": In(csr_signature()),
            "dataset": In(stream.Signature(dataset_layout(pe.code_bits, pe.label_bits,
                                                          pe.feature_lanes))),
            "trees": Out(stream.Signature(forest_node_layout(trainer.tree_bits, pe.node_layout))),
            "trees_in": In(stream.Signature(g.node_layout)),
            "rows": In(stream.Signature(g.row_layout)),
            "predictions": Out(stream.Signature(g.prediction_layout)),
            "status": Out(len(STATUS_BITS)),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.trainer = trainer = self._trainer
        m.submodules.inference = inference = InferenceEngine(**self._geometry.parameters())
        pe = self.pe

        # ------------------------------------------------------------ registers
        values = {}
        constants = {"ID": IDENTIFIER, "PE_COUNT": self.pe_count, "MAX_ROWS": pe.max_rows,
                     "FEATURE_CAPACITY": pe.feature_capacity, "CLASSES": pe.classes,
                     "MAX_TREES": self.max_trees, "MAX_DEPTH": pe.max_depth,
                     "CODE_BITS": pe.code_bits, "MAX_SAMPLES": pe.max_samples}
        for name, (address, access, width, _) in REGISTERS.items():
            if access == "RW":
                values[name] = Signal(width, name=name.lower())
        flags = values["FLAGS"]
        start = Signal()
        clear = Signal()
        too_wide = Signal()         # sticky: the last start was refused for a too wide value
        status = Cat(trainer.busy, trainer.done, trainer.bad_config, trainer.dataset_error,
                     trainer.start_while_busy, trainer.tree_error, inference.idle,
                     inference.bad_config, inference.bad_node, inference.bad_row,
                     inference.bad_feature, inference.depth_exceeded, too_wide)
        m.d.comb += self.status.eq(status)
        readable = {**{name: Const(value, 32) for name, value in constants.items()}, **values,
                    "STATUS": status, "CYCLES": trainer.cycles, "SORT_CYCLES": trainer.sort_cycles,
                    "TREES_DONE": trainer.trees_done, "ROWS_SEEN": inference.rows_seen,
                    "ROWS_LABELLED": inference.rows_labelled, "ROWS_CORRECT": inference.rows_correct}
        with m.If(self.csr.read):
            with m.Switch(self.csr.address):
                for name, value in readable.items():
                    with m.Case(REGISTERS[name][0]):
                        m.d.sync += self.csr.read_data.eq(value)
                with m.Default():
                    m.d.sync += self.csr.read_data.eq(0)
        # A register value with bits beyond its port would be truncated into another,
        # possibly valid, value: such a start is refused instead (STATUS bit 12). Whether
        # a value is too wide is registered with it (from the written data), so a start's
        # refusal reads flags, not compares of the registers.
        ports = {"N_ROWS": trainer.n_rows, "N_FEATURES": trainer.n_features,
                 "N_TREES": trainer.n_trees, "N_SAMPLES": trainer.n_samples,
                 "FEATURES_PER_SPLIT": trainer.features_per_split, "DEPTH_LIMIT": trainer.depth_limit,
                 "MIN_SAMPLES_SPLIT": trainer.min_samples_split,
                 "MIN_SAMPLES_LEAF": trainer.min_samples_leaf}
        beyond = {name: Signal(name=f"{name.lower()}_too_wide") for name, port in ports.items()
                  if len(values[name]) > len(port)}
        with m.If(self.csr.write):
            with m.Switch(self.csr.address):
                for name, signal in values.items():
                    with m.Case(REGISTERS[name][0]):
                        m.d.sync += signal.eq(self.csr.write_data)
                        if name in beyond:
                            high = self.csr.write_data[len(ports[name]):len(signal)]
                            m.d.sync += beyond[name].eq(high != 0)
                with m.Case(REGISTERS["CONTROL"][0]):
                    m.d.comb += [start.eq(self.csr.write_data[0]), clear.eq(self.csr.write_data[1])]

        m.d.comb += [
            trainer.seed.eq(values["SEED"]), trainer.n_rows.eq(values["N_ROWS"]),
            trainer.n_features.eq(values["N_FEATURES"]), trainer.n_trees.eq(values["N_TREES"]),
            trainer.n_samples.eq(values["N_SAMPLES"]), trainer.bootstrap.eq(flags[0]),
            trainer.thesis_mode.eq(flags[1]), trainer.depth_limited.eq(flags[2]),
            trainer.features_per_split.eq(values["FEATURES_PER_SPLIT"]),
            trainer.depth_limit.eq(values["DEPTH_LIMIT"]),
            trainer.min_samples_split.eq(values["MIN_SAMPLES_SPLIT"]),
            trainer.min_samples_leaf.eq(values["MIN_SAMPLES_LEAF"]),
            inference.n_trees.eq(values["N_TREES"]), inference.clear.eq(clear),
        ]
        wide = Cat(*beyond.values()).any()
        with m.If(start & ~trainer.busy):
            m.d.sync += too_wide.eq(wide)
        m.d.comb += trainer.start.eq(start & ~(wide & ~trainer.busy))

        # ------------------------------------------------------------ streams
        wiring.connect(m, wiring.flipped(self.dataset), trainer.dataset)
        wiring.connect(m, wiring.flipped(self.rows), inference.rows)
        wiring.connect(m, inference.predictions, wiring.flipped(self.predictions))
        # Trained nodes go to the inference engine (always ready) and, when exported, to
        # the host; the host's own nodes are taken while no training runs.
        # FLAGS bit 3 as it was at the accepted start: a write while training does not
        # drop trees.valid under a stalled node.
        export = Signal()
        with m.If(start & ~trainer.busy):
            m.d.sync += export.eq(flags[3])
        node = trainer.nodes.p.node
        m.d.comb += [self.trees.p.eq(trainer.nodes.p),
                     self.trees.valid.eq(trainer.nodes.valid & export),
                     trainer.nodes.ready.eq(~export | self.trees.ready)]
        with m.If(trainer.busy):
            m.d.comb += [
                inference.nodes.valid.eq(trainer.nodes.valid & trainer.nodes.ready),
                inference.nodes.p.tree.eq(trainer.nodes.p.tree),
                inference.nodes.p.node.eq(node.index),
                inference.nodes.p.leaf.eq(node.leaf),
                inference.nodes.p.feature.eq(node.feature),
                inference.nodes.p.threshold.eq(node.threshold),
                inference.nodes.p.left_child.eq(node.left_child),
                inference.nodes.p.majority_class.eq(node.majority),
                inference.nodes.p.class_counts.eq(node.class_counts),
            ]
        with m.Else():
            m.d.comb += [inference.nodes.valid.eq(self.trees_in.valid),
                         inference.nodes.p.eq(self.trees_in.p),
                         self.trees_in.ready.eq(inference.nodes.ready)]
        return m
