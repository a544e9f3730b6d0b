"""What was sent at every turn: the request as the model received it, folded in the turn.

A run's `requests` keep each system prompt, tool list and message once and refer to them
by number (lab/runs.py); here every call is written out again as the model read it, with
sizes, and with what is new since the call before marked, so that chapter 4's compaction
shows as the rewritten list it is.
"""

from __future__ import annotations

import json
from typing import Any

from llm.console import content_text
from llm.tokens import estimate_message, estimate_request, estimate_text, estimate_tool
from llm.types import RUNTIME_TAG
from v4_memory.prompt import TITLES

from .view_cell import esc, shown
from .view_records import typed
from .view_turns import Column

GLANCE = 110  # characters of a message shown on its line in a "what was sent" fold


def requests_html(column: Column, words: dict[str, str]) -> list[str]:
    """A fold per answered call of the run: the request as the model received it.

    The system prompt (by layer, for chapter 4) and the tool schemas are written out
    where they first appear or change, and otherwise named with their sizes, so the
    page grows by a line per message and turn, not by the whole conversation again."""
    requests = typed(column.record.requests, "calls", list)
    systems = typed(column.record.requests, "systems", list)
    toolsets = typed(column.record.requests, "tools", list)
    pool = [*column.record.messages, *typed(column.record.requests, "extra", list)]
    folds = []
    before: dict[str, Any] = {}
    for number, call in enumerate(requests, 1):
        if not isinstance(call, dict):
            folds.append("")
            continue
        system = pick(systems, call.get("system"), str)
        tools = [t for t in pick(toolsets, call.get("tools"), list) if isinstance(t, dict)]
        refs = [
            r for r in typed(call, "messages", list) if isinstance(r, int) and 0 <= r < len(pool)
        ]
        messages = [pool[r] for r in refs if readable(pool[r])]
        folds.append(request_html(number, system, tools, messages, before, words))
        before = {
            "number": number, "system": system, "tools": tools,
            "keys": [sent_key(message) for message in messages],
            "system at": before.get("system at") if before.get("system") == system else number,
            "tools at": before.get("tools at") if before.get("tools") == tools else number,
        }  # fmt: skip
    return folds


def readable(message: Any) -> bool:
    """A message the fold can show and size: a role, and text or a list of blocks."""
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        return False
    content = message.get("content")
    return isinstance(content, str) or (
        isinstance(content, list) and all(isinstance(block, dict) for block in content)
    )


def pick(pool: list[Any], index: Any, kind: type) -> Any:
    """pool[index] if there is such an entry of that kind, else an empty one."""
    ok = isinstance(index, int) and 0 <= index < len(pool) and isinstance(pool[index], kind)
    return pool[index] if ok else kind()


def sent_key(message: dict[str, Any]) -> str:
    """A message as the conversation holds it, for telling what is new in a request:
    chapter 4's runtime note rides on each request's last message and is never kept, so
    a message that lost its note at the next call is the same message, not a new one."""
    content = message.get("content")
    if isinstance(content, list):
        content = [
            block
            for block in content
            if not str(block.get("text", "")).startswith(RUNTIME_TAG) or block.get("type") != "text"
        ]
        if len(content) == 1 and content[0].get("type") == "text":
            content = content[0].get("text")
    return json.dumps([message.get("role"), content], sort_keys=True, default=str)


