"""The HTML of one task's section: its heading and prompt, the chart, the comparison's
tables, the choice of runs side by side, and the runs turn by turn, one row per turn.
"""

from __future__ import annotations

import re

from ..compare import report
from ..compare.record import Record
from ..tasks import TaskError, load_task
from .cell import esc, shown, turn_body
from .chart import context_chart
from .request import requests_html
from .turns import Column, chapter_number, columns_of


def anchor(task: str) -> str:
    """A task's name as an HTML id: the contents link to its section, and each row of its
    turns is `#task-NAME-turn-N`."""
    return "task-" + re.sub(r"[^A-Za-z0-9_-]", "-", task)


def task_section(
    name: str,
    records: list[Record],
    words: dict[str, str],
    lang: str,
    window: int | None,
    sources: list[str] | None,
) -> str:
    """A task: its prompt, the chart that tells its story, the choice of runs side by side,
    the tables, and the runs turn by turn."""
    columns = columns_of(records, words, sources)
    peak = max((t.context or 0 for c in columns for t in c.turns), default=0) or 1
    parts = [
        task_heading(name, words),
        task_prompt(records, words),
        context_chart(columns, peak, words, window),
        summary_table(records, lang),
        not_solved(records, words, sources),
        picker(columns, words),
        runs_table(name, columns, peak, words),
    ]
    return f'<section class="task" id="{anchor(name)}">{"".join(parts)}</section>'


def unfinished(record: Record, words: dict[str, str]) -> str:
    """What stopped a run before it could finish, in the page's language."""
    return words["could not finish"] + words["colon"] + words.get(record.outcome, record.outcome)


def picker(columns: list[Column], words: dict[str, str]) -> str:
    """The runs that stand side by side: a box per run; the script applies the choice, and
    without it every run is shown."""
    if len(columns) < 2:
        return ""
    boxes = "".join(
        f'<label style="--c:{column.colour}"><input type="checkbox" data-column="{column.key}"'
        f"{' checked' if column.shown else ''}> {esc(column.label)}</label>"
        for column in columns
    )
    return (
        f'<fieldset class="picker" hidden title="{esc(words["pick note"])}">'
        f"<legend>{esc(words['pick'])}</legend>{boxes}</fieldset>"
    )


def task_heading(name: str, words: dict[str, str]) -> str:
    try:
        task = load_task(name)
    except TaskError:  # records of a task this checkout does not have
        return f"<h2>{esc(name)}</h2>"
    number = chapter_number(task.brings_out)
    brings_out = words["brings out"].format(number if number is not None else task.brings_out)
    return f"<h2>{esc(name)}: {esc(task.title)} <small>{esc(brings_out)}</small></h2>"


def task_title(name: str) -> str:
    try:
        return load_task(name).title
    except TaskError:
        return ""


def task_prompt(records: list[Record], words: dict[str, str]) -> str:
    first = records[0].messages[0] if records[0].messages else {}
    prompt = first.get("content") if isinstance(first, dict) else None
    if not isinstance(prompt, str):
        return ""
    label = esc(words["task"] + words["colon"])
    return f'<p class="prompt"><strong>{label}</strong>{shown(prompt, words)}</p>'


def summary_table(records: list[Record], lang: str) -> str:
    """The terminal's two tables, from the same cells: the shared columns, then each
    chapter's own counts, side by side within the page's width."""
    tables = []
    for kind, (headers, rows) in [
        ("summary", report.table_cells(records, wall=True, lang=lang)),
        ("counts", report.counts_cells(records, lang)),
    ]:
        if not rows:
            continue
        head = "".join(f"<th>{esc(cell)}</th>" for cell in headers)
        body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows)
        tables.append(
            f'<table class="{kind}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        )
    return f'<div class="tables">{"".join(tables)}</div>'


def not_solved(records: list[Record], words: dict[str, str], sources: list[str] | None) -> str:
    lines = []
    runs = [(r.chapter, sources[n] if sources else "") for n, r in enumerate(records)]
    several = len(set(runs)) < len(runs)
    for n, record in enumerate(records):
        if record.solved:
            continue
        colon = words["colon"]
        which = record.chapter + (" · " + words["run"].format(record.run) if several else "")
        which += f" · {sources[n]}" if sources and len(set(sources)) > 1 else ""
        if record.finished:
            line = esc(which + colon + words["not solved"] + colon)
            line += f"<code>{esc(record.verdict)}</code>"
        else:
            line = esc(which + colon + unfinished(record, words))
        if record.error:
            line += esc(words["semicolon"] + words["error"] + colon)
            line += f"<code>{esc(record.error)}</code>"
        lines.append(f"<li>{line}</li>")
    return f'<ul class="verdicts">{"".join(lines)}</ul>' if lines else ""


def runs_table(name: str, columns: list[Column], peak: int, words: dict[str, str]) -> str:
    """One row per turn, one column per run: the same turn of every chapter side by side."""
    head = f'<th class="number">{esc(words["turn"])}</th>' + "".join(
        column_heading(column, words) for column in columns
    )
    sent = {
        column.key: requests_html(column, words, f"{anchor(name)}-run-{column.key}")
        for column in columns
    }
    rows = []
    for number in range(1, max(len(c.turns) for c in columns) + 1):
        present = [c.turns[number - 1] for c in columns if number <= len(c.turns)]
        same = len(columns) > 1 and len(present) == len(columns)
        same = same and len({turn.signature for turn in present}) == 1
        cells = "".join(
            turn_cell(column, number, peak, words, sent[column.key]) for column in columns
        )
        rows.append(
            f'<tr class="turn{" same" if same else ""}" id="{anchor(name)}-turn-{number}">'
            f'<th class="number">{number}</th>{cells}</tr>'
        )
    return (
        f'<div class="runs-wrap"><table class="runs" style="--n:{len(columns)}"><thead><tr>'
        f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def column_heading(column: Column, words: dict[str, str]) -> str:
    record = column.record
    verdict = "✓" if record.solved else "✗ " + words["not solved"]
    if not record.finished:
        verdict = "✗ " + unfinished(record, words)
    source = words.get(record.provenance, record.provenance)
    label = f'<span class="label">{esc(column.label)}</span>'
    return (
        f'<th class="run" data-column="{column.key}" style="--c:{column.colour}">{label}'
        f'<span class="verdict {"solved" if record.solved else "failed"}">{esc(verdict)}</span>'
        f"<small>{esc(record.stop)} · {esc(source)} · <code>{esc(record.model)}</code></small></th>"
    )


def turn_cell(
    column: Column, number: int, peak: int, words: dict[str, str], sent: list[str]
) -> str:
    where = f'data-column="{column.key}" style="--c:{column.colour}"'
    if number > len(column.turns):
        return f'<td class="ended" {where}>{esc(words["ended"])}</td>'
    request = sent[number - 1] if number <= len(sent) else ""
    body = turn_body(column.turns[number - 1], column.record.estimated, peak, words, request)
    return f"<td {where}>{body}</td>"
