"""What a task's checker returns, and the checks most checkers are made of.

A checker is `check(workspace, answer) -> Verdict` in a task's `check.py`.  It runs
after the agent has finished, and decides from real evidence: the checker's own tests,
asking the agent's code for values; a file the agent had to write; the last line of
its answer.  It never trusts the workspace's tests, which the agent could edit or
delete, and never runs the agent's code in its own process, where that code could
talk the verdict round: `run_hidden_tests` copies only the named source files out of
the workspace, runs the task's `hidden/` tests here, and lets the agent's code answer
them from a process of its own (`agent_code.py`).  A file the agent had to write is
read as a regular file inside the workspace (`read_answer_file`), never through a
link.

The lab runs every checker in a child process with a timeout (`lab/tasks/__main__.py`),
so a checker that hangs or crashes costs one "not solved", with the reason, and
never the comparison.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tempfile
import unittest
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from machine import ToolError, read_agent_file

from .agent_code import TOTAL_TIMEOUT, AgentCode, AgentTest, run_limited

__all__ = [
    "AgentTest",
    "AnswerFileError",
    "Verdict",
    "answer_line",
    "read_answer_file",
    "run_hidden_tests",
    "run_limited",
]


@dataclass(frozen=True)
class Verdict:
    """Solved or not, and the evidence in one line a person can act on."""

    solved: bool
    detail: str


SOURCE_LIMIT = 10_000_000  # bytes of one source or answer file the checker reads


def run_hidden_tests(
    workspace: Path, hidden: Path, sources: list[str], timeout: float = TOTAL_TIMEOUT
) -> Verdict:
    """Run the tests in `hidden/` against the modules `sources` names, copied from the workspace.

    The tests are loaded first, before any of the agent's code runs, and run here; the
    agent's code answers them from a process of its own (`agent_code`), so nothing it
    does there reaches the verdict.  Only the named files leave the workspace, each a
    regular file read inside it (never through a link, `read_answer_file`), so a test
    file, a `conftest.py` or a fake `unittest.py` the agent left there never runs.
    """
    suite = load_hidden_tests(hidden)
    with tempfile.TemporaryDirectory(prefix="lab-check-") as folder:
        for name in sources:
            try:
                data = read_answer_file(workspace, name, text=False)
            except AnswerFileError as error:
                return Verdict(False, str(error))
            (Path(folder) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(folder) / name).write_bytes(data)
        code = AgentCode(Path(folder), timeout)
        try:
            for test in each_test(suite):
                test.agent = code
            result = unittest.TestResult()
            suite.run(result)
        finally:
            code.close()
    return hidden_verdict(result)


def load_hidden_tests(hidden: Path) -> unittest.TestSuite:
    """Every `test*.py` of the folder, imported under a name of its own (two tasks may both
    have a `test_storage.py`), with the folder on the path for helpers such as a task's
    copy of the original code."""
    suite = unittest.TestSuite()
    sys.path.insert(0, str(hidden))
    try:
        for path in sorted(hidden.rglob("test*.py")):
            name = f"hidden_{hidden.parent.name}_{path.stem}".replace("-", "_")
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot load {path}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            suite.addTests(unittest.defaultTestLoader.loadTestsFromModule(module))
    finally:
        sys.path.remove(str(hidden))
    if not suite.countTestCases():
        raise ValueError(f"{hidden} holds no tests")
    return suite


def each_test(suite: unittest.TestSuite) -> list[AgentTest]:
    found = []
    for test in suite:
        if isinstance(test, unittest.TestSuite):
            found += each_test(test)
        elif isinstance(test, AgentTest):
            found.append(test)
        else:
            raise TypeError(f"{test.id()} is not an AgentTest: hidden tests ask the agent's code")
    return found


def hidden_verdict(result: unittest.TestResult) -> Verdict:
    """Solved when every hidden test ran and passed; otherwise which failed, and the first why."""
    failed = result.failures + result.errors
    if not failed and result.testsRun and not result.skipped:
        return Verdict(True, f"all {result.testsRun} hidden tests pass")
    names = ", ".join(dict.fromkeys(test.id().rsplit(".", 1)[-1] for test, _ in failed))
    if not failed:
        return Verdict(False, f"{len(result.skipped)} hidden tests were skipped")
    why = failed[0][1].strip().splitlines()[-1]
    why = why.split(": ", 1)[1] if why.startswith(("AssertionError", "lab.tasks")) else why
    return Verdict(
        False, f"{len(failed)} of {result.testsRun} hidden tests fail: {names} (first: {why[:160]})"
    )


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


def answer_line(answer: str, key: str = "ANSWER") -> str | None:
    """The value of the last `KEY: value` line of an answer, or None if there is none."""
    found = re.findall(rf"^\W*{key}\W*:\s*(.+?)\s*$", answer, re.MULTILINE | re.IGNORECASE)
    return found[-1].strip("`*. ") if found else None
