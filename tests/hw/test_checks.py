"""The gateware's parameter check (hw/checks.py)."""

import pytest

from hw.checks import check_integer


def test_check_integer_names_the_value_and_the_limits():
    assert check_integer("rows", 7, 1, 8) == 7
    with pytest.raises(ValueError, match="rows must be between 1 and 8, not 9"):
        check_integer("rows", 9, 1, 8)
    with pytest.raises(TypeError, match="rows must be an integer, not True"):
        check_integer("rows", True, 1, 8)
