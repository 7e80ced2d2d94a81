"""The flows' shared command-line options."""

import pytest

from hw.flows import fmax
from hw.flows.cli import parse_overrides


def test_parse_overrides():
    assert parse_overrides(["tree_random.bound_bits=8", "radix_sorter.max_rows=64",
                            "tree_random.tree_index_bits=12"]) == {
        "tree_random": {"bound_bits": 8, "tree_index_bits": 12},
        "radix_sorter": {"max_rows": 64}}
    designs = {"some_top": (object, {"pes": 1, "name": "a"})}
    assert parse_overrides(["some_top.pes=4", "some_top.name=b"], designs) == {
        "some_top": {"pes": 4, "name": "b"}}
    for bad, message in [("tree_random=8", "DESIGN.PARAMETER=VALUE"),
                         ("no_such.x=1", "unknown design"),
                         ("tree_random.no_such=1", "no parameter")]:
        with pytest.raises(ValueError, match=message):
            parse_overrides([bad])


@pytest.mark.parametrize("jobs, message", [("0", "--jobs must be at least 1, not 0"),
                                           ("-2", "--jobs must be at least 1, not -2"),
                                           ("two", "--jobs takes a whole number of runs at once, not 'two'")])
def test_make_fmax_refuses_a_job_count_below_one(jobs, message, capsys):
    # It was taken as 1 without a word; refused before anything is synthesised.
    with pytest.raises(SystemExit):
        fmax.main(["--jobs", jobs, "--no-record", "tree_random"])
    assert message in capsys.readouterr().err
