"""The check of chapter 4's exercise 5: an FTS5 store that keeps its memories in a file.

The check makes up a case at every run, memories in English and Chinese of words no
one has seen, with queries whose right first answer it knows (`fts5_case`), and then
runs the learner's `Fts5Store` in two processes of its own: one adds the memories and
forgets two of them on the way, and ends as a killed process does (no exit handler, no
finalizer); the other opens the same file and asks the queries.  Only a table kept in the
file, every change committed, ranked by BM25 over the store's own terms, answers every
query with its memory first; and the file's FTS5 table must hold the memories kept, one
row each, so that a store kept elsewhere beside an empty FTS5 table is no answer.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .check import REPO, Said, Verdict, fresh_random

FTS5_CHILD = """
import json, os, sys
from lab.memory_searchers import Fts5Store
job = json.load(sys.stdin)
store = Fts5Store(job["path"])
if job["queries"]:
    print(json.dumps([store.ids(query, job["k"]) for query in job["queries"]]))
else:
    ids = [store.add(text) for text in job["add"][: job["first"]]]
    for number in job["forget"]:
        store.forget(ids[number])
    ids += [store.add(text) for text in job["add"][job["first"] :]]
    print(json.dumps(ids), flush=True)
    os._exit(0)  # as a process killed: no atexit, no finalizer commits for it
"""  # one process adds, forgets, adds more and ends without closing anything; another searches
CONSONANTS, VOWELS = "bdfgklmnprtvz", "aeiou"
ASKED_FOR = 2  # memories asked of each query: an English one matches three


@dataclass(frozen=True)
class Fts5Case:
    """Memories, queries each with the one memory (by number) that must come first, which
    memories to forget, and how many to add before forgetting them (the rest come after)."""

    memories: list[str]
    relevant: list[tuple[str, int]]
    forget: list[int]
    first: int


def made_up(rng: random.Random, taken: set[str]) -> str:
    """A new made-up English word (ending in a vowel, so `tokenize` leaves it whole)."""
    while True:
        found = "".join(rng.choice(CONSONANTS) + rng.choice(VOWELS) for _ in range(3))
        if found not in taken:
            taken.add(found)
            return found


def han(rng: random.Random, taken: set[str]) -> str:
    """A new Chinese character, from the common block."""
    while True:
        found = chr(rng.randint(0x4E00, 0x9FA5))
        if found not in taken:
            taken.add(found)
            return found


def fts5_case(rng: random.Random) -> Fts5Case:
    """A case no answer can know in advance, whose right answers the check knows.

    An English query is two new words: one memory holds both, two others one each, all
    three as long; every other one has a third word that no memory holds, as a person's
    question has words no memory was written with (a search for all the words finds none).
    A Chinese query is a new pair of characters: one memory holds the pair, and another as
    long the two characters apart or, every other query, the pair once where
    the first holds it twice.  So only a ranking over the store's terms (characters and
    pairs) by BM25 puts the right one first; the fillers, many memories of common words,
    give the rare words their weight.
    """
    taken: set[str] = set()
    fillers = [made_up(rng, taken) for _ in range(30)]
    pairs = [han(rng, taken) + han(rng, taken) for _ in range(30)]

    def english(words: list[str]) -> str:
        return " ".join(rng.sample(words, len(words))).capitalize() + "."

    memories = [english(rng.choices(fillers, k=7)) for _ in range(30)]
    memories += ["".join(rng.choices(pairs, k=5)) + "。" for _ in range(30)]
    queries: list[tuple[str, str]] = []
    for number in range(8):
        a, b = made_up(rng, taken), made_up(rng, taken)
        found = english([a, b, *rng.choices(fillers, k=5)])
        memories += [found, english([a, *rng.choices(fillers, k=6)])]
        memories.append(english([b, *rng.choices(fillers, k=6)]))
        stray = f" {made_up(rng, taken)}" if number % 2 else ""  # a word no memory holds
        queries.append((f"{a} {b}{stray}", found))
        one, two = han(rng, taken), han(rng, taken)
        words = rng.choices(pairs, k=4)
        if number % 2:  # the pair twice, against the pair once
            found = "".join(words[:1] + [one + two] + words[1:2] + [one + two] + words[2:3])
            other = "".join(words[:2] + [one + two] + words[2:])
        else:  # the pair, against its two characters apart
            found = "".join(words[:2] + [one + two] + words[2:])
            other = "".join(words[:1] + [one] + words[1:3] + [two] + words[3:])
        memories += [found + "。", other + "。"]
        queries.append((one + two, found + "。"))
    first = len(memories) * 3 // 4
    gone = [rng.choice(queries[0::2])[1], rng.choice(queries[1::2])[1]]  # one of each language
    memories = [text for text in memories if text not in gone]
    rng.shuffle(memories)
    for text in gone:  # among the first memories added, whatever comes after
        memories.insert(rng.randrange(first - 2), text)
    relevant = [(query, memories.index(text)) for query, text in queries]
    return Fts5Case(memories, relevant, [memories.index(text) for text in gone], first)


def in_child(job: dict[str, Any]) -> tuple[Any, str]:
    """What the learner's `Fts5Store` answers in a new Python process, and its error if any."""
    env = os.environ | {"PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-c", FTS5_CHILD],
        input=json.dumps(job),
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit code {done.returncode}"]
        return None, lines[-1]
    return json.loads(done.stdout.strip().splitlines()[-1]), ""


