"""Long-term memory: short facts kept for weeks, found again by BM25 in English and Chinese.

On disk, under one root folder:

    MEMORY.md                  written by the person, put whole into every prompt
    memory/2026-11-30.jsonl    one log per day of what the agent chose to remember

A daily log holds one JSON record per line and only ever grows (`jsonl.append`):

    {"id": "m-20261130-0007", "ts": "2026-11-30T14:02:11+01:00", "category": "tool",
     "text": "Run the whole suite with `make test`."}
    {"forget": "m-20261130-0007", "ts": "2026-12-02T09:15:40+01:00"}

Forgetting appends a record instead of deleting a line, so a crash can never lose
a memory that was not meant to go.  Opening a store replays every log in date
order and builds the search index once; after that `add` and `forget` update the
index in place, and a search never reads the files again.

An id names the day it was learned and its place in that day's log
(`m-20261130-0007`): short enough for a model to copy without a typo, readable
aloud, sorted by date, and it tells a person which file to open.  Past the
9,999th memory of a day the number grows a digit, so ids are put in order by
`recency`, which reads the number as a number, never by comparing them as text.

Search ranks with BM25 over the tokens of `tokenize`: English words, lower-cased
with a tiny plural rule, and Chinese, Japanese and Korean as single characters plus
pairs of neighbouring characters, since they are written without spaces between words.

Several writers may share a root (two terminals in one project, or two stores in one
process): `add` and `forget` take a lock on `memory/.lock`, first read what the others
appended since, then number and write their record, so no two memories get one id.
A search sees what was added elsewhere from the next `add` or `forget` on.
"""

from __future__ import annotations

import contextlib
import heapq
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from llm import Message, Model
from machine import ToolError, agent_files, cap_output, hold, jsonl

CATEGORIES = ("preference", "project", "decision", "person", "tool", "note")

# BM25's two knobs, at the values most search engines ship with.
K1 = 1.2  # term saturation: a second occurrence adds less than the first, a tenth almost nothing
B = 0.75  # length normalisation: 0 ignores length, 1 fully scales a term's weight by it

# Scripts written without spaces between words: Han characters (the CJK Unified
# Ideographs, Extension A, the compatibility block), Japanese kana, Korean Hangul.
CJK = (
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # Han
    "\u3041-\u3096\u30a1-\u30fa\u30fc\u31f0-\u31ff"  # hiragana, katakana, prolonged sound
    "\u1100-\u11ff\u3131-\u318e\uac00-\ud7a3"  # Hangul jamo and syllables
)
TOKEN_PATTERN = re.compile(f"(?P<cjk>[{CJK}]+)|(?P<word>[^\\W_{CJK}]+)")
SHOWN_TEXT = 2_000  # characters of one memory that a search shows; the rest is cut, and said
POSSESSIVE = re.compile(r"['’]s\b")


# --- Tokens ------------------------------------------------------------------------------


def tokenize(text: str) -> list[str]:
    """The terms a text is indexed and searched by, repeats included.

    - NFKC folds full-width letters and digits (common in Chinese text) into plain
      ones, then everything is lower-cased: `ＡＰＩ` and `Api` both become `api`.
    - Latin words and numbers are runs of letters and digits; punctuation and `_`
      split them (`snake_case` gives `snake`, `case`), a possessive `'s` is dropped
      (`user's` is `user`), and `singular` strips a plural.
    - A run of Han characters gives each character and each pair of neighbours, so
      the query `咖啡` (`咖`, `啡`, `咖啡`) meets `用户喜欢喝咖啡` without knowing
      where its words begin.  Pairs keep order (`喜欢` is not `欢喜`); single
      characters still match when a query shares no pair.  Japanese kana and Korean
      Hangul are treated the same way (`コーヒー`, `커피`), and so is a run that
      mixes them with Han characters.

    >>> tokenize("The user's tests; 喜欢咖啡")
    ['the', 'user', 'test', '喜', '欢', '咖', '啡', '喜欢', '欢咖', '咖啡']
    """
    tokens: list[str] = []
    text = POSSESSIVE.sub("", unicodedata.normalize("NFKC", text).lower())
    for match in TOKEN_PATTERN.finditer(text):
        if match.lastgroup == "cjk":
            tokens += han_grams(match.group())
        else:
            tokens.append(singular(match.group()))
    return tokens


