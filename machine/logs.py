"""A folder of append-only JSON-lines logs, read once, then only as far as they have grown.

What is built from the logs (chapter 4's memory index) must see what other processes
appended meanwhile, without reading every log again each time.  A log only grows, so
one of the same size and time of change holds nothing new; one that shrank, went away
or changed without growing was edited by hand (or is a fresh copy), and then only
reading everything again is right.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import jsonl
from .errors import ToolError
from .own_files import agent_files

Record = dict[str, Any]
State = tuple[int, int, int]  # a log's bytes, time of change and records, as read


class Logs:
    """The logs matching `pattern` in `folder`, inside `workdir`, and how far each was read."""

    def __init__(self, folder: Path, workdir: Path, pattern: str = "*.jsonl") -> None:
        self.folder, self.workdir, self.pattern = folder, workdir, pattern
        self.read: dict[str, State] = {}  # log name -> (bytes, time of change, records) read

    def unchanged(self, read: dict[str, State]) -> bool:
        """Whether the logs are as `read` saw them: the same names, sizes, times of change."""
        paths, _ = agent_files(self.workdir, self.folder, self.pattern)
        now = {path.name: _state(path) for path in paths}
        return now == {name: (size, changed) for name, (size, changed, _) in read.items()}

    def read_new(self, apply: Callable[[Record, str], None], problems: list[str]) -> bool:
        """Hand `apply` each record appended since the last call, by anyone, with its log's
        name, and note in `problems` what was skipped; False, with nothing applied, when a
        log shrank, went away or changed without growing."""
        paths, skipped = agent_files(self.workdir, self.folder, self.pattern)
        states = {path.name: _state(path) for path in paths}
        for name, (size, changed, _) in self.read.items():
            now, when = states.get(name, (-1, 0))
            if now < size or (now == size and when != changed):
                return False
        _note(problems, skipped)
        for path in paths:
            size, changed, applied = self.read.get(path.name, (-1, 0, 0))
            if states[path.name] == (size, changed):
                continue
            try:
                loaded = jsonl.load(path, workdir=self.workdir)
            except (ToolError, OSError) as error:
                _note(problems, [f"{path.name}: skipped, {error}"])
                self.read[path.name] = (*states[path.name], 0)  # tried again once it changes
                continue
            _note(problems, loaded.problems)  # once each: a torn end is met at every read
            for record in loaded.records[applied:]:
                apply(record, path.name)
            self.read[path.name] = (*states[path.name], len(loaded.records))  # a torn end too
        return True

    def append(self, name: str, record: Record, *, sync: bool = True) -> None:
        """Append `record` to the log `name`, counted as read (the caller applies it)."""
        path = self.folder / name
        jsonl.append(path, record, sync=sync, workdir=self.workdir)
        self.read[name] = (*_state(path), self.read.get(name, (0, 0, 0))[2] + 1)


def _note(problems: list[str], notes: list[str]) -> None:
    problems += [note for note in notes if note not in problems]


def _state(path: Path) -> tuple[int, int]:
    """A log's size and time of change (nanoseconds), or (-1, 0) if it cannot be seen."""
    try:
        info = path.stat()
    except OSError:
        return -1, 0
    return info.st_size, info.st_mtime_ns
