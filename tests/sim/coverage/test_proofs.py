"""The unreachability proofs: a bin leaves the list only when SymbiYosys proves it cannot be
hit; a stream that can stall, or a transition that is taken, keeps its bin."""

import json

from sim.coverage import proofs
from sim.coverage.fsm import state_machines
from sim.coverage.proofs import PROOFS, NoTransition, ReadyAlwaysHigh, proved, run_proofs

_GINI = {"classes": 2, "count_bits": 5, "code_bits": 4, "row_bits": 3}


def test_every_proof_names_a_bin_of_its_design():
    for proof in PROOFS:
        if isinstance(proof, NoTransition):
            machines = [m for m in state_machines(proof.design, proof.parameters)
                        if m.owner == proof.design and m.group == proof.group]
            assert len(machines) == 1, proof
            assert proof.key[3] in machines[0].transition_names, proof.key
        else:
            assert proof.key[2] == f"{proof.stream} (source)"


def test_a_stream_that_can_stall_keeps_its_bin_and_one_that_cannot_loses_it(tmp_path):
    # hw/gini.py holds segments.ready low while it scans; hw/inference.py takes every node.
    cases = [ReadyAlwaysHigh("gini_scanner", "segments", _GINI),
             ReadyAlwaysHigh("inference_engine", "nodes", proofs._SMALL_INFERENCE)]
    records = run_proofs(cases, tmp_path)
    assert [r["status"] for r in records] == ["fail", "pass"]
    assert list(proved(records)) == [("inference_engine", "stream", "nodes (source)", "stall_cycles")]
    # Cached under the digest of hw/ and of the proof: the second run proves nothing again.
    again = run_proofs(cases[1:], tmp_path)
    assert again[0]["cached"] and again[0]["status"] == "pass"
    assert len(list(tmp_path.glob("*.json"))) == 2


def test_a_transition_the_scanner_takes_is_not_proved_unreachable(tmp_path):
    # hw/gini.py: a segment header moves the scanner from its first state on.
    states = state_machines("gini_scanner", _GINI)[0].states
    taken = NoTransition("gini_scanner", "fsm_state", states[0], "Scan entries", _GINI, depth=3)
    [record] = run_proofs([taken], tmp_path)
    assert record["status"] in ("fail", "open") and not proved([record])
    assert json.loads(next(tmp_path.glob("*.json")).read_text())["status"] == record["status"]


def test_a_pe_guard_is_proved_unreachable(tmp_path):
    [record] = run_proofs([PROOFS[0]], tmp_path)
    assert record["status"] == "pass", record
    assert record["bin"] == "Read a node -> End of the level"
