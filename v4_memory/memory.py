"""Long-term memory: short facts kept for weeks, found again by BM25 in English and Chinese.

On disk, under the agent's home `.agent/` in the work directory:

    MEMORY.md                  written by the person, put whole into every prompt
    memory/2026-11-30.jsonl    one log per day of what the agent chose to remember

A log only grows: remembering appends a record, and so does forgetting, so a crash
never loses a memory that was not meant to go.  A process keeps one store per work
directory (`MemoryStore.of`), an inverted index brought up to date as the logs grow.
"""

from __future__ import annotations

import contextlib
import heapq
import math
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from llm import Message, Model
from llm.types import with_user_text
from machine import Logs, ToolError, cap_output, hold

HOME = Path(".agent")  # the agent's home inside the work directory, as for sessions
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
SHOWN_TEXT = 2_000  # characters of one memory that a search shows; the rest is cut, and said


def tokenize(text: str) -> list[str]:
    """The terms a text is indexed and searched by, repeats included.

    English words lose case and a plural; a run of Chinese (or Japanese, or Korean)
    gives each character and each pair of neighbours, since nothing marks where its
    words begin.  Interned: a term in ten thousand memories is one string.

    >>> tokenize("The user's tests; 喜欢咖啡")
    ['the', 'user', 'test', '喜', '欢', '咖', '啡', '喜欢', '欢咖', '咖啡']
    """
    tokens: list[str] = []
    text = POSSESSIVE.sub("", unicodedata.normalize("NFKC", text).lower())
    for match in TOKEN_PATTERN.finditer(text):
        run = match.group()
        tokens += han_grams(run) if match.lastgroup == "cjk" else [singular(run)]
    return [sys.intern(token) for token in tokens]


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


class InvertedIndex:
    """For each term, the memories that contain it and how often: the whole search state."""

    def __init__(self) -> None:
        self.postings: dict[str, dict[str, int]] = {}  # term -> {memory id -> count}
        self.lengths: dict[str, int] = {}  # memory id -> number of tokens
        self.total_length = 0

    def add(self, memory_id: str, tokens: list[str]) -> None:
        for term, count in Counter(tokens).items():
            self.postings.setdefault(term, {})[memory_id] = count
        self.lengths[memory_id] = len(tokens)
        self.total_length += len(tokens)

    def remove(self, memory_id: str, terms: tuple[str, ...]) -> None:
        for term in terms:
            postings = self.postings[term]
            del postings[memory_id]
            if not postings:
                del self.postings[term]
        self.total_length -= self.lengths.pop(memory_id)

    def search(self, query_tokens: list[str], k: int) -> list[tuple[str, float]]:
        """The `k` best (id, score) pairs, ties to the more recent; no shared term, no score."""
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
        return heapq.nlargest(k, scores.items(), key=lambda item: (item[1], recency(item[0])))


def recency(memory_id: str) -> tuple[str, int, str]:
    """Ids in the order they were made: `m-20261130-10000` after `m-20261130-9999`."""
    day, _, number = memory_id.removeprefix("m-").partition("-")
    return day, int(number) if number.isdigit() else -1, memory_id


def terms_of(tokens: list[str]) -> tuple[str, ...]:
    """A memory's distinct terms, sorted: two texts with the same terms are one fact."""
    return tuple(sorted(set(tokens)))


@dataclass(frozen=True)
class Hit:
    """One memory found by a search."""

    id: str
    text: str
    score: float  # BM25: higher is better
    category: str


