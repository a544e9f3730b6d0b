"""What a task's checker returns, and the checks most checkers are made of.

A checker is `check(workspace, answer) -> Verdict` in a task's `check.py`.  It runs
after the agent has finished, and decides from real evidence: the checker's own copy
of the tests, run against the agent's source; a file the agent had to write; the
last line of its answer.  It never trusts the workspace's tests, which the agent
could edit or delete: `run_hidden_tests` copies only the named source files out of
the workspace, next to the task's `hidden/` tests, and runs those.

The lab runs every checker in a child process with a timeout (`lab/tasks/__main__.py`),
so a checker that hangs or crashes costs one "not solved", with the reason, and
never the comparison.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from machine import SECRET_VARIABLES, run

TEST_TIMEOUT = 60  # seconds for one run of a task's hidden tests


@dataclass(frozen=True)
class Verdict:
    """Solved or not, and the evidence in one line a person can act on."""

    solved: bool
    detail: str


def run_hidden_tests(
    workspace: Path, hidden: Path, sources: list[str], timeout: float = TEST_TIMEOUT
) -> Verdict:
    """Run the tests in `hidden/` against the files `sources` names, copied from the workspace.

    Only those files leave the workspace: a test file, a `conftest.py` or a fake
    `unittest.py` the agent left there never reaches the run.
    """
    with tempfile.TemporaryDirectory(prefix="lab-check-") as folder:
        scratch = Path(folder)
        for name in sources:
            source = workspace / name
            if source.is_symlink():  # it could point at anything, the checker's own tests too
                return Verdict(False, f"{name} is a symbolic link; the checker takes real files")
            if source.is_dir():
                shutil.copytree(source, scratch / name, symlinks=True, ignore=_caches)
            elif source.is_file():
                (scratch / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, scratch / name)
            else:
                return Verdict(False, f"{name} is missing from the workspace")
        shutil.copytree(hidden, scratch, dirs_exist_ok=True, ignore=_caches)
        command = [sys.executable, "-B", "-m", "unittest", "discover", "-v", "-t", ".", "-s", "."]
        code, output = run_limited(command, scratch, timeout)
    if code is None:
        return Verdict(False, f"the hidden tests did not finish in {timeout:g} s")
    return unittest_verdict(code, output)


def unittest_verdict(code: int, output: str) -> Verdict:
    """Read unittest's report: how many tests ran, and which failed."""
    ran = re.search(r"^Ran (\d+) tests?", output, re.MULTILINE)
    total = int(ran.group(1)) if ran else 0
    # A test with subtests is reported once per failing subtest: count it once.
    failed = list(dict.fromkeys(re.findall(r"^(?:FAIL|ERROR): (\w+)", output, re.MULTILINE)))
    if code == 0 and total and not failed:
        return Verdict(True, f"all {total} hidden tests pass")
    if not total:
        last = output.strip().splitlines()[-1:] or ["no output"]
        return Verdict(False, f"the hidden tests could not run: {last[0][:160]}")
    names = ", ".join(failed) or "see the test output"
    return Verdict(False, f"{len(failed) or 'some'} of {total} hidden tests fail: {names}")


def run_limited(command: list[str], cwd: Path, timeout: float) -> tuple[int | None, str]:
    """Run a command without the API keys in its environment; (None, output) on a timeout.

    The agent's code runs here outside the agent's tools, so it gets the same
    environment the tools give it, and all it started is stopped when it ends.
    """
    environment = {k: v for k, v in os.environ.items() if not SECRET_VARIABLES.fullmatch(k)}
    environment.pop("PYTHONPATH", None)
    done = run(command, cwd, timeout, env={**environment, "PYTHONIOENCODING": "utf-8"})
    return done.exit_code, done.output


def answer_line(answer: str, key: str = "ANSWER") -> str | None:
    """The value of the last `KEY: value` line of an answer, or None if there is none."""
    found = re.findall(rf"^\W*{key}\W*:\s*(.+?)\s*$", answer, re.MULTILINE | re.IGNORECASE)
    return found[-1].strip("`*. ") if found else None


def _caches(folder: str, names: list[str]) -> list[str]:
    return [name for name in names if name in ("__pycache__", ".pytest_cache")]
