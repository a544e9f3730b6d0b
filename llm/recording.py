"""Recording: a live model's replies written to a cassette as they come, never one lost.

`RecordingModel` wraps any model and writes each reply, with a digest of the request
that produced it, to a file beside the cassette; `close` moves that file over the
cassette once the run ends.  Only an earlier recording may be replaced.  Replaying,
and the format itself, are `cassette.py`'s.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from .cassette import FORMAT, ReplayModel, SectionKeys, request_digest
from .errors import CassetteError
from .text_calls import ToolCallInText
from .types import Message, Model, Reply
from .wrapper import Wrapper, for_child

NOTE_VARIABLE = "AGENT_RECORD_SETUP"  # kept in a recording's header as "setup"


def recorded_bounds(model: object) -> dict[str, int]:
    """The bounds a replayed recording was made under (its header's `bounds`), each a whole
    number of at least 1; none for a live model, or a cassette that keeps none."""
    header = getattr(model, "header", None)
    bounds = header.get("bounds") if isinstance(header, dict) else None
    if not isinstance(bounds, dict):
        return {}
    return {
        name: value
        for name, value in bounds.items()
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1
    }


class RecordingModel(Wrapper):
    """Wraps a live Model and saves every reply to a cassette, without ever losing one.

    Replies go to a temporary file beside the cassette (`partial`), one whole line
    at a time, flushed at once: if the process dies, that file replays up to where
    it stopped.  `close()` moves it over the cassette when the run ends, so an
    earlier recording is replaced only by a finished one.  Use it as a context
    manager, or call `close()` in a `finally`.
    """

    def __init__(
        self,
        inner: Model,
        path: str | Path,
        *,
        chapter: str,
        task: str | None,
        bounds: dict[str, int] | None = None,
    ) -> None:
        super().__init__(inner)
        self.path = Path(path)
        self.replies = 0
        self.key: str | None = None  # set on the recorder of a child's section
        self._lock = threading.Lock()  # children record from their own threads
        self._root = self  # the recorder that owns the file; a child's section counts there
        self.keys = SectionKeys()  # shared by every section: copies keep the same one
        _check_record_target(self.path, inner)
        self.partial, self._file = _open_partial(self.path)
        header = {
            "format": FORMAT,
            "provenance": "recorded",
            "model": inner.name,
            "recorded_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "chapter": chapter,
            "task": task,
        }
        # What the model spec cannot say: which server answered, and how it was set up
        # (the weights' quantisation, the server's flags), as the person recording says.
        if isinstance(getattr(inner, "base_url", None), str):
            header["server"] = inner.base_url
        if os.environ.get(NOTE_VARIABLE):
            header["setup"] = os.environ[NOTE_VARIABLE]
        if bounds:  # what the run was allowed (the lab's flags): its replay is allowed the same
            header["bounds"] = bounds
        self._write(header)

    def complete(
        self,
        system: str,
        messages: list[Message],
        tools: list[dict] | None = None,
        stop: list[str] | None = None,
        max_tokens: int = 4096,
    ) -> Reply:
        try:
            reply = self.inner.complete(
                system, messages, tools=tools, stop=stop, max_tokens=max_tokens
            )
        except ToolCallInText as stopped:  # kept, so that its replay stops the same way
            self._keep(stopped.reply, system, messages, tools, stop)
            raise
        self._keep(reply, system, messages, tools, stop)
        return reply

    def _keep(
        self,
        reply: Reply,
        system: str,
        messages: list[Message],
        tools: list[dict] | None,
        stop: list[str] | None,
    ) -> None:
        row = {"reply": reply.to_dict(), "request": request_digest(system, messages, tools, stop)}
        if self.key:
            row["child"] = self.key
        self._write(row)

    def child(self, key: str) -> RecordingModel:
        """A recorder for the child agent started by tool call `key`: the same file, its
        lines tagged with `key`, so a replay can give each child its own section."""
        section = copy.copy(self)
        key = self.keys.fresh(key)
        section.inner, section.key = for_child(self.inner, key), key
        return section

    def close(self) -> bool:
        """Move the recording over `path`; False if no reply came, and `path` is left alone."""
        if not self._file.closed:
            os.fsync(self._file.fileno())  # the bytes reach the disk before the name does
            self._file.close()
            if not self.replies:
                self.partial.unlink()
                return False
            try:
                os.replace(self.partial, self.path)
            except OSError as exc:
                raise CassetteError(
                    f"cannot save the recording as {self.path} ({exc.strerror}); "
                    f"its replies are in {self.partial}"
                ) from None
        return self.replies > 0

    def __enter__(self) -> RecordingModel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _write(self, row: dict[str, Any]) -> None:
        line = json.dumps(row, ensure_ascii=False)
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate from a model: keep it as a \u escape
            line = json.dumps(row)
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()
            self._root.replies += "reply" in row


def _check_record_target(path: Path, inner: Model) -> None:
    """Refuse, before any model call, a place where a recording would fail or destroy a file.

    Only an earlier recording may be replaced: a scripted cassette was written by
    hand and any other file is not ours, so neither could be made again.
    """
    if path.is_dir():
        raise CassetteError(f"cannot record to {path}: it is a folder; name a file in it")
    blocking = next((parent for parent in path.parents if parent.is_file()), None)
    if blocking:
        raise CassetteError(f"cannot record to {path}: {blocking} is a file, not a folder")
    if isinstance(inner, ReplayModel) and _same_file(path, inner.path):
        raise CassetteError(
            f"cannot record to {path}: it is the cassette being replayed; record to another file"
        )
    provenance = _provenance(path)
    if provenance == "scripted":
        raise CassetteError(
            f"cannot record to {path}: it holds a scripted cassette, written by hand, that a "
            "recording would replace; record to another file"
        )
    if provenance not in ("recorded", "absent"):
        raise CassetteError(
            f"cannot record to {path}: the file exists and is not a cassette; "
            "record to another file"
        )


def _same_file(path: Path, other: Path) -> bool:
    try:
        return path.samefile(other)  # also sees through symlinks, `..` and hard links
    except OSError:  # one of them does not exist
        return False


def _provenance(path: Path) -> str:
    """'absent' (no file, or an empty one), 'recorded', 'scripted', or 'other'."""
    try:
        with path.open(encoding="utf-8") as file:
            first = file.readline()
    except FileNotFoundError:
        return "absent"
    except (OSError, UnicodeDecodeError):
        return "other"
    if not first.strip():
        return "absent" if path.stat().st_size == 0 else "other"
    try:
        header = json.loads(first)
    except (json.JSONDecodeError, RecursionError):
        return "other"
    if isinstance(header, dict) and header.get("format") == FORMAT:
        return "recorded" if header.get("provenance") == "recorded" else "scripted"
    return "other"


def _open_partial(path: Path) -> tuple[Path, TextIO]:
    """Create the temporary file a recording grows in, beside `path` (so the final
    rename stays on one file system) and with a name no one else can have taken.
    Like the folder made for it, it is its owner's alone (mkstemp's 0600): a
    recording holds a conversation, on a shared machine too."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f"{path.name}.", suffix=".partial", dir=path.parent)
    except OSError as exc:
        raise CassetteError(f"cannot record to {path}: {exc.strerror}") from None
    return Path(name), os.fdopen(fd, "w", encoding="utf-8", newline="\n")  # LF on Windows too
