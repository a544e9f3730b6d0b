"""The chart that opens each task: the context at every turn, one line per run, as SVG.

It is drawn on the scale the bars of the columns share, with the window and chapter 4's
budget across it, so that the picture and the turns below it tell the same story.
"""

from __future__ import annotations

from typing import Any

from llm.windows import default_budget

from ..compare.record import Record
from .cell import esc, tokens
from .turns import Column, listed


def context_chart(
    columns: list[Column], peak: int, words: dict[str, str], window: int | None
) -> str:
    """Context per turn, one line per run, on the scale the bars of the columns share; the
    window (`--window`) and chapter 4's budget drawn across, its compactions marked."""
    width, height, left, right, top, bottom = 960, 240, 80, 20, 16, 48
    turns = max((len(c.turns) for c in columns), default=1)
    budgets = {budget_of(c.record) for c in columns if c.record.chapter.startswith("v4")}
    limits = [(window, "window", words["window line"])] if window else []
    # The budget is drawn where the runs come near it; on a short task it would only
    # flatten every line at the bottom of the chart.
    limits += [
        (budget, "budget", words["budget line"])
        for budget in sorted(b for b in budgets if b)
        if peak >= budget / 2
    ]
    scale = nice_ceiling(max([peak, *(value for value, _, _ in limits)]))

    def x(turn: int) -> float:
        return left + (turn - 1) * (width - left - right) / max(turns - 1, 1)

    def y(value: int) -> float:
        return top + (1 - value / scale) * (height - top - bottom)

    steps = 4 if str(scale).rstrip("0") == "2" else 5  # gridlines at round values: 500, not 400
    grid = []
    for step in range(steps + 1):
        value = scale * step // steps
        grid.append(
            f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y(value):.1f}" '
            f'y2="{y(value):.1f}"/><text x="{left - 8}" y="{y(value) + 5:.1f}" '
            f'text-anchor="end">{value:,}</text>'
        )
    every = max(1, -(-turns // 20))  # at most about twenty labels along the turns
    for turn in range(1, turns + 1, every):
        grid.append(
            f'<text x="{x(turn):.1f}" y="{height - bottom + 22}" text-anchor="middle">{turn}</text>'
        )
    grid.append(
        f'<text x="{(left + width - right) / 2}" y="{height - 6}" text-anchor="middle">'
        f"{esc(words['turn'])}</text>"
    )
    for value, kind, label in limits:
        grid.append(
            f'<line class="limit {kind}" x1="{left}" x2="{width - right}" y1="{y(value):.1f}" '
            f'y2="{y(value):.1f}"/><text class="limit" x="{width - right - 4}" '
            f'y="{y(value) - 6:.1f}" text-anchor="end">{esc(label)} {value:,}</text>'
        )
    lines = [chart_line(column, x, y, words) for column in columns]
    legend = "".join(
        f'<li><span class="swatch" style="background:{c.colour}"></span>{esc(c.label)}</li>'
        for c in columns
    ) + compaction_key(columns, words)
    return (
        f'<figure class="chart"><figcaption>{esc(words["chart"])}'
        f'</figcaption><svg viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{esc(words["chart"])}">{"".join(grid)}{"".join(lines)}</svg>'
        f'<ul class="legend">{legend}</ul></figure>'
    )


def budget_of(record: Record) -> int | None:
    """The budget chapter 4 kept its requests in: from the model it talked to, as the
    chapter works it out (a replay's fixed budget, or the live model's window)."""
    replayed = record.provenance in ("scripted", "recorded")
    try:
        return default_budget("replay:" if replayed else record.model)
    except (TypeError, ValueError):
        return None


def chart_line(column: Column, x: Any, y: Any, words: dict[str, str]) -> str:
    points = [(t.number, t.context) for t in column.turns if t.context is not None]
    if not points:
        return ""
    path = " ".join(f"{x(n):.1f},{y(v):.1f}" for n, v in points)
    estimated = column.record.estimated
    dots = "".join(
        f'<circle cx="{x(n):.1f}" cy="{y(v):.1f}" r="4"><title>'
        f"{esc(words['point'].format(column.label, n, tokens(v, estimated)))}</title></circle>"
        for n, v in points
    )
    at = dict(points)
    marks = "".join(
        f'<path class="compaction" d="M{x(n):.1f},{y(at[n]) - 14:.1f} l-7,-12 h14 z">'
        f"<title>{esc(column.label + ': ' + words['compacted'].format(n))}</title></path>"
        for n in compaction_turns(column)
        if n in at
    )
    return (
        f'<g style="--c:{column.colour}" data-column="{column.key}">'
        f'<polyline points="{path}"/>{dots}{marks}</g>'
    )


def compaction_key(columns: list[Column], words: dict[str, str]) -> str:
    """The legend's entry for the triangles, when the chart has any: the mark drawn as on
    the lines, in the colour of the first run that compacted."""
    compacted = [column for column in columns if compaction_turns(column)]
    if not compacted:
        return ""
    mark = (
        '<svg class="key" viewBox="0 0 18 16" aria-hidden="true">'
        '<path class="compaction" d="M9,14 l-7,-12 h14 z"/></svg>'
    )
    return f'<li style="--c:{compacted[0].colour}">{mark}{esc(words["compaction key"])}</li>'


def compaction_turns(column: Column) -> list[int]:
    """The turns chapter 4 compacted its context before (`details.compactions`)."""
    entries = listed(column.record.details, "compactions")
    return sorted({entry["turn"] for entry in entries})


def nice_ceiling(value: int) -> int:
    """The smallest 1, 2, 2.5 or 5 times a power of ten at or above `value`: round gridlines."""
    power = 10 ** max(len(str(max(value, 1))) - 1, 0)
    for factor in (1, 2, 2.5, 5, 10):
        if factor * power >= value:
            return int(factor * power)
    return 10 * power
