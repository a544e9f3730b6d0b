"""Append-only JSON-lines files that survive a crash: one record per line, each written whole.

Sessions and the daily memory logs of chapter 4 are both kept this way.  The rules
that make a crash harmless are few:

- a record is encoded first, then written with a single `write` call (newline
  included) and `fsync`ed, so the file never holds half of a record followed by
  another one;
- a process killed in the middle of that write leaves at most one torn line, at
  the end; the next `append` notices the missing newline and starts on a fresh
  line, so nothing appended later is glued to the torn piece;
- `load` keeps every line that decodes, drops the torn last line, skips an
  undecodable line in the middle, and says what it did in `problems`.

Nothing is ever rewritten in place: the file only grows.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Loaded:
    """The records of a file, and one line for each thing that had to be repaired."""

    records: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def encode(record: dict[str, Any]) -> bytes:
    """One line of UTF-8 JSON, newline included; compact, so large sessions stay small."""
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def append(path: str | Path, record: dict[str, Any], *, sync: bool = True) -> None:
    """Add `record` as the last line of `path`, creating the file if needed.

    `sync=False` skips the fsync: faster, but a power cut may lose the last records
    (a process crash cannot, since the data is already in the kernel).
    """
    data = encode(record)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
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
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"


def load(path: str | Path) -> Loaded:
    """Every record that can be read, in order; what could not be read goes to `problems`."""
    path = Path(path)
    data = path.read_bytes()
    lines = data.split(b"\n")
    loaded = Loaded()
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        torn = number == len(lines)  # the piece after the last newline: its write never ended
        try:
            record = json.loads(raw)
        except ValueError:  # UnicodeDecodeError is a ValueError too
            what = "torn last line dropped" if torn else "undecodable line skipped"
            loaded.problems.append(f"{path.name}:{number}: {what} ({len(raw)} bytes)")
            continue
        if not isinstance(record, dict):
            loaded.problems.append(f"{path.name}:{number}: not a JSON object, skipped")
            continue
        loaded.records.append(record)
    return loaded
