"""The catalogue of builds (``hw/designs.py``): every named build is a design's parameters
that its component accepts, and the dataset sizing rule gives builds that hold the data."""

import pytest

from amaranth.hdl import Elaboratable

from hw.designs import BUILDS, DESIGNS, build_parameters, component, design_name, system_for_dataset
from hw.system import ForestSystem


def _constructed_only(elaboratable, seen=None):
    """Mark a component built only to check its parameters, and the components it made in
    its constructor, as deliberately never elaborated."""
    seen = set() if seen is None else seen
    if id(elaboratable) in seen:
        return
    seen.add(id(elaboratable))
    elaboratable._MustUse__silence = True
    for value in vars(elaboratable).values():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, Elaboratable):
                _constructed_only(item, seen)


@pytest.mark.parametrize("name", sorted(DESIGNS) + sorted(BUILDS))
def test_every_catalogued_build_constructs(name):
    parameters = build_parameters(name)
    design = BUILDS[name][0] if name in BUILDS else name
    built = component(design, parameters)
    _constructed_only(built)
    assert isinstance(built, DESIGNS[design][0])


def test_named_builds_override_their_design_defaults():
    design, overrides = BUILDS["comparison"]
    parameters = build_parameters("comparison")
    assert parameters == {**DESIGNS[design][1], **overrides}
    assert design_name(design, parameters) != design
    assert design_name(design, DESIGNS[design][1]) == design


@pytest.mark.parametrize("shape", [(150, 4, 3, 100, None), (2126, 21, 10, 16, 4), (5, 1, 2, 1, 1)])
def test_a_system_sized_for_a_dataset_holds_it(shape):
    rows, features, classes, trees, depth = shape
    parameters = system_for_dataset(rows, features, classes, trees, depth, pe_count=3)
    assert parameters["max_rows"] >= rows and parameters["max_samples"] >= rows
    assert parameters["feature_capacity"] >= features and parameters["classes"] >= classes
    assert parameters["max_trees"] >= trees and parameters["pe_count"] == 3
    assert parameters["max_depth"] >= (depth if depth is not None else 48)
    _constructed_only(ForestSystem(**parameters))
