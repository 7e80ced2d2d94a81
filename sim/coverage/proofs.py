"""Bins proved unreachable: formal proofs (SymbiYosys through :mod:`hw.formal`) that a bin
cannot be hit, so that it is no bin of the list.

A bin leaves the list only with a proof the tool runs, never with an argument in prose:

* an FSM transition ``A -> B`` (:class:`NoTransition`): the harness asserts that the state
  signal never holds ``B`` in the cycle after it held ``A``, under any inputs (the input
  streams obeying the stream rules), proved by k-induction;
* the stall bin of an input stream (:class:`ReadyAlwaysHigh`): the harness asserts that the
  design holds the stream's ready high in every cycle, so it can never hold data off.

Each proof is run on a small build of its design (the property does not depend on the
sizes), and its outcome is cached under the digest of the gateware's sources (``hw/``),
of this module and of the proof itself: ``make coverage`` re-runs a proof when one changes. A proof
that does not close leaves its bin on the list (hit, or missed).
"""

import dataclasses
import hashlib
import json
from pathlib import Path

from amaranth.hdl import Cat, Elaboratable, Module, Signal
from amaranth.hdl._ast import AnySeq

from hw.designs import component
from hw.formal import FormalHarness, prove
from hw.formal.invariants import pe_invariants
from sim.coverage.fsm import machines_of
from sim.runner import BUILD_ROOT, PROJECT_ROOT

__all__ = ["NoTransition", "ReadyAlwaysHigh", "PROOFS", "hw_digest", "run_proofs", "proved"]

# The PE the transitions are proved on: four rows, two features on one lane, two classes,
# depth 2, a sparse fill of four rows (so that the prologue is built with its look-ups).
_SMALL_PE = {"max_rows": 4, "max_samples": 4, "feature_capacity": 2, "feature_lanes": 1,
             "code_bits": 2, "classes": 2, "max_depth": 2, "sparse_rows": 4}
_SMALL_INFERENCE = {"max_trees": 2, "max_nodes_per_tree": 3, "feature_capacity": 2, "code_bits": 2,
                    "classes": 2, "count_bits": 2, "max_depth": 1, "traversal_stages": 1,
                    "class_count_sums": True}


class _Watched(Elaboratable):
    """``harness`` with the last cycle's value of one internal signal: a free value
    ``probe`` is assumed equal to the signal, and a reset-less register keeps it."""

    def __init__(self, make_harness, width):
        self.probe = Signal(width, name="probe")
        self.past = Signal(width, name="past_probe", reset_less=True)
        self.harness = make_harness(self)

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.probe.eq(AnySeq(len(self.probe)))
        m.d.sync += self.past.eq(self.probe)
        m.submodules.harness = self.harness
        return m


@dataclasses.dataclass(frozen=True)
class NoTransition:
    """The FSM ``group`` of ``design`` (as :mod:`sim.coverage.fsm` names it) never goes
    from ``source`` to ``target``."""
    design: str
    group: str
    source: str
    target: str
    parameters: dict
    depth: int = 4
    lemmas: tuple = ()      # names of LEMMAS, asserted (so proved) with it
    pe_invariants: bool = False     # the PE's invariants of hw.formal (asserted) with it

    @property
    def key(self):
        return (self.design, "fsm transition", self.group, f"{self.source} -> {self.target}")

    def statement(self):
        return f"{self.group} of {self.design} never goes from {self.source!r} to {self.target!r}"

    def harness(self):
        dut = component(self.design, self.parameters)
        machine = next(m for m in machines_of(component(self.design, self.parameters))
                       if m.owner == self.design and m.group == self.group)
        encoding = {name: value for value, name in machine.states.items()}
        source, target = encoding[self.source], encoding[self.target]
        name = ".".join(machine.path) + "." + machine.signal if machine.path else "." + machine.signal
        width = max(1, (max(machine.states)).bit_length())

        def make(watched):
            return FormalHarness(
                dut, checks=("state", "invariant"),
                assumptions={"probe": lambda s: watched.probe == s[name]},
                invariants={self.statement(): lambda s: ~((watched.past == source) & (s[name] == target)),
                            **{lemma: (lambda s, lemma=lemma: LEMMAS[lemma](s, s[name], encoding))
                               for lemma in self.lemmas},
                            **(pe_invariants(servers=False) if self.pe_invariants else {})})
        return _Watched(make, width)


