"""Two read-only tools for agents that explore: list files by pattern, search their lines.

Chapter 1's agent finds its way with `bash` (`ls`, `find`, `grep`).  A child agent
sent only to read gets no `bash` at all, since a shell can write anything, so these
two tools give it the same reach in plain Python, inside the work directory and
with capped output:

    list_files(pattern="**/*.py")             sorted paths, at most MAX_FILES
    grep(pattern="def total", path="src")     file:line: text, at most MAX_MATCHES

Both skip hidden folders (`.git`, `.venv`, …) and never follow a path out of the
work directory; `grep` skips binary files.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from machine import READ_BLOCK, ToolError, shown_name
from v1_tool_loop.sandbox import safe_path

MAX_FILES = 200  # paths list_files returns; a longer list is a sign to narrow the pattern
MAX_MATCHES = 100  # lines grep returns
MAX_LINE = 200  # characters of a matching line shown
MAX_FILE_SIZE = 2_000_000  # bytes; larger files are logs or data, not what grep is for here

SEARCH_TOOLS: list[dict[str, Any]] = [
    {
        "name": "list_files",
        "description": (
            "List the files of the work directory whose paths match a glob pattern, sorted "
            f"(at most {MAX_FILES}). `**` matches any folders: '**/*.py' is every Python "
            "file, 'src/*' the files directly in src. Hidden folders are skipped."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "A glob such as '**/*.py'."}
            },
            "required": ["pattern"],
        },
    },
    {
        "name": "grep",
        "description": (
            "Search text files for lines matching a regular expression (Python syntax). "
            f"Returns 'path:line: text' for each match, at most {MAX_MATCHES}. `path` is a "
            "file or a folder to search (default: the whole work directory)."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "A regular expression."},
                "path": {"type": "string", "description": "File or folder; default '.'."},
            },
            "required": ["pattern"],
        },
    },
]


def list_files(workdir: Path, pattern: str) -> str:
    root = workdir.resolve()
    if not pattern.strip() or Path(pattern).is_absolute() or ".." in Path(pattern).parts:
        raise ToolError(f"'{pattern}' is not a pattern inside the work directory; try '**/*.py'")
    found = sorted(shown_name(path.relative_to(root)) for path in _files(root, root.glob(pattern)))
    if not found:
        return f"no files match '{pattern}'"
    shown = found[:MAX_FILES]
    if len(found) > MAX_FILES:
        shown.append(f"[… {len(found) - MAX_FILES} more: narrow the pattern]")
    return "\n".join(shown)


def grep(workdir: Path, pattern: str, path: str = ".") -> str:
    try:
        regex = re.compile(pattern)
    except re.error as error:
        raise ToolError(f"'{pattern}' is not a valid regular expression: {error}") from None
    root = workdir.resolve()
    start = safe_path(workdir, path)
    if not start.exists():
        raise ToolError(f"no such file or folder: '{path}'")
    candidates = [start] if start.is_file() else sorted(start.rglob("*"))
    matches = []
    for file in _files(root, iter(candidates)):
        for number, line in _text_lines(file):
            if regex.search(line):
                shown = line[:MAX_LINE] + (" …" if len(line) > MAX_LINE else "")
                matches.append(f"{shown_name(file.relative_to(root))}:{number}: {shown}")
                if len(matches) > MAX_MATCHES:
                    matches[-1] = f"[… more than {MAX_MATCHES} matches: narrow the pattern]"
                    return "\n".join(matches)
    return "\n".join(matches) or f"no line matches '{pattern}'"


def _files(root: Path, paths: Iterator[Path]) -> Iterator[Path]:
    """The regular files among `paths` that lie inside `root`, not under a hidden folder."""
    for path in paths:
        relative = path.relative_to(root)
        if any(part.startswith(".") for part in relative.parts[:-1]) or not path.is_file():
            continue
        resolved = path.resolve()  # a symlink may lead out of the work directory
        if resolved == root or root in resolved.parents:
            yield path


def _text_lines(file: Path) -> Iterator[tuple[int, str]]:
    """Numbered lines of a UTF-8 text file; nothing for binary, huge or unreadable files."""
    try:
        if file.stat().st_size > MAX_FILE_SIZE:
            return
        data = file.read_bytes()
    except OSError:
        return
    if b"\0" in data[:READ_BLOCK]:
        return
    text = data.decode("utf-8", errors="replace")
    yield from enumerate(text.split("\n"), start=1)


SEARCH_HANDLERS = {"list_files": list_files, "grep": grep}