def han_grams(run: str) -> list[str]:
    """Every character of a run of CJK text, then every pair of neighbouring characters."""
    return list(run) + [run[i : i + 2] for i in range(len(run) - 1)]


def singular(word: str) -> str:
    """Drop an English plural (or third-person) ending, so `tests` meets `test`.

    Three rules and a guard, not a full stemmer: a stemmer also folds `deploying`
    into `deploy`, but costs a page of rules and sometimes merges unrelated words.
    Words of three letters or fewer, and endings `ss`, `us`, `is` (class, status,
    redis), are kept as they are.  Both sides of a search pass through the same
    rule, so an odd stem such as `doe` (from `does`) still meets itself.
    """
    if len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"  # libraries -> library
    if word.endswith(("sses", "ches", "shes", "xes")):
        return word[:-2]  # classes -> class, branches -> branch, fixes -> fix
    return word[:-1]  # tests -> test, prefers -> prefer


# --- BM25 ---------------------------------------------------------------------------------


def idf(containing: int, total: int) -> float:
    """How much finding a term says: high for a term few memories contain.

    The `1 +` inside the log keeps it above zero even for a term in every memory
    (the textbook form goes negative there and would push such memories down).
    """
    return math.log(1 + (total - containing + 0.5) / (containing + 0.5))


def bm25_term(weight: float, count: int, length: int, average_length: float) -> float:
    """One query term's share of a memory's score.

    `weight` is the term's idf, `count` how often it occurs in the memory, `length`
    the memory's number of tokens.  The count saturates (k1) and is measured against
    the memory's length relative to the average (b), so a long memory does not win
    just by containing more words.

    A worked example.  Three memories, tokenized:

        A  "Run tests with pytest"      run test with pytest          4 tokens
        B  "Tests must pass"            test must pass                3 tokens
        C  "用户喜欢咖啡"                 6 characters + 5 pairs       11 tokens

    >>> [len(tokenize(m)) for m in ("Run tests with pytest", "Tests must pass", "用户喜欢咖啡")]
    [4, 3, 11]

    The average length is 18 / 3 = 6.  The query "pytest tests" has the terms
    `pytest` (in A only) and `test` (in A and B):

    >>> w_pytest, w_test = idf(1, 3), idf(2, 3)
    >>> round(w_pytest, 3), round(w_test, 3)
    (0.981, 0.47)
    >>> round(bm25_term(w_pytest, 1, 4, 6), 3), round(bm25_term(w_test, 1, 4, 6), 3)  # A
    (1.136, 0.544)
    >>> round(bm25_term(w_test, 1, 3, 6), 3)  # B
    0.591

    A scores 1.136 + 0.544 = 1.68 and comes first: it holds the rare term.  B's
    one match counts more than the same match in A (0.591 against 0.544) because
    B is shorter than average; C shares no term and is not scored at all.
    """
    saturation = K1 * (1 - B + B * length / average_length)
    return weight * count * (K1 + 1) / (count + saturation)


