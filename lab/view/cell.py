"""The HTML of one turn of one run, a cell of the page: the reply, each tool call with its
result folded, a child agent's own turns, and what the loop did before and after.

Everything a run wrote goes through `esc`, and every long text through `shown`, which cuts
it after `LIMIT` characters: a tool's output can neither break the page nor make it heavy.
The other modules of the page escape and cut with the same two.
"""

from __future__ import annotations

import html
from typing import Any

from .records import typed
from .turns import Call, Event, Turn, turns_of

LIMIT = 4_000  # characters shown of one text (a tool's result, the model's reply)
GLIMPSE = 100  # characters of a call's arguments shown on its folded line


# The bidirectional controls: U+202E in a tool's output or a file name would turn the
# rest of the line around on the page, as it would in a terminal; shown as escapes.
BIDI = {code: f"\\u{code:04x}" for code in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]}


def esc(text: Any) -> str:
    return html.escape(str(text).translate(BIDI), quote=True)


def shown(text: str, words: dict[str, str]) -> str:
    """Escaped, and cut after `LIMIT` characters with a note saying how much is left out."""
    if len(text) <= LIMIT:
        return esc(text)
    note = words["cut"].format(len(text) - LIMIT)
    return f'{esc(text[:LIMIT])}<span class="cut">{esc(note)}</span>'


def tokens(value: int, estimated: bool) -> str:
    return ("≈" if estimated else "") + f"{value:,}"


def turn_body(
    turn: Turn, estimated: bool, peak: int, words: dict[str, str], request: str = ""
) -> str:
    """Everything of one turn: what came before the call, what the call sent (`request`,
    folded), the call's context, the reply, its tool calls, and what the loop did after."""
    parts = [event_html(event, words) for event in turn.before] + [request]
    if turn.context is not None:
        parts.append(
            f'<div class="context"><span class="bar"><span style="width:'
            f'{100 * turn.context / peak:.1f}%"></span></span> {tokens(turn.context, estimated)}'
            "</div>"
        )
    if turn.text:
        parts.append(f'<div class="text">{shown(turn.text, words)}</div>')
    if turn.answer:
        parts.append(
            f'<div class="answer"><strong>{esc(words["answer"])}</strong>'
            f"{shown(turn.answer, words)}</div>"
        )
    for call in turn.calls:
        parts.append(call_html(call, estimated, peak, words))
    parts += [event_html(event, words) for event in turn.after]
    return "".join(parts)


def call_html(call: Call, estimated: bool, peak: int, words: dict[str, str]) -> str:
    """A tool call: its name and arguments on one line, its result folded below."""
    glimpse = call.arguments if len(call.arguments) <= GLIMPSE else call.arguments[:GLIMPSE] + "…"
    badge = f' <span class="badge">{esc(words["error"])}</span>' if call.is_error else ""
    inside = ""
    if len(call.arguments) > GLIMPSE:
        title = esc(words["arguments"])
        inside += f'<pre class="arguments" title="{title}">{shown(call.arguments, words)}</pre>'
    if call.result is None:
        inside += f'<p class="missing">{esc(words["no result"])}</p>'
    else:
        inside += f'<pre class="result">{shown(call.result, words)}</pre>'
    folded = (
        f'<details class="call{" error" if call.is_error else ""}"><summary>'
        f'<span class="tool">{esc(call.name)}</span> <code>{esc(glimpse)}</code>{badge}'
        f"</summary>{inside}</details>"
    )
    return folded + (child_html(call.child, estimated, peak, words) if call.child else "")


def child_html(child: dict[str, Any], estimated: bool, peak: int, words: dict[str, str]) -> str:
    """Chapter 3: the child's own run, folded under the call that started it."""
    turns = turns_of(
        typed(child, "messages", list),
        typed(child, "context_per_turn", list),
        typed(child, "details", dict),
        child.get("stop") == "done",
    )
    line = words["child line"].format(
        child.get("stop", ""),
        child.get("turns", len(turns)),
        child.get("tool_calls", ""),
        tokens(typed(child, "input_tokens", int), estimated),
    )
    kind = child.get("agent_type")
    who = words["child of type"].format(kind) if kind else words["child"]
    items = "".join(
        f'<li><span class="number">{esc(words["turn"])} {turn.number}</span>'
        f"{turn_body(turn, estimated, peak, words)}</li>"
        for turn in turns
    )
    return (
        f'<details class="child"><summary><strong>{esc(who + words["colon"])}</strong>'
        f"{esc(child.get('description', ''))} <small>{esc(line)}</small></summary>"
        f"<ol>{items}</ol></details>"
    )


def event_html(event: Event, words: dict[str, str]) -> str:
    figures = words["stage"].format(*map(number, event.figures)) + " " if event.figures else ""
    items = "".join(f"<li>{shown(item, words)}</li>" for item in event.items if item)
    return (
        f'<div class="event {event.kind}"><strong>{esc(words[event.kind])}</strong> '
        f"{esc(figures)}{shown(event.text, words)}{f'<ul>{items}</ul>' if items else ''}</div>"
    )


def number(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else "?" if value is None else str(value)
