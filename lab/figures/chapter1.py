"""Chapter 1's figures: what the tools' output cap holds, and one request on the wire."""

from __future__ import annotations

import json
import re
from pathlib import Path

from lab.token_check import definitions, first_bytes
from lab.words import word
from llm import Message, Usage
from llm.openai_model import from_chat_message, to_chat_messages, to_chat_tools
from llm.tokens import estimate_text
from v1_tool_loop.tools import OUTPUT_LIMIT, TOOLS

from .markdown import BLOCK, DOCS, REPO, about, table


def output_limit(lang: str = "en") -> str:
    """What the tools' output cap of OUTPUT_LIMIT bytes holds, in characters and tokens.

    Measured on chapter 1's own texts (its doc in each language, its code, its demo
    cassette and tool schemas, repeated where shorter than the cap) with the estimate of
    `llm/tokens.py`, which needs no tokenizer; `python -m lab.token_check` sets a real
    tokenizer's count beside it.  Rounded, since every edit of those texts moves it a little.
    """
    chapter = REPO / "v1_tool_loop"
    modules = sorted(chapter.glob("*.py"))
    cassette = (chapter / "demo/cassette.jsonl").read_text(encoding="utf-8").splitlines()
    kinds = {
        "English prose": prose(DOCS / "en/v1_tool_loop.md"),
        "Chinese prose": prose(DOCS / "zh/v1_tool_loop.md"),
        "Python code": [part for path in modules for part in definitions(path)],
        "JSON tool traffic": [*cassette, *(json.dumps(tool, ensure_ascii=False) for tool in TOOLS)],
    }
    rows = []
    for kind, samples in kinds.items():
        text = first_bytes(samples, OUTPUT_LIMIT)
        rows.append([word(kind, lang), about(len(text)), about(estimate_text(text))])
    headers = ["kind of text", "characters", "tokens (estimated)"]
    return table([word(h, lang) for h in headers], rows)


def prose(doc: Path) -> list[str]:
    """The paragraphs of a doc, without its code blocks and the figures printed into it."""
    text = BLOCK.sub("", doc.read_text(encoding="utf-8"))
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return [part.strip() for part in re.split(r"\n\s*\n", text) if part.strip()]


# A small conversation, enough to show each kind of block once.
EXAMPLE_SYSTEM = "You are a coding agent."
EXAMPLE_MESSAGES: list[Message] = [
    {"role": "user", "content": "How many lines does stats.py have?"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "I'll count them."},
            {
                "type": "tool_use",
                "id": "toolu_01",
                "name": "bash",
                "input": {"command": "wc -l stats.py"},
            },
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01",
                "content": "24 stats.py",
                "is_error": False,
            }
        ],
    },
]
EXAMPLE_CALL = {"name": "bash", "arguments": '{"command": "wc -l stats.py"}'}
EXAMPLE_TOOL = {
    "name": "bash",
    "description": "Run a shell command in the work directory.",
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
    },
}


def wire_shapes(part: str, lang: str = "en") -> str:
    """One request in the course's (Anthropic) shape, as `OpenAIModel` sends it, and a reply.

    `ours`: the messages, system prompt and tool schema as the loop holds them;
    `chat`: the same request in Chat Completions form; `reply`: a Chat Completions
    answer that asks for a tool, as the `Reply` the loop receives.
    """
    if part == "ours":
        shapes = [*EXAMPLE_MESSAGES, {"system": EXAMPLE_SYSTEM, "tools": [EXAMPLE_TOOL]}]
    elif part == "chat":
        chat = to_chat_messages(EXAMPLE_SYSTEM, EXAMPLE_MESSAGES)
        shapes = [*chat, {"tools": to_chat_tools([EXAMPLE_TOOL])}]
    elif part == "reply":
        call = {"id": "call_1", "type": "function", "function": EXAMPLE_CALL}
        answer = {"role": "assistant", "content": None, "tool_calls": [call]}
        choice = {"message": answer, "finish_reason": "tool_calls"}
        usage = {"prompt_tokens": 812, "completion_tokens": 41}
        reply = from_chat_message(
            answer["content"],
            [(call["id"], EXAMPLE_CALL["name"], EXAMPLE_CALL["arguments"])],
            choice["finish_reason"],
            Usage(usage["prompt_tokens"], usage["completion_tokens"]),
        )
        shapes = [{"choices": [choice], "usage": usage}, reply.to_dict()]
    else:
        raise SystemExit(f"wire-shapes takes ours, chat or reply, not '{part}'")
    lines = "\n".join(json.dumps(shape, ensure_ascii=False) for shape in shapes)
    return f"```json\n{lines}\n```"
