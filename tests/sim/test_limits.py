"""The limit cases (sim/limits.py): every design at each parameter's maximum.

Every case elaborates here; the ``ci`` cases are simulated against the golden model here,
the others are marked long (``make test-long``; ``make limits`` runs them all).
"""

import pytest

from hw.designs import DESIGNS, component
from sim import limits
from sim.limits import CASES, LimitCase, parameter_names, resolve

#: Designs without limit cases, and why.
UNCOVERED = {"forest_top": "the system behind Avalon-MM: its system's limits are forest_system's",
             "histogram_top": "the histogram system behind Avalon-MM: its system's limits are histogram_system's"}


def _case_id(case):
    return case.name


def _marks(case):
    return [] if case.ci else [pytest.mark.long]


def test_every_parameter_of_every_design_is_at_its_maximum_in_a_case():
    covered = {(case.design, name) for case in CASES for name in case.maximise}
    missing = [(design, name) for design in DESIGNS if design not in UNCOVERED
               for name in parameter_names(design) if (design, name) not in covered]
    assert missing == []
    assert len({case.name for case in CASES}) == len(CASES)


def test_every_case_is_simulated_or_says_why_not():
    for case in CASES:
        assert bool(case.module) != bool(case.not_simulated), case.name
        assert not (case.ci and case.not_simulated), case.name


def test_maxima_are_the_checks_maxima():
    # The PE's depth limit, read from the message of its own refusal.
    case = LimitCase("depth", "processing_element", ("max_depth",))
    depth = resolve(case)["max_depth"]
    with pytest.raises(ValueError, match=rf"max_depth must be between 1 and {depth}, not {depth + 1}"):
        component("processing_element", {"max_depth": depth + 1})
    # A maximum that depends on another parameter: the partition queue on max_rows.
    case = LimitCase("segment", "partition_unit", ("max_segment",), {"max_rows": 40})
    assert resolve(case)["max_segment"] == 40


def test_a_maximum_the_checks_do_not_report_is_caught(monkeypatch):
    # A constructor that accepts more than its check reports (here: a radix_bits past the
    # check's maximum is silently clipped to it) makes resolve fail rather than call the
    # check's maximum the limit.
    import hw.sorter
    init = hw.sorter.RadixSorter.__init__

    def clipping(self, *, radix_bits=8, **parameters):
        init(self, radix_bits=min(radix_bits, 12), **parameters)
    monkeypatch.setattr(hw.sorter.RadixSorter, "__init__", clipping)
    with pytest.raises(AssertionError, match="accepts radix_bits = 13, past the maximum"):
        resolve(LimitCase("radix", "radix_sorter", ("radix_bits",)))


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_limit_case_elaborates(case):
    fragment = limits.elaborate(case)
    assert fragment is not None


@pytest.mark.parametrize("case", [pytest.param(case, marks=_marks(case), id=case.name)
                                  for case in CASES if case.module])
def test_limit_case_matches_the_model_in_verilator(case):
    verdict, _, _, detail = limits.run_case(case)
    assert verdict.startswith("pass"), detail


def test_accepted_ranges_intersects_the_checks_of_one_name():
    import hw.checks
    with limits.accepted_ranges() as ranges:
        hw.checks.check_integer("depth", 3, 0, 255)
        hw.checks.check_integer("depth", 3, 1, 100)        # a sub-component accepts less
        hw.checks.check_integer("rows", 5, 2, 64)
        with pytest.raises(ValueError):
            hw.checks.check_integer("lanes", 65, 1, 64)    # a refused check is recorded too
    hw.checks.check_integer("after", 1, 0, 1)
    assert ranges == {"depth": (1, 100), "rows": (2, 64), "lanes": (1, 64)}


def test_accepted_ranges_sees_the_gateware_checks_and_then_lets_them_go():
    import hw.checks
    import hw.gini
    original = hw.checks.check_integer
    with limits.accepted_ranges() as outer:
        with limits.accepted_ranges() as inner:
            scanner = hw.gini.GiniScanner(classes=3, count_bits=4, code_bits=4, row_bits=3)
        hw.checks.refuse_construction(scanner)              # built to be checked, not elaborated
        hw.checks.check_integer("a", 1, 0, 9)
    assert set(inner) == {"classes", "count_bits", "code_bits", "row_bits"}
    assert set(outer) == set(inner) | {"a"}
    assert hw.gini.check_integer is original and hw.checks.check_integer is original
