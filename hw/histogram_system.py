"""A forest trained on the histogram PE behind a register bank: what a host drives.

:class:`HistogramSystem` wraps one :class:`hw.histogram_pe.HistogramPE` (its dataset on
the chip) with the register bus of :mod:`hw.system` (``csr``: the same bus, the same
conventions, its own map :data:`HISTOGRAM_REGISTERS`, documented in ``docs/registers.md``)
and a forest loop: a start (``CONTROL`` bit 0) sends the PE one start per tree, tree
indices 0 .. ``N_TREES - 1`` of the forest ``SEED``, each tree drawing its own bootstrap
and features, and forwards every node record on ``trees`` tagged with its tree. A tree the
PE refuses (``bad_start``) or cannot hold (``overflow``) ends the training with that flag.

Streams: ``dataset`` (in): one row a beat (its index, every feature's code, its label;
with the codes in memory, ``code_store="memory"``, its index and label only: the codes
are read from the code store at ``CODE_BASE`` through the ``codes`` read master, in the
format of ``hw.code_reader.CodeStoreFormat``), taken while no training runs; ``trees`` (out): ``{tree, node}`` with ``node`` the PE's
record (``hw.histogram_pe.node_record_layout``). There is no inference engine: a forest
trained here is evaluated by the host (the golden model's inference, which the
``ForestSystem``'s engine equals).
"""

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hw.checks import bits, check_integer, refuse_construction
from hw.code_reader import CodeStoreFormat
from hw.histogram_pe import HistogramPE
from hw.system import csr_signature

__all__ = ["HistogramSystem", "HISTOGRAM_REGISTERS", "HISTOGRAM_STATUS_BITS", "HISTOGRAM_IDENTIFIER",
           "forest_record_layout"]

#: Read-only word at address 0: "HWRH" (the ``ForestSystem`` reads "HWRF").
HISTOGRAM_IDENTIFIER = 0x48575248

#: The bits of ``STATUS``.
HISTOGRAM_STATUS_BITS = ("busy", "done", "bad_config", "dataset_error", "start_while_busy",
                         "bad_start", "overflow", "value_too_wide")

#: The register map: name -> (address, access, width, meaning), as ``hw.system.REGISTERS``.
HISTOGRAM_REGISTERS = {
    "ID":                 (0x00, "R", 32, "identifier 0x48575248 ('HWRH')"),
    "LANES":              (0x01, "R", 8, "histogram lanes (features gathered a pass)"),
    "MAX_ROWS":           (0x02, "R", 21, "largest dataset (rows) the code store holds"),
    "FEATURE_CAPACITY":   (0x03, "R", 13, "largest number of features"),
    "CLASSES":            (0x04, "R", 8, "classes counted"),
    "MAX_TREES":          (0x05, "R", 32, "most trees per forest (2**tree_index_bits)"),
    "MAX_DEPTH":          (0x06, "R", 8, "deepest max_depth a tree may ask for"),
    "CODE_BITS":          (0x07, "R", 8, "width of a feature code"),
    "MAX_SAMPLES":        (0x08, "R", 24, "largest bootstrap (draws per tree): 2**count_bits - 1"),
    "MAX_NODES":          (0x09, "R", 17, "most nodes a tree may have"),
    "CODE_WORD_BITS":     (0x0A, "R", 11, "0: the codes are on the chip; else they are read from "
                                          "the code store in memory, in words this wide"),
    "SEED":               (0x10, "RW", 32, "forest seed"),
    "N_ROWS":             (0x11, "RW", 21, "rows of the loaded dataset"),
    "N_FEATURES":         (0x12, "RW", 13, "features of the loaded dataset"),
    "N_TREES":            (0x13, "RW", 32, "trees to train (1 to MAX_TREES)"),
    "N_SAMPLES":          (0x14, "RW", 24, "bootstrap draws per tree"),
    "FLAGS":              (0x15, "RW", 1, "bit 0 bootstrap"),
    "FEATURES_PER_SPLIT": (0x16, "RW", 13, "non-constant features searched per split"),
    "DEPTH_LIMIT":        (0x17, "RW", 8, "max_depth (1 to MAX_DEPTH)"),
    "MIN_SAMPLES_SPLIT":  (0x18, "RW", 22, "min_samples_split"),
    "CODE_BASE":          (0x19, "RW", 32, "byte address of the code store (codes in memory; "
                                           "a multiple of CODE_WORD_BITS / 8, the store below 2**32)"),
    "CONTROL":            (0x20, "W", 1, "bit 0: start training"),
    "STATUS":             (0x21, "R", len(HISTOGRAM_STATUS_BITS),
                           "bit 0 busy, 1 done, 2 bad_config (N_TREES 0 or above MAX_TREES, or "
                           "CODE_BASE not a multiple of a word or the store past 2**32), "
                           "3 dataset_error (a row index at or past MAX_ROWS), 4 start_while_busy, "
                           "5 bad_start (the PE refused a tree's parameters), 6 overflow (a tree "
                           "needed more than MAX_NODES nodes), 7 value_too_wide (a register holds "
                           "more bits than the hardware has: start refused)"),
    "CYCLES":             (0x22, "R", 32, "cycles of the last training"),
    "TREES_DONE":         (0x24, "R", 32, "trees whose last node has left on trees"),
}


