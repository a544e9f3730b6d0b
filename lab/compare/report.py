"""What a comparison prints and saves: a table per task, solved rates with their intervals,
and the JSON records notebooks and the run viewer read.

A table has one row per chapter.  With several runs per chapter (live, `--runs N`)
each figure is the mean over the runs, and `solved` is a rate with its 95 % Wilson
interval: with five runs, 4/5 solved says little more than "between 38 % and 96 %",
and the table says so rather than print a bare 80 %.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from statistics import fmean
from typing import Any

from ..tasks import Task
from ..words import ZH, word
from .record import Record

FORMAT = "lab-records/2"
COLUMNS = 100  # a terminal's width the tables and their notes fit in
# Shorter headers for a table that would not fit in COLUMNS (a run stopped by the
# simulated window widens two columns): these headers are the widest of their columns.
SHORT = {"tokens in": "tok in", "tokens out": "tok out", "peak context": "peak ctx"}
Z95 = 1.959963984540054  # the 97.5th percentile of the standard normal distribution


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a success rate (95 % by default).

    Unlike the textbook p ± z·√(p(1−p)/n), it stays inside [0, 1] and does not
    shrink to nothing at 0/n or n/n: three solved out of three still leaves room
    for a model that fails one time in three.
    """
    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(f"{successes} successes out of {trials} trials")
    p = successes / trials
    spread = z * z / trials
    centre = (p + spread / 2) / (1 + spread)
    half = z * math.sqrt(p * (1 - p) / trials + spread / (4 * trials)) / (1 + spread)
    return max(0.0, centre - half), min(1.0, centre + half)


def solved_cell(records: list[Record], lang: str, several: bool = False, wide: bool = False) -> str:
    """Solved or not; over several runs, the rate among the runs that finished, with its
    95 % interval (`2/3 (21–94%)`, or `2/3 · 67% (21%–94%)` in the wide table).  A run
    that could not finish (rate limited, provider error, window full) is not in the rate:
    it says nothing of what the chapter does, and is counted in a column of its own."""
    finished = [record for record in records if record.finished]
    wins = sum(record.solved for record in finished)
    if not several:
        shown = {"solved": "yes", "not solved": "no"}.get(records[0].outcome, records[0].outcome)
        return word(shown, lang)
    if not finished:
        return "—"
    low, high = wilson(wins, len(finished))
    if wide:
        return f"{wins}/{len(finished)} · {wins / len(finished):.0%} ({low:.0%}–{high:.0%})"
    return f"{wins}/{len(finished)} ({low * 100:.0f}–{high:.0%})"


def unfinished_cell(records: list[Record], lang: str) -> str:
    """The runs that could not finish, by what stopped them: `2 rate limited`."""
    counted = Counter(record.outcome for record in records if not record.finished)
    if not counted:
        return "—"
    return ", ".join(f"{count} {word(outcome, lang)}" for outcome, count in counted.most_common())


def mean(values: list[float]) -> str:
    """A figure of the table: the value of one run, or the mean of several."""
    average = fmean(values)
    if average == round(average) or average >= 100:
        return f"{round(average):,}"
    return f"{average:,.1f}"


def stops(records: list[Record]) -> str:
    counted = Counter(record.stop for record in records)
    if len(counted) == 1:
        return records[0].stop
    return ", ".join(f"{stop} ×{count}" for stop, count in counted.most_common())


def count_names(records: list[Record]) -> list[str]:
    """Every name any chapter counts, in the order the chapters first count it."""
    return list(dict.fromkeys(name for record in records for name in record.counts))


@dataclass
class Layout:
    """How one task's table is drawn: several runs per chapter or one, runs that could
    not finish among them, wall time, and the wide form (every count in its own column)."""

    several: bool
    unfinished: bool
    wall: bool
    wide: bool
    lang: str


def layout_of(records: list[Record], *, wall: bool, wide: bool, lang: str) -> Layout:
    """One layout for every row: after Ctrl-C a chapter may have one run where another has
    two, and its row must still read as a rate, not as a bare yes or no."""
    per_chapter = Counter(record.chapter for record in records)
    several = any(n > 1 for n in per_chapter.values()) or any(r.run > 1 for r in records)
    unfinished = several and any(not record.finished for record in records)  # one run: in its cell
    return Layout(several, unfinished, wall, wide, lang)


def row(chapter: str, records: list[Record], names: list[str], layout: Layout) -> list[str]:
    about = "≈" if any(record.estimated for record in records) else ""
    cells = [
        chapter if not layout.wide else f"{chapter[1]} · {chapter}",
        solved_cell(records, layout.lang, layout.several, layout.wide),
    ]
    if layout.unfinished:
        cells.append(unfinished_cell(records, layout.lang))
    cells += [
        stops(records),
        mean([r.turns for r in records]),
        mean([r.tool_calls for r in records]),
        about + mean([r.input_tokens for r in records]),
        about + mean([r.output_tokens for r in records]),
        about + mean([r.peak_context for r in records]),
    ]
    if layout.wall:
        cells.append(f"{fmean(r.wall_s for r in records):.1f} s")
    if layout.wide:
        cells += [count_cell(records, name) for name in names]
    return cells


def count_cell(records: list[Record], name: str) -> str:
    """One chapter's own count (its mean over the runs), or — for a chapter without it."""
    values = [r.counts[name] for r in records if name in r.counts]
    return mean(values) if values else "—"


def by_chapter(records: list[Record]) -> dict[str, list[Record]]:
    chapters: dict[str, list[Record]] = {}
    for record in records:
        chapters.setdefault(record.chapter, []).append(record)
    return chapters


