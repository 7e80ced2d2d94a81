"""Every Markdown table in docs/ and the README has as many cells in each row as in its
header: an edit that pastes a row of one table into another (as happened to
docs/arria10.md's table of the entries' parameters) is caught here, not by a reader."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])


def cells(line):
    """The number of cells of a table row: the ``|`` outside code spans and not escaped."""
    text = re.sub(r"`[^`]*`", "", line.strip()).replace(r"\|", "")
    return text.strip("|").count("|") + 1


def tables(text):
    """(first line number, lines) of each table: a header row followed by a ``|---|`` row."""
    lines = text.split("\n")
    found, i = [], 0
    while i < len(lines) - 1:
        if lines[i].startswith("|") and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[i + 1].strip()):
            start = i
            while i < len(lines) and lines[i].startswith("|"):
                i += 1
            found.append((start + 1, lines[start:i]))
        else:
            i += 1
    return found


def test_the_row_counter_sees_a_pasted_row():
    header = "| entry | parameters |"
    assert cells(header) == 2
    assert cells("| `a|b` | x \\| y |") == 2
    assert cells("| `forest_system` | reduced | **91.0** | 1: 91.0 |") == 4
    assert [start for start, _ in tables("text\n" + header + "\n|---|---|\n| a | b |\n\nmore")] == [2]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_table_row_has_its_headers_cells(page):
    wrong = []
    for start, rows in tables(page.read_text()):
        width = cells(rows[0])
        wrong += [f"{page.name}:{start + k}: {cells(row)} cells, the header has {width}"
                  for k, row in enumerate(rows) if cells(row) != width]
    assert not wrong, "\n".join(wrong)
