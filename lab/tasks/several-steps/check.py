"""Solved when the checker's own tests of textstats.py pass: all three steps done.

The hidden tests are the workspace's, plus cases the docstrings and the tests
already imply (tabs between words, ties among the most frequent, a reading time
that rounds any words up to a minute), so a fix made only for the visible inputs
fails.
"""

from pathlib import Path

from lab.tasks.checks import Verdict, run_hidden_tests

HIDDEN = Path(__file__).parent / "hidden"


def check(workspace: Path, answer: str) -> Verdict:
    return run_hidden_tests(workspace, HIDDEN, sources=["textstats.py"])