class MemoryStore:
    """The daily logs under `root`, and a BM25 index over them.  `sync=False` skips each
    write's fsync (bulk loading); `workdir` (by default `root`) is what no log may leave."""

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
        self._start_over()

    @classmethod
    def of(cls, workdir: str | Path) -> MemoryStore:
        """The store of `workdir`'s agent home, kept for the process, brought up to date;
        only the few used last are kept, so a process that works in many folders lets the
        stores of the others go."""
        folder = Path(workdir).resolve()
        store = OPEN_STORES.pop(folder, None)
        if store is not None:
            store._catch_up()
        OPEN_STORES[folder] = store or cls(folder / HOME, workdir=folder)  # now the newest
        while len(OPEN_STORES) > KEPT_STORES:
            del OPEN_STORES[next(iter(OPEN_STORES))]  # the one used longest ago
        return OPEN_STORES[folder]

    def _start_over(self) -> None:
        """Every log replayed into empty state: at opening, and after a log was edited by hand."""
        self.memories: dict[str, dict[str, Any]] = {}  # live memories by id, as in the log
        self.index = InvertedIndex()
        self.problems: list[str] = []  # what loading had to skip or repair, one line each
        self._by_terms: dict[tuple[str, ...], str] = {}  # distinct terms -> id, for dedup
        self._last_number: dict[str, int] = {}  # day "20261130" -> highest number used
        self._files = Logs(self.logs, self.workdir)  # how far each log was replayed
        self._catch_up()

    def _catch_up(self) -> None:
        """Replay what anyone appended since the last look; all again after a hand edit."""
        if not self._files.read_new(self._replay, self.problems):
            self._start_over()

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """Hold the logs' lock with what other writers appended replayed: no id is given twice."""
        try:  # inside the work directory: a lock planted as a link is refused
            with hold(self.logs / ".lock", wait=True, inside=self.workdir):
                self._catch_up()
                yield
        except OSError as error:  # a full disk, a read-only folder: one line
            raise ToolError(f"memory cannot be written: {error.strerror or error}") from None

    def __len__(self) -> int:
        return len(self.memories)

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
        with self._writing():
            memory_id = self._by_terms.get(terms_of(tokens))
            if memory_id is None:  # a new fact: the day's next number
                now = self.clock()
                day, stamp = now.strftime("%Y%m%d"), now.isoformat(timespec="seconds")
                memory_id = f"m-{day}-{self._last_number.get(day, 0) + 1:04d}"
                self._write(now, {"id": memory_id, "ts": stamp, "category": category, "text": text})
        return memory_id

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
            if memory_id not in self.memories:
                unknown = f"no memory with id {memory_id!r} (never stored, or already forgotten)"
                raise KeyError(f"{unknown}; search first to see the ids")
            now = self.clock()
            self._write(now, {"forget": memory_id, "ts": now.isoformat(timespec="seconds")})

    def _write(self, now: datetime, record: dict[str, Any]) -> None:
        """Append to the day's log, then apply: disk first, so a failed write changes nothing."""
        name = f"{now:%Y-%m-%d}.jsonl"
        self._files.append(name, record, sync=self.sync)
        self._replay(record, name)

    def _replay(self, record: dict[str, Any], source: str) -> None:
        """Apply one record of a log: a memory joins the index, a forget record takes one out."""
        if isinstance(record.get("forget"), str):
            if record["forget"] in self.memories:
                memory_id = record["forget"]
                terms = terms_of(tokenize(self.memories.pop(memory_id)["text"]))
                self.index.remove(memory_id, terms)
                if self._by_terms.get(terms) == memory_id:
                    del self._by_terms[terms]
        elif not all(isinstance(record.get(key), str) for key in ("id", "text", "category")):
            self.problems.append(f"{source}: not a memory or forget record, skipped: {record}")
        elif record["id"] in self.memories:
            self.problems.append(f"{source}: id {record['id']} appears twice, second skipped")
        else:
            day, number, memory_id = recency(record["id"])
            self._last_number[day] = max(self._last_number.get(day, 0), number)
            tokens = tokenize(record["text"])
            self.memories[memory_id] = record
            self.index.add(memory_id, tokens)
            self._by_terms.setdefault(terms_of(tokens), memory_id)


OPEN_STORES: dict[Path, MemoryStore] = {}  # work directory, resolved -> its store, by `of`
KEPT_STORES = 4  # the stores `of` keeps: a run's folder, and a few a lab comparison goes back to


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
