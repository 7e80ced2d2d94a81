"""Command-line options the EDA flows share: designs named on the command line and
``--set DESIGN.PARAMETER=VALUE`` parameter overrides, both checked against the catalogue
(:data:`hw.designs.DESIGNS`)."""

import argparse
import ast
import re

from hw.designs import DESIGNS

__all__ = ["parse_overrides", "add_folder_options", "add_set_option", "checked_overrides",
           "check_designs", "job_count"]


def parse_overrides(assignments, designs=None):
    """Parse ``DESIGN.PARAMETER=VALUE`` strings into ``{design: {parameter: value}}``.

    ``VALUE`` is a Python literal (``4``, ``True``, ``'x'``); anything else is kept as a
    string. The design and parameter must exist (parameters are checked against the
    design's defaults in :data:`hw.designs.DESIGNS`). Raises ``ValueError``.
    """
    designs = DESIGNS if designs is None else designs
    overrides = {}
    for assignment in assignments or ():
        match = re.fullmatch(r"([A-Za-z_]\w*)\.([A-Za-z_]\w*)=(.*)", assignment.strip())
        if not match:
            raise ValueError(f"{assignment!r} is not DESIGN.PARAMETER=VALUE")
        design, parameter, text = match.groups()
        if design not in designs:
            raise ValueError(f"unknown design {design!r} in {assignment!r}; "
                             f"known: {', '.join(sorted(designs))}")
        if parameter not in designs[design][1]:
            raise ValueError(f"design {design} has no parameter {parameter!r}; "
                             f"its parameters: {', '.join(designs[design][1])}")
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
        overrides.setdefault(design, {})[parameter] = value
    return overrides


def add_folder_options(parser, work, report):
    """``--out`` (the work folder, default ``work``) and ``--report`` (the Markdown report,
    default ``report``, with a .json beside it)."""
    parser.add_argument("--out", default=work, help="work folder (default: %(default)s)")
    parser.add_argument("--report", default=report,
                        help="Markdown report (default: %(default)s); a .json beside it")


def job_count(text):
    """``--jobs N`` (an argparse type): a whole number of runs at once, at least 1."""
    try:
        jobs = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--jobs takes a whole number of runs at once, not {text!r}")
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"--jobs must be at least 1, not {jobs}")
    return jobs


def add_set_option(parser):
    """The repeatable ``--set DESIGN.PARAMETER=VALUE`` option."""
    parser.add_argument("--set", action="append", default=[], metavar="DESIGN.PARAMETER=VALUE",
                        help="change a design's parameter (repeatable), e.g. "
                             "forest_system.pe_count=4")


def checked_overrides(parser, arguments):
    """The parsed ``--set`` options, or the parser's error naming the bad one."""
    try:
        return parse_overrides(arguments.set)
    except ValueError as error:
        parser.error(str(error))


def check_designs(parser, names):
    """The parser's error for design names the catalogue does not have."""
    unknown = sorted(set(names) - set(DESIGNS))
    if unknown:
        parser.error(f"unknown design(s) {', '.join(unknown)}; known: {', '.join(sorted(DESIGNS))}")
