"""Solved when the answer's last `ANSWER:` line gives the right number of attempts.

The right number is not typed in here: the checker asks the task's own copy of the
code (not the agent's, which it may have changed), with no config file and no
SHIPIT_ variables, how many attempts its client would make.
"""

import sys
from pathlib import Path

from lab.tasks.checks import Verdict, answer_line, run_limited

PRISTINE = Path(__file__).parent / "workspace"
ASK = (
    "from shipit import config; from shipit.client import UploadClient; "
    "print(UploadClient.from_settings(config.load(None, {})).policy.max_attempts)"
)


def check(workspace: Path, answer: str) -> Verdict:
    code, output = run_limited([sys.executable, "-B", "-c", ASK], PRISTINE, timeout=30)
    if code != 0:
        raise RuntimeError(f"the task's own code could not answer: {output.strip()[-200:]}")
    truth = output.strip()
    given = answer_line(answer)
    if given is None:
        return Verdict(False, "the answer has no line 'ANSWER: <number>'")
    if given != truth:
        return Verdict(False, f"answered {given}; the code makes at most {truth} attempts")
    return Verdict(True, f"answered {truth}, the number of attempts the code makes")
