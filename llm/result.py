"""What a run returns, and the few helpers every loop uses to read and close a conversation.

A `RunResult` is derived from the messages (the conversation is the record of the
run) plus the usage of each model call, which the messages do not carry.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .types import Block, Message, Usage, blocks

INTERRUPTED = "interrupted by the user"
# A reply that hit `max_tokens` may end inside a tool call, its arguments cut short:
# such a call is answered with this, never run.
CUT_OFF = (
    "the reply was cut off at the token limit (max_tokens) before this call was complete, "
    "so it did not run"
)
# What a loop that goes on after such a reply asks for (`continuation`).
CONTINUE = (
    "Your last reply was cut off at the output limit (max_tokens). Go on from where it "
    "stopped. If you were writing a tool call, it did not run: make it again, smaller "
    "(a long file in parts)."
)
ARGUMENTS_SHOWN = 300  # characters of a tool call's arguments in a transcript


def text_of(content: str | list[Block]) -> str:
    """All the text in a message's content, tool calls left out."""
    if isinstance(content, str):
        return content
    return "\n".join(block["text"] for block in content if block.get("type") == "text").strip()


def tool_uses(message: Message) -> list[Block]:
    """The tool_use blocks of an assistant message, in order."""
    content = message["content"]
    if isinstance(content, str):
        return []
    return [block for block in content if block.get("type") == "tool_use"]


def close_open_turn(messages: list[Message], note: str) -> None:
    """Leave the conversation valid for the next request after a turn was cut short.

    Every tool_use must be answered by a tool_result, and the next user message must
    follow an assistant one.  So: answer the calls that got no result with `note`,
    then end on a short assistant message saying what happened.
    """
    last = messages[-1] if messages else None
    pending: list[Block] = []
    if last and last["role"] == "assistant":
        pending = tool_uses(last)
        if not pending:
            return
        last = {"role": "user", "content": []}
        messages.append(last)
    elif last and isinstance(last["content"], list):
        answered = {b.get("tool_use_id") for b in last["content"] if b["type"] == "tool_result"}
        asked = tool_uses(messages[-2]) if len(messages) > 1 else []
        pending = [call for call in asked if call["id"] not in answered]
    for call in pending:
        last["content"].append(
            {"type": "tool_result", "tool_use_id": call["id"], "content": note, "is_error": True}
        )
    messages.append({"role": "assistant", "content": f"[{note}]"})


def continuation(cut_off: list[Block]) -> Message:
    """The user message that goes on after a reply cut off at max_tokens, instead of
    stopping: an error result for each call in it (half written, none ran), then the
    request to go on."""
    results = [
        {"type": "tool_result", "tool_use_id": call["id"], "content": CUT_OFF, "is_error": True}
        for call in cut_off
        if call.get("type") == "tool_use"
    ]
    return {"role": "user", "content": [*results, {"type": "text", "text": CONTINUE}]}


def transcript(messages: list[Message]) -> str:
    """The messages as plain text, for a model to read back (a summariser): who said
    what, which tools ran, and their results.  Long arguments (a file written in full)
    are cut, since their start says enough; the results are shown as they are."""
    lines = []
    for message in messages:
        for block in blocks(message):
            lines.append(_transcript_line(message["role"], block))
    return "\n\n".join(lines)


def _transcript_line(role: str, block: Block) -> str:
    kind = block.get("type")
    if kind == "tool_use":
        arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
        if len(arguments) > ARGUMENTS_SHOWN:
            arguments = arguments[:ARGUMENTS_SHOWN] + " …"
        return f"[tool call] {block.get('name')} {arguments}"
    if kind == "tool_result":
        label = "[tool error]" if block.get("is_error") else "[tool result]"
        return f"{label} {text_of(block.get('content', ''))}"
    return f"[{role}] {block.get('text', '')}"


@dataclass
class RunResult:
    """The outcome of one `run(task, …)`.

    `stop` says why the loop ended: `done` (the model answered), `max_turns`,
    `max_tokens` (the reply was cut off at the token limit), `interrupted` (Ctrl-C),
    `tool_call_in_text` (the model wrote a tool call as text that the server did not
    parse; see `error` and `llm/text_calls.py`) or `error` (the model could not be
    reached; see `error`).
    """

    stop: str
    messages: list[Message]
    turn_usage: list[Usage] = field(default_factory=list)
    error: str = ""

    @property
    def answer(self) -> str:
        """The model's last words when it finished; empty if it never did."""
        if self.stop != "done":
            return ""
        return text_of(self.messages[-1]["content"])

    @property
    def turns(self) -> int:
        """Model calls made."""
        return len(self.turn_usage)

    @property
    def tool_calls(self) -> int:
        return sum(len(tool_uses(m)) for m in self.messages if m["role"] == "assistant")

    @property
    def usage(self) -> Usage:
        """Total tokens over the run; `.estimated` if any turn's figures were estimated."""
        return sum(self.turn_usage, Usage())

    @property
    def context_tokens(self) -> list[int]:
        """Context size the model saw at each turn: how fast the window fills up."""
        return [usage.input_tokens for usage in self.turn_usage]

    def counts(self) -> dict[str, int]:
        """What a chapter's own idea adds to count (format errors, plan updates, children,
        compactions), by name, for the summary line and the lab's tables.  A chapter's
        result class overrides it; the plain loop has nothing of its own to count."""
        return {}

    def details(self) -> dict[str, Any]:
        """What a chapter's own idea leaves behind, as JSON (the plan's history, each
        child's run, each compaction), for the lab's records and what reads them."""
        return {}

    def highlights(self) -> list[str]:
        """Lines the command line prints under the summary: what the chapter's idea did in
        this run, in words.  The plain loop has nothing to add."""
        return []
