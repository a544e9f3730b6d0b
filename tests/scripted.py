"""Helpers for tests that drive a chapter's loop with scripted replies (the tools run for real)."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

from llm import Reply
from llm.cassette import ReplayModel
from llm.result import tool_uses


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def tool(call_id: str, tool_name: str, /, **args) -> dict:
    return {"type": "tool_use", "id": call_id, "name": tool_name, "input": args}


def replay(*replies: tuple[list[dict], str]) -> ReplayModel:
    """A model that answers with these (content, stop_reason) pairs, in order."""
    return ReplayModel([Reply(content, stop) for content, stop in replies])


def assert_valid_history(messages: list[dict]) -> None:
    """Roles alternate, and every tool_use is answered once, in the very next message."""
    assert messages[0]["role"] == "user"
    for before, after in pairwise(messages):
        assert before["role"] != after["role"]
    for index, message in enumerate(messages):
        calls = tool_uses(message) if message["role"] == "assistant" else []
        if calls:
            blocks = messages[index + 1]["content"]
            answered = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
            assert answered == [call["id"] for call in calls]


def write_cassette(
    path: Path,
    replies: list[tuple[list[dict], str]],
    children: dict[str, list[tuple[list[dict], str]]] | None = None,
) -> Path:
    """A scripted cassette file; each child's replies tagged with its task call's id."""
    rows: list[dict] = [{"format": "cassette/1", "provenance": "scripted", "task": "test"}]
    rows += [{"reply": Reply(content, stop).to_dict()} for content, stop in replies]
    for key, section in (children or {}).items():
        rows += [{"reply": Reply(c, s).to_dict(), "child": key} for c, s in section]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path
