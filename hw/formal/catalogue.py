"""What is proved about each design: the small parameters its proofs are built with, the
inputs that abort its streams, its own invariants, the proof method and depth, and
whether the proof belongs to the quick subset (the test suite's).

The designs and their default parameters are :data:`hw.designs.DESIGNS`; the parameters
here override them with the smallest legal values, so that a solver can finish. What
each proof means and the measured times: ``docs/formal.md``.
"""

from dataclasses import dataclass, field

from hw.designs import DESIGNS, component
from hw.formal.harness import CHECKS, FormalHarness
from hw.formal.properties import stream_ports

__all__ = ["FormalBuild", "FORMAL", "Job", "jobs", "harness"]

# The smallest PE the catalogue's PE-based designs are proved at: four rows, two
# features on one lane, two classes, depth 2.
_SMALL_PE = {"max_rows": 4, "max_samples": 4, "feature_capacity": 2, "feature_lanes": 1,
             "code_bits": 2, "classes": 2, "max_depth": 2, "sparse_rows": 0}


@dataclass(frozen=True)
class FormalBuild:
    """How one design is proved.

    ``parameters``: over the design's defaults. ``aborts``: 1-bit inputs that abandon the
    output streams' transfers; ``stops``: 1-bit error flags whose rise abandons them.
    ``invariants`` and ``assumptions`` (each justified in ``docs/formal.md``): name ->
    function of the harness's :class:`hw.formal.harness.Internals`. ``mode`` and ``depth``: ``"prove"``
    (k-induction, ``k = depth``) or ``"bmc"``; ``methods``: (kind, subject) -> (mode,
    depth) for the properties proved otherwise. ``quick``: run in the test suite.
    """
    parameters: dict
    aborts: tuple = ()
    stops: tuple = ()
    assumptions: dict = field(default_factory=dict)
    methods: dict = field(default_factory=dict)
    invariants: dict = field(default_factory=dict)
    mode: str = "prove"
    depth: int = 10
    quick: bool = False
    timeout: int = 600

    def method(self, kind, subject):
        """(mode, depth) of one property."""
        return self.methods.get((kind, subject), (self.mode, self.depth))


def _sorter_invariants():
    return {"rows loaded never exceed max_rows":
            lambda s: s["row_count"] <= s.component.max_rows}


def _partition_invariants():
    depth = lambda s: s.component.max_segment
    return {
        "queue pointers below max_segment": lambda s: (s["head"] < depth(s)) & (s["tail"] < depth(s)),
        "queue count never exceeds max_segment": lambda s: s["queued"] <= depth(s),
        "previous segment's rows within the queue": lambda s: s["previous_left"] <= s["queued"],
    }


#: The PE's list server answers requests: a presorted word is offered only while a
#: requested list has not been received in full (the trainer's list servers send a slot's
#: words after its request, ``hw/trainer.py``).
_LISTS_ANSWER_REQUESTS = {
    "presorted words only for requested lists":
        lambda s: ~s.component.presorted.valid | (s["lists_received"] < s["lists_requested"])}


def _pe_invariants():
    return {"lists received <= lists requested <= lists needed":
            lambda s: (s["lists_received"] <= s["lists_requested"])
            & (s["lists_requested"] <= s["lists_needed"])}


#: Design name -> how it is proved.
FORMAL = {
    "tree_random": FormalBuild({"bound_bits": 2, "tree_index_bits": 1}, aborts=("start",),
                               quick=True),
    "radix_sorter": FormalBuild({"max_rows": 4, "code_bits": 2, "radix_bits": 1},
                                invariants=_sorter_invariants(), quick=True),
    "inbag_builder": FormalBuild({"max_rows": 4, "max_samples": 4, "code_bits": 2,
                                  "tree_index_bits": 1, "lanes": 1}, aborts=("start",),
                                 quick=True),
    "gini_scanner": FormalBuild({"classes": 2, "count_bits": 3, "code_bits": 2, "row_bits": 2},
                                quick=True),
    "partition_unit": FormalBuild({"max_rows": 4, "max_samples": 4, "code_bits": 2,
                                   "address_bits": 3, "max_segment": 3},
                                  invariants=_partition_invariants(), quick=True),
    "inference_engine": FormalBuild({
        "max_trees": 2, "max_nodes_per_tree": 3, "feature_capacity": 2, "code_bits": 2,
        "classes": 2, "count_bits": 2, "max_depth": 1, "traversal_stages": 1}),
    "processing_element": FormalBuild({**_SMALL_PE, "tree_index_bits": 1},
                                      aborts=("start",), stops=("bad_input",), depth=3,
                                      invariants=_pe_invariants(),
                                      assumptions=_LISTS_ANSWER_REQUESTS),
    "forest_trainer": FormalBuild({**_SMALL_PE, "pe_count": 1, "max_trees": 2, "radix_bits": 1},
                                  aborts=("start",), depth=3),
    "forest_system": FormalBuild({**_SMALL_PE, "pe_count": 1, "max_trees": 2, "radix_bits": 1,
                                  "traversal_stages": 1}, depth=3),
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

    ``only``: the (kind, subject) pairs to assert; the design's invariants are asserted
    with them whatever ``only`` says (they are the lemmas an induction step may need, and
    a proof passes only if they hold too)."""
    build = build or FORMAL[design]
    if only is not None:
        only = [*only, *(("invariant", name) for name in build.invariants)]
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
    return found + [Job(design, kind, subject) for kind, subject in planned.plan()]
