"""What the shared command line knows of a chapter: its `run`, its demo, its own flags.

A chapter's `__main__.py` describes itself with a `Chapter` and hands it to
`llm.cli.main`; nothing in `llm` ever imports a chapter.  A chapter that keeps its
conversations in sessions (chapter 4) adds a `Sessions` (`llm/sessions.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .result import RunResult
from .sessions import Sessions

DEFAULT_TURNS = 30  # model calls a run may make, unless --max-turns says otherwise

# An interactive command: given the prompt's state and the rest of the line, the text to print.
Command = Callable[[dict[str, Any], str], str]


@dataclass
class Chapter:
    """What the shared command line needs to know about one chapter's agent."""

    name: str  # the package name, e.g. "v1_tool_loop"
    run: Callable[..., RunResult]
    demo_workspace: Path  # copied to a fresh temporary folder for every --demo
    demo_cassette: Path  # its header holds the demo task
    summary: str
    # Extra commands of the interactive prompt, e.g. "/todos": each is given the
    # prompt's state (the keyword arguments of the next run: "model", "history" or
    # "session", and what the chapter's setup added) and the rest of the line, may change
    # the state, and returns the text to print.
    commands: dict[str, Command] = field(default_factory=dict)
    # A chapter that keeps each conversation in a session on disk (chapter 4) says how,
    # and what it adds to the command line; the others keep it in `state["history"]`.
    sessions: Sessions | None = None
