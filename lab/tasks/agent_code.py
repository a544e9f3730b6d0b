"""The agent's code, asked questions in a process of its own: what a task's hidden tests call.

The agent's code never runs in the process that decides the verdict.  Code that runs
there could end it early with a pass, write the runner's result file, or replace
`unittest` itself.  So a task's hidden tests run in the checker's process, assertions
and verdict included, and the agent's modules run in a child process that only
answers.  Each question is a little Python: a setup (usually the imports) and then
statements that end in an expression.  Each answer is that expression's value, sent
back with `repr` and read here with `ast.literal_eval` (plain data only: numbers,
strings, lists, tuples, dicts, sets, None), or the exception it raised.  The child may
answer whatever it likes; the only way it can make an assertion here pass is to give
the value the test expects.

A hidden test is a `unittest.TestCase` that derives from `AgentTest`:

    class StatsTest(AgentTest):
        setup = "from stats import mean, median"

        def test_median_of_an_even_count(self):
            self.assertEqual(self.value("median([4, 1, 3, 2])"), 2.5)

        def test_median_of_nothing_raises(self):
            self.assertRaisesInAgent(ValueError, "median([])")

and `self.program("wordfreq.py", "--top", "3")` runs one of the agent's files as a
program, in a process of its own too.
"""

from __future__ import annotations

import ast
import json
import secrets
import sys
import time
import unittest
from pathlib import Path
from typing import Any

from machine import CommandOutcome, Conversation, ConversationEnded, command_environment, run

ANSWER_TIMEOUT = 10.0  # seconds for one answer of the agent's code
TOTAL_TIMEOUT = 60.0  # seconds for all the answers of one check

# The child: it reads questions on stdin and writes answers to a copy of stdout, after
# pointing stdout at stderr, so what the agent's code prints is never taken for an answer.
SERVER = r"""
import ast, json, os, sys
answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
questions = os.fdopen(os.dup(0), encoding="utf-8")
os.dup2(2, 1)
os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
sys.path.insert(0, os.getcwd())
for line in questions:
    question = json.loads(line)
    namespace = {"__name__": "__agent_code__"}
    try:
        exec(compile(question["setup"], "<setup>", "exec"), namespace)
        tree = ast.parse(question["code"], "<question>")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, "<question>", "exec"), namespace)
        value = None
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "<question>", "eval"), namespace)
        answer = {"value": repr(value)}
    except BaseException as error:
        names = [kind.__name__ for kind in type(error).__mro__]
        answer = {"raised": names, "message": str(error)[:300]}
    answer["id"] = question["id"]
    answers.write(json.dumps(answer) + "\n")
    answers.flush()
"""


class AgentCodeFailed(AssertionError):
    """The agent's code gave no usable answer: it raised, hung, ended, or sent no plain value."""


def agent_environment() -> dict[str, str]:
    """The environment the agent's code runs in: the one its tools give it (no API keys,
    nothing a .env added), without PYTHONPATH."""
    environment = command_environment()
    environment.pop("PYTHONPATH", None)
    return {**environment, "PYTHONIOENCODING": "utf-8"}


def run_limited(command: list[str], cwd: Path, timeout: float) -> tuple[int | None, str]:
    """Run a command without the API keys in its environment; (None, output) on a timeout.

    Everything it started is stopped when it ends.
    """
    done = run(command, cwd, timeout, env=agent_environment())
    return done.exit_code, done.output


class AgentCode:
    """The agent's modules in `folder`, answering questions in a child process.

    The child starts at the first question and again after it ended (a test that
    made it exit costs that test, not the ones after it); each answer has
    ANSWER_TIMEOUT seconds, and all of them together `timeout`.
    """

    def __init__(self, folder: Path, timeout: float = TOTAL_TIMEOUT) -> None:
        self.folder = folder
        self.child: Conversation | None = None
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout

    def ask(self, setup: str, code: str) -> dict[str, Any]:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise AgentCodeFailed(f"the agent's code used up its {self.timeout:g} s")
        if self.child is None:
            command = [sys.executable, "-I", "-B", "-c", SERVER]
            self.child = Conversation(command, self.folder, agent_environment())
        asked = secrets.token_hex(8)  # a line written before the question cannot answer it
        question = json.dumps({"id": asked, "setup": setup, "code": code})
        wait = min(ANSWER_TIMEOUT, left)
        try:
            line = self.child.ask(question, wait)
            answer = json.loads(line)
        except TimeoutError:
            self.close()
            raise AgentCodeFailed(f"`{code}` gave no answer in {wait:.2g} s") from None
        except ConversationEnded as ended:
            why = f"{ended} ({self.child.said_on_stderr()})"
            self.close()
            raise AgentCodeFailed(f"`{code}` got no answer: {why}") from None
        except (ValueError, RecursionError):
            self.close()
            raise AgentCodeFailed(f"`{code}` got an answer that is not JSON") from None
        if not isinstance(answer, dict) or answer.get("id") != asked:
            self.close()
            raise AgentCodeFailed(f"`{code}` got an answer to another question")
        return answer

    def value(self, setup: str, code: str) -> Any:
        """The value of the last expression of `code`; AgentCodeFailed if it raised."""
        answer = self.ask(setup, code)
        if "raised" in answer:
            kind = (answer.get("raised") or ["an exception"])[0]
            raise AgentCodeFailed(f"`{code}` raised {kind}: {answer.get('message', '')}")
        try:
            return ast.literal_eval(str(answer.get("value")))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            shown = str(answer.get("value"))[:80]
            raise AgentCodeFailed(f"`{code}` gave {shown}, not a plain value") from None

    def raised(self, setup: str, code: str) -> list[str]:
        """The names of the exception `code` raised and of its base classes; [] if none."""
        names = self.ask(setup, code).get("raised") or []
        return [str(name) for name in names] if isinstance(names, list) else []

    def program(self, *args: str, timeout: float = 30) -> CommandOutcome:
        """Run `python ARGS` in the agent's folder: one of its files as a program."""
        command = [sys.executable, "-B", *args]
        return run(command, self.folder, timeout, env=agent_environment(), apart=True)

    def close(self) -> None:
        if self.child is not None:
            self.child.close()
            self.child = None


class AgentTest(unittest.TestCase):
    """A hidden test of the agent's code: the code answers from its own process
    (`value`, `assertRaisesInAgent`, `program`); the assertions stay here."""

    setup = ""  # run in the agent's process before each question: usually the imports
    agent: AgentCode  # given to each test by run_hidden_tests

    def value(self, code: str) -> Any:
        return self.agent.value(self.setup, code)

    def assertRaisesInAgent(self, kind: type[BaseException], code: str) -> None:  # noqa: N802
        raised = self.agent.raised(self.setup, code)
        if kind.__name__ not in raised:
            got = f"raised {raised[0]}" if raised else "raised nothing"
            self.fail(f"`{code}` {got}, not {kind.__name__}")

    def program(self, *args: str) -> CommandOutcome:
        return self.agent.program(*args)
