"""The flows' shared command-line options."""

import pytest

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