def fts5_store(words: list[str]) -> Verdict:
    """Exercise 4.5: memories added and forgotten by one process, searched by another.

    The case is new at every run (its number is printed; `python -m lab exercise 4.5 N`
    tries case N again), so no answer can know the words, and the store is opened anew
    by a process of its own, so only a table in the file, committed, can answer.
    """
    seed = int(words[0]) if words and words[0].isdigit() else fresh_random().randrange(10**6)
    case = fts5_case(random.Random(seed))
    number = Said(f"case {seed}", f"第 {seed} 号用例")
    with tempfile.TemporaryDirectory() as scratch:
        path = str(Path(scratch) / "memories.db")
        job = {"path": path, "add": case.memories, "first": case.first, "forget": case.forget}
        ids, error = in_child(job | {"queries": []})
        if not error:
            asked = {"path": path, "queries": [q for q, _ in case.relevant], "k": ASKED_FOR}
            found, error = in_child(asked)
        if error:
            seen = Said(
                f"{number.en}: Fts5Store failed: {error}", f"{number.zh}：Fts5Store 出错：{error}"
            )
            hint = Said(
                "write Fts5Store(path) in lab/memory_searchers.py, beside Fts5Terms, with "
                "add(text) -> id, ids(query, k) and forget(id)",
                "在 lab/memory_searchers.py 里、Fts5Terms 旁边写 Fts5Store(path)，"
                "带上 add(text) -> id、ids(query, k) 和 forget(id)",
            )
            return Verdict(False, seen, hint)
        rows = fts5_rows(path, case.relevant[0][0].split()[0])
    added, gone, asked = len(case.memories), len(case.forget), len(case.relevant)
    summary = Said(
        f"{number.en}: {added} new memories added by one process, {gone} of them forgotten "
        f"on the way; {asked} queries asked by another",
        f"{number.zh}：一个进程加入 {added} 条新记忆，中途遗忘其中 {gone} 条；"
        f"另一个进程查询 {asked} 次",
    )
    return fts5_verdict(summary, rows, case, ids, found)


def fts5_rows(path: str, word: str) -> dict[str, tuple[int, int]]:
    """Each FTS5 table in the file: its rows, and those that match `word` (a made-up word
    of one memory kept): where the memories are, whatever answers the queries."""
    db = sqlite3.connect(path)
    try:
        names = [
            name
            for name, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE type='table'")
            if "fts5" in (sql or "").lower()
        ]
        rows = {}
        for name in names:
            quoted = '"' + name.replace('"', '""') + '"'
            count = db.execute(f"SELECT count(*) FROM {quoted}").fetchone()[0]
            try:
                match = f"SELECT count(*) FROM {quoted} WHERE {quoted} MATCH ?"
                matched = db.execute(match, (f'"{word}"',)).fetchone()[0]
            except sqlite3.DatabaseError:
                matched = 0
            rows[name] = (count, matched)
        return rows
    except sqlite3.DatabaseError:
        return {}
    finally:
        db.close()


