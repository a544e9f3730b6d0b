"""Tool calls that arrive as text: the server did not parse them, so say so, or parse them.

Structured tool use is text too.  The model writes its call in the format its chat
template taught it (a `<tool_call>` tag, a fenced ```json block, a bare JSON object)
and the *server* parses that text into `tool_calls`.  A server started without the
model's template, or with a model it has no parser for, passes the call on as plain
text.  The loop would then see a reply with no tool call, take its text for the final
answer, and report success with nothing done.

So every reply that was offered tools and holds no call is checked here: if its text
holds a JSON call to one of the offered tools, or only the start of one (`functions.bash:`,
a call cut off), the run stops with its own stop (`tool_call_in_text`) and a message
that says what to change on the server.  With `AGENT_TEXT_TOOL_CALLS=1` the agent
parses whole calls itself instead, as chapter 0 parses its `Action:` lines: the same
lesson, applied to chapter 1's protocol.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from .errors import ModelError
from .types import Block, Message, Reply, unique_call_ids

PARSE_VARIABLE = "AGENT_TEXT_TOOL_CALLS"
ARGUMENT_KEYS = ("arguments", "parameters", "input")
MAX_OBJECTS = 20  # a reply is short; past this many `{` it is prose or code, not a call
# A reply that is only a call's name, as some chat formats begin a call (`functions.bash:`):
# the server cut the call off, or blanked it; taken for text, it would end the run "done".
EMPTY_CALL = re.compile(r"\s*(?:functions\.)?([A-Za-z_][\w-]*)\s*:?\s*")
# How llama-cpp-python's chatml-function-calling format writes a call: `functions.NAME:`,
# then the arguments as a JSON object.  The prefix is the format's, never an answer's.
FUNCTIONS_CALL = re.compile(r"functions\.([A-Za-z_][\w-]*)\s*:\s*")
# The start of a call as a JSON object (fenced or bare) that names a tool; a reply that
# begins so, or with a <tool_call> tag, and holds no whole call was cut off.
BEGUN_CALL = re.compile(r'\s*(?:```(?:json)?\s*)?\{\s*"name"\s*:\s*"([\w-]+)"')

# llama-cpp-python's server parses no call from a model's own template, and its
# chatml-function-calling format, which parses them, never shows the model a tool's result:
# there the agent must parse the calls itself (measured: `python -m lab.server_check`).
SERVER_FIXES = (
    "start llama.cpp's llama-server with --jinja; vLLM with --enable-auto-tool-choice "
    "--tool-call-parser NAME (hermes for Qwen); on Ollama, pick a model whose page lists "
    "tools; on llama-cpp-python's server, leave out --chat_format (chatml-function-calling "
    f"drops every tool result) and set {PARSE_VARIABLE}=1, since it parses no call from the "
    "model's own template"
)
# A whole call in the text can also be parsed by the agent; a cut-off one cannot.
SERVER_SETTINGS = (
    f"{SERVER_FIXES}. Or, on any server, set {PARSE_VARIABLE}=1 to let the agent parse such "
    "calls from the text"
)


class ToolCallInText(ModelError):
    """The model wrote a tool call as text and the server did not turn it into one.

    It carries the reply, so a recording keeps it and its replay stops the same way, and
    its usage (`spent`): the server read the request and wrote the reply, so the loop
    counts the turn and its tokens.
    """

    stop = "tool_call_in_text"

    def __init__(self, message: str, reply: Reply) -> None:
        super().__init__(message)
        self.reply = reply
        self.spent = (reply.usage,)


def check_tool_calls(
    reply: Reply, tools: list[dict[str, Any]] | None, messages: list[Message]
) -> Reply:
    """The reply as it is, or with the calls its text holds (when parsing is switched on).

    Raises ToolCallInText when the reply was offered tools, holds no tool call, and its
    text holds a call to one of them, unless `AGENT_TEXT_TOOL_CALLS=1`; or holds only the
    start of a call (`begun_call`), which no setting of ours can run.
    """
    if not tools or any(block["type"] == "tool_use" for block in reply.content):
        return reply
    text = "\n".join(block["text"] for block in reply.content if block["type"] == "text")
    names = {tool["name"] for tool in tools}
    calls = calls_in_text(text, names)
    if not calls:
        begun = begun_call(text, names)
        if begun is not None:
            raise ToolCallInText(f"{begun}: {SERVER_FIXES}", reply)
        return reply
    if os.environ.get(PARSE_VARIABLE) == "1":
        blocks: list[Block] = [
            {"type": "tool_use", "id": f"text_call_{index}", "name": name, "input": arguments}
            for index, (name, arguments) in enumerate(calls)
        ]
        # Numbered afresh in every reply, so a later reply's `text_call_0` would repeat an
        # earlier one: `messages` (the conversation it answers) says which ids are taken.
        content = unique_call_ids([*reply.content, *blocks], messages)
        return Reply(content, "tool_use", reply.usage)
    name, arguments = calls[0]
    shown = json.dumps(arguments, ensure_ascii=False)
    shown = shown if len(shown) <= 60 else shown[:60] + "…"
    raise ToolCallInText(
        f"the model wrote its call to {name} {shown} as text, and the server passed it on "
        f"as text instead of a tool call: {SERVER_SETTINGS}",
        reply,
    )


def begun_call(text: str, names: set[str]) -> str | None:
    """What a reply holding no whole call began, if it began a call: the server sent a
    call's start alone (`functions.bash:`), or one cut off (`<tool_call>{"name": "ba`).

    Taken for text, such a reply would end the run "done" with nothing done.  A name alone
    counts only as an offered tool's (`Done:` is an answer); after `functions.`, the chat
    format's own prefix, any name counts when nothing but a JSON object follows.
    """
    stripped = text.strip()
    empty = EMPTY_CALL.fullmatch(text)
    prefixed = FUNCTIONS_CALL.match(stripped)
    rest = stripped[prefixed.end() :] if prefixed else ""
    if empty and (empty.group(1) in names or prefixed):
        whose = " (llama-cpp-python's chatml-function-calling format)" if prefixed else ""
        return (
            f"the server sent {stripped!r}, the start of a call to {empty.group(1)}{whose} "
            "with nothing after it, as the model's text: a server setting, not an answer"
        )
    named = BEGUN_CALL.match(text)
    if (
        stripped.startswith("<tool_call>")
        or (prefixed and (prefixed.group(1) in names or rest.startswith("{")))
        or (named and named.group(1) in names)
    ):
        shown = stripped if len(stripped) <= 60 else stripped[:60] + "…"
        return (
            f"the server sent {shown!r}, the start of a tool call with no whole call after "
            "it (cut off or empty), as the model's text: a server setting, not an answer"
        )
    return None


def calls_in_text(text: str, names: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """(name, arguments) of each call to one of `names` written in `text`.

    The shapes local models write: {"name": …, "arguments": {…}} (or "parameters",
    "input"), the arguments as an object or as JSON text, alone, in a fenced block or
    in a <tool_call> tag; also {"function": {"name": …, "arguments": …}}; and
    llama-cpp-python's `functions.NAME:` followed by the arguments' object.
    """
    calls = functions_calls(text, names)
    for found in json_objects(text):
        call = found.get("function") if isinstance(found.get("function"), dict) else found
        name = call.get("name")
        arguments = next((call[key] for key in ARGUMENT_KEYS if key in call), None)
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except (json.JSONDecodeError, RecursionError):
                continue
        if name in names and isinstance(arguments, dict):
            calls.append((name, arguments))
    return calls


def functions_calls(text: str, names: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """(name, arguments) of each `functions.NAME:` in `text` followed by a JSON object."""
    calls = []
    decoder = json.JSONDecoder()
    for found in list(FUNCTIONS_CALL.finditer(text))[:MAX_OBJECTS]:
        try:
            arguments, _ = decoder.raw_decode(text, found.end())
        except (json.JSONDecodeError, RecursionError):
            continue
        if found.group(1) in names and isinstance(arguments, dict):
            calls.append((found.group(1), arguments))
    return calls


def json_objects(text: str) -> list[dict[str, Any]]:
    """The JSON objects written in `text`, outermost ones, in order."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    position = 0
    for _ in range(MAX_OBJECTS):
        start = text.find("{", position)
        if start < 0:
            break
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            position = start + 1
            continue
        except RecursionError:  # nested deeper than Python's stack: no call is written so
            break
        if isinstance(value, dict):
            found.append(value)
        position = end
    return found
