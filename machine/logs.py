"""A folder of append-only JSON-lines logs, read once, then only as far as they have grown.

A process that keeps what it read for hours (chapter 4's memory index) must see what
other processes appended meanwhile, without reading every log again each time.  A
log only grows, so one of the same size holds nothing new; one that shrank or went
away was edited by hand, and then only reading everything again is right.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import jsonl
from .errors import ToolError
from .files import agent_files

Record = dict[str, Any]


class Logs:
    """The logs matching `pattern` in `folder`, inside `workdir`, and how far each was read."""

    def __init__(self, folder: Path, workdir: Path, pattern: str = "*.jsonl") -> None:
        self.folder, self.workdir, self.pattern = folder, workdir, pattern
        self.read: dict[str, tuple[int, int]] = {}  # log name -> (bytes, records) read

    def read_new(self, apply: Callable[[Record, str], None], problems: list[str]) -> bool:
        """Hand `apply` each record appended since the last call, by anyone, with its log's
        name, and note in `problems` what was skipped; False, with nothing applied, when a
        log shrank or went away."""
        paths, skipped = agent_files(self.workdir, self.folder, self.pattern)
        sizes = {path.name: _size(path) for path in paths}
        if any(sizes.get(name, -1) < size for name, (size, _) in self.read.items()):
            return False
        _note(problems, skipped)
        for path in paths:
            size, applied = self.read.get(path.name, (-1, 0))
            if sizes[path.name] == size:
                continue
            try:
                loaded = jsonl.load(path, workdir=self.workdir)
            except (ToolError, OSError) as error:
                _note(problems, [f"{path.name}: skipped, {error}"])
                continue
            if path.name not in self.read:
                problems += loaded.problems
            for record in loaded.records[applied:]:
                apply(record, path.name)
            self.read[path.name] = (loaded.size, len(loaded.records))
        return True

    def append(self, name: str, record: Record, *, sync: bool = True) -> None:
        """Append `record` to the log `name`, counted as read (the caller applies it)."""
        path = self.folder / name
        jsonl.append(path, record, sync=sync, workdir=self.workdir)
        self.read[name] = (_size(path), self.read.get(name, (0, 0))[1] + 1)


def _note(problems: list[str], notes: list[str]) -> None:
    problems += [note for note in notes if note not in problems]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1
