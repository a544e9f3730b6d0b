"""Solved when the checker's own tests of stats.py pass, more of them than the workspace has.

The hidden tests add even counts of other sizes and unsorted input, so a `median`
that special-cases the two failing tests does not pass.
"""

from pathlib import Path

from lab.tasks.checks import Verdict, run_hidden_tests

HIDDEN = Path(__file__).parent / "hidden"


def check(workspace: Path, answer: str) -> Verdict:
    return run_hidden_tests(workspace, HIDDEN, sources=["stats.py"])
