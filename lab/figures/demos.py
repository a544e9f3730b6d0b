"""Running what a figure measures: a chapter's demo, or the lab's scripted runs of a task.

Every run happens in a private scratch folder at a fixed place, so that the paths in tool
output, and with them the token figures, are the same on every machine.  A demo runs with a
watched model and a silent console that file every tool call under the turn that made it."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lab.chapters import chapter
from lab.compare.comparison import offline_records
from lab.compare.record import Record
from llm import Console, Message, Model, Reply, RunResult
from llm.cassette import ReplayModel, read_cassette
from llm.demo import copy_private, fresh_folder
from llm.wrapper import Wrapper, for_child
from machine import USER_ID, ToolError, hold, private_folder

from .markdown import REPO

# The user's own folder for measuring runs, at a fixed place (see `scratch_folder`).
# It is named by the user's id, padded so that every user's path costs the same tokens.
MEASURING = Path("/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir()) / (
    f"agent-course-figures-{USER_ID:010d}"
)
SCRATCH = MEASURING / "run"  # emptied for every measuring run
SCRATCH_LOCK = MEASURING / "lock"  # one measuring run at a time
UNITTEST_TIME = re.compile(r"(Ran \d+ tests? in )\d+\.\d+s")
ENV_NOTE = "loaded ./.env: "  # what the command line notes when the current folder has a .env


@dataclass
class Turn:
    """One model call as the demo made it: the reply, what was sent, what the loop did next."""

    reply: Reply
    request: dict[str, int]  # characters of the parts sent before the conversation
    tools: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class WatchedModel(Wrapper):
    """Passes every call on to a model and keeps the reply and the size of the request."""

    def __init__(self, inner: Model) -> None:
        super().__init__(inner)
        self.turns: list[Turn] = []

    def after(self, reply: Reply, system: str, tools: list[dict] | None) -> None:
        request = {
            "system prompt": len(system),
            "tool schemas": len(json.dumps(tools, ensure_ascii=False)) if tools else 0,
        }
        self.turns.append(Turn(reply, request))

    def child(self, key: str) -> Model:
        """A child agent's model (chapter 3): its own section, not watched, since the
        figures tell the parent's turns."""
        return for_child(self.inner, key)


class TurnConsole(Console):
    """A silent console that files each tool call and warning under the turn it belongs to.

    Every chapter's loop reports its tool calls and warnings to its console right
    after the model call that caused them, so this works for every chapter alike:
    chapter 1 reads them from `tool_use` blocks, chapter 0 from parsed text.
    """

    def __init__(self, model: WatchedModel) -> None:
        super().__init__(quiet=True)
        self.model = model

    def tool_call(self, name: str, args: dict[str, Any]) -> None:
        self.model.turns[-1].tools.append(name)

    def warn(self, text: str) -> None:
        self.model.turns[-1].warnings.append(re.split(r"[:;]", text, maxsplit=1)[0])


@dataclass
class DemoRun:
    """A finished demo run and what happened at each of its turns."""

    result: RunResult
    turns: list[Turn]


@contextlib.contextmanager
def scratch_folder() -> Iterator[Path]:
    """An empty folder at a fixed place, for the demo runs a figure is measured from.

    Tool output holds the paths of the files it talks about (a traceback, say), and
    real tool output is part of the token estimates: a random temporary folder, or
    one under TMPDIR, would change the figures with the machine and every run.  So
    the runs happen at one fixed path, emptied first, where the demo's own folder is
    always the first numbered one.  The path is the user's own (MEASURING, readable
    by its owner alone), so students sharing a server neither block nor read each
    other.  Two checkouts of one user measuring at once would empty it under each
    other's feet, so a lock makes the second wait; the folder is removed when done.
    """
    try:
        private_folder(MEASURING)
    except ToolError as error:
        raise SystemExit(str(error)) from None
    lock = hold(SCRATCH_LOCK, wait=True)
    try:
        if SCRATCH.is_symlink():
            SCRATCH.unlink()
        shutil.rmtree(SCRATCH, ignore_errors=True)
        SCRATCH.mkdir(mode=0o700)
        try:
            yield SCRATCH
        finally:
            shutil.rmtree(SCRATCH, ignore_errors=True)
    finally:
        lock.release()


@functools.cache
def run_demo(name: str) -> DemoRun:
    """The chapter's offline demo, as `--demo` runs it, on a fresh copy of its workspace."""
    demo = chapter(name)
    header, _ = read_cassette(demo.demo_cassette)
    model = WatchedModel(ReplayModel(demo.demo_cassette))
    with scratch_folder() as scratch:
        workdir = fresh_folder(f"{name}-demo-", scratch)
        copy_private(demo.demo_workspace, workdir)
        result = demo.run(header["task"], model=model, workdir=workdir, console=TurnConsole(model))
    return DemoRun(result, model.turns)


def demo_stdout(name: str) -> str:
    """The demo's output, without its last newline.

    It runs in the fixed scratch folder (see `scratch_folder`), shown as `/tmp`.
    The time unittest reports (`Ran 3 tests in 0.001s`) depends on the machine and
    its load, so it is shown as `0.000s`: a timing is not what the figure is about.
    A learner's own ./.env (a class key, say) changes nothing a demo does, so the
    line that names its settings is left out.
    """
    with scratch_folder() as folder:
        done = subprocess.run(
            [sys.executable, "-m", name, "--demo"],
            cwd=REPO,
            env={**os.environ, "TMPDIR": str(folder), "NO_COLOR": "1"},
            capture_output=True,
            text=True,
            timeout=600,  # a guard against a hang: seconds, even on a busy machine
        )
    output = UNITTEST_TIME.sub(r"\g<1>0.000s", done.stdout.replace(str(folder), "/tmp"))
    output = "".join(line for line in output.splitlines(True) if not line.startswith(ENV_NOTE))
    if done.returncode != 0:
        raise RuntimeError(f"python -m {name} --demo failed: {done.stderr.strip()}")
    return output.rstrip("\n")


def requests(run: DemoRun) -> list[list[Message]]:
    """The conversation as each model call received it: everything before its reply."""
    messages = run.result.messages
    replies = [index for index, message in enumerate(messages) if message["role"] == "assistant"]
    return [messages[:index] for index in replies[: len(run.turns)]]


@functools.cache
def lab_records(task: str, window: int | None) -> list[Record]:
    """Every chapter's scripted run of a lab task, checked, as `python -m lab compare` makes it.

    In the scratch folder, like the demo runs, so the runs' folder is always the first
    numbered one (lab-compare-1) whatever else the temporary folder holds.
    """
    with scratch_folder() as scratch:
        return offline_records(task, window, scratch)
