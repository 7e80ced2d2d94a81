"""The designs' invariants: the state helper, and the invariants of the PE, the trainer
and the system found and asserted (the catalogue's proofs themselves: ``make formal``,
and the few fast ones in ``test_catalogue.py``)."""

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from hw.formal import FormalHarness, prove
from hw.formal.catalogue import FORMAL, harness
from hw.formal.invariants import in_states, pe_invariants, trainer_invariants


class Cycle(wiring.Component):
    """An FSM that goes A -> B -> C -> A on ``go``."""

    def __init__(self):
        super().__init__({"go": In(1)})

    def elaborate(self, platform):
        m = Module()
        with m.FSM(init="A"):
            for state, following in (("A", "B"), ("B", "C"), ("C", "A")):
                with m.State(state):
                    with m.If(self.go):
                        m.next = following
        return m


def _fsm_state(component):
    from amaranth.hdl import Fragment

    from hw.formal.harness import Internals
    return Internals(component, Fragment.get(component, None))[".fsm_state"]


def test_in_states_names_the_states_and_refuses_unknown_names():
    state = _fsm_state(Cycle())
    with pytest.raises(KeyError, match=r"no state \['D'\]"):
        in_states(state, "A", "D")


@pytest.mark.parametrize("names, status", [(("A", "B", "C"), "pass"), (("A", "B"), "fail")])
def test_in_states_is_what_the_solver_sees(tmp_path, names, status):
    # Every reachable state is one of A, B, C; C is reachable, so "A or B" fails.
    component = Cycle()
    invariants = {"named": lambda s: in_states(s[".fsm_state"], *names)}
    outcome = prove(FormalHarness(component, ("invariant",), invariants=invariants),
                    tmp_path / "proof", mode="prove", depth=4)
    assert outcome.status == status, outcome.log[-2000:]


def test_the_big_designs_assert_their_blocks_invariants():
    # The trainer and the system carry the PE's invariants (at its path) and the trainer's;
    # the PE's fill counters only where its list server is assumed (the PE alone).
    for design, prefix in (("forest_trainer", "pe0"), ("forest_system", "trainer.pe0")):
        names = set(FORMAL[design].invariants)
        assert set(pe_invariants(prefix, servers=False)) <= names
        assert not any("lists received" in name for name in names)
        trainer = "" if design == "forest_trainer" else "trainer"
        assert set(trainer_invariants(trainer)) <= names
    assert any("lists received" in name for name in FORMAL["processing_element"].invariants)
    # No assumption stands for a design fix: the trainer and the system assume nothing, the
    # PE only that its list and code servers answer its requests.
    assert FORMAL["forest_trainer"].assumptions == {} and FORMAL["forest_system"].assumptions == {}
    assert sorted(FORMAL["processing_element"].assumptions) == ["codes only for asked look-ups",
                                                               "presorted words only for requested lists"]


@pytest.mark.parametrize("design", ["processing_element", "forest_trainer", "forest_system"])
def test_every_invariant_and_assumption_is_built(design):
    planned = harness(design).plan()
    invariants = [subject for kind, subject in planned if kind == "invariant"]
    assert invariants == list(FORMAL[design].invariants)
