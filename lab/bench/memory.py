"""Benchmarks for chapter 4's memory: how fast `add` and `search` are, how well search
recalls, and what the store costs against SQLite FTS5 given the same terms.

    python -m lab.bench.memory                 # 1k, 10k and 100k memories (a few minutes)
    python -m lab.bench.memory --quick         # 1k (2k for the set-up and costs), for the tests
    python -m lab.bench.memory --json FILE     # also write every figure to FILE
    python -m lab.bench.memory --example       # the worked BM25 example of the chapter

The searchers of `lab/memory_searchers.py` are measured side by side, in the same run,
with the same memories and queries: the store ("BM25 index"), SQLite FTS5 given the
store's own terms (the peer), a naive TF-IDF with no index, and FTS5's trigram
tokenizer on the raw text (a second row: another input, not the comparison).  Recall
is measured on `tests/data/memory_bilingual.jsonl`, hand written and separate from the
synthetic memories, and how often the store and FTS5 put the same memory first on the
synthetic queries.

What the agent pays is measured on its own store, against FTS5 at the same size: what
each prompt costs before the first model call (a store opened, the task recalled), the
first time (its index is built from the logs) and every later time (the index file is
opened); how long opening takes, up to the first search; what an open store holds in
memory; and the bytes of each one's file (`memory_costs.py`).  The worked example of
the chapter is `memory_example.py`'s.

The docs show what `--json lab/recorded/bench-memory.json` wrote, with the machine it
ran on (`python -m lab.figures memory-search`): a figure of speed is one machine's.
"""

from __future__ import annotations

import argparse
import json
import platform
import sqlite3
import statistics
import tempfile
import time
from datetime import date
from pathlib import Path

from lab.bench.memory_costs import Figures, print_costs, print_setup
from lab.bench.memory_example import print_example
from lab.memory_searchers import (
    CHINESE_WORDS,
    ENGLISH_WORDS,
    Fts5Terms,
    Fts5Trigram,
    IndexedStore,
    NaiveTfidf,
    Searcher,
    fts5_missing,
    like_is_broken,
    searchers,
    synthetic_memories,
    synthetic_queries,
)
from v4_memory.memory import MemoryStore

LAB = Path(__file__).resolve().parent.parent
DATA = LAB.parent / "tests" / "data" / "memory_bilingual.jsonl"
RECORDED = LAB / "recorded" / "bench-memory.json"
SEARCH_TARGET = 10e-3  # seconds per search over 10,000 memories
SPEEDUP_TARGET = 10  # times faster than the naive baseline at 10,000
RECALL_TARGET = 0.9  # recall@3 per language on the bilingual set


# --- Recall on the bilingual set -----------------------------------------------------------


def recall(searcher: Searcher, lines: list[dict]) -> tuple[dict[str, float], list]:
    """Recall@1 and @3 per language ("en@1" …), and the queries not fully answered in the top 3.

    Recall@k is the share of a query's relevant memories found in its top k,
    averaged over the queries; a query with two relevant memories reaches at most
    0.5 at k = 1.
    """
    ids = {searcher.add(line["text"]): line["id"] for line in lines if line["kind"] == "memory"}
    searcher.loaded()
    shares: dict[str, list[float]] = {}
    missed = []
    for query in (line for line in lines if line["kind"] == "query"):
        ranked = [ids[found] for found in searcher.ids(query["text"], 3)]
        for k in (1, 3):
            share = len(set(ranked[:k]) & set(query["relevant"])) / len(query["relevant"])
            shares.setdefault(f"{query['lang']}@{k}", []).append(share)
        if not set(query["relevant"]) <= set(ranked):
            missed.append(f'{query["lang"]} "{query["text"]}" (wanted {query["relevant"]})')
    return {key: statistics.mean(values) for key, values in shares.items()}, missed


