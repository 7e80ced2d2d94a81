"""FSM state names and transitions read from elaborated designs."""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from sim.coverage.fsm import machines_of, state_machines


class _Child(wiring.Component):
    go: In(1)
    busy: Out(1)

    def elaborate(self, platform):
        m = Module()
        with m.FSM(name="control"):
            with m.State("Idle"):
                with m.If(self.go):
                    m.next = "Work"
            with m.State("Work"):
                m.d.comb += self.busy.eq(1)
                with m.If(~self.go):
                    m.next = "Finish"
                with m.Elif(self.go & self.busy):
                    m.next = "Idle"
            with m.State("Finish"):
                with m.If(self.go):
                    m.next = "Finish"                   # staying: no transition
                with m.Else():
                    m.next = "Idle"
        return m


class _Parent(wiring.Component):
    go: In(1)
    busy: Out(1)

    def elaborate(self, platform):
        m = Module()
        m.submodules.child = child = _Child()
        flag = Signal()
        m.d.comb += [child.go.eq(self.go), self.busy.eq(child.busy | flag)]
        with m.FSM():
            with m.State("A"):
                m.d.sync += flag.eq(1)
                m.next = "B"
            with m.State("B"):
                pass
        return m


def test_states_transitions_and_paths_of_nested_fsms():
    machines = {machine.label: machine for machine in machines_of(_Parent())}
    assert set(machines) == {"fsm_state", "child/control_state"}
    child = machines["child/control_state"]
    assert child.path == ("child",) and child.signal == "control_state"
    assert child.states == {0: "Idle", 1: "Work", 2: "Finish"}
    assert sorted(child.transition_names) == sorted(["Idle -> Work", "Work -> Finish", "Work -> Idle",
                                                     "Finish -> Idle"])
    top = machines["fsm_state"]
    assert top.states == {0: "A", 1: "B"} and top.transition_names == ["A -> B"]


def test_catalogue_designs_have_their_fsms_found():
    labels = [machine.label for machine in state_machines("processing_element")]
    # hw/designs.py: the default PE has four lanes, each with a scanner.
    for lane in range(4):
        assert f"lane{lane}/scanner/fsm_state" in labels
    gini = state_machines("gini_scanner")
    assert len(gini) == 1 and gini[0].states[0] == "Wait for a segment"    # hw/gini.py's first state


def test_fsm_bins_belong_to_the_module_that_holds_them():
    parameters = {"pe_count": 2, "max_trees": 8, "radix_bits": 4, "max_rows": 16, "max_samples": 16,
                  "feature_capacity": 2, "feature_lanes": 2, "code_bits": 4, "classes": 2, "max_depth": 3}
    owned = {(m.label, m.owner, m.group) for m in state_machines("forest_trainer", parameters)}
    # hw/trainer.py: two PEs (each with two lanes and their scanners) and two sorters.
    assert ("fsm_state", "forest_trainer", "fsm_state") in owned
    assert ("pe1/fsm_state", "processing_element", "fsm_state") in owned
    assert ("pe0/lane1/fsm_state", "processing_element", "laneN/fsm_state") in owned
    assert ("pe1/lane0/scanner/fsm_state", "gini_scanner", "fsm_state") in owned
    assert ("sorter1/fsm_state", "radix_sorter", "fsm_state") in owned
    assert {group for label, owner, group in owned if owner == "processing_element"} == \
        {"fsm_state", "laneN/fsm_state", "sparse/prologue_state"}
    outside = {m.label: (m.owner, m.group) for m in machines_of(_Parent())}
    assert outside["child/control_state"] == ("_Parent", "child/control_state")
