"""Read one ReAct reply: turn the model's text into a step, or say what is wrong with it.

The model was asked to write

    Thought: what it knows and what it will do
    Action: a tool name
    Action Input: {"the": "arguments, as one JSON object"}

and then stop, or `Final Answer: …` when the task is done.  Models follow this
loosely: they bold the keywords, change their case, wrap the JSON in a Markdown
fence, use the full-width colon `：` (Chinese models do), or keep writing past the
action and invent the tool's output themselves.  `parse` accepts the harmless
variants and turns everything else into a `FormatError` whose message is written
for the model, because the model is the one who has to fix its reply.

The rules, in the order `parse` applies them:

1. A keyword (`Thought`, `Action`, `Action Input`, `Final Answer`, `Observation`)
   counts only at the start of a line (indenting is fine), in any case, inside `**…**` or not,
   followed by `:` or `：`.
2. From the first `Observation:` line on, the text is invented and thrown away.
3. `Final Answer:` is the rest of the text; it cannot come with an action.
4. Otherwise exactly one `Action:` (the tool name, rest of its line) and one
   `Action Input:` (a JSON object, to the next keyword line, fence allowed).
5. `Thought:` is optional; text before the first keyword counts as thought too.

Whether the tool exists is not checked here: the tool layer answers that, as it
does for chapter 1's structured calls.
"""

from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass
from typing import Any


class FormatError(ValueError):
    """The reply does not follow the format; the message tells the model what to change."""


@dataclass
class Action:
    """The model asks for one tool call."""

    tool: str
    args: dict[str, Any]
    thought: str = ""


@dataclass
class FinalAnswer:
    """The model says the task is done."""

    answer: str
    thought: str = ""


Step = Action | FinalAnswer

# One pattern for every keyword, matched at the start of a line only.  Written so
# that no two repeats can swap characters between them: a line of 100,000 spaces
# is rejected in linear time.  re.ASCII keeps the case folding to A-Z, so no
# exotic letter (the long s, the Kelvin sign) can pass for part of a keyword.
KEYWORD_LINE = re.compile(
    r"[ \t]*(?:\*\*[ \t]*)?"
    r"(thought|action[ \t]+input|action|final[ \t]+answer|observation)"
    r"[ \t]*(?:\*\*[ \t]*)?[:：][ \t]*(?:\*\*)?",
    re.IGNORECASE | re.ASCII,
)

# What a JSON error usually means in a model's Action Input, by the start of its message.
JSON_HINTS = {
    "Invalid control character": "a line break or tab inside a JSON string must be "
    "written as \\n or \\t",
    "Expecting property name": "names need double quotes, and no comma may follow the last item",
    "Extra data": "write one JSON object and nothing after it",
    "Unterminated string": 'a string is not closed; write a quote inside a string as \\"',
    "Expecting value": "strings need double quotes; true, false and null are lowercase",
}


@dataclass
class _Marker:
    """A keyword line: where it is, which keyword, what follows it, where its text ends."""

    line: int
    keyword: str
    rest: str
    end: int  # the line of the next keyword, or the number of lines


def _markers(lines: list[str]) -> list[_Marker]:
    """Every keyword line, in order: the skeleton of the reply that the checks look at."""
    markers: list[_Marker] = []
    for index, line in enumerate(lines):
        match = KEYWORD_LINE.match(line)
        if match:
            keyword = " ".join(match.group(1).lower().split())  # "Action  Input" -> "action input"
            if markers:
                markers[-1].end = index
            markers.append(_Marker(index, keyword, line[match.end() :], end=len(lines)))
    return markers


def _lines(text: str) -> list[str]:
    # Only "\n" ends a line: str.splitlines would also split at characters such as
    # U+2028, which are legal inside a JSON string.
    return text.replace("\r\n", "\n").split("\n")


def split_off_observation(text: str) -> tuple[str, str]:
    """Split a reply into (what the model may say, the Observation it invented).

    Only a tool can produce an observation.  If one appears in the reply, the
    provider ignored the stop sequence and the model went on to imagine the
    result; nothing from that line on may be trusted or run.
    """
    lines = _lines(text)
    for marker in _markers(lines):
        if marker.keyword == "observation":
            kept = "\n".join(lines[: marker.line]).rstrip()
            return kept, "\n".join(lines[marker.line :])
    # A bold "**Observation:**" stops at "Observation:": the two stars already
    # written end the reply on a line of their own, and would otherwise become part
    # of the Action Input (breaking its JSON) or of the Final Answer.
    if lines[-1].strip(" \t") == "**":
        return "\n".join(lines[:-1]).rstrip(), ""
    return text, ""


