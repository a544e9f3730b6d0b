"""Solved when the checker's own tests of parse_duration pass: every rule of the docstring.

The workspace has three tests; the hidden ones hold a case for each sentence of the
docstring, so an implementation fitted to the three visible inputs fails.
"""

from pathlib import Path

from lab.tasks.checks import Verdict, run_hidden_tests

HIDDEN = Path(__file__).parent / "hidden"


def check(workspace: Path, answer: str) -> Verdict:
    return run_hidden_tests(workspace, HIDDEN, sources=["duration.py"])
