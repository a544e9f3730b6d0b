"""Sessions on the command line: `--continue`, `--resume ID`, `/sessions` and `/resume ID`.

A chapter that keeps each conversation in a file (chapter 4) describes how in a
`Sessions` and gives it to its `Chapter`: the store of a work directory, the error that
store raises, and what else only such a chapter adds (its own flags, the demo's later
steps, each a new process that resumes or starts a session).  Every run then works in
`state["session"]`, resumed or new, one for the whole interactive prompt; nothing here
knows how a session is written.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .console import Console, counted, shown_size
from .errors import UsageError
from .types import Model

# A chapter's own flags, and the keyword arguments of every run it builds from them.
Flags = Callable[[argparse.ArgumentParser], None]
Setup = Callable[[argparse.Namespace, Path, Model, Console], dict[str, Any]]


class Session(Protocol):
    id: str
    workdir: Path  # the work directory it belongs to
    repairs: list[str]  # what loading it mended, one line each

    def messages(self) -> list[Any]: ...
    def close(self) -> None: ...


class Store(Protocol):
    root: Path

    def create(self, meta: dict[str, Any]) -> Session: ...
    def open(self, session_id: str) -> Session: ...
    def list(self) -> list[Any]: ...  # rows with id, last_active, messages, size, first_line


@dataclass
class Sessions:
    """How a chapter keeps its runs in sessions, and what it adds to the command line."""

    store: Callable[[Path], Store]  # the sessions of a work directory
    error: type[Exception]  # what the store raises: one line that says what to do
    flags: Flags | None = None  # the chapter's own flags (chapter 4: --context-budget)
    setup: Setup | None = None  # and the extra keyword arguments it builds from them
    # The demo's later steps, each a new process once the first task is done (chapter 4:
    # the session resumed, then a new one): the cassette it replays, beside the demo
    # cassette, and the flags it adds.  Each step is also given the chapter's flags named
    # in `demo_passes_on` as the demo was (chapter 4: its budget).
    demo_steps: list[tuple[str, list[str]]] = field(default_factory=list)
    demo_passes_on: list[str] = field(default_factory=list)

    def add_flags(self, parser: argparse.ArgumentParser) -> None:
        latest = "resume the latest session"
        parser.add_argument("--continue", dest="resume_latest", action="store_true", help=latest)
        parser.add_argument("--resume", metavar="ID", help="resume the session with this id")
        if self.flags:
            self.flags(parser)

    def open(
        self, args: argparse.Namespace, workdir: Path, model: Model, console: Console
    ) -> dict[str, Any]:
        """Every run's extra arguments: the chapter's, and the session they all work in. The
        demo's first run starts its own session, so that the next step can resume it."""
        if args.demo and (args.resume is not None or args.resume_latest):
            raise UsageError("--demo starts its own session: drop --continue and --resume")
        state = self.setup(args, workdir, model, console) if self.setup else {}
        if args.demo:
            return state
        store = self.store(workdir)
        try:
            if args.resume is None and not args.resume_latest:
                return state | {"session": store.create({"model": model.name})}
            session = store.open(latest_id(store) if args.resume is None else args.resume)
        except self.error as error:
            raise UsageError(str(error)) from None
        console.note(resumed(session))
        for repair in session.repairs:
            console.warn(f"repaired: {repair}")
        return state | {"session": session}

    def commands(self) -> dict[str, Callable[[dict[str, Any], str], str]]:
        """What the interactive prompt adds: `/sessions` and `/resume ID`."""
        return {"/sessions": self.list, "/resume": self.resume}

    def list(self, state: dict[str, Any], _: str) -> str:
        """`/sessions`: every session of the work directory, the current one starred."""
        session = state["session"]
        rows = [
            f"{'*' if info.id == session.id else ' '} {info.id}  "
            f"{info.last_active:%Y-%m-%d %H:%M}  {info.messages:>4} messages "
            f"{shown_size(info.size):>8}  {info.first_line[:50]}"
            for info in self.store(session.workdir).list()
        ]
        return "\n".join(rows) or "no sessions yet"

    def resume(self, state: dict[str, Any], session_id: str) -> str:
        """`/resume ID`: go on in another session; the tasks typed next are added to it."""
        if not session_id:
            return "/resume ID: /sessions lists the ids"
        current = state["session"]
        try:
            session = self.store(current.workdir).open(session_id)
        except self.error as error:
            return str(error)
        current.close()
        state["session"] = session
        return resumed(session)


def latest_id(store: Store) -> str:
    latest = next(iter(store.list()), None)
    if latest is None:
        raise UsageError(f"no session to continue in {store.root}: start one with a task")
    return latest.id


def resumed(session: Session) -> str:
    return f"resumed session {session.id}: {counted(len(session.messages()), 'message')}"