def forest_record_layout(tree_bits, node_layout):
    """A node record of the ``trees`` stream: its tree and the PE's record."""
    return data.StructLayout({"tree": tree_bits, "node": node_layout})


class HistogramSystem(wiring.Component):
    """A histogram PE, its forest loop and its register bank (the module docstring).
    Parameters: as :class:`hw.histogram_pe.HistogramPE` (``tree_index_bits`` sets
    ``MAX_TREES`` = ``2**tree_index_bits``, at most 31 bits here)."""

    def __init__(self, *, tree_index_bits=16, **pe_parameters):
        try:
            check_integer("tree_index_bits", tree_index_bits, 1, 31)
            self.pe = HistogramPE(tree_index_bits=tree_index_bits, **pe_parameters)
        except (TypeError, ValueError):
            refuse_construction(self)
            raise
        pe = self.pe
        self.tree_index_bits = tree_index_bits
        self.max_trees = 1 << tree_index_bits
        memory_ports = ({"codes": pe.signature.members["codes"]} if pe.code_store == "memory" else {})
        super().__init__({
            **memory_ports,
            "csr": In(csr_signature()),
            "dataset": pe.signature.members["dataset"],
            "trees": Out(stream.Signature(forest_record_layout(tree_index_bits, pe.nodes.payload.shape()))),
            "status": Out(len(HISTOGRAM_STATUS_BITS)),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.pe = pe = self.pe
        busy, done, bad_config = Signal(name="busy"), Signal(name="done"), Signal(name="bad_config")
        dataset_error, start_while_busy = Signal(name="dataset_error"), Signal(name="start_while_busy")
        too_wide = Signal(name="too_wide")
        # The tree being grown, which is also the count of trees done (one bit wider than a
        # tree index: a forest of MAX_TREES trees ends at MAX_TREES).
        tree = Signal(self.tree_index_bits + 1, name="tree")
        cycles = Signal(32, name="cycles")
        status = Cat(busy, done, bad_config, dataset_error, start_while_busy, pe.bad_start, pe.overflow,
                     too_wide)
        m.d.comb += self.status.eq(status)
        values, start = self._registers(m, status, cycles, tree)
        # The forest's parameters as they were at the accepted start: a register written
        # while it trains changes nothing until the next start.
        n_trees = Signal(len(values["N_TREES"]))
        config = Signal.like(pe.start.payload, name="forest_config")
        asked = Signal.like(pe.start.payload, name="asked_config")

        # ------------------------------------------------------------ the start
        # A value wider than its field would be truncated into another value: refused.
        fields = {"N_ROWS": asked.n_rows, "N_FEATURES": asked.n_features, "N_SAMPLES": asked.max_samples,
                  "FEATURES_PER_SPLIT": asked.features_per_split, "DEPTH_LIMIT": asked.max_depth,
                  "MIN_SAMPLES_SPLIT": asked.min_samples_split}
        wide = Cat(values[name][len(field):] != 0 for name, field in fields.items()
                   if len(values[name]) > len(field)).any()
        with m.If(start & busy):
            m.d.sync += start_while_busy.eq(1)
        code_base = Signal(32, name="code_base_latched")
        bad_code_base = 0
        if pe.code_store == "memory":
            wiring.connect(m, pe.codes, wiring.flipped(self.codes))
            m.d.comb += pe.code_base.eq(code_base)
            # (a store that does not start on a word, or runs past the 32-bit address space)
            store = CodeStoreFormat(pe.max_rows, pe.features, pe.code_bits, pe.code_word_bits)
            bad_code_base = ((values["CODE_BASE"][:store.word_bytes.bit_length() - 1] != 0) |
                             (values["CODE_BASE"] > (1 << 32) - store.size_bytes))
        with m.If(start & ~busy):
            refused = (values["N_TREES"] == 0) | (values["N_TREES"] > self.max_trees) | bad_code_base
            m.d.sync += [too_wide.eq(wide), bad_config.eq(refused), start_while_busy.eq(0), done.eq(0)]
            with m.If(~wide & ~refused):
                m.d.sync += [busy.eq(1), tree.eq(0), cycles.eq(0), config.eq(asked),
                             n_trees.eq(values["N_TREES"]), code_base.eq(values["CODE_BASE"])]
        with m.If(busy):
            m.d.sync += cycles.eq(cycles + 1)
        m.d.comb += [asked.n_rows.eq(values["N_ROWS"]), asked.n_features.eq(values["N_FEATURES"]),
                     asked.max_samples.eq(values["N_SAMPLES"]), asked.bootstrap.eq(values["FLAGS"][0]),
                     asked.features_per_split.eq(values["FEATURES_PER_SPLIT"]),
                     asked.max_depth.eq(values["DEPTH_LIMIT"]),
                     asked.min_samples_split.eq(values["MIN_SAMPLES_SPLIT"]), asked.seed.eq(values["SEED"]),
                     pe.start.payload.eq(config), pe.start.payload.tree_index.eq(tree)]

        # ------------------------------------------------------------ the dataset
        # Taken while no training runs; a row index past the store raises dataset_error.
        m.d.comb += [pe.dataset.payload.eq(self.dataset.payload),
                     pe.dataset.valid.eq(self.dataset.valid & ~busy),
                     self.dataset.ready.eq(pe.dataset.ready & ~busy)]
        if pe.max_rows < 1 << len(self.dataset.payload.row):
            with m.If(self.dataset.valid & self.dataset.ready & (self.dataset.payload.row >= pe.max_rows)):
                m.d.sync += dataset_error.eq(1)
        with m.If(start & ~busy):
            m.d.sync += dataset_error.eq(0)

        # ------------------------------------------------------------ the forest loop
        record = pe.nodes.payload
        m.d.comb += [self.trees.payload.tree.eq(tree), self.trees.payload.node.eq(record)]
        with m.FSM(name="histogram_system"):
            with m.State("Idle"):
                with m.If(busy):
                    m.next = "Start the tree"
            with m.State("Start the tree"):
                m.d.comb += pe.start.valid.eq(1)
                with m.If(pe.start.ready):
                    m.next = "Check the start"
            with m.State("Check the start"):
                # (the PE sets bad_start the cycle after it takes a start)
                with m.If(pe.bad_start):
                    m.d.sync += busy.eq(0)
                    m.next = "Idle"
                with m.Else():
                    m.next = "Grow"
            with m.State("Grow"):
                m.d.comb += [self.trees.valid.eq(pe.nodes.valid), pe.nodes.ready.eq(self.trees.ready)]
                with m.If(pe.overflow):
                    m.d.sync += busy.eq(0)
                    m.next = "Idle"
                with m.Elif(pe.nodes.valid & self.trees.ready & record.last):
                    m.d.sync += tree.eq(tree + 1)
                    with m.If(tree + 1 == n_trees):
                        m.d.sync += [busy.eq(0), done.eq(1)]
                        m.next = "Idle"
                    with m.Else():
                        m.next = "Start the tree"
        return m

    def _registers(self, m, status, cycles, trees_done):
        """The register bank: the configuration registers (name -> signal) and the start
        strobe. Reads answer a cycle after the strobe, as ``ForestSystem``'s."""
        pe = self.pe
        constants = {"ID": HISTOGRAM_IDENTIFIER, "LANES": pe.lanes, "MAX_ROWS": pe.max_rows,
                     "FEATURE_CAPACITY": pe.features, "CLASSES": pe.classes, "MAX_TREES": self.max_trees,
                     "MAX_DEPTH": pe.max_depth, "CODE_BITS": pe.code_bits,
                     "MAX_SAMPLES": (1 << pe.count_bits) - 1, "MAX_NODES": pe.max_nodes,
                     "CODE_WORD_BITS": pe.code_word_bits if pe.code_store == "memory" else 0}
        values = {name: Signal(width, name=name.lower())
                  for name, (_, access, width, _) in HISTOGRAM_REGISTERS.items() if access == "RW"}
        readable = {**{name: Const(value, 32) for name, value in constants.items()}, **values,
                    "STATUS": status, "CYCLES": cycles, "TREES_DONE": trees_done}
        csr = self.csr
        with m.If(csr.read):
            with m.Switch(csr.address):
                for name, value in readable.items():
                    with m.Case(HISTOGRAM_REGISTERS[name][0]):
                        m.d.sync += csr.read_data.eq(value)
                with m.Default():
                    m.d.sync += csr.read_data.eq(0)
        start = Signal()
        with m.If(csr.write):
            with m.Switch(csr.address):
                for name, signal in values.items():
                    with m.Case(HISTOGRAM_REGISTERS[name][0]):
                        m.d.sync += signal.eq(csr.write_data)
                with m.Case(HISTOGRAM_REGISTERS["CONTROL"][0]):
                    m.d.comb += start.eq(csr.write_data[0])
        return values, start
