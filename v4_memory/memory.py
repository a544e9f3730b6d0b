"""Long-term memory: short facts kept for weeks, found again by BM25 in English and Chinese.

On disk, under the agent's home `.agent/` in the work directory:

    MEMORY.md                  written by the person, put whole into every prompt
    memory/2026-11-30.jsonl    one log per day of what the agent chose to remember

A log only grows: remembering appends a record, and so does forgetting, so a crash
never loses a memory that was not meant to go.  Beside the logs, `memory/index.sqlite`
keeps their BM25 index, built from them and brought up to date as they grow: a fresh
process opens it at once, however many memories there are.
"""

from __future__ import annotations

import contextlib
import heapq
import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from llm import Console, Message, Model
from llm.types import with_user_text
from machine import Logs, PostingsFile, ToolError, cap_output

HOME = Path(".agent")  # the agent's home inside the work directory, as for sessions
RECALL = 3  # memories recalled for each task: the few most relevant, not the whole store
CATEGORIES = ("preference", "project", "decision", "person", "tool", "note")

# BM25's two knobs, at the values most search engines ship with.
K1 = 1.2  # term saturation: a second occurrence adds less than the first, a tenth almost nothing
B = 0.75  # length normalisation: 0 ignores length, 1 fully scales a term's weight by it

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # Unified Ideographs, Extension A, compatibility
KANA = "\u3041-\u3096\u30a1-\u30fa\u30fc\u31f0-\u31ff"  # hiragana, katakana, prolonged sound
HANGUL = "\u1100-\u11ff\u3131-\u318e\uac00-\ud7a3"  # jamo and syllables
CJK = HAN + KANA + HANGUL  # scripts written without spaces between words
TOKEN_PATTERN = re.compile(f"(?P<cjk>[{CJK}]+)|(?P<word>[^\\W_{CJK}]+)")
POSSESSIVE = re.compile(r"['’]s\b")
INDEX = "index.sqlite"  # the index's file, in the logs' folder: built from them, never the truth
SHOWN_TEXT = 2_000  # characters of one memory that a search shows; the rest is cut, and said


def tokenize(text: str) -> list[str]:
    """The terms a text is indexed and searched by, repeats included.

    English words lose case and a plural; a run of Chinese (or Japanese, or Korean)
    gives each character and each pair of neighbours, since nothing marks where its
    words begin.

    >>> tokenize("The user's tests; 喜欢咖啡")
    ['the', 'user', 'test', '喜', '欢', '咖', '啡', '喜欢', '欢咖', '咖啡']
    """
    tokens: list[str] = []
    text = POSSESSIVE.sub("", unicodedata.normalize("NFKC", text).lower())
    for match in TOKEN_PATTERN.finditer(text):
        run = match.group()
        tokens += han_grams(run) if match.lastgroup == "cjk" else [singular(run)]
    return tokens


def han_grams(run: str) -> list[str]:
    """Every character of a run of CJK text, then every pair of neighbouring characters."""
    return list(run) + [run[i : i + 2] for i in range(len(run) - 1)]


def singular(word: str) -> str:
    """Drop an English plural, so `tests` meets `test`: three rules and a guard, not a stemmer."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"  # libraries -> library
    if word.endswith(("sses", "ches", "shes", "xes")):
        return word[:-2]  # classes -> class, branches -> branch, fixes -> fix
    return word[:-1]  # tests -> test, prefers -> prefer


def idf(containing: int, total: int) -> float:
    """How much finding a term says: high for a rare term, above zero even for one in all."""
    return math.log(1 + (total - containing + 0.5) / (containing + 0.5))


def bm25_term(weight: float, count: int, length: int, average_length: float) -> float:
    """One query term's share of a score: its idf, its count saturating (k1), by length (b)."""
    saturation = K1 * (1 - B + B * length / average_length)
    return weight * count * (K1 + 1) / (count + saturation)


