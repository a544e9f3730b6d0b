"""Whether a value read from a file is a canonical message, and if not, why.

A message that the program made itself has the right shape by construction; one read
back from a file (a session, a cassette a person edited) may hold anything that is
valid JSON.  A line of the right outline but odd content (`"text": 5`, a string
`input`, a `tool_use` block from the user) must be refused with a reason, not crash the
code that reads its fields later.
"""

from __future__ import annotations

from typing import Any

OWN_BLOCK = {"user": "tool_result", "assistant": "tool_use"}  # the kind only that side sends
BLOCK_FIELDS = {  # each kind of block: its fields and their types, and how a reason names them
    "text": ({"text": str}, "its text as a string"),
    "tool_use": (
        {"id": str, "name": str, "input": dict},
        "an id and a name (strings) and an input object",
    ),
    "tool_result": ({"tool_use_id": str}, "a tool_use_id"),
}


def message_problem(message: Any) -> str:
    """Why `message` is not a canonical message, or "" when it is one."""
    if not isinstance(message, dict) or message.get("role") not in OWN_BLOCK:
        return "role must be 'user' or 'assistant'"
    content = message.get("content")
    if isinstance(content, str):
        return ""
    if not isinstance(content, list):
        return "content must be a string or a list of blocks"
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind in OWN_BLOCK.values() and kind != OWN_BLOCK[message["role"]]:
            return f"a {message['role']} message cannot hold a {kind} block"
        if problem := block_problem(block):
            return problem
    return ""


def block_problem(block: Any) -> str:
    """Why `block` is not an object with a type and the fields of its kind, or ""."""
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        return "every block must be an object with a type"
    fields, named = BLOCK_FIELDS.get(block["type"], ({}, ""))
    if any(not isinstance(block.get(name), kind) for name, kind in fields.items()):
        return f"a {block['type']} block needs {named}"
    content = block.get("content", "") if block["type"] == "tool_result" else ""
    if not isinstance(content, str) and not (
        isinstance(content, list) and not any(map(block_problem, content))
    ):
        return "a tool_result block's content must be text or a list of blocks"
    return ""