class InvertedIndex:
    """For each term, the memories that contain it and how often: the whole search state.

    Adding or removing one memory touches only that memory's terms, so the index
    never has to be rebuilt, and a search reads only the postings of the query's
    terms instead of every memory.
    """

    def __init__(self) -> None:
        self.postings: dict[str, dict[str, int]] = {}  # term -> {memory id -> count}
        self.lengths: dict[str, int] = {}  # memory id -> number of tokens
        self.total_length = 0
        self.terms: dict[str, tuple[str, ...]] = {}  # memory id -> its distinct terms

    def add(self, memory_id: str, tokens: list[str]) -> None:
        counts = Counter(tokens)
        for term, count in counts.items():
            self.postings.setdefault(term, {})[memory_id] = count
        self.terms[memory_id] = tuple(counts)
        self.lengths[memory_id] = len(tokens)
        self.total_length += len(tokens)

    def remove(self, memory_id: str) -> None:
        for term in self.terms.pop(memory_id):
            postings = self.postings[term]
            del postings[memory_id]
            if not postings:
                del self.postings[term]
        self.total_length -= self.lengths.pop(memory_id)

    def search(self, query_tokens: list[str], k: int) -> list[tuple[str, float]]:
        """The `k` best (memory id, score) pairs; only memories sharing a term score at all."""
        if not self.lengths:
            return []
        total = len(self.lengths)
        average_length = self.total_length / total
        scores: dict[str, float] = {}
        for term in dict.fromkeys(query_tokens):  # each distinct term once, in query order
            postings = self.postings.get(term, {})
            weight = idf(len(postings), total)
            for memory_id, count in postings.items():
                share = bm25_term(weight, count, self.lengths[memory_id], average_length)
                scores[memory_id] = scores.get(memory_id, 0.0) + share
        # Ties go to the more recent memory.
        return heapq.nlargest(k, scores.items(), key=lambda item: (item[1], recency(item[0])))


def recency(memory_id: str) -> tuple[str, int, str]:
    """The order of ids by when they were made: by day, then by number as a number, so
    `m-20261130-10000` comes after `m-20261130-9999` (as text it would come before)."""
    day, _, number = memory_id.removeprefix("m-").partition("-")
    return day, int(number) if number.isdigit() else -1, memory_id


# --- The store ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    """One memory found by a search, with its BM25 score (higher is better)."""

    id: str
    text: str
    score: float
    category: str


def _now() -> datetime:
    return datetime.now().astimezone()


