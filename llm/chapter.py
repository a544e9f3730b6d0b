"""What the shared command line knows of a chapter: its `run`, its demo, its own flags.

A chapter's `__main__.py` describes itself with a `Chapter` and hands it to
`llm.cli.main`; nothing in `llm` ever imports a chapter.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .console import Console
from .result import RunResult
from .types import Model

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
    # prompt's state (the keyword arguments of the next run: "model", "history", and
    # what `setup` added) and the rest of the line, may change the state, and returns
    # the text to print.
    commands: dict[str, Command] = field(default_factory=dict)
    # A chapter whose runs share more than the conversation (chapter 4: a session on
    # disk) adds its own flags, and builds from them the extra keyword arguments of
    # every run (`setup`).
    flags: Callable[[argparse.ArgumentParser], None] | None = None
    setup: Callable[[argparse.Namespace, Path, Model, Console], dict[str, Any]] | None = None
    # The demo's later steps, each a new process once the first task is done (chapter 4:
    # the session resumed, then a new one): the cassette it replays, beside the demo
    # cassette, and the flags it adds.  Each step is also given the chapter's flags named
    # in `demo_passes_on` as the demo was (chapter 4: its budget).
    demo_steps: list[tuple[str, list[str]]] = field(default_factory=list)
    demo_passes_on: list[str] = field(default_factory=list)
    # Whether each run of the interactive prompt is given the conversation so far as
    # `history`; a chapter that keeps it itself (chapter 4: in the session) says False.
    history: bool = True
