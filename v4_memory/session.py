"""Sessions: every conversation saved as it happens, resumable after a restart or a crash.

A session is `.agent/sessions/<id>.jsonl`: a header line, then one line per message,
exactly what the model is sent and its estimated `"tokens"` (a resume never estimates
again), written whole by `machine.jsonl` the moment it exists.
A line with a `type` is a record: the header, or a compaction, "replace the first
`upto` messages of the history, as it stands here, by this summary":

    {"type":"compaction","upto":3,"summary":{"role":"user","content":"Summary of the earlier …"}}

Nothing is rewritten; loading replays the lines, each message through `llm.repair.mend`
(one note in `repairs` per thing mended), so a resumed session has the running one's context.
"""

from __future__ import annotations

import itertools
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from llm.history import History
from llm.repair import NO_RESULT, closing, cuts
from llm.result import close_open_turn, text_of
from llm.shape import message_problem
from llm.tokens import estimate_message
from llm.types import Block, Message
from machine import jsonl
from machine.journal import Journal, Journals
from machine.journal import JournalError as SessionError  # the file's errors: one line each
from v2_todos.todos import plan_updates

SESSIONS_DIR = Path(".agent", "sessions")  # inside the work directory
SCHEMA = 1  # the header's version; a file from a newer version is refused, not misread
CHAPTER = "v4_memory"
INTERRUPTED = NO_RESULT  # the result of a tool call whose result was never written


class SessionStore(Journals):
    """The sessions of one work directory, each a journal: `machine.journal` keeps the files."""

    KIND = "session"

    def create(self, meta: dict[str, Any] | None = None) -> Session:
        """Start a new session; `meta` adds to its header (`model`, `chapter`)."""
        path = self.new_path()
        created = datetime.now().astimezone().isoformat(timespec="seconds")
        header = {"type": "session", "schema": SCHEMA, "id": path.stem, "created": created}
        header |= {"model": None, "chapter": CHAPTER, **(meta or {})}
        return Session(path, self, header)

    def open(self, session_id: str) -> Session:
        """Load a session to continue it, repaired; refused while another process has it."""
        how = "/sessions lists them, --continue resumes the latest"
        return Session(self.existing(session_id, how), self)

    def first_line(self, record: dict[str, Any]) -> str:
        """What `/sessions` shows of a session: the first line of its first task."""
        text = "" if message_problem(record) else text_of(record["content"]).strip()
        return next(iter(text.splitlines()), "")


class Session(Journal):
    """One conversation on disk, open for this process alone until `close()`."""

    KIND = "session"

    def __init__(self, path: Path, store: SessionStore, header: dict[str, Any] | None = None):
        super().__init__(path, store.workdir, sync=store.sync)  # locked, or JournalBusy
        self.header: dict[str, Any] = header or {}
        self.repairs: list[str] = []
        self.compactions = 0  # compaction records applied, in the file and since
        self.history = History()  # repaired and compacted, sizes and calls beside: read-only
        self._written: list[Message] = []  # every message line, as written
        self._stored = 0  # message lines read or written: numbers the repair notes
        try:
            if header:
                self.write(header)
            else:
                self._load()
        except BaseException:
            self.close()  # a session that cannot be written or read lets go of its lock
            raise

    def _load(self) -> None:
        """Replay the file one line at a time: the header, then each message and compaction."""
        records = self.records(self.repairs)
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

    def append(self, message: Message) -> Message:
        """Save `message` as one line, then add to the history what a reload would read (a
        copy); `message` itself is handed back, for the caller to read on."""
        if problem := message_problem(message):
            raise ValueError(f"not a message ({problem}): {json.dumps(message, default=str)[:80]}")
        written = json.loads(jsonl.encode({"role": message["role"], "content": message["content"]}))
        tokens = estimate_message(written)
        self.write({**written, "tokens": tokens})
        self._stored += 1
        self._written.append(written)
        self.history.add(written, self._stored, tokens)  # notes not kept: loading reports them
        return message

    def close_turn(self, results: list[Block], note: str) -> None:
        """Leave the session valid after a turn cut short (Ctrl-C, an error, the turn cap)."""
        messages, count = list(self.history.messages), len(self.history.messages)
        if results:
            messages.append({"role": "user", "content": list(results)})
        close_open_turn(messages, note)
        for message in messages[count:]:
            self.append(message)

    def end_run(self, results: list[Block], why: str, *, close: bool) -> None:
        """A run's one way out: a turn cut short (`why` says how) gets its finished results and
        an answer for each open call; a session the run opened itself, `close`, is closed."""
        if why:
            self.close_turn(results, why)
        if close:
            self.close()

    def boundaries(self) -> list[int]:
        """Every `upto` that `compact` accepts: cuts that leave no tool call without its result."""
        return cuts(self.history.messages)

    def compact(self, upto: int, summary_message: Message) -> None:
        """Replace the first `upto` messages of the history by `summary_message`, for good."""
        summary = {"role": summary_message["role"], "content": summary_message["content"]}
        record = json.loads(jsonl.encode({"type": "compaction", "upto": upto, "summary": summary}))
        history = self.history.replaced(upto, record["summary"])  # or ValueError, saying why
        self.write(record)
        self.history, self.compactions = history, self.compactions + 1


def new_session(workdir: Path, model_name: str) -> Session:
    """A new session in the work directory's session folder."""
    return SessionStore(workdir / SESSIONS_DIR, workdir=workdir).create({"model": model_name})


def plan_of(session: Session) -> list[dict[str, str]]:
    """The plan as the session left it, read at its todo_write calls alone, the last first:
    resuming costs the same at any length, where `latest_plan` would read every message."""
    history = session.messages()
    for at in reversed(session.history.calls("todo_write")):
        if updates := plan_updates(history[at : at + 2]):  # the call, and its result
            return updates[-1][1]
    return []
