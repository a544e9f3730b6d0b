"""Append-only JSON-lines files that survive a crash: one record per line, each written whole.

Chapter 4's sessions and daily memory logs are both kept this way.  The rules that
make a crash harmless are few:

- a record is encoded first, then written with a single `write` call (newline
  included) and `fsync`ed, so the file never holds half of a record followed by
  another one;
- a process killed in the middle of that write leaves at most one torn line, at
  the end; the next `append` notices the missing newline and starts on a fresh
  line, so nothing appended later is glued to the torn piece;
- reading keeps every line that decodes, drops the torn last line, skips an
  undecodable line in the middle, and says what it did in `problems`.

Nothing is ever rewritten in place: the file only grows.  A file is read one line at a
time, so reading it takes the memory of its records and of one line, never of the whole
file besides.  Every file is opened by `files.open_agent_file`: never through a link,
only a regular file, only inside `workdir` (by default the file's own folder), since a
cloned repository may ship any of these files.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ToolError
from .files import read_at
from .own_files import AGENT_FILE_LIMIT, READ_CHUNK, open_agent_file


@dataclass
class Loaded:
    """The records of a file, and one line for each thing that had to be repaired."""

    records: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    size: int = 0  # bytes read


def encode(record: dict[str, Any]) -> bytes:
    """One line of UTF-8 JSON, newline included; compact, so large sessions stay small.

    A lone surrogate (half an emoji, which a model can send) has no UTF-8: such a record
    is written with `\\u` escapes, which read back as the same text.
    """
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    try:
        return line.encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(record, separators=(",", ":")) + "\n").encode("ascii")


def append(
    path: str | Path, record: dict[str, Any], *, sync: bool = True, workdir: Path | None = None
) -> None:
    """Add `record` as the last line of `path`, creating the file if needed.

    `sync=False` skips the fsync: faster, but a power cut may lose the last records
    (a process crash cannot, since the data is already in the kernel).
    """
    data = encode(record)
    path = Path(path)
    try:  # the file is there after its first line: its folder need not be made again
        fd = open_agent_file(workdir or path.parent, path, append=True)
    except FileNotFoundError:
        fd = open_agent_file(workdir or path.parent, path, create=True, append=True)
    try:
        if _ends_torn(fd):
            data = b"\n" + data  # close the torn line, so this record stands alone
        written = os.write(fd, data)
        while written < len(data):  # only on a full disk or a signal; usually never
            written += os.write(fd, data[written:])
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _ends_torn(fd: int) -> bool:
    """True when the file is not empty and its last byte is not a newline."""
    size = os.fstat(fd).st_size
    return size > 0 and read_at(fd, 1, size - 1) != b"\n"


LINE_LIMIT = 16_000_000  # bytes of one record: far more than any message; a longer line is damage


def lines(
    path: Path,
    *,
    workdir: Path | None = None,
    limit: int | None = AGENT_FILE_LIMIT,
    problems: list[str] | None = None,
) -> Iterator[bytes]:
    """The lines of `path` one at a time, each with its newline (the last one may lack it).

    Raises ToolError for a file that may not be read at all (a link, not a regular
    file, more than `limit` bytes), before the first line or when it grows past it;
    `limit=None` reads a file of any size (a session, which its appends may make as long
    as they like).  A line longer than LINE_LIMIT is passed over without being held,
    given as an empty line, and noted in `problems`.
    """
    fd = open_agent_file(workdir or path.parent, path)
    too_big = f"'{path.name}' is larger than {limit or 0:,} bytes; it is left alone"
    with os.fdopen(fd, "rb") as file:
        if limit is not None and os.fstat(fd).st_size > limit:
            raise ToolError(too_big)
        read, number = 0, 0
        while line := file.readline(LINE_LIMIT + 1):
            number += 1
            read += len(line)
            if len(line) > LINE_LIMIT and not line.endswith(b"\n"):
                while (rest := file.readline(READ_CHUNK)) and not rest.endswith(b"\n"):
                    read += len(rest)
                read += len(rest)
                if problems is not None:
                    skipped = f"a line over {LINE_LIMIT:,} bytes skipped"
                    problems.append(f"{path.name}:{number}: {skipped}")
                line = b""
            if limit is not None and read > limit:  # it grew while being read
                raise ToolError(too_big)
            yield line


def read(
    path: Path, problems: list[str], *, workdir: Path | None = None, limit: int | None = None
) -> Iterator[dict]:
    """Every record that can be read, in order; a note in `problems` for each line that
    cannot.  A file of any size by default: it is read one line at a time."""
    found = lines(path, workdir=workdir, limit=limit, problems=problems)
    for number, line in enumerate(found, start=1):
        record = _decode(line, path.name, number, problems)
        if record is not None:
            yield record


@contextmanager
def loading() -> Iterator[None]:
    """Around a long file read into records that live on (a session's history): the cycle
    collector waits until the end, then leaves what was read alone (`gc.freeze`).  Such a
    load makes millions of small objects and no cycle (their counts free them when they
    go), so walking them, while it runs or at each full collection after, is time lost:
    about a third of opening a session of 100,000 messages."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.freeze()
            gc.enable()


def load(path: str | Path, *, workdir: Path | None = None) -> Loaded:
    """Every record of `path` at once (see `read`), and the bytes read.

    Raises ToolError for a file that may not be read at all (a link, not a regular file).
    """
    path, loaded = Path(path), Loaded()
    for number, line in enumerate(lines(path, workdir=workdir), start=1):
        loaded.size += len(line)
        record = _decode(line, path.name, number, loaded.problems)
        if record is not None:
            loaded.records.append(record)
    return loaded


def _decode(line: bytes, name: str, number: int, problems: list[str]) -> dict[str, Any] | None:
    """The record on line `number` of file `name`, or None: a blank line, or one noted in
    `problems`."""
    if not line or line.isspace():
        return None
    try:
        record = json.loads(line)  # the newline is white space to JSON: no copy without it
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError too;
        # RecursionError: valid JSON nested deeper than Python's stack, such as 200,000 `[`
        torn = not line.endswith(b"\n")  # the last line, whose write never ended
        what = "torn last line dropped" if torn else "undecodable line skipped"
        problems.append(f"{name}:{number}: {what} ({len(line) - (not torn)} bytes)")
        return None
    if not isinstance(record, dict):
        problems.append(f"{name}:{number}: not a JSON object, skipped")
        return None
    return record