def bm25(index: PostingsFile, query_tokens: list[str], k: int) -> list[tuple[str, float]]:
    """The `k` best (id, score) pairs, ties to the more recent; no shared term, no score.
    Only the postings of the query's terms are read: the index is inverted."""
    total, all_lengths = index.totals()
    if not total:
        return []
    average_length = all_lengths / total
    scores: dict[str, float] = {}
    for term in dict.fromkeys(query_tokens):  # each distinct term once, in query order
        postings = index.postings(term)  # (memory id, count, its length) of each holding it
        weight = idf(len(postings), total)
        for memory_id, count, length in postings:
            share = bm25_term(weight, count, length, average_length)
            scores[memory_id] = scores.get(memory_id, 0.0) + share
    return heapq.nlargest(k, scores.items(), key=lambda item: (item[1], recency(item[0])))


def recency(memory_id: str) -> tuple[str, int, str]:
    """Ids in the order they were made: `m-20261130-10000` after `m-20261130-9999`."""
    day, _, number = memory_id.removeprefix("m-").partition("-")
    return day, int(number) if number.isdigit() else -1, memory_id


def terms_of(tokens: list[str]) -> tuple[str, ...]:
    """A memory's distinct terms, sorted: two texts with the same terms are one fact."""
    return tuple(sorted(set(tokens)))


def fact(tokens: list[str]) -> str:
    """The key a memory is found by when the same fact comes again: its terms, as a line."""
    return " ".join(terms_of(tokens))


@dataclass(frozen=True)
class Hit:
    """One memory found by a search."""

    id: str
    text: str
    score: float  # BM25: higher is better
    category: str


class MemoryStore:
    """The daily logs under `root`, and a BM25 index over them kept beside them (`INDEX`).
    `sync=False` skips each write's fsync (bulk loading); `workdir` (by default `root`) is
    what no log may leave."""

    def __init__(
        self,
        root: str | Path,
        *,
        sync: bool = True,
        clock: Callable[[], datetime] = lambda: datetime.now().astimezone(),
        workdir: str | Path | None = None,
    ) -> None:
        self.root, self.logs = Path(root), Path(root) / "memory"
        self.workdir = Path(workdir or root)
        self.sync, self.clock = sync, clock
        files = Logs(self.logs, self.workdir)  # how far each log was read into the index
        self.index = PostingsFile(self.logs / INDEX, files, sync=sync)
        self.index.catch_up(self._replay)

    @property
    def problems(self) -> list[str]:
        """What reading the logs had to skip or repair, one line each."""
        return self.index.problems()

    def records(self) -> dict[str, dict[str, Any]]:
        """Every live memory by id, as in its log (reads them all: for a listing, a test)."""
        return self.index.records()

    def __len__(self) -> int:
        self.index.catch_up(self._replay)
        return self.index.totals()[0]

    def add(self, text: str, category: str = "note") -> str:
        """Remember `text` and return its id, or that of the memory with the same set of terms
        (case, punctuation, a plural, word order aside): "port 8080" and "port 8081" are two."""
        if not isinstance(text, str):
            raise ValueError(f"memory text must be a string, got {type(text).__name__}")
        if not text.strip():
            raise ValueError("memory text is empty; write the fact to remember")
        if category not in CATEGORIES:
            raise ValueError(f"unknown category {category!r}; use one of {', '.join(CATEGORIES)}")
        text, tokens = text.strip(), tokenize(text)
        if not tokens:
            raise ValueError(f"memory text {text!r} has no words to find it by")
        with self.index.locked(self._replay, "memory"):
            memory_id = self.index.find(fact(tokens))
            if memory_id is None:  # a new fact: the day's next number
                now = self.clock()
                day, stamp = now.strftime("%Y%m%d"), now.isoformat(timespec="seconds")
                memory_id = f"m-{day}-{self.index.counter(day) + 1:04d}"
                record = {"id": memory_id, "ts": stamp, "category": category, "text": text}
                self.index.append(f"{now:%Y-%m-%d}.jsonl", record, self._replay)
        return memory_id

    def search(self, query: str, k: int = 5) -> list[Hit]:
        """Up to `k` memories, best first; none when the query shares no term with any."""
        if not isinstance(query, str):
            raise ValueError(f"query must be text, got {type(query).__name__}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a whole number of at least 1, got {k!r}")
        self.index.catch_up(self._replay)  # what anyone appended since the last look
        hits = []
        for memory_id, score in bm25(self.index, tokenize(query), k):
            memory = self.index.record(memory_id)  # found by its postings, so there
            hits.append(Hit(memory_id, memory["text"], score, memory["category"]))
        return hits

    def forget(self, memory_id: str) -> None:
        """Remove a memory from search for good, by appending a forget record to today's log."""
        with self.index.locked(self._replay, "memory"):
            if self.index.record(memory_id) is None:
                unknown = f"no memory with id {memory_id!r} (never stored, or already forgotten)"
                raise KeyError(f"{unknown}; search first to see the ids")
            now = self.clock()
            record = {"forget": memory_id, "ts": now.isoformat(timespec="seconds")}
            self.index.append(f"{now:%Y-%m-%d}.jsonl", record, self._replay)

    def _replay(self, record: dict[str, Any], source: str) -> None:
        """Apply one record of a log: a memory joins the index, a forget record takes one out."""
        if isinstance(record.get("forget"), str):
            memory = self.index.record(record["forget"])
            if memory is not None:
                self.index.remove(record["forget"], terms_of(tokenize(memory["text"])))
        elif not all(isinstance(record.get(key), str) for key in ("id", "text", "category")):
            self.index.note(f"{source}: not a memory or forget record, skipped: {record}")
        elif not record["id"].isprintable():
            self.index.note(f"{source}: id {record['id']!r} is not printable text, skipped")
        elif self.index.record(record["id"]) is not None:
            self.index.note(f"{source}: id {record['id']} appears twice, second skipped")
        else:
            day, number, memory_id = recency(record["id"])
            self.index.count_up(day, number)
            tokens = tokenize(record["text"])
            self.index.add(memory_id, tokens, fact(tokens), record)


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
    """One line per hit, the same for the model and the terminal; a long memory is cut."""
    if not hits:
        return "no memory matches"
    rows = []
    for hit in hits:
        text = " ".join(hit.text.split())
        if len(text) > SHOWN_TEXT:
            text = f"{text[:SHOWN_TEXT]} [… cut: {len(text) - SHOWN_TEXT:,} more characters]"
        rows.append(f"{hit.id}  {hit.category:<10}  {hit.score:5.2f}  {text}")
    return cap_output("\n".join(rows))


