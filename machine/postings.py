"""An inverted index kept in an SQLite file beside the logs it is built from.

For each term, the documents that hold it, how often, and each document's length: what
a ranking such as BM25 reads, term by term, and nothing of how it scores.  The logs stay
the truth; the file is what a fresh process would otherwise rebuild by reading every
log again, so it opens at once at any size.  It records how far it read each log (its
bytes, its time of change, its records): a log that grew is read on from there, one
that shrank, went away or changed otherwise (a hand edit, a fresh clone of a folder
that shipped a file of its own) makes the file be built again from every log.

The file is a cache, never trusted for more: one that is a link, not this program's
tables, or not a database at all is replaced; one that cannot be written (a read-only
folder) gives way to the same tables in memory.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .errors import ToolError
from .locks import hold
from .logs import Logs, State
from .own_files import agent_path, open_agent_file

SCHEMA = [
    "CREATE TABLE logs (name TEXT PRIMARY KEY, size INTEGER, changed INTEGER, records INTEGER)",
    "CREATE TABLE docs (id TEXT PRIMARY KEY, length INTEGER, key TEXT, record TEXT)",
    "CREATE INDEX docs_by_key ON docs (key)",
    "CREATE TABLE postings (term TEXT, id TEXT, count INTEGER, length INTEGER, "
    "PRIMARY KEY (term, id)) WITHOUT ROWID",
    "CREATE TABLE totals (docs INTEGER, length INTEGER)",
    "CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER)",
    "CREATE TABLE problems (line TEXT)",
]
Apply = Callable[[dict[str, Any], str], None]  # one log record and its log's name


class PostingsFile:
    """The index at `path`, built from `logs`; `sync=False` (a bulk load) lets a commit
    return before the disk has it.  Each catch-up is given `apply`, which reads one record
    into the index (by `add` and `remove`): a file that kept it would keep its owner alive
    in a cycle, and the file open, after the owner was done with it."""

    def __init__(self, path: Path, logs: Logs, *, sync: bool = True) -> None:
        self.path, self.logs, self.sync = path, logs, sync
        self._problems: list[str] = []  # noted in the transaction under way
        self.db, self.on_disk = self._open()

    def __del__(self) -> None:
        """Let go of the file with its last user: a connection of `sqlite3` is freed only by
        a collection (its statement cache refers back to it), and until then Windows
        refuses to delete the folder it is in."""
        with contextlib.suppress(Exception):  # never opened, or the interpreter is ending
            self.db.close()

    def _open(self) -> tuple[sqlite3.Connection, bool]:
        """The file's connection, and True; the same tables in memory, and False, where the
        file cannot be (its folder not made yet, or read-only)."""
        try:
            path = agent_path(self.logs.workdir, self.path)
            if not path.parent.is_dir():  # made by the first write, not by a look
                raise FileNotFoundError(path.parent)
            for end in ("", "-journal", "-wal", "-shm"):
                _only_a_file(path.with_name(path.name + end))
            db = _connect(path, self.logs.workdir)
        except (sqlite3.OperationalError, OSError, ToolError):
            return _connect(":memory:"), False
        # Synced, a commit survives a power cut whole (a crash of the program it always does).
        db.execute(f"PRAGMA synchronous = {'FULL' if self.sync else 'OFF'}")
        return db, True

    # --- keeping up with the logs ------------------------------------------------------

    def catch_up(self, apply: Apply) -> None:
        """Apply what the logs gained since the file last read them; all again if they
        changed otherwise.  Another process that catches up at once waits for this one."""
        read = self._read()
        if self.logs.unchanged(read) and (read or not self.totals()[0]):
            return  # documents with no log read for them were planted: built again below
        with self.writing(apply):
            pass

    @contextlib.contextmanager
    def writing(self, apply: Apply) -> Iterator[None]:
        """One transaction, caught up first: what is added in it is added once, whoever
        else caught up meanwhile."""
        if not self.on_disk and self.path.parent.is_dir():  # its folder made since
            self.db, self.on_disk = self._open()
        with _transaction(self.db, "IMMEDIATE"):
            self.logs.read = self._read()
            self._problems = problems = []  # in the order met, `apply`'s notes with them
            planted = not self.logs.read and self.totals()[0]
            if planted or not self.logs.read_new(apply, problems):
                self._clear()
                self.logs.read = {}
                self.logs.read_new(apply, problems)
            yield
            if problems:
                self._note(problems)
            rows = [(name, *state) for name, state in self.logs.read.items()]
            self.db.executemany("INSERT OR REPLACE INTO logs VALUES (?, ?, ?, ?)", rows)

    @contextlib.contextmanager
    def locked(self, apply: Apply, what: str) -> Iterator[None]:
        """`writing`, under the logs' lock (`.lock` in their folder, waited for): no two
        writers of any process append at once.  An OSError (a full disk, a read-only folder)
        comes out as a ToolError in one line that says `what` cannot be written."""
        lock = self.logs.folder / ".lock"  # inside the work directory: a planted link is refused
        try:
            with hold(lock, wait=True, inside=self.logs.workdir), self.writing(apply):
                yield
        except OSError as error:
            raise ToolError(f"{what} cannot be written: {error.strerror or error}") from None

    def append(self, name: str, record: dict[str, Any], apply: Apply) -> None:
        """Append `record` to log `name`, then apply it: disk first, so a failed write
        changes nothing."""
        self.logs.append(name, record, sync=self.sync)
        apply(record, name)

    def _read(self) -> dict[str, State]:
        rows = self.db.execute("SELECT name, size, changed, records FROM logs")
        return {name: (size, changed, records) for name, size, changed, records in rows}

    def _clear(self) -> None:
        for table in ("logs", "docs", "postings", "counters", "problems"):
            self.db.execute(f"DELETE FROM {table}")
        self.db.execute("UPDATE totals SET docs = 0, length = 0")

    def _note(self, problems: list[str]) -> None:
        known = {line for (line,) in self.db.execute("SELECT line FROM problems")}
        new = [(line,) for line in dict.fromkeys(problems) if line not in known]
        self.db.executemany("INSERT INTO problems VALUES (?)", new)

    # --- what `apply` changes, inside `writing` ----------------------------------------

    def add(self, doc_id: str, terms: list[str], key: str, record: dict[str, Any]) -> None:
        """A document with its terms (repeats counted), its `key` (documents are found by
        it: `find`) and the record a search shows."""
        length = len(terms)
        self.db.execute(
            "INSERT INTO docs VALUES (?, ?, ?, ?)", (doc_id, length, key, json.dumps(record))
        )
        rows = [(term, doc_id, count, length) for term, count in Counter(terms).items()]
        self.db.executemany("INSERT INTO postings VALUES (?, ?, ?, ?)", rows)
        self.db.execute("UPDATE totals SET docs = docs + 1, length = length + ?", (length,))

    def remove(self, doc_id: str, terms: tuple[str, ...]) -> None:
        """The document out of every posting of its distinct `terms`."""
        (length,) = self.db.execute("SELECT length FROM docs WHERE id = ?", (doc_id,)).fetchone()
        self.db.execute("DELETE FROM docs WHERE id = ?", (doc_id,))
        self.db.executemany(
            "DELETE FROM postings WHERE term = ? AND id = ?", [(term, doc_id) for term in terms]
        )
        self.db.execute("UPDATE totals SET docs = docs - 1, length = length - ?", (length,))

    def count_up(self, name: str, value: int) -> None:
        """Keep the highest `value` seen under `name` (numbers once given, never again)."""
        self.db.execute(
            "INSERT INTO counters VALUES (?, ?) ON CONFLICT (name) "
            "DO UPDATE SET value = max(value, excluded.value)",
            (name, value),
        )

    def note(self, problem: str) -> None:
        """What `apply` had to skip, kept with the index."""
        self._problems.append(problem)

    # --- reading -----------------------------------------------------------------------

    def postings(self, term: str) -> list[tuple[str, int, int]]:
        """(document, count, its length) for every document holding `term`."""
        query = "SELECT id, count, length FROM postings WHERE term = ?"
        return self.db.execute(query, (term,)).fetchall()

    def totals(self) -> tuple[int, int]:
        """How many documents, and all their lengths added up."""
        return self.db.execute("SELECT docs, length FROM totals").fetchone()

    def record(self, doc_id: str) -> dict[str, Any] | None:
        found = self.db.execute("SELECT record FROM docs WHERE id = ?", (doc_id,)).fetchone()
        return json.loads(found[0]) if found else None

    def records(self) -> dict[str, dict[str, Any]]:
        """Every document's record, in the order they were added."""
        rows = self.db.execute("SELECT id, record FROM docs ORDER BY rowid")
        return {doc_id: json.loads(record) for doc_id, record in rows}

    def find(self, key: str) -> str | None:
        """The first document added with `key`, if any is left."""
        query = "SELECT id FROM docs WHERE key = ? ORDER BY rowid LIMIT 1"
        found = self.db.execute(query, (key,)).fetchone()
        return found[0] if found else None

    def counter(self, name: str) -> int:
        found = self.db.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()
        return found[0] if found else 0

    def problems(self) -> list[str]:
        return [line for (line,) in self.db.execute("SELECT line FROM problems ORDER BY rowid")]

    def vocabulary(self) -> dict[str, tuple[int, int]]:
        """Each term: (documents holding it, occurrences in all)."""
        rows = self.db.execute("SELECT term, count(*), sum(count) FROM postings GROUP BY term")
        return {term: (docs, count) for term, docs, count in rows}


