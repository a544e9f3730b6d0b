"""Sessions: every conversation saved as it happens, resumable after a restart or a crash.

A session is `.agent/sessions/<id>.jsonl`: a header line, then one line per message,
exactly what the model is sent and its estimated `"tokens"` (a resume never estimates
again), written whole by `machine.jsonl` the moment it exists.
A line with a `type` is a record: the header, or a compaction, "replace the first
`upto` messages of the history, as it stands here, by this summary":

    {"type":"compaction","upto":3,"summary":{"role":"user","content":"Summary so far: ..."}}

Nothing is rewritten; loading replays the lines, each message through `llm.repair.mend`
(one note in `repairs` per thing mended), so a resumed session has the running one's context.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from llm.history import History
from llm.repair import NO_RESULT, closing, cuts
from llm.result import close_open_turn, text_of
from llm.shape import message_problem
from llm.tokens import estimate_message
from llm.types import Block, Message
from machine import (
    Lock,
    LockBusy,
    ToolError,
    agent_files,
    hold,
    jsonl,
    make_agent_folder,
    shown_name,
)
from v2_todos.todos import plan_updates

SESSIONS_DIR = Path(".agent", "sessions")  # inside the work directory
SCHEMA = 1  # the header's version; a file from a newer version is refused, not misread
CHAPTER = "v4_memory"
INTERRUPTED = NO_RESULT  # the result of a tool call whose result was never written
_ID = re.compile(r"[\w-]{1,100}")  # no `/` or `.`, so an id cannot name a file outside the store


class SessionError(Exception):
    """A session that cannot be opened or written; the message says what to do."""


class SessionNotFound(SessionError):
    """No session has this id."""


class SessionBusy(SessionError):
    """Another process has the session open."""


@dataclass(frozen=True)
class SessionInfo:
    """One row of `/sessions`; `messages` counts message lines, compacted ones included."""

    id: str
    created: datetime
    last_active: datetime
    messages: int
    first_line: str
    size: int  # bytes of the file


class SessionStore:
    """The sessions of one work directory; `sync=False` skips the fsync after each line."""

    def __init__(self, root: str | Path, *, sync: bool = True, workdir: str | Path | None = None):
        self.root, self.sync = Path(root), sync
        self.workdir = Path(workdir or root)  # no session file may lead out of it
        self.skipped: list[str] = []  # files `list` could not use, one line each

    def create(self, meta: dict[str, Any] | None = None) -> Session:
        """Start a new session; `meta` adds to its header (`model`, `chapter`)."""
        try:
            make_agent_folder(self.workdir, self.root)
        except (ToolError, OSError) as error:
            raise SessionError(f"cannot keep sessions in {self.root}: {_reason(error)}") from None
        # Sortable by creation time, readable, and unique enough: 16 million a second.
        session_id = datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)
        created = datetime.now().astimezone().isoformat(timespec="seconds")
        header = {"type": "session", "schema": SCHEMA, "id": session_id, "created": created}
        header |= {"model": None, "chapter": CHAPTER, **(meta or {})}
        return Session(self._path(session_id), self, header)

    def open(self, session_id: str) -> Session:
        """Load a session to continue it, repaired; refused while another process has it."""
        how = "/sessions lists them, --continue resumes the latest"
        if not _ID.fullmatch(session_id):
            raise SessionNotFound(f"{session_id[:40]!r} is not a session id: {how}")
        if not self._path(session_id).is_file():
            raise SessionNotFound(f"no session {session_id!r} in {self.root}: {how}")
        return Session(self._path(session_id), self)

    def list(self) -> list[SessionInfo]:
        """Every session, the most recently active first."""
        paths, self.skipped = agent_files(self.workdir, self.root, "*.jsonl")
        infos = []
        for path in paths:
            if not _ID.fullmatch(path.stem):  # no id --resume could take, and no name to show
                self.skipped.append(f"{shown_name(path)}: skipped, its name is not a session id")
                continue
            try:
                infos.append(_info(self.workdir, path))
            except (ToolError, OSError) as error:
                self.skipped.append(f"{path}: skipped, {_reason(error)}")
        return sorted(infos, key=lambda info: info.last_active, reverse=True)

    def latest(self) -> SessionInfo | None:
        """The most recently active session, or None when there is none yet."""
        return next(iter(self.list()), None)

    def _path(self, session_id: str) -> Path:
        return self.root / f"{session_id}.jsonl"


class Session:
    """One conversation on disk, open for this process alone until `close()`."""

    def __init__(self, path: Path, store: SessionStore, header: dict[str, Any] | None = None):
        self.path, self.id, self.workdir, self._sync = path, path.stem, store.workdir, store.sync
        self.header: dict[str, Any] = header or {}
        self.repairs: list[str] = []
        self.compactions = 0  # compaction records applied, in the file and since
        self.history = History()  # repaired and compacted, sizes and calls beside: read-only
        self._written: list[Message] = []  # every message line, as written
        self._stored = 0  # message lines read or written: numbers the repair notes
        self._lock: Lock | None = _lock(self.workdir, path)
        try:
            if header:
                self._write(header)
            else:
                self._load()
        except BaseException:
            self.close()  # a session that cannot be written or read lets go of its lock
            raise

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Let another process open the session."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def _load(self) -> None:
        """Replay the file one line at a time: the header, then each message and compaction."""
        records = jsonl.read(self.path, self.repairs, workdir=self.workdir)
        try:
            first = next(records, {})
            if first.get("type") == "session":
                self.header = first
                if not isinstance(schema := first.get("schema", SCHEMA), int) or schema > SCHEMA:
                    raise SessionError(
                        f"session {self.id} has format version {schema!r}, newer than this code "
                        f"reads ({SCHEMA}): update the course to open it"
                    )
            else:
                self.repairs.append("no header line: the session's date and model are unknown")
                records = itertools.chain([first] if first else [], records)
            with jsonl.loading():  # millions of objects, kept: not walked by the collector
                for record in records:
                    self._replay(record)
        except (ToolError, OSError) as error:
            raise SessionError(f"session {self.id} cannot be read: {_reason(error)}") from None
        closing(self.history.messages, self._stored, self.repairs)  # noted; messages() answers

    def _replay(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind is None:
            self._stored += 1
            tokens = record.pop("tokens", None)
            if problem := message_problem(record):
                self.repairs.append(f"message {self._stored}: {problem}, skipped")
            else:
                self._written.append(record)
                self.repairs += self.history.add(record, self._stored, tokens)
        elif kind == "compaction":
            try:
                self.history = self.history.replaced(record.get("upto"), record.get("summary"))
                self.compactions += 1
            except ValueError as error:  # an earlier line was lost, so the cut no longer fits
                self.repairs.append(f"compaction after message {self._stored} ignored: {error}")
        else:
            self.repairs.append(f"record of unknown type {kind!r} skipped")

    def transcript(self) -> list[Message]:
        """Every message as written, compacted ones included, for a person to read back."""
        return list(self._written)

    def messages(self) -> list[Message]:
        """The history as the model sees it, waiting calls answered.  Read-only: no copy."""
        history, waiting = self.history.messages, closing(self.history.messages, 0, [])
        return [*history, *waiting] if waiting else history

    def append(self, message: Message) -> None:
        """Save `message` as one line, then add to the history what a reload would read."""
        self._check_open()
        if problem := message_problem(message):
            raise ValueError(f"not a message ({problem}): {json.dumps(message, default=str)[:80]}")
        message = json.loads(jsonl.encode({"role": message["role"], "content": message["content"]}))
        tokens = estimate_message(message)
        self._write({**message, "tokens": tokens})
        self._stored += 1
        self._written.append(message)
        self.history.add(message, self._stored, tokens)  # notes not kept: loading reports them

    def close_turn(self, results: list[Block], note: str) -> None:
        """Leave the session valid after a turn cut short (Ctrl-C, an error, the turn cap)."""
        messages, count = list(self.history.messages), len(self.history.messages)
        if results:
            messages.append({"role": "user", "content": list(results)})
        close_open_turn(messages, note)
        for message in messages[count:]:
            self.append(message)

    def boundaries(self) -> list[int]:
        """Every `upto` that `compact` accepts: cuts that leave no tool call without its result."""
        return cuts(self.history.messages)

    def compact(self, upto: int, summary_message: Message) -> None:
        """Replace the first `upto` messages of the history by `summary_message`, for good."""
        self._check_open()
        summary = {"role": summary_message["role"], "content": summary_message["content"]}
        record = json.loads(jsonl.encode({"type": "compaction", "upto": upto, "summary": summary}))
        history = self.history.replaced(upto, record["summary"])  # or ValueError, saying why
        self._write(record)
        self.history, self.compactions = history, self.compactions + 1

    def _write(self, record: dict[str, Any]) -> None:
        """One line, or a SessionError in one line; what was not written is not in memory."""
        try:
            jsonl.append(self.path, record, sync=self._sync, workdir=self.workdir)
        except (ToolError, OSError) as error:
            raise SessionError(f"session {self.id} cannot be saved: {_reason(error)}") from None

    def _check_open(self) -> None:
        if self._lock is None:
            raise SessionError(f"session {self.id} is closed: open it again to add to it")


def plan_of(session: Session) -> list[dict[str, str]]:
    """The plan as the session left it, read at its todo_write calls alone, the last first:
    resuming costs the same at any length, where `latest_plan` would read every message."""
    history = session.messages()
    for at in reversed(session.history.calls("todo_write")):
        if updates := plan_updates(history[at : at + 2]):  # the call, and its result
            return updates[-1][1]
    return []


def _reason(error: Exception) -> str:
    """An error in a few words: the OS's own text for an OSError (`No space left on device`)."""
    return (error.strerror if isinstance(error, OSError) else None) or str(error)