class MemoryStore:
    """The daily logs under `root`, with a BM25 index over them (`MEMORY.md` beside them is
    read whole into every prompt by prompt.py, not searched).

    `sync=False` skips the fsync of each write: much faster for bulk loading, at
    the risk of losing the last memories to a power cut (not to a crash).
    `clock` gives the current time; it decides ids, timestamps and the log file.
    `workdir` is the folder no log may lead out of (by default `root`): logs are read
    by chapter 1's rules for the agent's own files, so a log that is a link, a FIFO
    or a folder is skipped with a note in `problems`, never followed.
    """

    def __init__(
        self,
        root: str | Path,
        *,
        sync: bool = True,
        clock: Callable[[], datetime] = _now,
        workdir: str | Path | None = None,
    ) -> None:
        self.root = Path(root)
        self.logs = self.root / "memory"
        self.workdir = Path(workdir or root)
        self.sync = sync
        self.clock = clock
        self.memories: dict[str, dict[str, Any]] = {}  # live memories by id, as in the log
        self.index = InvertedIndex()
        self.problems: list[str] = []  # what loading had to skip or repair, one line each
        self._by_terms: dict[frozenset[str], str] = {}  # distinct terms -> id, for dedup
        self._last_number: dict[str, int] = {}  # day "20261130" -> highest number used
        self._read: dict[str, tuple[int, int]] = {}  # log -> (bytes, records) replayed
        self._catch_up()

    def _catch_up(self) -> None:
        """Replay what was appended to the logs since the last look, by this store or another.

        A log only grows, so the records after the ones already replayed are new; its
        size tells whether it changed at all.
        """
        paths, skipped = agent_files(self.workdir, self.logs, "*.jsonl")
        for note in skipped:
            if note not in self.problems:
                self.problems.append(note)
        for path in paths:
            size, replayed = self._read.get(path.name, (-1, 0))
            with contextlib.suppress(OSError):
                if path.stat().st_size == size:
                    continue
            try:
                loaded = jsonl.load(path, workdir=self.workdir)
            except (ToolError, OSError) as error:
                note = f"{path.name}: skipped, {error}"
                if note not in self.problems:
                    self.problems.append(note)
                continue
            if path.name not in self._read:
                self.problems += loaded.problems
            for record in loaded.records[replayed:]:
                self._replay(record, path.name)
            self._read[path.name] = (loaded.size, len(loaded.records))

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """Hold the lock of the logs, with every record the other writers appended replayed."""
        lock = self.logs / ".lock"
        try:  # inside the work directory: a lock planted as a link is refused
            held = hold(lock, wait=True, inside=self.workdir)  # held for one append only
        except OSError as error:
            raise ToolError(f"memory cannot be written: {error.strerror or error}") from None
        with held:
            self._catch_up()
            yield

    def __len__(self) -> int:
        return len(self.memories)

    def add(self, text: str, category: str = "note") -> str:
        """Remember `text` and return its id, or the id of the memory it duplicates.

        A duplicate is a memory with the same set of terms: the texts differ only
        in what `tokenize` throws away (case, punctuation, spacing, a plural `s`, the
        order of English words).  Closeness by overlap, such as 80% shared terms,
        is deliberately not used: "port 8080" and "port 8081" overlap almost
        entirely, yet the second is a new fact and must be kept.
        """
        text = _checked_text(text)
        if category not in CATEGORIES:
            raise ValueError(f"unknown category {category!r}; use one of {', '.join(CATEGORIES)}")
        tokens = tokenize(text)
        if not tokens:
            raise ValueError(f"memory text {text!r} has no words to find it by")
        with self._writing():
            duplicate = self._by_terms.get(frozenset(tokens))
            if duplicate is not None:
                return duplicate
            now = self.clock()
            record = {
                "id": self._next_id(now),
                "ts": now.isoformat(timespec="seconds"),
                "category": category,
                "text": text,
            }
            self._write(now, record)  # disk first: if it fails, memory and disk still agree
            self._keep(record, tokens)
        return record["id"]

    def search(self, query: str, k: int = 5) -> list[Hit]:
        """Up to `k` memories, best first; none when the query shares no term with any."""
        if not isinstance(query, str):
            raise ValueError(f"query must be text, got {type(query).__name__}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a whole number of at least 1, got {k!r}")
        hits = []
        for memory_id, score in self.index.search(tokenize(query), k):
            memory = self.memories[memory_id]
            hits.append(Hit(memory_id, memory["text"], score, memory["category"]))
        return hits

    def forget(self, memory_id: str) -> None:
        """Remove a memory from search for good, by appending a forget record to today's log."""
        with self._writing():
            if not isinstance(memory_id, str) or memory_id not in self.memories:
                raise KeyError(
                    f"no memory with id {memory_id!r} (never stored, or already forgotten); "
                    "search first to see the ids"
                )
            now = self.clock()
            self._write(now, {"forget": memory_id, "ts": now.isoformat(timespec="seconds")})
            self._drop(memory_id)

    def _replay(self, record: dict[str, Any], source: str) -> None:
        """Apply one record read from a log, as `add` or `forget` applied it when written."""
        if isinstance(record.get("forget"), str):
            if record["forget"] in self.memories:
                self._drop(record["forget"])
        elif all(isinstance(record.get(key), str) for key in ("id", "text", "category")):
            if record["id"] in self.memories:
                self.problems.append(f"{source}: id {record['id']} appears twice, second skipped")
                return
            day, _, number = record["id"].removeprefix("m-").partition("-")
            if number.isdigit():
                self._last_number[day] = max(self._last_number.get(day, 0), int(number))
            self._keep(record, tokenize(record["text"]))
        else:
            self.problems.append(f"{source}: not a memory or forget record, skipped: {record}")

    def _keep(self, record: dict[str, Any], tokens: list[str]) -> None:
        self.memories[record["id"]] = record
        self.index.add(record["id"], tokens)
        self._by_terms.setdefault(frozenset(tokens), record["id"])

    def _drop(self, memory_id: str) -> None:
        record = self.memories.pop(memory_id)
        self.index.remove(memory_id)
        terms = frozenset(tokenize(record["text"]))
        if self._by_terms.get(terms) == memory_id:
            del self._by_terms[terms]

    def _next_id(self, now: datetime) -> str:
        day = now.strftime("%Y%m%d")
        self._last_number[day] = self._last_number.get(day, 0) + 1
        return f"m-{day}-{self._last_number[day]:04d}"

    def _write(self, now: datetime, record: dict[str, Any]) -> None:
        """Append one record to the day's log, and count it as read: it is this store's own."""
        path = self.logs / f"{now:%Y-%m-%d}.jsonl"
        try:
            jsonl.append(path, record, sync=self.sync, workdir=self.workdir)
        except OSError as error:  # a full disk, a read-only folder: one line, nothing lost
            raise ToolError(f"memory cannot be written: {error.strerror or error}") from None
        size, replayed = self._read.get(path.name, (0, 0))
        with contextlib.suppress(OSError):
            size = path.stat().st_size
        self._read[path.name] = (size, replayed + 1)