def parse(text: str) -> Step:
    """The one step a reply asks for; raises FormatError with a message for the model."""
    lines = _lines(split_off_observation(text)[0])
    markers = _markers(lines)
    actions = [m for m in markers if m.keyword == "action"]
    inputs = [m for m in markers if m.keyword == "action input"]
    finals = [m for m in markers if m.keyword == "final answer"]

    if finals and (actions or inputs):
        raise FormatError(
            "the reply has both an Action and a Final Answer; write an Action and wait "
            "for its Observation, or write only a Final Answer when the task is done"
        )
    if finals:
        final = finals[0]
        answer = "\n".join([final.rest, *lines[final.line + 1 :]]).strip()
        if not answer:
            raise FormatError("the Final Answer is empty; write the answer after 'Final Answer:'")
        return FinalAnswer(answer, _thought(lines, markers, final.line))
    if len(actions) > 1 or len(inputs) > 1:
        raise FormatError(
            f"the reply has {max(len(actions), len(inputs))} actions; write one Action and "
            "one Action Input, then stop and wait for the Observation"
        )
    if not actions:
        if inputs:
            raise FormatError("there is an Action Input but no 'Action:' line naming the tool")
        raise FormatError(
            "found neither 'Action:' nor 'Final Answer:' at the start of a line; to use a "
            "tool write Action and Action Input, to finish write Final Answer"
        )
    tool = actions[0].rest.strip().strip("`*").strip()
    if not tool:
        raise FormatError("the 'Action:' line names no tool; write the tool name after 'Action:'")
    if not inputs:
        raise FormatError(
            f"Action '{tool}' has no 'Action Input:' line; give the arguments as a JSON "
            'object, for example Action Input: {"path": "README.md"}'
        )
    args = _arguments(_body(lines, inputs[0]))
    return Action(tool, args, _thought(lines, markers, len(lines)))


def _body(lines: list[str], marker: _Marker) -> str:
    """The text of one keyword: the rest of its line and the lines up to the next keyword."""
    return "\n".join([marker.rest, *lines[marker.line + 1 : marker.end]]).strip()


def _thought(lines: list[str], markers: list[_Marker], before: int) -> str:
    """The Thought sections above line `before`, and any text ahead of the first keyword."""
    first = markers[0].line if markers else len(lines)
    parts = ["\n".join(lines[:first]).strip()]
    parts += [_body(lines, m) for m in markers if m.keyword == "thought" and m.line < before]
    return "\n".join(part for part in parts if part)


def _unfence(text: str) -> str:
    """Take the JSON out of a Markdown fence (``` or ```json), closed or not."""
    text = text.strip()
    if text.startswith("```"):
        text = text[3:].lstrip(string.ascii_letters)  # the language tag: json, JSON, …
        if text.rstrip().endswith("```"):
            text = text.rstrip()[:-3]
    return text.strip()


def _arguments(text: str) -> dict[str, Any]:
    """The Action Input as a dict, or a FormatError that says where the JSON broke."""
    text = _unfence(text)
    if not text:
        raise FormatError(
            'the Action Input is empty; give the arguments as a JSON object, e.g. {"command": "ls"}'
        )
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        near = error.doc[max(0, error.pos - 25) : error.pos + 25]
        hint = next((h for start, h in JSON_HINTS.items() if error.msg.startswith(start)), "")
        what = error.msg.removesuffix(" at")  # "Invalid control character at" + position
        raise FormatError(
            f"the Action Input is not valid JSON: {what} at line {error.lineno}, column "
            f"{error.colno}, near {near!r}" + (f"; {hint}" if hint else "")
        ) from None
    except (ValueError, RecursionError) as error:  # 5,000-digit numbers, 10,000 nested [
        raise FormatError(f"the Action Input cannot be read as JSON: {error}") from None
    if not isinstance(value, dict):
        raise FormatError(
            f'the Action Input must be a JSON object such as {{"command": "ls"}}, '
            f"not {_json_kind(value)}"
        )
    return value


def _json_kind(value: Any) -> str:
    """Name the JSON value the model wrote instead of an object, in the model's terms."""
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    return "a number"
