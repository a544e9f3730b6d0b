"""Journals: JSON-lines files of records, each open in one process at a time, in a folder.

Chapter 4 keeps each conversation in one (`v4_memory.session`).  What any such file
needs and no lesson is about lives here: an id that sorts by creation time and can name
no file outside its folder, a lock that a killed process lets go of, the OS's error in
one line, and a listing that reads a file of any length without decoding it.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from . import jsonl
from .errors import ToolError
from .locks import Lock, LockBusy, hold
from .own_files import agent_files, make_agent_folder, shown_name

ID = re.compile(r"[\w-]{1,100}")  # no `/` or `.`, so an id cannot name a file outside the folder


class JournalError(Exception):
    """A journal that cannot be opened or written; the message says what to do."""


class JournalNotFound(JournalError):
    """No journal has this id."""


class JournalBusy(JournalError):
    """Another process has the journal open."""


def reason(error: Exception) -> str:
    """An error in a few words: the OS's own text for an OSError (`No space left on device`)."""
    return (error.strerror if isinstance(error, OSError) else None) or str(error)


@dataclass(frozen=True)
class JournalInfo:
    """One row of a listing; `messages` counts the lines that start as `Journals.COUNTED`."""

    id: str
    created: datetime
    last_active: datetime
    messages: int
    first_line: str
    size: int  # bytes of the file


class Journal:
    """One journal file, locked for this process from the start until `close()`."""

    KIND = "journal"  # the word the error messages use

    def __init__(self, path: Path, workdir: Path, *, sync: bool = True) -> None:
        self.path, self.id, self.workdir, self.sync = path, path.stem, workdir, sync
        self._lock: Lock | None = self._hold()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Let another process open the journal."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def records(self, problems: list[str]) -> Iterator[dict[str, Any]]:
        """Every record that can be read, in order; each line that cannot, noted in `problems`."""
        try:
            yield from jsonl.read(self.path, problems, workdir=self.workdir)
        except (ToolError, OSError) as error:
            raise JournalError(f"{self.KIND} {self.id} cannot be read: {reason(error)}") from None

    def write(self, record: dict[str, Any]) -> None:
        """One line, or a JournalError in one line; refused once the journal is closed."""
        if self._lock is None:
            raise JournalError(f"{self.KIND} {self.id} is closed: open it again to add to it")
        try:
            jsonl.append(self.path, record, sync=self.sync, workdir=self.workdir)
        except (ToolError, OSError) as error:
            raise JournalError(f"{self.KIND} {self.id} cannot be saved: {reason(error)}") from None

    def _hold(self) -> Lock:
        """Lock `<id>.lock`: refused at once, never waited for; a process killed lets go of it."""
        try:
            return hold(self.path.with_suffix(".lock"), inside=self.workdir)
        except LockBusy as busy:
            mine = busy.holder == str(os.getpid())
            who = "this process" if mine else f"another process (pid {busy.holder})"
            why = f"is open in {who}: close it there first, or start a new {self.KIND}"
            raise JournalBusy(f"{self.KIND} {self.id} {why}") from None
        except (ToolError, OSError) as error:
            raise JournalError(f"{self.KIND} {self.id} cannot be locked: {reason(error)}") from None


class Journals:
    """The journals kept in `root`, inside `workdir`; `sync=False` skips the fsync of each line."""

    KIND = "journal"
    COUNTED = b'{"role":'  # a listing counts the lines that start so (a record's first key)
    FIRST = b'{"role":"user"'  # and shows the first line of the first record that starts so

    def __init__(self, root: str | Path, *, sync: bool = True, workdir: str | Path | None = None):
        self.root, self.sync = Path(root), sync
        self.workdir = Path(workdir or root)  # no journal may lead out of it
        self.skipped: list[str] = []  # files `list` could not use, one line each

    def new_path(self) -> Path:
        """Where a new journal goes, its folder made: ids sort by creation time."""
        try:
            make_agent_folder(self.workdir, self.root)
        except (ToolError, OSError) as error:
            raise JournalError(
                f"cannot keep {self.KIND}s in {self.root}: {reason(error)}"
            ) from None
        # Readable, and unique enough: 16 million a second.
        return self.path(datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3))

    def existing(self, journal_id: str, how: str) -> Path:
        """The file of journal `journal_id`; JournalNotFound, ending with `how`, if none."""
        if not ID.fullmatch(journal_id):
            raise JournalNotFound(f"{journal_id[:40]!r} is not a {self.KIND} id: {how}")
        if not self.path(journal_id).is_file():
            raise JournalNotFound(f"no {self.KIND} {journal_id!r} in {self.root}: {how}")
        return self.path(journal_id)

    def path(self, journal_id: str) -> Path:
        return self.root / f"{journal_id}.jsonl"

    def list(self) -> list[JournalInfo]:
        """Every journal, the most recently active first."""
        paths, self.skipped = agent_files(self.workdir, self.root, "*.jsonl")
        infos = []
        for path in paths:
            if not ID.fullmatch(path.stem):  # no id to open it by, and no name to show
                self.skipped.append(
                    f"{shown_name(path)}: skipped, its name is not a {self.KIND} id"
                )
                continue
            try:
                infos.append(self._info(path))
            except (ToolError, OSError) as error:
                self.skipped.append(f"{path}: skipped, {reason(error)}")
        return sorted(infos, key=lambda info: info.last_active, reverse=True)

    def latest(self) -> JournalInfo | None:
        """The most recently active journal, or None when there is none yet."""
        return next(iter(self.list()), None)

    def first_line(self, record: dict[str, Any]) -> str:
        """What a listing shows of the first record that starts as FIRST."""
        return ""

    def _info(self, path: Path) -> JournalInfo:
        """One row of `list`, the file read line by line, only two lines decoded."""
        status = path.stat()
        last_active = datetime.fromtimestamp(status.st_mtime).astimezone()
        lines = jsonl.lines(path, workdir=self.workdir, limit=None)  # of any length
        header, first, count = _decoded(next(lines, b"")), {}, 0
        for line in lines:
            if line.startswith(self.COUNTED):
                count += 1
                if not first and line.startswith(self.FIRST):
                    first = _decoded(line)
        try:
            created = datetime.fromisoformat(header["created"])
        except (KeyError, TypeError, ValueError):
            created = last_active
        first_line = self.first_line(first)
        return JournalInfo(path.stem, created, last_active, count, first_line, status.st_size)


def _decoded(line: bytes) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return {}
    return record if isinstance(record, dict) else {}