def _checked_text(text: Any) -> str:
    if not isinstance(text, str):
        raise ValueError(f"memory text must be a string, got {type(text).__name__}")
    if not text.strip():
        raise ValueError("memory text is empty; write the fact to remember")
    return text.strip()


# --- For the agent ------------------------------------------------------------------------

MEMORY_TOOLS: list[dict[str, Any]] = [
    {
        "name": "memory_write",
        "description": (
            "Remember one fact for future sessions: a preference of the user, a fact about "
            "the project, a decision and its reason, who does what, how a tool is used. "
            "Write one short sentence that makes sense on its own, in the user's language. "
            "Storing the same fact twice is harmless: the id of the stored one comes back. "
            "Never store secrets such as passwords or API keys."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "The fact, as one sentence."},
                "category": {"type": "string", "enum": list(CATEGORIES)},
            },
            "required": ["text", "category"],
        },
    },
    {
        "name": "memory_search",
        "description": (
            "Search long-term memory by keywords (English or Chinese) before asking the "
            "user something they may have said in an earlier session. Returns up to k "
            "memories, best first, one per line: id, category, score, text."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Keywords or a question."},
                "k": {"type": "integer", "description": "How many memories, default 5."},
            },
            "required": ["query"],
        },
    },
]


def render_hits(hits: list[Hit]) -> str:
    """One line per hit, the same for the model and the terminal."""
    if not hits:
        return "no memory matches"
    return cap_output(
        "\n".join(
            f"{hit.id}  {hit.category:<10}  {hit.score:5.2f}  {shown_text(hit.text)}"
            for hit in hits
        )
    )


def shown_text(text: str) -> str:
    """A memory on one line, at most SHOWN_TEXT characters, saying so when it was cut."""
    text = " ".join(text.split())
    if len(text) <= SHOWN_TEXT:
        return text
    return f"{text[:SHOWN_TEXT]} [… cut: {len(text) - SHOWN_TEXT:,} more characters]"


# --- the memory flush ------------------------------------------------------------------

FLUSH_PROMPT = (
    "The oldest turns of this conversation are about to be replaced by a short summary. "
    "Before that, save with memory_write each fact from them that should outlive this "
    "session (a preference of the user, a fact about the project, a decision and why), "
    "then reply with one word: saved. Call no other tool."
)


def flush(model: Model, system: str, view: list[Message], store: MemoryStore) -> list[str]:
    """The memory flush: one side turn, just before older turns are summarised, in which the
    agent saves what must outlive them.  Returns the ids of what was saved.

    A summary keeps what matters to the task at hand and drops the rest for good; a
    preference mentioned in passing forty turns ago is the kind of thing it drops.  So
    the model reads the whole context once more, with only `memory_write` on offer.
    The turn is not part of the conversation: neither its request nor its reply is kept.
    """
    last = view[-1]
    if last["role"] == "user":  # add the request to it, so that the roles still alternate
        content = last["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        request = [*view[:-1], {"role": "user", "content": [*blocks, _text(FLUSH_PROMPT)]}]
    else:
        request = [*view, {"role": "user", "content": FLUSH_PROMPT}]
    reply = model.complete(system, request, tools=MEMORY_TOOLS[:1])
    saved = []
    for block in reply.content:
        if block.get("type") == "tool_use" and block.get("name") == "memory_write":
            args = block.get("input") or {}
            with contextlib.suppress(ValueError, TypeError, ToolError):  # a bad fact is lost
                saved.append(store.add(args.get("text", ""), args.get("category", "note")))
    return saved


def _text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}