def _only_a_file(path: Path) -> None:
    """Nothing at `path` but a regular file: a link (SQLite would write through it) or a
    pipe (it would wait on it) planted there is taken away, never followed."""
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISREG(os.lstat(path).st_mode):
            path.unlink()


def _private(workdir: Path, path: Path) -> None:
    """The index file made, or kept, readable by this user alone before SQLite opens it:
    it holds every memory's text, and SQLite gives its journals the file's own mode."""
    fd = open_agent_file(workdir, path, create=True)
    try:
        if hasattr(os, "fchmod"):  # Windows keeps a file to its owner by other means
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


def _connect(path: Path | str, workdir: Path | None = None) -> sqlite3.Connection:
    """A connection to this index at `path` (a file in `workdir`, made private, or memory),
    its tables made if the file is new; a file there that is not this index (not a
    database, or other tables) is replaced."""
    for _ in range(2):
        if workdir is not None:
            _private(workdir, Path(path))
        db = sqlite3.connect(path, isolation_level=None, timeout=60)
        try:
            with _transaction(db, "IMMEDIATE"):  # one process makes the tables, not two
                found = _schema(db)
                if not found:
                    for statement in SCHEMA:
                        db.execute(statement)
                    db.execute("INSERT INTO totals VALUES (0, 0)")
            if found in ([], sorted(SCHEMA)):
                return db
        except sqlite3.OperationalError:  # locked for a minute, read-only: not for here
            db.close()
            raise
        except sqlite3.DatabaseError:  # not a database at all
            pass
        db.close()
        Path(path).unlink()
    raise sqlite3.OperationalError(f"{path} cannot be made an index")


def _schema(db: sqlite3.Connection) -> list[str]:
    rows = db.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL")
    return sorted(sql for (sql,) in rows)


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection, kind: str = "") -> Iterator[None]:
    db.execute(f"BEGIN {kind}")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
