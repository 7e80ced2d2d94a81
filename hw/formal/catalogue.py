"""What is proved about each design: the small parameters its proofs are built with, the
inputs that abort its streams, its assumptions and invariants, the proof method and
depth, the streams whose first transfer is covered, and whether the proof belongs to the
quick subset (the test suite's).

The designs and their default parameters are :data:`hw.designs.DESIGNS`; the parameters
here override them with the smallest legal values, so that a solver can finish. What
each proof means and the measured times: ``docs/formal.md``.
"""

from dataclasses import dataclass, field

from hw.designs import DESIGNS, component
from hw.formal.harness import CHECKS, KINDS, FormalHarness
from hw.formal.invariants import (bootstrap_invariants, histogram_pe_invariants, histogram_system_invariants,
                                  partition_invariants, pe_invariants, sorter_invariants, trainer_invariants)
from hw.formal.properties import stream_ports

__all__ = ["FormalBuild", "FORMAL", "Job", "jobs", "harness"]

# The smallest PE the catalogue's PE-based designs are proved at: four rows, two
# features on one lane, two classes, depth 2.
_SMALL_PE = {"max_rows": 4, "max_samples": 4, "feature_capacity": 2, "feature_lanes": 1,
             "code_bits": 2, "classes": 2, "max_depth": 2, "sparse_rows": 0}
# The trainer (and the system's) at that PE: one PE, two trees.
_PE_COUNT = 1
_SMALL_TRAINER = {**_SMALL_PE, "pe_count": _PE_COUNT, "max_trees": 2, "radix_bits": 1}


@dataclass(frozen=True)
class FormalBuild:
    """How one design is proved.

    ``parameters``: over the design's defaults. ``aborts``: 1-bit inputs that abandon the
    output streams' transfers; ``stops``: 1-bit error flags whose rise abandons them.
    ``invariants`` and ``assumptions`` (each justified in ``docs/formal.md``): name ->
    function of the harness's :class:`hw.formal.harness.Internals`. ``mode`` and
    ``depth``: ``"prove"`` (k-induction, ``k = depth``) or ``"bmc"``; ``methods``: (kind,
    subject) -> (mode, depth) for the properties proved otherwise. ``covers``: output
    stream -> depth of a ``cover`` job (a transfer on that stream is reachable within it).
    ``quick``: run in the test suite.
    """
    parameters: dict
    aborts: tuple = ()
    stops: tuple = ()
    assumptions: dict = field(default_factory=dict)
    methods: dict = field(default_factory=dict)
    invariants: dict = field(default_factory=dict)
    covers: dict = field(default_factory=dict)
    mode: str = "prove"
    depth: int = 10
    quick: bool = False
    timeout: int = 600

    def method(self, kind, subject):
        """(mode, depth) of one property."""
        if kind == "cover":
            return "cover", self.covers[subject]
        return self.methods.get((kind, subject), (self.mode, self.depth))


#: The PE's list server answers requests: a presorted word is offered only while a
#: requested list has not been received in full (the trainer's list servers send a slot's
#: words after its request, ``hw/trainer.py``).
_LISTS_ANSWER_REQUESTS = {
    "presorted words only for requested lists":
        lambda s: ~s.component.presorted.valid | (s["lists_received"] < s["lists_requested"])}


#: The PE's code server answers look-ups: a code is offered only while a look-up of the
#: sparse fill has not been answered (the trainer's code servers answer each request
#: once, in order, ``hw/trainer.py``).
_CODES_ANSWER_LOOKUPS = {
    "codes only for asked look-ups":
        lambda s: ~s.component.codes.valid | (s["sparse._answered"] < s["sparse.looked_up"])}