def print_recall() -> Figures:
    lines = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    memories = sum(line["kind"] == "memory" for line in lines)
    queries = len(lines) - memories
    print(f"\nrecall on the bilingual set ({memories} memories, {queries} queries, half Chinese):")
    figures = {}
    with searchers() as found:
        for searcher in found:
            result, missed = recall(searcher, lines)
            figures[searcher.name] = result
            line = (
                f"  {searcher.name:<14} en recall@1 {result['en@1']:.2f} @3 {result['en@3']:.2f}"
                f"   zh recall@1 {result['zh@1']:.2f} @3 {result['zh@3']:.2f}"
            )
            if isinstance(searcher, IndexedStore):
                worst = min(result["en@3"], result["zh@3"])
                line += f"   (target @3 >= {RECALL_TARGET} in each: "
                line += "ok)" if worst >= RECALL_TARGET else "BELOW)"
            print(line)
            for query in missed if isinstance(searcher, IndexedStore) else []:
                print(f"      missed at @3: {query}")
    for kind in (Fts5Terms, Fts5Trigram):
        if fts5_missing(kind):
            print(f"  {kind.name:<14} not measured: {fts5_missing(kind)}")
    return figures


# --- Speed ----------------------------------------------------------------------------------


def search_ms(searcher: Searcher, queries: list[str]) -> list[float]:
    """Milliseconds of each search, top 5."""
    times = []
    for query in queries:
        start = time.perf_counter()
        searcher.ids(query, 5)
        times.append((time.perf_counter() - start) * 1e3)
    return times


def fsync_add_ms(count: int) -> float:
    """Milliseconds per `add` with fsync on, as the agent runs it, over a fresh store."""
    with tempfile.TemporaryDirectory() as root:
        store = MemoryStore(root)
        texts = synthetic_memories(count, seed=3)
        start = time.perf_counter()
        for text in texts:
            store.add(text)
        return (time.perf_counter() - start) / count * 1e3


def add_all(searcher: Searcher, texts: list[str], known: dict[str, str]) -> float:
    """Seconds to add `texts` and prepare for searching; `known` gets id -> text."""
    start = time.perf_counter()
    for text in texts:
        known[searcher.add(text)] = text
    searcher.loaded()
    return time.perf_counter() - start


