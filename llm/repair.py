"""Mending a conversation so that a provider accepts it, one message at a time.

A history read back from a file (a session after a crash, a line lost) may break the
rules every API enforces: each tool call answered in the next message, a result only
for a call just made, the two sides taking turns, the user first.  `mend` adds one
message to a history and puts right what it would break, with a note for each thing
it did.  Adding every message through it, whether loaded or appended, gives the same
history for the same messages: a reloaded conversation is the one that was running.
`replaced` puts a summary in place of a history's start, at a cut that `cuts` allows.
"""

from __future__ import annotations

from typing import Any

from .console import counted
from .result import tool_uses
from .shape import message_problem
from .types import Block, Message, blocks

NO_RESULT = "interrupted before a result was recorded"
LOST_START = "[the start of this conversation could not be read]"


def mend(history: list[Message], message: Message, number: int) -> list[str]:
    """Add `message`, the `number`th read, to the end of `history`; return what was mended."""
    if not message["content"]:
        return [f"message {number}: empty, left out"]  # the APIs refuse empty messages
    notes: list[str] = []
    if message["role"] == "user":
        message = answered(message, open_calls(history), number, notes)
        if not message["content"]:
            return notes  # it held only results for calls that are gone
    else:  # an assistant message: the results of the calls before it come first
        history.extend(closing(history, number, notes))
        if not history:  # the first line was lost; a request must start with the user
            history.append({"role": "user", "content": LOST_START})
            notes.append(f"message {number}: no user message before it; a placeholder stands in")
    if history and history[-1]["role"] == message["role"]:
        history[-1] = joined(history[-1], message)
        notes.append(f"message {number}: second {message['role']} message in a row, joined")
    else:
        history.append(message)
    return notes


def open_calls(history: list[Message]) -> list[Block]:
    """The tool calls at the end of `history` still waiting for their results."""
    last = history[-1] if history else None
    return tool_uses(last) if last and last["role"] == "assistant" else []


def closing(history: list[Message], number: int, notes: list[str]) -> list[Message]:
    """The user message that answers the calls left open at the end of `history`, if any."""
    calls = open_calls(history)
    return [answered({"role": "user", "content": []}, calls, number, notes)] if calls else []


def answered(message: Message, calls: list[Block], number: int, notes: list[str]) -> Message:
    """`message` made a valid reply to `calls`: one result per call, first, and no others."""
    content = message["content"]
    if not calls and (isinstance(content, str) or all(b["type"] != "tool_result" for b in content)):
        return message  # the usual user message, after a finished turn
    results = {b["tool_use_id"]: b for b in blocks(message) if b["type"] == "tool_result"}
    answers = []
    for call in calls:
        if call["id"] not in results:
            lost = {"type": "tool_result", "tool_use_id": call["id"], "content": NO_RESULT}
            results[call["id"]] = lost | {"is_error": True}
            notes.append(
                f"message {number}: tool call {call['id']} ({call['name']}) had no result, "
                f"answered '{NO_RESULT}'"
            )
        answers.append(results.pop(call["id"]))
    notes += [f"message {number}: result for unknown tool call {id_} dropped" for id_ in results]
    others = [block for block in blocks(message) if block["type"] != "tool_result"]
    return {"role": "user", "content": answers + others}


def joined(first: Message, second: Message) -> Message:
    """Two messages of the same side as one, as the Anthropic API itself joins them."""
    return {"role": first["role"], "content": blocks(first) + blocks(second)}


def cuts(history: list[Message]) -> list[int]:
    """Every `upto` at which the start of `history` may be replaced: after no tool call,
    so that no call is parted from its result."""
    return [upto for upto in range(1, len(history) + 1) if not tool_uses(history[upto - 1])]


def replaced(history: list[Message], upto: Any, summary: Any) -> list[Message]:
    """`history` with its first `upto` messages replaced by `summary`, a user message of
    text; a ValueError, saying why, when that would not leave a valid history."""
    text = not message_problem(summary) and summary["role"] == "user" and summary["content"]
    if not text or any(block["type"] != "text" for block in blocks(summary)):
        raise ValueError("the summary must be a user message of text")
    if not isinstance(upto, int) or not 1 <= upto <= len(history):
        raise ValueError(f"upto must be between 1 and {len(history)}, got {upto!r}")
    if calls := tool_uses(history[upto - 1]):
        nearest = max((cut for cut in cuts(history) if cut < upto), default=None)
        raise ValueError(
            f"compacting {counted(upto, 'message')} would split tool call {calls[0]['id']} "
            f"from its result; the nearest cut before it is {nearest}"
        )
    kept = history[upto:]
    if kept and kept[0]["role"] == "user":  # the sides alternate: the summary joins it
        kept[0] = joined(summary, kept[0])
    else:
        kept.insert(0, summary)
    return kept
