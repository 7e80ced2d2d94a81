"""``make help`` lists every target of the Makefile with a line that says what it does."""

import re
import shutil
import subprocess

import pytest

from sim.runner import PROJECT_ROOT


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_help_lists_every_phony_target():
    makefile = (PROJECT_ROOT / "Makefile").read_text()
    phony = re.search(r"^\.PHONY:(.*)$", makefile, re.MULTILINE).group(1).split()
    out = subprocess.run(["make", "-s", "--no-print-directory", "help"], cwd=PROJECT_ROOT,
                         capture_output=True, text=True, check=True).stdout
    listed = {}
    for line in out.splitlines():
        match = re.match(r"\s*make (\S+)\s+(\S.*)$", line)
        assert match, f"unexpected line in make help: {line!r}"
        listed[match.group(1)] = match.group(2)
    assert sorted(listed) == sorted(phony)
    assert all(len(text) > 10 for text in listed.values())