def search_times(found: list[Searcher], queries: list[str], size: int) -> Figures:
    """Median ms per searcher ({"all", "en", "zh"}), printed on one line; the target at 10k."""
    # Queries alternate English, Chinese; the naive baseline is slow by design, so it
    # gets fewer of them at the larger sizes (at least two of each language).
    naive_count = max(4, min(len(queries), 200_000 // size))
    medians = {}
    for searcher in found:
        some = queries[:naive_count] if isinstance(searcher, NaiveTfidf) else queries
        times = search_ms(searcher, some)
        parts = {"all": times, "en": times[::2], "zh": times[1::2]}
        medians[searcher.name] = {key: statistics.median(part) for key, part in parts.items()}
    shown = ", ".join(f"{name} {m['en']:.2f} / {m['zh']:.2f}" for name, m in medians.items())
    print(f"  search over {size:,} (median ms, en / zh): {shown}", flush=True)
    bm25, naive = medians["BM25 index"]["all"], medians["naive TF-IDF"]["all"]
    if size == 10_000:
        ok = bm25 < SEARCH_TARGET * 1e3 and naive / bm25 >= SPEEDUP_TARGET
        print(
            f"  target at 10,000: under {SEARCH_TARGET * 1e3:.0f} ms and {SPEEDUP_TARGET}x "
            f"faster than naive: {bm25:.2f} ms, {naive / bm25:.0f}x ({'ok' if ok else 'MISSED'})"
        )
    return medians


def agreement(
    found: list[Searcher], known: dict[str, dict[str, str]], queries: list[str]
) -> Figures:
    """How often the store and FTS5, given the same terms, put the same memory first, and
    what share of their top 5 they share; memories compared by their text."""
    pair = [searcher for searcher in found if searcher.name in ("BM25 index", "SQLite FTS5")]
    if len(pair) < 2:
        return {}
    first, overlap = [], []
    for query in queries:
        tops = [[known[s.name][i] for i in s.ids(query, 5)] for s in pair]
        first.append(tops[0][:1] == tops[1][:1])
        overlap.append(len(set(tops[0]) & set(tops[1])) / max(len(tops[0]), len(tops[1]), 1))
    figures = {"queries": len(queries), "first": statistics.mean(first)}
    figures["top 5"] = statistics.mean(overlap)
    print(
        f"  BM25 index and SQLite FTS5 on the same terms: the same first memory for "
        f"{figures['first']:.0%} of the queries, {figures['top 5']:.0%} of the top 5 shared"
    )
    return figures


def print_speed(sizes: list[int], queries: int) -> Figures:
    texts = synthetic_memories(max(sizes))
    query_texts = synthetic_queries(queries)
    print(
        f"\nspeed: synthetic memories from {len(ENGLISH_WORDS)} English and "
        f"{len(CHINESE_WORDS)} Chinese words; {queries} keyword queries, half Chinese"
    )
    fsync = fsync_add_ms(100)
    print(f"  add with fsync on (as the agent runs it): {fsync:.2f} ms per memory")
    figures: Figures = {"queries": queries, "fsync add ms": fsync, "search ms": {}}
    with searchers() as found:
        indexed = found[0]
        assert isinstance(indexed, IndexedStore)
        known: dict[str, dict[str, str]] = {searcher.name: {} for searcher in found}
        done = 0
        for size in sizes:
            for searcher in found:
                seconds = add_all(searcher, texts[done:size], known[searcher.name])
                if searcher is indexed:
                    figures["add ms"] = seconds / (size - done) * 1e3
            done = size
            print(
                f"  add {size:>7,} memories: {figures['add ms']:.3f} ms per memory (fsync off "
                f"for the bulk load; {len(indexed.store):,} stored after dedup)"
            )
            figures["search ms"][size] = search_times(found, query_texts, size)
        figures["stored"] = len(indexed.store)
        figures["agreement"] = agreement(found, known, query_texts)
    return figures


# --- Command line --------------------------------------------------------------------------


def machine() -> dict[str, str]:
    """What a figure of speed depends on: the versions, the system, the day it was measured."""
    return {
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "system": f"{platform.system()} {platform.machine()}",
        "date": date.today().isoformat(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lab.bench.memory", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--quick", action="store_true", help="1,000 memories (2,000 for the costs), for tests"
    )
    parser.add_argument("--json", metavar="FILE", help="also write every figure to FILE")
    parser.add_argument("--example", action="store_true", help="print the worked BM25 example")
    args = parser.parse_args(argv)
    if args.example:
        print_example()
        return 0

    run = machine()
    fts5 = ", ".join(
        f"{kind.name}: " + (f"no ({fts5_missing(kind)})" if fts5_missing(kind) else "yes")
        for kind in (Fts5Terms, Fts5Trigram)
    )
    print(f"python {run['python']}, sqlite {run['sqlite']} ({fts5}), {run['system']}")
    if fts5_missing(Fts5Trigram) is None and like_is_broken():
        print(
            "  note: on this sqlite, LIKE '%咖啡%' on a trigram table finds nothing; "
            "the trigram row scans with instr() for two-character terms"
        )
    figures: Figures = {"format": "bench-memory/1", "measured on": run, "quick": args.quick}
    figures["recall"] = print_recall()
    sizes = [1_000] if args.quick else [1_000, 10_000, 100_000]
    figures["speed"] = print_speed(sizes, queries=40 if args.quick else 200)
    figures["set-up"] = print_setup(2_000 if args.quick else 10_000)
    figures["costs"] = print_costs(2_000 if args.quick else 100_000)
    if args.json:
        text = json.dumps(figures, indent=1, ensure_ascii=False) + "\n"
        Path(args.json).write_text(text, encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
