"""Helpers for tests that drive a chapter's loop with scripted replies (the tools run for real)."""

from __future__ import annotations

from itertools import pairwise

from llm import Reply
from llm.cassette import ReplayModel
from llm.result import tool_uses


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def tool(call_id: str, name: str, **args) -> dict:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


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
