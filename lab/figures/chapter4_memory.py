"""Chapter 4's figures of its memory against SQLite FTS5, from what the benchmark measured.

A speed is one machine's, so these figures are not measured when the docs are printed:
`python -m lab.bench.memory --json lab/recorded/bench-memory.json` measures them and
writes them down with the machine, and the figures print that file.  Run the first
again on another machine, then `python -m lab.figures --update`, and the docs show it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lab.bench.memory import RECORDED
from lab.words import word

from .markdown import table

# What each searcher is given, as the table says it: the store's terms unless it says not.
GIVEN = {
    "BM25 index": "the store's terms",
    "SQLite FTS5": "the same terms",
    "naive TF-IDF": "the same terms, no index: all scored again at each search",
    "FTS5 trigram": "the raw text, as trigrams: another input, a second row",
}


def recorded(source: Path) -> dict[str, Any]:
    return json.loads(source.read_text(encoding="utf-8"))


def ms(value: float) -> str:
    return f"{value:.2f} ms" if value < 10 else f"{value:,.0f} ms"


def seconds(value: float) -> str:
    return f"{value:.1f} s" if value >= 1 else ms(value * 1e3)


def megabytes(value: float) -> str:
    return f"{value / 1e6:,.0f} MB" if value >= 1e6 else f"{value / 1e3:,.0f} kB"


def measured_by(figures: dict[str, Any], lang: str) -> str:
    """The line under a table: the command, the machine, the day."""
    run = figures["measured on"]
    parts = [run["system"], f"Python {run['python']}", f"SQLite {run['sqlite']}"]
    where = ("、" if lang == "zh" else ", ").join(parts)
    command = f"`python -m lab.bench.memory --json {RECORDED.relative_to(RECORDED.parents[2])}`"
    if lang == "zh":
        said = f"由 {command} 在 {where} 上测得（{run['date']}）："
        return said + "这是一台机器的数字，运行它就能看到你的机器上的。"
    said = f"Measured by {command} on {where}, {run['date']}: "
    return said + "one machine's figures; run it to see yours."


def memory_search(lang: str = "en", source: Path = RECORDED) -> str:
    """Each searcher's recall on the bilingual set and its median search time at each size,
    then how often the store and FTS5, given the same terms, rank alike."""
    figures = recorded(source)
    recall, speed = figures["recall"], figures["speed"]
    sizes = list(speed["search ms"])
    headers = [word("searcher", lang), word("given", lang)]
    headers += [word("recall@1 en · zh", lang), word("recall@3 en · zh", lang)]
    headers += [word("search, {} memories", lang).format(f"{int(n):,}") for n in sizes]
    rows = []
    for name, shares in recall.items():
        row = [word(name, lang), word(GIVEN[name], lang)]
        row += [f"{shares[f'en@{k}']:.2f} · {shares[f'zh@{k}']:.2f}" for k in (1, 3)]
        row += [ms(speed["search ms"][n][name]["all"]) for n in sizes]
        rows.append(row)
    parts = [table(headers, rows)]
    agreed = speed.get("agreement")
    if agreed:
        size, queries = f"{int(sizes[-1]):,}", agreed["queries"]
        first, shared = f"{agreed['first']:.0%}", f"{agreed['top 5']:.0%}"
        if lang == "zh":
            parts.append(
                f"给的是同样的词项，记忆库和 FTS5 在 {size} 条记忆、{queries} 个合成查询上，"
                f"有 {first} 的查询排在第一的是同一条记忆，前 5 条有 {shared} 相同。"
            )
        else:
            parts.append(
                f"Given the same terms, the store and FTS5 put the same memory first for "
                f"{first} of {queries} synthetic queries at {size} memories, and share "
                f"{shared} of their top 5."
            )
    parts.append(measured_by(figures, lang))
    return "\n\n".join(parts)


def memory_costs(lang: str = "en", source: Path = RECORDED) -> str:
    """What the store and FTS5 cost at the largest size: opening, up to the first search;
    the store's first build from its logs; the file each keeps; the memory an open one holds."""
    figures = recorded(source)
    costs = figures["costs"]
    ours, peer = costs["BM25 index"], costs.get("SQLite FTS5")
    size = f"{costs['memories']:,}"
    headers = [word("with {} memories", lang).format(size), word("BM25 index", lang)]
    headers += [word("SQLite FTS5", lang)] if peer else []
    held = word("{} of Python objects, SQLite's page cache (at most {})", lang)
    rows = [
        [word("open, up to the first search", lang), seconds(ours["open s"])],
        [word("the first time: the index built from the logs", lang), seconds(ours["build s"])],
        [
            word("the file on disk", lang),
            word("{} the index, beside {} of logs", lang).format(
                megabytes(ours["file bytes"]), megabytes(ours["logs bytes"])
            ),
        ],
        [
            word("held in memory, open", lang),
            held.format(megabytes(ours["held bytes"]), megabytes(ours["cache bytes"])),
        ],
    ]
    if peer:
        rows[0].append(seconds(peer["open s"]))
        rows[1].append("—")
        rows[2].append(
            word("{}: texts, terms and index", lang).format(megabytes(peer["file bytes"]))
        )
        rows[3].append(
            word("SQLite's page cache (at most {})", lang).format(megabytes(peer["cache bytes"]))
        )
    parts = [table(headers, rows)]
    if costs["measured at"] != costs["memories"]:
        parts.append(
            word("Measured at {} memories; the files scaled to {}.", lang).format(
                f"{costs['measured at']:,}", size
            )
        )
    parts.append(measured_by(figures, lang))
    return "\n\n".join(parts)


def memory_setup(lang: str = "en", source: Path = RECORDED) -> str:
    """A prompt's memory set-up (a store opened, then the recall): with its index on disk,
    and the first time, when the index is built from the logs."""
    figures = recorded(source)
    setup = figures["set-up"]
    headers = [word("memories", lang), word("set-up, the index on disk", lang)]
    headers += [word("the first time: the index built", lang)]
    rows = [[f"{setup['memories']:,}", ms(setup["opened ms"]), ms(setup["built ms"])]]
    return table(headers, rows) + "\n\n" + measured_by(figures, lang)