#: Design name -> how it is proved.
FORMAL = {
    "tree_random": FormalBuild({"bound_bits": 2, "tree_index_bits": 1}, aborts=("start",),
                               quick=True),
    "rewind_random": FormalBuild({"bound_bits": 2, "tree_index_bits": 1}, aborts=("start",),
                                 quick=True),
    "bootstrap_unit": FormalBuild({"max_rows": 4, "classes": 2, "count_bits": 3},
                                  invariants=bootstrap_invariants(), quick=True),
    "radix_sorter": FormalBuild({"max_rows": 4, "code_bits": 2, "radix_bits": 1},
                                invariants=sorter_invariants(), quick=True),
    "inbag_builder": FormalBuild({"max_rows": 4, "max_samples": 4, "code_bits": 2,
                                  "tree_index_bits": 1, "lanes": 1}, aborts=("start",),
                                 quick=True),
    "gini_scanner": FormalBuild({"classes": 2, "count_bits": 3, "code_bits": 2, "row_bits": 2},
                                quick=True),
    "histogram_unit": FormalBuild({"classes": 2, "count_bits": 2, "code_bits": 2, "row_bits": 2},
                                  quick=True),
    "histogram_lane": FormalBuild({"classes": 2, "count_bits": 3, "code_bits": 2, "row_bits": 2},
                                  quick=True),
    "pass_combiner": FormalBuild({"lanes": 2, "pass_bits": 1, "classes": 2, "code_bits": 1,
                                  "count_bits": 2}, quick=True),
    "row_gather": FormalBuild({"max_rows": 4, "features": 2, "lanes": 2, "code_bits": 2, "classes": 2,
                               "weight_bits": 2}, quick=True),
    "pass_engine": FormalBuild({"max_rows": 4, "features": 2, "lanes": 2, "code_bits": 1, "classes": 2,
                                "count_bits": 2, "pass_bits": 1}, quick=True),
    "histogram_pe": FormalBuild({"max_rows": 4, "features": 2, "lanes": 2, "code_bits": 1, "classes": 2,
                                 "count_bits": 3, "pass_bits": 1, "max_nodes": 3, "max_depth": 1,
                                 "tree_index_bits": 1},
                                invariants={**histogram_pe_invariants(), **bootstrap_invariants("bootstrap")},
                                depth=4, quick=True),
    # The histogram PE behind its forest loop and register bank, at the PE's parameters.
    "histogram_system": FormalBuild({"max_rows": 4, "features": 2, "lanes": 2, "code_bits": 1, "classes": 2,
                                     "count_bits": 3, "pass_bits": 1, "max_nodes": 3, "max_depth": 1,
                                     "tree_index_bits": 1},
                                    invariants={**histogram_system_invariants(), **histogram_pe_invariants("pe"),
                                                **bootstrap_invariants("pe.bootstrap")},
                                    depth=4, quick=True),
    # The histogram system behind Avalon-MM: no stream ports (as forest_top); its
    # memories, named states and the system's invariants at their paths.
    "histogram_top": FormalBuild({"max_rows": 4, "features": 2, "lanes": 2, "code_bits": 1, "classes": 2,
                                  "count_bits": 3, "pass_bits": 1, "max_nodes": 3, "max_depth": 1,
                                  "tree_index_bits": 1, "read_fifo_depth": 2},
                                 invariants={**histogram_system_invariants("system"),
                                             **histogram_pe_invariants("system.pe"),
                                             **bootstrap_invariants("system.pe.bootstrap")},
                                 depth=4),
    "partition_unit": FormalBuild({"max_rows": 4, "max_samples": 4, "code_bits": 2,
                                   "address_bits": 3, "max_segment": 3},
                                  invariants=partition_invariants(), quick=True),
    "inference_engine": FormalBuild({
        "max_trees": 2, "max_nodes_per_tree": 3, "feature_capacity": 2, "code_bits": 2,
        "classes": 2, "count_bits": 2, "max_depth": 1, "traversal_stages": 1}),
    "processing_element": FormalBuild({**_SMALL_PE, "tree_index_bits": 1, "sparse_rows": 1},
                                      aborts=("start",), stops=("bad_input",), depth=3,
                                      invariants=pe_invariants(),
                                      assumptions={**_LISTS_ANSWER_REQUESTS,
                                                   **_CODES_ANSWER_LOOKUPS},
                                      covers={"list_requests": 5, "nodes": 20}),
    "forest_trainer": FormalBuild(_SMALL_TRAINER, aborts=("start",), depth=3,
                                  invariants={**pe_invariants("pe0", servers=False),
                                              **trainer_invariants("", _PE_COUNT)}),
    "forest_system": FormalBuild({**_SMALL_TRAINER, "traversal_stages": 1}, depth=3,
                                 invariants={**pe_invariants("trainer.pe0", servers=False),
                                             **trainer_invariants("trainer", _PE_COUNT)},
                                 covers={"predictions": 5}),
    # The system behind Avalon-MM: no stream ports (its Avalon-MM bus rules are not
    # stated here); its memories, named states and the system's invariants.
    "forest_top": FormalBuild({**_SMALL_TRAINER, "traversal_stages": 1, "read_fifo_depth": 2},
                              depth=3,
                              invariants={**pe_invariants("system.trainer.pe0", servers=False),
                                          **trainer_invariants("system.trainer", _PE_COUNT)}),
}


@dataclass(frozen=True)
class Job:
    """One row of the report: a design, a property kind and its subject."""
    design: str
    kind: str
    subject: str

    @property
    def label(self):
        return f"{self.design}: {self.kind} {self.subject}"


def harness(design, only=None, checks=CHECKS, build=None):
    """The formal harness of ``design`` (its catalogue build, or ``build``).

    ``only``: the (kind, subject) pairs to assert; the design's invariants and its named
    states are asserted with them whatever ``only`` says (they are the lemmas an induction
    step may need, and a proof passes only if they hold too)."""
    build = build or FORMAL[design]
    if only is not None and any(kind == "cover" for kind, _ in only):
        checks = KINDS
    if only is not None:
        planned = FormalHarness(component(design, build.parameters), checks,
                                aborts=build.aborts, stops=build.stops).plan()
        only = [*only, *(("invariant", name) for name in build.invariants),
                *(item for item in planned if item[0] == "state")]
    return FormalHarness(component(design, build.parameters), checks, aborts=build.aborts,
                         stops=build.stops, invariants=build.invariants,
                         assumptions=build.assumptions, only=only)


def jobs(design, build=None):
    """Every property of ``design``: the structural check of each output stream
    (kind ``combinational``), then the harness's properties."""
    build = build or FORMAL[design]
    if design not in DESIGNS:
        raise KeyError(f"unknown design {design!r}")
    planned = harness(design, build=build)
    outputs = [port.name for port in stream_ports(planned.component) if port.output]
    found = [Job(design, "combinational", name) for name in outputs]
    unknown = set(build.covers) - set(outputs)
    if unknown:
        raise KeyError(f"covers of {design} name no output stream: {sorted(unknown)}")
    return (found + [Job(design, kind, subject) for kind, subject in planned.plan()]
            + [Job(design, "cover", name) for name in outputs if name in build.covers])