@dataclasses.dataclass(frozen=True)
class ReadyAlwaysHigh:
    """``design`` holds the ready of its input stream ``stream`` high in every cycle."""
    design: str
    stream: str
    parameters: dict
    depth: int = 2

    @property
    def key(self):
        return (self.design, "stream", f"{self.stream} (source)", "stall_cycles")

    def statement(self):
        return f"{self.design} holds {self.stream}.ready high in every cycle"

    def harness(self):
        dut = component(self.design, self.parameters)
        return FormalHarness(dut, checks=("invariant",),
                             invariants={self.statement(): lambda s: getattr(s.component, self.stream).ready})


_PARTITION = ("End of the level", "Read a partition job", "Load the partition job", "Go left",
              "Wait for the go-left bits", "Partition the lists", "Wait for the partition")


def _in(state, encoding, names):
    return Cat(state == encoding[name] for name in names).any()


#: Invariants that make a proof inductive (each is asserted, so proved, with it): name ->
#: function of the harness's ``Internals``, the FSM's state signal and its encodings.
LEMMAS = {
    "a level with partition jobs has made children (level_end <= next_node, and "
    "next_node != level_end when jobs_queued > 0)":
        lambda s, state, encoding: (s[".level_end"] <= s[".next_node"])
        & ((s[".jobs_queued"] == 0) | (s[".next_node"] != s[".level_end"])),
    "the partition states past 'End of the level' run only with partition jobs queued":
        lambda s, state, encoding: ~_in(state, encoding, _PARTITION[1:]) | (s[".jobs_queued"] != 0),
    # (two signals of that name: the controller's register and the sparse fill's input it drives)
    "the sparse fill's start_prologue pulses only while its prologue is Idle":
        lambda s, state, encoding: ~s.all(".start_prologue")[0] | (state == encoding["Idle"]),
}

#: The proofs ``make coverage`` runs: each removes one bin from the list when it passes.
PROOFS = [
    # hw/pe/controller.py: "Read a node" is entered only from "Root written", the state after
    # "Write the root", which sets node 0 and level_end 1.
    NoTransition("processing_element", "fsm_state", "Read a node", "End of the level", _SMALL_PE),
    # A level with partition jobs has split a node: next_node moved past level_end.
    NoTransition("processing_element", "fsm_state", "Read a partition job", "Write the tree", _SMALL_PE,
                 lemmas=tuple(LEMMAS)[:2]),
    # hw/pe/sparse.py: a start wins over a pending start_prologue pulse (the abandoned
    # tree's), so the prologue begins only from Idle.
    *(NoTransition("processing_element", "sparse/prologue_state", source, "Draw the bootstrap", _SMALL_PE,
                   lemmas=tuple(LEMMAS)[2:3], pe_invariants=True)
      for source in ("Draw the tree's feature", "Look up the drawn rows", "Ready")),
    # hw/inference.py takes every node write.
    ReadyAlwaysHigh("inference_engine", "nodes", _SMALL_INFERENCE),
]


def hw_digest():
    """SHA-256 of every gateware source (``hw/**/*.py``), in path order."""
    digest = hashlib.sha256()
    for path in sorted((PROJECT_ROOT / "hw").rglob("*.py")):
        digest.update(str(path.relative_to(PROJECT_ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _proof_digest(proof, hw):
    text = json.dumps([hw, type(proof).__name__, dataclasses.asdict(proof),
                       hashlib.sha256(Path(__file__).read_bytes()).hexdigest()], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run_proofs(proofs=None, folder=None, timeout=900):
    """Run (or take from the cache in ``folder``) every proof; return one record per
    proof: its bin (block, kind, group, bin), statement, status, method and seconds."""
    from tqdm import tqdm
    proofs = PROOFS if proofs is None else proofs
    folder = Path(folder or BUILD_ROOT / "coverage" / "proofs")
    folder.mkdir(parents=True, exist_ok=True)
    hw = hw_digest()
    records = []
    for proof in tqdm(proofs, desc="unreachability proofs", unit="proof"):
        digest = _proof_digest(proof, hw)
        cached = folder / f"{digest}.json"
        if cached.exists():
            records.append({**json.loads(cached.read_text()), "cached": True})
            continue
        outcome = prove(proof.harness(), folder / digest, mode="prove", depth=proof.depth, timeout=timeout)
        record = dict(zip(("block", "kind", "group", "bin"), proof.key), statement=proof.statement(),
                      status=outcome.status, method=outcome.method, seconds=round(outcome.seconds, 1))
        if outcome.status in ("pass", "fail", "open"):     # settled for these sources
            cached.write_text(json.dumps(record))
        records.append({**record, "cached": False})
    return records


def proved(records):
    """(block, kind, group, bin) -> the record of each bin proved unreachable."""
    return {tuple(r[name] for name in ("block", "kind", "group", "bin")): r
            for r in records if r["status"] == "pass"}
