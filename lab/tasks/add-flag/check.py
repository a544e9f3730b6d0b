"""Solved when `--min-length` works on the command line and nothing else changed.

The hidden tests run the agent's wordfreq.py as a program, with and without the
option, and compare what it prints with what the task asks for.  The task also
asks for a test of the option, so the workspace's test file must mention it.
"""

from pathlib import Path

from lab.tasks.checks import AnswerFileError, Verdict, read_answer_file, run_hidden_tests

HIDDEN = Path(__file__).parent / "hidden"


def check(workspace: Path, answer: str) -> Verdict:
    verdict = run_hidden_tests(workspace, HIDDEN, sources=["wordfreq.py"])
    if verdict.solved and not names_the_option(workspace):
        return Verdict(False, "the option works, but test_wordfreq.py has no test of it")
    return verdict


def names_the_option(workspace: Path) -> bool:
    """Whether the agent's test file mentions the option, as --min-length or min_length."""
    try:
        text = read_answer_file(workspace, "test_wordfreq.py")
    except AnswerFileError:
        return False
    return "--min-length" in text or "min_length" in text