def table_cells(
    records: list[Record], *, wall: bool = True, lang: str = "en", wide: bool = False
) -> tuple[list[str], list[list[str]]]:
    """One task's table as data, headers and a row per chapter (in the order of the records),
    for the terminal's text and the run viewer's HTML alike.  The columns every chapter
    shares; each chapter's own counts are `counts_cells`, unless `wide` puts them here."""
    layout = layout_of(records, wall=wall, wide=wide, lang=lang)
    names = count_names(records)
    headers = ["chapter", "solved"] + (["could not finish"] if layout.unfinished else [])
    headers += ["stop", "turns", "tool calls" if wide else "calls", "tokens in", "tokens out"]
    headers += ["peak context"] + (["wall"] if wall else []) + (names if wide else [])
    rows = [row(chapter, runs, names, layout) for chapter, runs in by_chapter(records).items()]
    return [word(h, lang) for h in headers], rows


def counts_cells(records: list[Record], lang: str = "en") -> tuple[list[str], list[list[str]]]:
    """What each chapter's own idea counts (format errors, plan updates, children, …),
    a row per count and a column per chapter: a small table beside the shared one."""
    chapters = by_chapter(records)
    headers = [word("its own counts", lang)] + [chapter.split("_")[0] for chapter in chapters]
    rows = [
        [word(name, lang)] + [count_cell(runs, name) for runs in chapters.values()]
        for name in count_names(records)
    ]
    return headers, rows


def task_table(
    records: list[Record],
    *,
    wall: bool = True,
    lang: str = "en",
    wide: bool = False,
    columns: int | None = COLUMNS,
) -> str:
    """One task's table: a row per chapter (in the order of the records), each chapter's own
    counts in a second small table (or, `wide`, in columns of the first), then a note for
    every run that did not solve the task, saying why.  All of it fits in `columns` (a
    terminal's width); None leaves the lines whole, for a Markdown page that reflows them."""
    headers, rows = table_cells(records, wall=wall, lang=lang, wide=wide)
    several = layout_of(records, wall=wall, wide=wide, lang=lang).several
    table = aligned(headers, rows)
    if columns and max(map(width, table.splitlines())) > columns:
        short = {word(long, lang): word(brief, lang) for long, brief in SHORT.items()}
        table = aligned([short.get(header, header) for header in headers], rows)
    parts = [table]
    counted = counts_cells(records, lang)
    if counted[1] and not wide:
        parts.append(aligned(*counted))
    notes = [note(record, several, lang) for record in records if not record.solved]
    if notes:
        parts.append("\n".join(wrapped(text, columns, "  ") if columns else text for text in notes))
    return "\n\n".join(parts)


def wrapped(text: str, limit: int = COLUMNS, indent: str = "") -> str:
    """`text` broken at its spaces into lines of at most `limit` columns, as a terminal
    counts them (a Chinese character is two), the lines after the first indented (a
    Markdown list item goes on).  A word longer than a line keeps a line of its own."""
    lines = [""]
    for token in text.split(" "):
        line = lines[-1]
        if line.strip() and width(line) + 1 + width(token) > limit:
            lines.append(indent + token)
        else:
            lines[-1] = f"{line} {token}" if line else token
    return "\n".join(lines)


def note(record: Record, several: bool, lang: str) -> str:
    """Why a run did not solve its task: the checker's verdict, or what stopped it before
    it could finish, and the error if one stopped it."""
    colon = "：" if lang == "zh" else ": "
    which = record.chapter
    if several:
        which += " " + (ZH["run"].format(record.run) if lang == "zh" else f"run {record.run}")
    if record.finished:
        text = f"- {which}{colon}{word('not solved', lang)}{colon}`{record.verdict}`"
    else:
        why = word(record.outcome, lang)
        text = f"- {which}{colon}{word('could not finish', lang)}{colon}{why}"
    if record.error:
        text += ("；" if lang == "zh" else "; ") + f"{word('error', lang)}{colon}`{record.error}`"
    return text


def aligned(headers: list[str], rows: list[list[str]]) -> str:
    """A Markdown table whose columns line up in a terminal too (CJK characters are two wide)."""
    widths = [max(width(cells[i]) for cells in [headers, *rows]) for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        pairs = zip(cells, widths, strict=True)
        padded = [cell + " " * (size - width(cell)) for cell, size in pairs]
        return "| " + " | ".join(padded) + " |"

    rule = "| " + " | ".join("-" * size for size in widths) + " |"
    return "\n".join([line(headers), rule, *map(line, rows)])


def width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def task_heading(task: Task) -> str:
    chapter = task.brings_out
    featured = ", featured" if task.featured else ""
    return f"{task.name}: {task.title} (brings out {chapter}{featured})"


# --- the JSON records ---------------------------------------------------------------------


def records_document(
    records: list[Record], *, model: str | None, window: int | None, interrupted: bool
) -> dict[str, Any]:
    """The JSON document `--json FILE` writes; docs/en/lab.md describes every field."""
    return {
        "format": FORMAT,
        "created_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "model": model,
        "window": window,
        "interrupted": interrupted,
        "records": [record.to_dict() for record in records],
    }


def write_json(path: Path, document: dict[str, Any]) -> None:
    try:
        text = json.dumps(document, ensure_ascii=False, indent=1)
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a model: keep it as a \u escape
        text = json.dumps(document, indent=1)
    path.write_text(text + "\n", encoding="utf-8", newline="\n")