def fts5_verdict(
    summary: Said,
    rows: dict[str, tuple[int, int]],
    case: Fts5Case,
    ids: list[str],
    found: list[list[str]],
) -> Verdict:
    """What the second process found, against what the case knows it must find."""
    memories, asked = case.memories, list(zip(case.relevant, found, strict=True))
    commit = Said(
        "connect to the file at path and commit each change (`with self.db:`)",
        "连接 path 这个文件，并提交每一次改动（`with self.db:`）",
    )
    in_fts5 = Said(
        "keep the memories in an FTS5 table in the SQLite file at path",
        "把记忆存在 path 这个 SQLite 文件里的一张 FTS5 表里",
    )
    if not rows:
        seen = Said(
            f"{summary.en}; the file holds no FTS5 table", f"{summary.zh}；文件里没有 FTS5 表"
        )
        return Verdict(False, seen, in_fts5)
    if not any(found):
        seen = Said(
            f"{summary.en}; the second process found nothing",
            f"{summary.zh}；第二个进程什么也没找到",
        )
        return Verdict(False, seen, commit)
    for number in case.forget:
        gone, text = ids[number], memories[number]
        back = [query for (query, _), hits in asked if gone in hits]
        if back:
            seen = Said(
                f'{summary.en}; the forgotten memory {gone} ("{text}") came back for "{back[0]}"',
                f"{summary.zh}；已遗忘的记忆 {gone}（“{text}”）在查询“{back[0]}”时又出现了",
            )
            hint = Said(
                "forget(id) deletes the memory's row, and commits",
                "forget(id) 删掉这条记忆所在的行，并且提交",
            )
            return Verdict(False, seen, hint)
    longer = [(query, hits) for (query, _), hits in asked if len(hits) > ASKED_FOR]
    if longer:
        query, hits = longer[0]
        seen = Said(
            f'{summary.en}; asked for {ASKED_FOR} memories, "{query}" gave {len(hits)}',
            f"{summary.zh}；只要 {ASKED_FOR} 条记忆，查询“{query}”却给出了 {len(hits)} 条",
        )
        hint = Said(
            "ids(query, k) gives at most k ids: LIMIT k", "ids(query, k) 最多给出 k 个 id：LIMIT k"
        )
        return Verdict(False, seen, hint)
    for (query, number), hits in asked:
        if number in case.forget or hits[:1] == [ids[number]]:
            continue
        wanted, text = ids[number], memories[number]
        seen = Said(
            f'{summary.en}; for "{query}" it found {hits}, where {wanted} ("{text}") comes first',
            f"{summary.zh}；查询“{query}”找到的是 {hits}，排第一的应该是 {wanted}（“{text}”）",
        )
        hint = Said(
            "index each memory as the store's own terms joined by spaces and rank by "
            "bm25(), as Fts5Terms does",
            "像 Fts5Terms 那样，每条记忆以记忆库自己的词项、用空格连起来建索引，用 bm25() 排序",
        )
        if wanted not in hits and number >= case.first:  # added after the forgets: not committed?
            hint = commit
        return Verdict(False, seen, hint)
    kept = len(memories) - len(case.forget)  # answered right: from the table in the file?
    if not any(count == kept and matched for count, matched in rows.values()):
        held = ", ".join(f"{name} {count}" for name, (count, _) in rows.items())
        seen = Said(
            f"{summary.en}; {kept} memories are kept, and the file's FTS5 tables hold rows: {held}",
            f"{summary.zh}；留下的记忆有 {kept} 条，而文件里 FTS5 表的行数是：{held}",
        )
        return Verdict(False, seen, in_fts5)
    seen = Said(
        f"{summary.en}: each query found its memory first, and no forgotten one came back",
        f"{summary.zh}：每个查询都把它的那条记忆排在第一，遗忘的记忆一条也没有回来",
    )
    return Verdict(True, seen)
