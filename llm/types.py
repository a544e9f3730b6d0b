"""The shapes that cross the model boundary: a reply, its token usage, and the Model protocol.

Messages themselves stay plain dicts in the Anthropic shape (`role` plus `content`, a
string or a list of `text` / `tool_use` / `tool_result` blocks) so that a learner can
print them, save them as JSON and read them without knowing any class.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

Block = dict[str, Any]
Message = dict[str, Any]

# The stop reasons every adapter translates into.  The loop only ever asks
# "is it tool_use?", but the others tell a learner *why* a turn ended.
STOP_REASONS = ("end_turn", "tool_use", "max_tokens", "stop_sequence")

# Tool-call arguments that were not valid JSON travel under this key, so the tool
# layer can tell the model exactly that instead of the loop crashing.
INVALID_JSON = "_invalid_json"

# A text block that begins with this tag holds facts of this one call (the clock, the
# model, the work directory).  It rides at the very end of a request, after the
# conversation, so that everything before it stays the same from call to call and a
# provider's prefix cache can reuse it; the request digests of cassettes leave it out,
# so that a replay of a recording made another day, elsewhere, still matches.
RUNTIME_TAG = "<runtime>"

# What stands in for a reply with nothing in it: the APIs refuse an assistant message
# whose content is empty, so storing `[]` would break the next request.
EMPTY_REPLY = "(empty reply)"


@dataclass
class Usage:
    """Tokens one call consumed: what the model read (context) and what it wrote.

    `estimated` is True when the figures come from `llm.tokens` rather than from a
    provider (a scripted replay), so that nobody mistakes an estimate for a measure.
    A sum is estimated as soon as one of its parts is.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.estimated or other.estimated,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of a cassette's `usage`; `estimated` only appears when true."""
        data: dict[str, Any] = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }
        if self.estimated:
            data["estimated"] = True
        return data


@dataclass
class Reply:
    """One model answer, already translated into canonical blocks.

    Every reply passes through here, whoever produced it, so this is the one place
    that makes sure its content can be sent back: a reply with no text and no tool
    call keeps a single text block saying so (`EMPTY_REPLY`).
    """

    content: list[Block]
    stop_reason: str
    usage: Usage = field(default_factory=Usage)

    def __post_init__(self) -> None:
        # A whitespace-only text block is refused by the APIs just like an empty list.
        self.content = [block for block in self.content if not _blank_text(block)]
        if not self.content:
            self.content = [{"type": "text", "text": EMPTY_REPLY}]

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape a cassette stores, so a recorded reply reads like an API response."""
        return {
            "content": self.content,
            "stop_reason": self.stop_reason,
            "usage": self.usage.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Reply:
        usage = data.get("usage") or {}
        return cls(
            content=list(data["content"]),
            stop_reason=data["stop_reason"],
            usage=Usage(
                usage.get("input_tokens", 0),
                usage.get("output_tokens", 0),
                bool(usage.get("estimated", False)),
            ),
        )


def unique_call_ids(content: list[Block], messages: list[Message]) -> list[Block]:
    """`content` with every tool call given an id no other call of the conversation has.

    Results are matched to calls by id, and a chapter 3 child (with its section of a
    cassette) is keyed by its call's id, so an id must never repeat.  Some local servers
    send calls without ids, or one id twice in a reply, or number them afresh in every
    reply.  A call that keeps its id is left as it is; one without an id, or with one
    already taken, gets the first free `call_N`: the same on every replay of the same
    conversation, so a recorded run replays the same way.
    """
    taken = {
        block.get("id")
        for message in messages
        if message.get("role") == "assistant" and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_use"
    }
    fresh = (f"call_{n}" for n in itertools.count())
    repaired = []
    for block in content:
        if block.get("type") == "tool_use":
            call_id = block.get("id")
            if not isinstance(call_id, str) or not call_id or call_id in taken:
                call_id = next(name for name in fresh if name not in taken)
                block = {**block, "id": call_id}
            taken.add(call_id)
        repaired.append(block)
    return repaired


def blocks(message: Message) -> list[Block]:
    """A message's content as a new list of blocks, a string becoming one text block."""
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def without_runtime(message: Message) -> Message:
    """The message without its runtime note, if it has one."""
    content = message["content"]
    if isinstance(content, str):
        return message
    kept = [block for block in content if not is_runtime(block)]
    return message if len(kept) == len(content) else {**message, "content": kept}


def is_runtime(block: dict[str, Any]) -> bool:
    """A runtime note: a text block that begins with RUNTIME_TAG (chapter 4 ends each
    request with one; it says when and where the call is made)."""
    return block.get("type") == "text" and str(block.get("text", "")).startswith(RUNTIME_TAG)


def with_user_text(messages: list[Message], text: str) -> list[Message]:
    """A new list: `messages` with `text` said last by the user, as the last block of the
    last message when that is the user's (so that the roles still alternate), else as a
    user message of its own.  The caller's messages are left as they are."""
    request = list(messages)  # one copy of the history, the least a new list can cost
    last = request[-1]
    if last["role"] != "user":
        request.append({"role": "user", "content": text})
    else:
        request[-1] = {**last, "content": [*blocks(last), {"type": "text", "text": text}]}
    return request


@contextmanager
def said_last(messages: list[Message], text: str) -> Iterator[list[Message]]:
    """`messages` with `text` said last, as `with_user_text` says it, for the call made
    inside the `with`: put into the list itself and taken out again when the call returns
    or fails, so a request on a history of any length costs no copy of it.  Whatever
    keeps a request past its call (a recording, `--step`) keeps a copy of its own."""
    end = len(messages) - 1
    last, messages[end:] = messages[end:], with_user_text(messages[end:], text)
    try:
        yield messages
    finally:
        messages[end:] = last


def _blank_text(block: Block) -> bool:
    return block.get("type") == "text" and not str(block.get("text", "")).strip()


class Model(Protocol):
    """Anything that can answer a conversation: a provider adapter, a cassette, a recorder.

    `system` is the system prompt, `messages` the conversation so far, `tools` the
    tool schemas (Anthropic shape: name, description, input_schema) and `stop` the
    sequences at which generation must halt (chapter 0 stops at "Observation:").
    """

    name: str

    def complete(
        self,
        system: str,
        messages: list[Message],
        tools: list[dict[str, Any]] | None = None,
        stop: list[str] | None = None,
        max_tokens: int = 4096,
    ) -> Reply: ...