FLUSH_PROMPT = (
    "The oldest turns of this conversation are about to be replaced by a short summary. "
    "Before that, save with memory_write each fact from them that should outlive this "
    "session (a preference of the user, a fact about the project, a decision and why), "
    "then reply with one word: saved. Call no other tool."
)


def flush(model: Model, system: str, view: list[Message], store: MemoryStore) -> list[str]:
    """A side turn before older turns are summarised, in which the model saves what must outlive
    them (a summary drops a preference said in passing); returns the ids of what it saved."""
    request = with_user_text(view, FLUSH_PROMPT)  # after the last user turn, if it is last
    reply = model.complete(system, request, tools=MEMORY_TOOLS[:1])
    saved = []
    for block in reply.content:
        if block.get("type") == "tool_use" and block.get("name") == "memory_write":
            args = block.get("input") or {}
            with contextlib.suppress(ValueError, TypeError, ToolError):  # a bad fact is lost
                saved.append(store.add(args.get("text", ""), args.get("category", "note")))
    return saved


def recall(store: MemoryStore, task: str, console: Console) -> list[Hit]:
    """What long-term memory knows of `task`, said on the console: the RECALL best hits."""
    for problem in store.problems:
        console.warn(f"memory: {problem}")
    recalled = store.search(task, k=RECALL)
    if recalled:
        console.note(f"recalled: {'; '.join(' '.join(hit.text.split()) for hit in recalled)}")
    return recalled


def memory_handlers(store: MemoryStore) -> dict[str, Callable[..., str]]:
    """The memory tools' handlers, on `store`."""
    return {
        "memory_write": lambda workdir, text, category: f"saved as {store.add(text, category)}",
        "memory_search": lambda workdir, query, k=5: render_hits(store.search(query, k)),
    }


def flush_to(store: MemoryStore, console: Console) -> Callable[[Model, str, list[Message]], None]:
    """The context window's callback before it summarises: the flush into `store`, on the side
    model the window gives it (a cassette keeps its replies under their own key, `flush-1`)."""

    def save(side: Model, system: str, view: list[Message]) -> None:
        saved = flush(side, system, view, store)
        console.note(f"memory flush before older turns are summarised: {len(saved)} saved")

    return save
