"""The quick subset of the formal proofs (``make formal`` runs them all): every property of
the small blocks is proved, and every design of the catalogue has its properties."""

import pytest

from hw.designs import DESIGNS, component
from hw.formal.catalogue import FORMAL, harness, jobs
from hw.formal.sby import prove, ready_to_valid_paths

QUICK = [design for design, build in FORMAL.items() if build.quick]


def test_every_design_with_streams_is_in_the_catalogue():
    assert set(FORMAL) == set(DESIGNS)


@pytest.mark.parametrize("design", QUICK)
def test_every_property_of_a_quick_design_is_proved(design, tmp_path):
    build = FORMAL[design]
    found = jobs(design)
    kinds = {job.kind for job in found}
    assert {"combinational", "valid", "payload"} <= kinds
    streams = [job.subject for job in found if job.kind == "combinational"]
    paths, _ = ready_to_valid_paths(component(design, build.parameters), tmp_path / "paths",
                                    streams, name=design)
    assert not any(paths.values()), paths
    for job in found:
        if job.kind == "combinational":
            continue
        mode, depth = build.method(job.kind, job.subject)
        outcome = prove(harness(design, only=[(job.kind, job.subject)]),
                        tmp_path / f"{job.kind}_{len(job.subject)}", mode=mode, depth=depth)
        assert outcome.status == "pass", f"{job.label}: {outcome.status}\n{outcome.log[-2000:]}"


def test_the_big_designs_have_their_output_streams_planned():
    outputs = {job.subject for job in jobs("processing_element") if job.kind == "valid"}
    assert outputs == {"nodes", "list_requests", "code_requests"}
    assert {job.subject for job in jobs("forest_system") if job.kind == "payload"} == {
        "trees", "predictions"}


@pytest.mark.parametrize("design, kind, stream", [
    ("processing_element", "valid", "list_requests"),
    ("forest_trainer", "payload", "nodes"),
    ("forest_system", "valid", "trees"),
])
def test_the_big_designs_streams_are_proved_by_induction(design, kind, stream, tmp_path):
    # These were only bounded (depth 3, nothing moves) before their invariants were found.
    build = FORMAL[design]
    assert build.method(kind, stream)[0] == "prove"
    outcome = prove(harness(design, only=[(kind, stream)]), tmp_path / "proof",
                    mode="prove", depth=build.depth)
    assert outcome.status == "pass", outcome.log[-2000:]


def test_a_list_request_of_the_pe_is_reachable(tmp_path):
    # The cover that shows the PE's list_requests proof is not vacuous.
    mode, depth = FORMAL["processing_element"].method("cover", "list_requests")
    outcome = prove(harness("processing_element", only=[("cover", "list_requests")]),
                    tmp_path / "cover", mode=mode, depth=depth)
    assert outcome.status == "pass" and outcome.reached <= depth, outcome.log[-2000:]
