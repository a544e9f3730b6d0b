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
from datetime import datetime, timezone
from pathlib import Path
from statistics import fmean
from typing import Any

from .runs import Record
from .tasks import Task
from .words import ZH, word

FORMAT = "lab-records/1"
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


def solved_cell(records: list[Record], lang: str) -> str:
    wins = sum(record.solved for record in records)
    if len(records) == 1:
        return word("yes" if wins else "no", lang)
    low, high = wilson(wins, len(records))
    rate = f"{wins / len(records):.0%}"
    return f"{wins}/{len(records)} · {rate} ({low:.0%}–{high:.0%})"


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


def row(chapter: str, records: list[Record], names: list[str], wall: bool, lang: str) -> list[str]:
    about = "≈" if any(record.estimated for record in records) else ""
    cells = [
        f"{chapter[1]} · {chapter}",
        solved_cell(records, lang),
        stops(records),
        mean([r.turns for r in records]),
        mean([r.tool_calls for r in records]),
        about + mean([r.input_tokens for r in records]),
        about + mean([r.output_tokens for r in records]),
        about + mean([r.peak_context for r in records]),
    ]
    if wall:
        cells.append(f"{fmean(r.wall_s for r in records):.1f} s")
    for name in names:
        values = [r.counts[name] for r in records if name in r.counts]
        cells.append(mean(values) if values else "—")
    return cells


def table_cells(
    records: list[Record], *, wall: bool = True, lang: str = "en"
) -> tuple[list[str], list[list[str]]]:
    """One task's table as data, headers and a row per chapter (in the order of the records),
    for the terminal's text and the run viewer's HTML alike."""
    chapters: dict[str, list[Record]] = {}
    for record in records:
        chapters.setdefault(record.chapter, []).append(record)
    names = count_names(records)
    headers = ["chapter", "solved", "stop", "turns", "tool calls", "tokens in", "tokens out"]
    headers += ["peak context"] + (["wall"] if wall else []) + names
    rows = [row(chapter, runs, names, wall, lang) for chapter, runs in chapters.items()]
    return [word(h, lang) for h in headers], rows


def task_table(records: list[Record], *, wall: bool = True, lang: str = "en") -> str:
    """One task's table: a row per chapter (in the order of the records), then a note for
    every run that did not solve the task, saying why."""
    headers, rows = table_cells(records, wall=wall, lang=lang)
    several = len({record.chapter for record in records}) < len(records)
    notes = [note(record, several, lang) for record in records if not record.solved]
    table = aligned(headers, rows)
    return "\n\n".join([table, "\n".join(notes)]) if notes else table


def note(record: Record, several: bool, lang: str) -> str:
    """Why a run did not solve its task: the checker's verdict, and the error if one stopped it."""
    colon = "：" if lang == "zh" else ": "
    which = record.chapter
    if several:
        which += " " + (ZH["run"].format(record.run) if lang == "zh" else f"run {record.run}")
    text = f"- {which}{colon}{word('not solved', lang)}{colon}`{record.verdict}`"
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
    return f"{task.name}: {task.title} (brings out chapter {chapter[1]}, {chapter}{featured})"


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
