"""What a task's checker returns, and the checks most checkers are made of.

A checker is `check(workspace, answer) -> Verdict` in a task's `check.py`.  It runs
after the agent has finished, and decides from real evidence: the checker's own copy
of the tests, run against the agent's source; a file the agent had to write; the
last line of its answer.  It never trusts the workspace's tests, which the agent
could edit or delete: `run_hidden_tests` copies only the named source files out of
the workspace, next to the task's `hidden/` tests, and runs those.  Nor does it
trust what the agent's code prints: the verdict comes from the runner's exit status
and a result file outside the workspace.  A file the agent had to write is read as
a regular file inside the workspace (`read_answer_file`), never through a link.

The lab runs every checker in a child process with a timeout (`lab/tasks/__main__.py`),
so a checker that hangs or crashes costs one "not solved", with the reason, and
never the comparison.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from machine import SECRET_VARIABLES, ToolError, read_agent_file, run

TEST_TIMEOUT = 60  # seconds for one run of a task's hidden tests


@dataclass(frozen=True)
class Verdict:
    """Solved or not, and the evidence in one line a person can act on."""

    solved: bool
    detail: str


SOURCE_LIMIT = 10_000_000  # bytes of one source or answer file the checker reads

# The hidden tests run in the agent's code's own process, which can print anything
# (`Ran 9 tests ... OK`) and end as it likes.  So the verdict comes from what this
# runner writes to a result file in a folder of the checker's, outside the scratch
# copy, after the last test, together with the exit status; the printed report is
# only shown.
RUNNER = """
import json, sys, unittest
result_path = sys.argv.pop(1)
suite = unittest.defaultTestLoader.discover(".", top_level_dir=".")
result = unittest.TextTestRunner(verbosity=2).run(suite)
failed = [test.id().rsplit(".", 1)[-1] for test, _ in result.failures + result.errors]
loaded = not any(test.id().startswith("unittest.loader.") for test, _ in result.errors)
with open(result_path, "w") as file:
    json.dump({"ran": result.testsRun, "failed": failed, "loaded": loaded}, file)
sys.exit(0 if result.wasSuccessful() else 1)
"""


def run_hidden_tests(
    workspace: Path, hidden: Path, sources: list[str], timeout: float = TEST_TIMEOUT
) -> Verdict:
    """Run the tests in `hidden/` against the modules `sources` names, copied from the workspace.

    Only those files leave the workspace, each a regular file read inside it (never
    through a link, `read_answer_file`), and a folder is refused: a task names every
    module, so a test file, a `conftest.py` or a fake `unittest.py` the agent left
    there, in a package or beside it, never reaches the run.
    """
    with tempfile.TemporaryDirectory(prefix="lab-check-") as folder:
        scratch, results = Path(folder) / "run", Path(folder) / "result"
        scratch.mkdir()
        results.mkdir()
        for name in sources:
            try:
                data = read_answer_file(workspace, name, text=False)
            except AnswerFileError as error:
                return Verdict(False, str(error))
            (scratch / name).parent.mkdir(parents=True, exist_ok=True)
            (scratch / name).write_bytes(data)
        shutil.copytree(hidden, scratch, dirs_exist_ok=True, ignore=_caches)
        result_file = results / "result.json"
        command = [sys.executable, "-B", "-c", RUNNER, str(result_file)]
        code, output = run_limited(command, scratch, timeout)
        report = _result(result_file)
    if code is None:
        return Verdict(False, f"the hidden tests did not finish in {timeout:g} s")
    return hidden_verdict(code, report, output)


def _result(path: Path) -> dict[str, Any] | None:
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return report if isinstance(report, dict) else None


def hidden_verdict(code: int, report: dict[str, Any] | None, output: str) -> Verdict:
    """The verdict from the runner's exit status and its result file; `output` only explains."""
    last = (output.strip().splitlines()[-1:] or ["no output"])[0][:160]
    if report is None:
        return Verdict(False, f"the hidden tests ended before reporting a result: {last}")
    total, failed = report.get("ran", 0), list(dict.fromkeys(report.get("failed", [])))
    if code == 0 and total and not failed:
        return Verdict(True, f"all {total} hidden tests pass")
    if not total or not report.get("loaded", True):
        return Verdict(False, f"the hidden tests could not run: {last}")
    names = ", ".join(map(str, failed)) or "see the test output"
    return Verdict(False, f"{len(failed) or 'some'} of {total} hidden tests fail: {names}")


class AnswerFileError(ValueError):
    """A file the checker needs from the workspace that it may not use; says why."""


def read_answer_file(workspace: Path, name: str, *, text: bool = True) -> Any:
    """A file the agent left, read as a regular file inside the workspace, never through a
    link (which could point at the checker's own answer), at most SOURCE_LIMIT bytes."""
    try:
        data = read_agent_file(workspace, workspace / name, SOURCE_LIMIT)
    except FileNotFoundError:
        raise AnswerFileError(f"{name} is missing from the workspace") from None
    except ToolError as error:
        raise AnswerFileError(f"{name} cannot be used: {error}") from None
    except OSError as error:
        raise AnswerFileError(f"{name} cannot be read: {error.strerror or error}") from None
    return data.decode("utf-8", errors="replace") if text else data


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
