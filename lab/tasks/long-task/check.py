"""Solved when stuck.txt lists exactly the stuck orders: none missing, none extra.

The right list is the checker's own (`hidden/stuck.txt`, written with the logs by
make_logs.py), so editing the logs in the workspace changes nothing.
"""

from pathlib import Path

from lab.tasks.checks import AnswerFileError, Verdict, read_answer_file

EXPECTED = set((Path(__file__).parent / "hidden" / "stuck.txt").read_text().split())


def check(workspace: Path, answer: str) -> Verdict:
    try:  # a regular file in the workspace: a link could point at the checker's own list
        listed = set(read_answer_file(workspace, "stuck.txt").split())
    except AnswerFileError as error:
        return Verdict(False, str(error))
    missing, extra = sorted(EXPECTED - listed), sorted(listed - EXPECTED)
    if not missing and not extra:
        return Verdict(True, f"stuck.txt lists all {len(EXPECTED)} stuck orders")
    problems = []
    if missing:
        problems.append(f"misses {len(missing)} of {len(EXPECTED)} ({', '.join(missing)})")
    if extra:
        problems.append(f"lists {len(extra)} that are not stuck ({', '.join(extra[:5])})")
    return Verdict(False, "stuck.txt " + " and ".join(problems))
