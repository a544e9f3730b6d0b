"""The chapters' offline demos, run here so that every quiz answer is read from what they did.

A quiz question asks what a demo does; its right answer is never typed in: it is read
from the run below, made with the chapter's own `run` on its demo cassette and a fresh
copy of its demo workspace (`lab.exercises.check.run_chapter`).  A change to a chapter
that changes what its demo does changes the answer with it.

Imports `lab.chapters`, `lab.exercises.check` (which run the chapters) and `llm`; nothing
of the quiz's own.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from lab.chapters import chapter
from lab.exercises.check import run_chapter
from llm import Message, Model, Reply, RunResult
from llm.cassette import ReplayModel
from llm.wrapper import Wrapper


class Watched(Wrapper):
    """Keeps what each model call of the parent was given and what it returned."""

    def __init__(self, inner: Model) -> None:
        super().__init__(inner)
        self.replies: list[Reply] = []
        self.tools_offered: list[list[str]] = []

    def after(self, reply: Reply, system: str, tools: list[dict[str, Any]] | None) -> None:
        self.replies.append(reply)
        self.tools_offered.append([tool["name"] for tool in tools or []])

    def child(self, key: str) -> Model:
        """A child agent's model (chapter 3) is not watched: the questions ask about the
        parent's turns, and the children's results are in the run result."""
        child = getattr(self.inner, "child", None)
        return child(key) if callable(child) else self.inner


@dataclass
class Demo:
    """A chapter's demo as run: its result, and the replies and tools of each turn."""

    result: RunResult
    replies: list[Reply] = field(default_factory=list)
    tools_offered: list[list[str]] = field(default_factory=list)

    def request(self, turn: int) -> list[Message]:
        """The messages the model call of `turn` (from 1) was sent: all before its reply."""
        messages = self.result.messages
        replies = [
            index for index, message in enumerate(messages) if message["role"] == "assistant"
        ]
        return messages[: replies[turn - 1]]


@functools.cache
def demo(name: str) -> Demo:
    """The first step of `python -m NAME --demo`, run once per process."""
    spec = chapter(name)
    model = Watched(ReplayModel(spec.demo_cassette))
    result = run_chapter(name, spec.demo_cassette, model=model)
    return Demo(result, model.replies, model.tools_offered)