def _lock(workdir: Path, path: Path) -> Lock:
    """Lock `<id>.lock` while the session is open; a process that ends, even by kill -9, lets go."""
    try:
        return hold(path.with_suffix(".lock"), inside=workdir)  # refuses at once, never waits
    except LockBusy as busy:
        mine = busy.holder == str(os.getpid())
        who = "this process" if mine else f"another process (pid {busy.holder})"
        why = f"is open in {who}: close it there first, or start a new session"
        raise SessionBusy(f"session {path.stem} {why}") from None
    except (ToolError, OSError) as error:
        raise SessionError(f"session {path.stem} cannot be locked: {_reason(error)}") from None


def _info(workdir: Path, path: Path) -> SessionInfo:
    """What `/sessions` shows about one file, read line by line, decoding only two lines."""
    status = path.stat()
    last_active = datetime.fromtimestamp(status.st_mtime).astimezone()
    lines = jsonl.lines(path, workdir=workdir, limit=None)  # a session of any length is listed
    header, first_user, count = _decoded(next(lines, b"")), {}, 0
    for line in lines:  # `append` writes `role` first: only a message line starts so
        if line.startswith(b'{"role":'):
            count += 1
            if not first_user and line.startswith(b'{"role":"user"'):
                first_user = _decoded(line)
    try:
        created = datetime.fromisoformat(header["created"])
    except (KeyError, TypeError, ValueError):
        created = last_active
    text = "" if message_problem(first_user) else text_of(first_user["content"]).strip()
    first_line = next(iter(text.splitlines()), "")
    return SessionInfo(path.stem, created, last_active, count, first_line, status.st_size)


def _decoded(line: bytes) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return {}
    return record if isinstance(record, dict) else {}
