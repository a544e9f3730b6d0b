"""What was sent at every turn: the request as the model received it, folded in the turn.

A run's `requests` keep each system prompt, tool list and message once and refer to them
by number (lab/compare/runs.py), and so does the page: each message is written out (role, size,
its first words) in the fold of the first turn that sent it, and a later fold lists only
its new messages and the numbers of the others (`data-sent`).  Opening the fold rebuilds
the whole request from those lines (the page's script), so that turn 400's fold shows
the 800 messages sent at turn 400 while the page holds each of them once: it grows with
the run, not with its square.  Without the script, a fold names the earlier messages it
sent by their places in the request.  What is new since the call before is marked, so
that chapter 4's compaction shows as the rewritten list it is.
"""

from __future__ import annotations

import json
from typing import Any

from llm.console import content_text
from llm.tokens import estimate_message, estimate_request, estimate_text, estimate_tool
from llm.types import RUNTIME_TAG
from v4_memory.prompt import TITLES

from .cell import esc, shown
from .records import typed
from .turns import Column

GLANCE = 110  # characters of a message shown on its line in a "what was sent" fold


class Pool:
    """The messages a run sent, each read once: a long run sends its first message at
    every turn, and sizing or comparing it again at each would cost the square of the
    turns.  `written` holds the ones whose line is already on the page."""

    def __init__(self, messages: list[Any], prefix: str) -> None:
        self.messages = messages
        self.prefix = prefix  # each line's id is the prefix and its number in the pool
        self.written: set[int] = set()
        self.showable = {n for n, message in enumerate(messages) if readable(message)}
        self.sizes = {n: estimate_message(messages[n]) for n in self.showable}
        numbers: dict[str, int] = {}  # each distinct `sent_key`, numbered
        self.keys = {
            n: numbers.setdefault(sent_key(messages[n]), len(numbers)) for n in self.showable
        }  # equal numbers: the same message, as the conversation holds it


def requests_html(column: Column, words: dict[str, str], prefix: str = "sent") -> list[str]:
    """A fold per answered call of the run: the request as the model received it.

    The system prompt (by layer, for chapter 4) and the tool schemas are written out
    where they first appear or change, and otherwise named with their sizes; a message
    is written out at the first turn that sent it, and referred to after that.  `prefix`
    makes the ids of the run's lines unique on the page."""
    requests = typed(column.record.requests, "calls", list)
    systems = typed(column.record.requests, "systems", list)
    toolsets = typed(column.record.requests, "tools", list)
    pool = Pool([*column.record.messages, *typed(column.record.requests, "extra", list)], prefix)
    folds = []
    before: dict[str, Any] = {}
    for number, call in enumerate(requests, 1):
        if not isinstance(call, dict):
            folds.append("")
            continue
        system = pick(systems, call.get("system"), str)
        tools = [t for t in pick(toolsets, call.get("tools"), list) if isinstance(t, dict)]
        refs = [r for r in typed(call, "messages", list) if isinstance(r, int)]
        refs = [ref for ref in refs if ref in pool.showable]
        same = same_frame(before, system, tools)  # then its size is known already
        fixed = before["fixed"] if same else estimate_request(system, [], tools)
        folds.append(request_html((system, tools, fixed), refs, pool, before, words))
        keys = [pool.keys[ref] for ref in refs]
        before = {
            "number": number, "system": system, "tools": tools, "keys": keys, "known": set(keys),
            "system at": before.get("system at") if before.get("system") == system else number,
            "tools at": before.get("tools at") if before.get("tools") == tools else number,
            "fixed": fixed,
        }  # fmt: skip
    return folds


def same_frame(before: dict[str, Any], system: str, tools: list[dict[str, Any]]) -> bool:
    """Whether a call sent the system prompt and tools of the call before."""
    return bool(before) and before["system"] == system and before["tools"] == tools


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
    frame: tuple[str, list[dict[str, Any]], int],
    refs: list[int],
    pool: Pool,
    before: dict[str, Any],
    words: dict[str, str],
) -> str:
    """One call's fold; `frame` is its system prompt, its tools and their size together."""
    system, tools, fixed = frame
    keys = [pool.keys[ref] for ref in refs]
    known = before.get("known", set())
    new = [key not in known for key in keys]
    kept = before.get("keys", [])
    rewritten = bool(kept) and keys[: len(kept)] != kept
    total = fixed + sum(pool.sizes[ref] for ref in refs)  # the figure the turn's bar shows
    summary = words["sent" if len(refs) != 1 else "sent one"].format(len(refs), f"≈{total:,}")
    if before:
        summary += " · " + words["sent new"].format(sum(new))
    if rewritten:
        summary += " · " + words["sent rewritten"]
    parts = [
        system_html(system, before, words),
        tools_html(tools, before, words),
        f"<h4>{esc(words['messages'])}</h4>",
        sent_list(refs, new, pool, bool(before), words),
    ]
    return f'<details class="request"><summary>{esc(summary)}</summary>{"".join(parts)}</details>'


def sent_list(
    refs: list[int], new: list[bool], pool: Pool, marked: bool, words: dict[str, str]
) -> str:
    """The request's messages in order: a line for each one the page has not written yet,
    and one line for each stretch of messages written at earlier turns (which the page's
    script replaces with copies of their lines when the fold opens)."""
    items = []
    earlier: list[int] = []  # the places, counted from 1, of the stretch being gathered
    for place, (ref, fresh) in enumerate(zip(refs, new, strict=True), 1):
        if ref in pool.written:
            earlier.append(place)
            continue
        if earlier:
            items.append(earlier_line(earlier, words))
            earlier = []
        items.append(message_line(ref, place, pool, fresh and marked, words))
        pool.written.add(ref)
    if earlier:
        items.append(earlier_line(earlier, words))
    return (
        f'<ol class="sent" data-lines="{esc(pool.prefix)}-" data-sent="{ranges(refs)}">'
        f"{''.join(items)}</ol>"
    )


def message_line(ref: int, place: int, pool: Pool, fresh: bool, words: dict[str, str]) -> str:
    message = pool.messages[ref]
    glance = " ".join(content_text(message.get("content", "")).split())
    glance = glance if len(glance) <= GLANCE else glance[:GLANCE] + "…"
    mark = f'<span class="new-mark">{esc(words["new"])}</span> ' if fresh else ""
    kind = ' class="new"' if fresh else ""
    return (
        f'<li id="{esc(pool.prefix)}-{ref}" value="{place}"{kind}>'
        f'{mark}<span class="role">{esc(str(message.get("role", "")))}</span> '
        f'<span class="size">≈{pool.sizes[ref]:,}</span> {esc(glance)}</li>'
    )


def earlier_line(places: list[int], words: dict[str, str]) -> str:
    first, last = places[0], places[-1]
    where = f"{first}" if first == last else f"{first}–{last}"
    return f'<li class="earlier" value="{first}">{esc(words["sent before"].format(where))}</li>'


def ranges(numbers: list[int]) -> str:
    """Numbers as runs, `0-797,801`: a long run's requests are mostly one run each."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


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
