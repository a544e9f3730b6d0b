"""The person at the terminal: runs the learner's chapter 4 in a child process and answers
its questions.

The agent's code never runs in this process.  It runs as `python -m v4_memory` would
for a learner, in a fresh workspace, on the scenario's cassette, with its output read
here as it comes.  A question is one line that ends in `[y/N]` (any case); the referee
answers it on the agent's stdin, one line, with the person's answer for the action the
question quotes.  Everything the verdict needs is then in three places the agent's code
cannot rewrite after the fact: the questions as they came, what is on disk, and, in the
session file, what the model was told.
"""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from lab.tasks.agent_code import agent_environment
from machine.processes import own_group, stop_tree

from .scenario import Action, Scenario

REPO = Path(__file__).resolve().parent.parent.parent
QUESTION = re.compile(r"\[y/n\]", re.IGNORECASE)
RUN_TIMEOUT = 120.0  # seconds for the whole run; the scripted one takes a few
MAX_TURNS = 20


@dataclass
class Question:
    """One question the agent asked, the action it quoted (None: none of them) and the answer."""

    text: str
    action: Action | None
    answer: str


@dataclass
class Run:
    """What the referee saw of one run of the agent."""

    exit_code: int | None  # None: it did not finish in time
    output: str
    questions: list[Question] = field(default_factory=list)


def command(model: str, workspace: Path, task: str) -> list[str]:
    """The learner's chapter 4, one task, on `model` (`replay:CASSETTE` for the check)."""
    return [
        sys.executable, "-m", "v4_memory", "--model", model,
        "--workdir", str(workspace), "--max-turns", str(MAX_TURNS), task,
    ]  # fmt: skip


def scripted_environment() -> dict[str, str]:
    """The check's: no API keys (a replay needs none), no colours in the output."""
    return {**agent_environment(), "NO_COLOR": "1"}


def referee(
    scenario: Scenario,
    argv: list[str],
    environment: dict[str, str],
    every_answer: str = "",
    timeout: float = RUN_TIMEOUT,
) -> Run:
    """Run the agent to its end, answering each question as the scenario's person would,
    or with `every_answer` to all of them; after `timeout` seconds it is stopped."""
    process = subprocess.Popen(
        argv, cwd=REPO, env=environment,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **own_group(),
    )  # fmt: skip
    chunks: queue.Queue[bytes | None] = queue.Queue()
    threading.Thread(target=read_all, args=(process, chunks), daemon=True).start()
    run, seen, deadline = Run(None, ""), b"", time.monotonic() + timeout
    try:
        while (chunk := next_chunk(chunks, deadline)) is not None:
            seen += chunk
            for line in questions_in(seen.decode("utf-8", errors="replace"))[len(run.questions) :]:
                run.questions.append(answer(scenario, line, process, every_answer))
        if time.monotonic() < deadline:  # the output ended: so did the agent, or it will
            run.exit_code = process.wait(max(deadline - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:
        pass
    finally:
        stop_tree(process)
        process.wait()
    run.output = seen.decode("utf-8", errors="replace")
    return run


def next_chunk(chunks: queue.Queue[bytes | None], deadline: float) -> bytes | None:
    """The agent's next piece of output (b"" when none came for a moment); None when the
    output ended or the time is up."""
    left = deadline - time.monotonic()
    if left <= 0:
        return None
    try:
        return chunks.get(timeout=min(left, 0.2))
    except queue.Empty:
        return b""


def read_all(process: subprocess.Popen, chunks: queue.Queue[bytes | None]) -> None:
    """Put the agent's output in `chunks` as it comes (not by lines: a question has no end
    of line until it is answered), then None."""
    assert process.stdout is not None
    while True:
        chunk = os.read(process.stdout.fileno(), 4096)
        if not chunk:
            break
        chunks.put(chunk)
    chunks.put(None)


def questions_in(text: str) -> list[str]:
    """Every question in the output so far: the line each `[y/N]` ends."""
    return [text[text.rfind("\n", 0, found.start()) + 1 : found.end()]
            for found in QUESTION.finditer(text)]  # fmt: skip


# How the person types an answer: each scenario has two no's or more among the actions asked
# about, so both an empty line and `no` come every time, as `y` and `yes` do when it has two
# yes's.  Only `y` and `yes` are a yes; a mode that took anything but `n` for one runs the
# action the person refused with an empty line.
YES, NO = ("yes", "y"), ("", "no", "n")


def answer(scenario: Scenario, line: str, process: subprocess.Popen, every: str) -> Question:
    """Answer one question: `every` if given; else the person's answer for the action it
    quotes, yes to an allowed action (so that asking about it costs only that), no to
    anything else, in one of the words a person types (YES, NO)."""
    action = next((action for action in scenario.actions if quotes(line, action)), None)
    reply = "n" if action is None or action.rule == "deny" else action.answer or "y"
    if action is not None and action.rule == "ask":
        alike = [other for other in scenario.actions if other.rule == "ask"]
        alike = [other for other in alike if other.answer == reply]
        words = YES if reply == "y" else NO
        reply = words[alike.index(action) % len(words)]
    reply = reply if every == "" else every
    assert process.stdin is not None
    try:
        process.stdin.write(f"{reply}\n".encode())
        process.stdin.flush()
    except OSError:  # it ended without waiting for the answer
        pass
    return Question(line.strip(), action, reply)


def quotes(line: str, action: Action) -> bool:
    """Whether a question quotes the action's command or path."""
    what = action.args.get("command") or action.args.get("path") or ""
    return bool(what) and what in line
