"""Solved when stuck.txt lists exactly the stuck orders: none missing, none extra.

The right list is in no file.  A live run gets logs made fresh from a seed that only
the lab knows (`make`), and the checker works the list out from that seed, the way
the logs were written (make_logs.py); a replay runs on the logs it was recorded on,
the demo's (SEED) or a recorded run's.  Editing the logs in the workspace changes
nothing.
"""

import importlib.util
import sys
from pathlib import Path

from lab.tasks.checks import AnswerFileError, Verdict, read_answer_file

MAKER = Path(__file__).parent / "make_logs.py"
_spec = importlib.util.spec_from_file_location("long_task_make_logs", MAKER)
assert _spec is not None and _spec.loader is not None
make_logs = sys.modules.setdefault(_spec.name, importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(make_logs)  # registered first: its dataclasses look it up
SEED = make_logs.SEED


def make(workspace: Path, seed: int) -> None:
    """Fresh logs for one run, in place of the demo's."""
    make_logs.write_logs(workspace / "logs", seed)


def check(workspace: Path, answer: str, seed: int = SEED) -> Verdict:
    expected = set(make_logs.generate(seed)[1])
    try:  # a regular file in the workspace, never a link
        listed = set(read_answer_file(workspace, "stuck.txt").split())
    except AnswerFileError as error:
        return Verdict(False, str(error))
    missing, extra = sorted(expected - listed), sorted(listed - expected)
    if not missing and not extra:
        return Verdict(True, f"stuck.txt lists all {len(expected)} stuck orders")
    problems = []
    if missing:
        problems.append(f"misses {len(missing)} of {len(expected)} ({', '.join(missing)})")
    if extra:
        problems.append(f"lists {len(extra)} that are not stuck ({', '.join(extra[:5])})")
    return Verdict(False, "stuck.txt " + " and ".join(problems))
