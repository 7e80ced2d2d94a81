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
