"""What chapter 4's memory costs the agent, against SQLite FTS5 at the same size: a
prompt's set-up (a store opened, the task recalled) the first time, when the index is
built from the logs, and every later time; how long opening takes, up to the first
search; what an open store holds in memory; and the bytes of each one's file.

`python -m lab.bench.memory` prints these figures with the others (`memory.py`).
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from lab.memory_searchers import Fts5Terms, fts5_missing, synthetic_memories, synthetic_queries
from machine import jsonl
from v4_memory import memory
from v4_memory.memory import HOME, MemoryStore

SETUP_TARGET = 5e-3  # seconds of a prompt's memory set-up with 10,000 memories, index on disk
OPEN_TARGET = 0.5  # seconds to open a store of 100,000 memories, up to its first search
Figures = dict[str, Any]  # what one run measured, as `--json` writes it


def write_memories(workdir: Path, texts: list[str]) -> list[str]:
    """`texts` as memories in one daily log under `workdir`'s agent home, as an agent that
    has worked there for months leaves them (one log is written at once, not added), each
    set of terms once; their ids, in order."""
    log = workdir / HOME / "memory" / "2026-11-30.jsonl"
    log.parent.mkdir(parents=True)
    ids = [f"m-20261130-{n:04d}" for n in range(1, len(texts) + 1)]
    stamp, kind = "2026-11-30T09:00:00+01:00", "note"
    records = (
        {"id": i, "ts": stamp, "category": kind, "text": t} for i, t in zip(ids, texts, strict=True)
    )
    log.write_bytes(b"".join(map(jsonl.encode, records)))
    return ids


def setup_ms(workdir: Path, task: str) -> float:
    """Milliseconds from a prompt's start to its recalled memories, as the agent does it:
    a store opened on the work directory, then the search."""
    start = time.perf_counter()
    MemoryStore(workdir / HOME, workdir=workdir).search(task, k=3)
    return (time.perf_counter() - start) * 1e3


def print_setup(count: int = 10_000) -> Figures:
    """A prompt's memory set-up: the first after the logs were written (the index is built
    from them), and every later one (the index file is opened)."""
    with tempfile.TemporaryDirectory() as root:
        workdir = Path(root).resolve()
        write_memories(workdir, synthetic_memories(count))
        first, second = synthetic_queries(2, seed=5)
        built = setup_ms(workdir, first)
        opened = min(setup_ms(workdir, second) for _ in range(5))
    ok = "ok" if opened < SETUP_TARGET * 1e3 else "MISSED"
    print(
        f"  per-prompt set-up with {count:,} memories (a store opened, then the recall): "
        f"{opened:.1f} ms with its index on disk, {built:.0f} ms the first time, when the "
        f"index is built from the logs (target under {SETUP_TARGET * 1e3:.0f} ms: {ok})"
    )
    return {"memories": count, "opened ms": opened, "built ms": built}


def store_costs(count: int) -> Figures:
    """The store of `count` memories: seconds to build its index from the logs, then to open
    it anew up to its first search; what an open store holds (Python's objects, traced by
    tracemalloc, and SQLite's page cache at most); and the index file's bytes."""
    with tempfile.TemporaryDirectory() as root:
        workdir = Path(root).resolve()
        write_memories(workdir, synthetic_memories(count))
        built = setup_ms(workdir, "deploy 部署") / 1e3
        opened = setup_ms(workdir, "deploy 部署") / 1e3  # as the next process would
        tracemalloc.start()
        try:
            store = MemoryStore(workdir / HOME, workdir=workdir)
            store.search("deploy 部署", 5)
            snapshot = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        cache = cache_bytes(store.index.db)
        del store  # its file closed before the folder goes
        folder = workdir / HOME / "memory"
        on_disk = (folder / memory.INDEX).stat().st_size
        logs = sum(log.stat().st_size for log in folder.glob("*.jsonl"))
    return {
        "build s": built,
        "open s": opened,
        "held bytes": sum(stat.size for stat in snapshot.statistics("filename")),
        "cache bytes": cache,
        "file bytes": on_disk,
        "logs bytes": logs,
    }


def cache_bytes(db: sqlite3.Connection) -> int:
    """The most SQLite keeps of a database's pages in memory, by its own setting: a
    negative `cache_size` is in kibibytes, a positive one in pages."""
    (pages,) = db.execute("PRAGMA cache_size").fetchone()
    (page,) = db.execute("PRAGMA page_size").fetchone()
    return -pages * 1024 if pages < 0 else pages * page


def fts5_costs(count: int) -> Figures:
    """FTS5 with the same `count` memories: the seconds to open its file (written by
    SQLite's backup of the database built in memory) up to its first search, and the
    file's bytes."""
    peer = Fts5Terms()
    for text in synthetic_memories(count):
        peer.add(text)
    peer.loaded()
    with tempfile.TemporaryDirectory() as root:
        path = Path(root) / "memories.db"
        file = sqlite3.connect(path)
        peer.db.backup(file)
        file.close()
        start = time.perf_counter()
        opened = sqlite3.connect(path)
        opened.execute(
            "SELECT rowid FROM memories WHERE memories MATCH ? ORDER BY rank LIMIT 5",
            ('"deploy" OR "部署"',),
        ).fetchall()
        seconds = time.perf_counter() - start
        cache = cache_bytes(opened)
        opened.close()
        on_disk = path.stat().st_size
    return {"open s": seconds, "cache bytes": cache, "file bytes": on_disk}


def print_costs(count: int, shown: int = 100_000) -> Figures:
    """The store and FTS5 at `count` memories, their files' bytes scaled to `shown` when
    fewer were measured (the times are not: they are said to be `count`'s)."""
    scale = shown / count
    ours = store_costs(count)
    figures = {"memories": shown, "measured at": count, "BM25 index": ours}
    if fts5_missing() is None:
        figures["SQLite FTS5"] = fts5_costs(count)
    for costs in figures.values():
        if isinstance(costs, dict):
            for key in [key for key in ("file bytes", "logs bytes") if key in costs]:
                costs[key] *= scale
    measured = "" if count == shown else f" (measured at {count:,} and scaled)"
    ok = "ok" if ours["open s"] < OPEN_TARGET else "MISSED"
    print(
        f"  open a store of {count:,} memories, up to its first search: "
        f"{ours['open s'] * 1e3:.0f} ms (target under {OPEN_TARGET:.1f} s at 100,000: {ok}); "
        f"built from its logs the first time: {ours['build s']:.2f} s"
    )
    print(
        f"  the store's index file at {shown:,} memories{measured}: "
        f"{ours['file bytes'] / 1e6:.0f} MB beside {ours['logs bytes'] / 1e6:.0f} MB of "
        f"logs; an open store holds "
        f"{ours['held bytes'] / 1e3:.0f} kB of Python objects and SQLite's page cache of "
        f"at most {ours['cache bytes'] / 1e6:.0f} MB"
    )
    if "SQLite FTS5" in figures:
        peer = figures["SQLite FTS5"]
        print(
            f"  SQLite FTS5 with the same {count:,} memories: {peer['open s'] * 1e3:.1f} ms to "
            f"open its file up to the first search; its file {peer['file bytes'] / 1e6:.0f} MB "
            f"at {shown:,}{measured}"
        )
    return figures