def request_html(
    number: int,
    system: str,
    tools: list[dict[str, Any]],
    messages: list[dict[str, Any]],
    before: dict[str, Any],
    words: dict[str, str],
) -> str:
    keys = [sent_key(message) for message in messages]
    known = set(before.get("keys", []))
    new = [key not in known for key in keys]
    kept = before.get("keys", [])
    rewritten = bool(kept) and keys[: len(kept)] != kept
    sizes = [estimate_message(message) for message in messages]
    total = estimate_request(system, messages, tools)  # the figure the turn's bar shows
    summary = words["sent" if len(messages) != 1 else "sent one"].format(
        len(messages), f"≈{total:,}"
    )
    if before:
        summary += " · " + words["sent new"].format(sum(new))
    if rewritten:
        summary += " · " + words["sent rewritten"]
    parts = [
        system_html(system, before, words),
        tools_html(tools, before, words),
        f'<h4>{esc(words["messages"])}</h4><ol class="sent">',
    ]
    for message, size, fresh in zip(messages, sizes, new, strict=False):
        glance = " ".join(content_text(message.get("content", "")).split())
        glance = glance if len(glance) <= GLANCE else glance[:GLANCE] + "…"
        if before and not fresh:  # its words are in the fold of the turn that first sent it
            glance = ""
        mark = f'<span class="new-mark">{esc(words["new"])}</span> ' if fresh and before else ""
        parts.append(
            f'<li class="{"new" if fresh and before else ""}">{mark}'
            f'<span class="role">{esc(str(message.get("role", "")))}</span> '
            f'<span class="size">≈{size:,}</span> {esc(glance)}</li>'
        )
    parts.append("</ol>")
    return f'<details class="request"><summary>{esc(summary)}</summary>{"".join(parts)}</details>'


def layers_of(system: str) -> list[tuple[str, str]]:
    """Chapter 4's prompt by layer (each starts with its heading, `# Identity`, …); any
    other prompt is one part."""
    headings = {f"# {title}": name for name, title in TITLES.items()}
    parts: list[tuple[str, list[str]]] = []
    for paragraph in system.split("\n\n"):
        first = paragraph.split("\n", 1)[0]
        if first in headings or not parts:
            parts.append((headings.get(first, ""), [paragraph]))
        else:
            parts[-1][1].append(paragraph)
    found = [(name, "\n\n".join(texts)) for name, texts in parts]
    return found if any(name for name, _ in found) else [("", system)]


def system_html(system: str, before: dict[str, Any], words: dict[str, str]) -> str:
    layers = layers_of(system)
    same = before and before.get("system") == system
    title = f"{words['system prompt']} ≈{estimate_text(system):,} {words['tokens']}"
    if same:
        title += " · " + words["same as turn"].format(before["system at"])
    if len(layers) == 1:
        body = "" if same else f"<pre>{shown(system, words)}</pre>"
        return f"<h4>{esc(title)}</h4>{body}"
    rows = []
    for name, text in layers:
        size = f"≈{estimate_text(text):,}"
        cell = (
            esc(name)
            if same
            else f"<details><summary>{esc(name)}</summary><pre>{shown(text, words)}</pre></details>"
        )
        rows.append(f'<tr><td>{cell}</td><td class="size">{size}</td></tr>')
    head = f"<tr><th>{esc(words['layer'])}</th><th>{esc(words['tokens'])}</th></tr>"
    return f'<h4>{esc(title)}</h4><table class="layers">{head}{"".join(rows)}</table>'


def tools_html(tools: list[dict[str, Any]], before: dict[str, Any], words: dict[str, str]) -> str:
    same = before and before.get("tools") == tools
    total = sum(map(estimate_tool, tools))
    title = f"{words['tools offered']} ({len(tools)}) ≈{total:,} {words['tokens']}"
    if same:
        names = ", ".join(str(tool.get("name", "")) for tool in tools)
        title += " · " + words["same as turn"].format(before["tools at"])
        return f'<h4>{esc(title)}</h4><p class="tools">{esc(names)}</p>'
    items = "".join(
        f"<li><details><summary>{esc(str(tool.get('name', '')))} "
        f'<span class="size">≈{estimate_tool(tool):,}</span></summary>'
        f"<pre>{shown(json.dumps(tool, ensure_ascii=False, indent=1), words)}</pre></details></li>"
        for tool in tools
    )
    return f'<h4>{esc(title)}</h4><ul class="tools">{items}</ul>'
