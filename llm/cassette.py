"""Cassettes: model replies saved as JSON lines, so any run can be replayed offline.

A cassette is one header line and then one line per model reply, in order:

    {"format": "cassette/1", "provenance": "scripted", "chapter": "v1_tool_loop", "task": "…"}
    {"reply": {"content": [...], "stop_reason": "tool_use", "usage": {...}}, "request": {...}}

Replaying only returns the stored replies; the tools still run for real.  The optional
`request` field holds short digests of what the agent sent when the reply was
recorded; in strict mode a replay stops at the first turn whose request differs and
says which part changed.  The format is described in `llm/README.md`.
"""

from __future__ import annotations

import copy
import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .errors import CassetteError
from .tokens import estimate_usage
from .types import Message, Model, Reply

FORMAT = "cassette/1"


def read_cassette(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Return (header, entries); every problem names the file and the line."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise CassetteError(f"no cassette at {path}: check the path after 'replay:'") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CassetteError(f"cannot read cassette {path}: {exc}") from None
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rows.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise CassetteError(f"{path}:{number} is not valid JSON ({exc.msg})") from None
    if not rows or not str(rows[0][1].get("format", "")).startswith("cassette/"):
        raise CassetteError(f"{path} does not start with a cassette header line")
    header, entries = rows[0][1], []
    for number, row in rows[1:]:
        reply = row.get("reply") if isinstance(row, dict) else None
        if not (
            isinstance(reply, dict)
            and isinstance(reply.get("content"), list)
            and isinstance(reply.get("stop_reason"), str)
        ):
            raise CassetteError(
                f"{path}:{number} needs {{'reply': {{'content': [...], 'stop_reason': ...}}}}"
            )
        entries.append(row)
    return header, entries


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def request_digest(
    system: str, messages: list[Message], tools: list[dict] | None, stop: list[str] | None
) -> dict[str, Any]:
    """Digest each part of a request separately, so a mismatch can say which part changed."""
    return {
        "system": _digest(system),
        "tools": _digest(tools or []),
        "stop": list(stop or []),
        "messages": [_digest(message) for message in messages],
    }


def describe_difference(
    recorded: dict[str, Any], actual: dict[str, Any], messages: list[Message]
) -> str | None:
    """Name the first part of the request that differs from the recording, or None."""
    if recorded.get("system") != actual["system"]:
        return "the system prompt differs"
    if recorded.get("tools") != actual["tools"]:
        return "the tool schemas differ"
    if recorded.get("stop", []) != actual["stop"]:
        return f"the stop sequences differ (recorded {recorded.get('stop')}, now {actual['stop']})"
    old, new = recorded.get("messages", []), actual["messages"]
    for index, (was, now) in enumerate(zip(old, new, strict=False)):
        if was != now:
            preview = json.dumps(messages[index]["content"], ensure_ascii=False)[:100]
            role = messages[index]["role"]
            return f"message {index + 1} ({role}) differs; it now begins {preview}…"
    if len(old) != len(new):
        return f"the recording sent {len(old)} messages, this run sends {len(new)}"
    return None


class ReplayModel:
    """A Model that answers from a cassette, in order, and never invents a reply."""

    def __init__(self, source: str | Path | list[Reply], *, strict: bool = False) -> None:
        """Replay a cassette file, or a list of Reply objects held in memory (benchmarks)."""
        if isinstance(source, list):
            self.path = Path("memory")
            self.header = {"format": FORMAT, "provenance": "scripted"}
            self.entries = [{"reply": reply.to_dict()} for reply in source]
        else:
            self.path = Path(source)
            self.header, self.entries = read_cassette(self.path)
        self.strict = strict
        self.turn = 0
        self.name = f"replay:{self.path}"

    def complete(
        self,
        system: str,
        messages: list[Message],
        tools: list[dict] | None = None,
        stop: list[str] | None = None,
        max_tokens: int = 4096,
    ) -> Reply:
        if self.turn >= len(self.entries):
            raise CassetteError(
                f"the cassette {self.path} has {len(self.entries)} replies and the run asked "
                f"for reply {self.turn + 1}; a replay never invents one. Record a longer run "
                "with --record, or run live with --model."
            )
        entry = self.entries[self.turn]
        self.turn += 1
        if self.strict and "request" in entry:
            actual = request_digest(system, messages, tools, stop)
            difference = describe_difference(entry["request"], actual, messages)
            if difference:
                raise CassetteError(
                    f"turn {self.turn} of {self.path} was recorded for another request: "
                    f"{difference}. Re-record the cassette, or replay without --strict."
                )
        reply = Reply.from_dict(copy.deepcopy(entry["reply"]))
        if self.header.get("provenance") != "recorded":
            # Hand-written usage is typed in, not measured: estimate it from what this
            # run really sent (real tool output included) and from the reply itself.
            reply.usage = estimate_usage(system, messages, tools, reply)
        return reply


class RecordingModel:
    """Wraps a live Model and appends every reply to a cassette as it arrives.

    Each line is written whole and flushed at once, so a run that crashes or is
    interrupted still leaves a cassette that replays up to that point.
    """

    def __init__(self, inner: Model, path: str | Path, *, chapter: str, task: str | None) -> None:
        self.inner = inner
        self.path = Path(path)
        self.name = inner.name
        header = {
            "format": FORMAT,
            "provenance": "recorded",
            "model": inner.name,
            "recorded_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "chapter": chapter,
            "task": task,
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(header, ensure_ascii=False) + "\n", encoding="utf-8")

    def complete(
        self,
        system: str,
        messages: list[Message],
        tools: list[dict] | None = None,
        stop: list[str] | None = None,
        max_tokens: int = 4096,
    ) -> Reply:
        reply = self.inner.complete(system, messages, tools=tools, stop=stop, max_tokens=max_tokens)
        line = {"reply": reply.to_dict(), "request": request_digest(system, messages, tools, stop)}
        with self.path.open("a", encoding="utf-8") as cassette:
            cassette.write(json.dumps(line, ensure_ascii=False) + "\n")
        return reply
