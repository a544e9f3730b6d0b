"""Chapter 4's long-term memory: tokens, BM25 ranking, daily logs, recall in two languages."""

from __future__ import annotations

import doctest
import gc
import json
import os
import re
import weakref
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from machine import jsonl
from tests import REPO
from v4_memory import memory
from v4_memory.memory import (
    CATEGORIES,
    INDEX,
    MEMORY_TOOLS,
    MemoryStore,
    bm25,
    bm25_term,
    idf,
    render_hits,
    tokenize,
)

DATA = REPO / "tests" / "data" / "memory_bilingual.jsonl"


class Clock:
    """A clock the test moves by hand, so ids and log files do not depend on today."""

    def __init__(self, start: str = "2026-11-30T09:00:00+01:00") -> None:
        self.now = datetime.fromisoformat(start)

    def __call__(self) -> datetime:
        return self.now

    def next_day(self) -> None:
        self.now += timedelta(days=1)


def store_at(root: Path, clock: Clock | None = None) -> MemoryStore:
    return MemoryStore(root, sync=False, clock=clock or Clock())


# --- Tokens ------------------------------------------------------------------------------


def test_english_words_are_lower_cased_split_and_made_singular() -> None:
    assert tokenize("Tests, LIBRARIES & classes: the User's status!") == [
        "test",
        "library",
        "class",
        "the",
        "user",
        "status",
    ]
    assert tokenize("snake_case v2 3.11 ＡＰＩ branches redis") == [
        "snake",
        "case",
        "v2",
        "3",
        "11",
        "api",
        "branch",
        "redis",
    ]


def test_chinese_gives_characters_and_neighbouring_pairs() -> None:
    assert tokenize("喝咖啡。") == ["喝", "咖", "啡", "喝咖", "咖啡"]
    assert tokenize("咖") == ["咖"]


def test_mixed_text_keeps_each_script_apart() -> None:
    assert tokenize("用 pytest 跑测试，Docker镜像") == [
        "用",
        "pytest",
        "跑",
        "测",
        "试",
        "跑测",
        "测试",
        "docker",
        "镜",
        "像",
        "镜像",
    ]


def test_the_worked_examples_in_the_docstrings_hold() -> None:
    assert doctest.testmod(memory).failed == 0


def test_bm25_by_hand_on_three_memories() -> None:
    """A `Run tests with pytest` (4 tokens), B `Tests must pass` (3), C `用户喜欢咖啡` (11):
    the average length is 6, and the query `pytest tests` has `pytest` (in A) and `test`
    (in A and B).  A wins with the rare term; B's one match counts more than the same
    match in A, since B is shorter than average; C shares nothing."""
    texts = ("Run tests with pytest", "Tests must pass", "用户喜欢咖啡")
    assert [len(tokenize(text)) for text in texts] == [4, 3, 11]
    w_pytest, w_test = idf(1, 3), idf(2, 3)
    assert (round(w_pytest, 3), round(w_test, 3)) == (0.981, 0.47)
    a = bm25_term(w_pytest, 1, 4, 6), bm25_term(w_test, 1, 4, 6)
    assert tuple(round(share, 3) for share in a) == (1.136, 0.544)
    assert round(bm25_term(w_test, 1, 3, 6), 3) == 0.591


# --- Adding, deduplicating, forgetting ---------------------------------------------------


def test_ids_name_the_day_and_the_place_in_its_log(tmp_path: Path) -> None:
    clock = Clock()
    store = store_at(tmp_path, clock)
    assert store.add("Uses Neovim.", "tool") == "m-20261130-0001"
    assert store.add("Prefers tabs.", "preference") == "m-20261130-0002"
    clock.next_day()
    assert store.add("Deploys on Fridays are frozen.", "decision") == "m-20261201-0001"
    assert sorted(p.name for p in (tmp_path / "memory").glob("*.jsonl")) == [
        "2026-11-30.jsonl",
        "2026-12-01.jsonl",
    ]
    first = jsonl.load(tmp_path / "memory" / "2026-11-30.jsonl").records[0]
    assert first == {
        "id": "m-20261130-0001",
        "ts": "2026-11-30T09:00:00+01:00",
        "category": "tool",
        "text": "Uses Neovim.",
    }


def test_an_exact_or_near_duplicate_returns_the_stored_id(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    first = store.add("User prefers tabs.", "preference")
    assert store.add("User prefers tabs.", "preference") == first
    assert store.add("  user PREFERS tab ", "preference") == first  # case, spacing, plural
    assert store.add("Tabs: the user prefers.", "note") != first  # "the" is a new term
    coffee = store.add("用户喜欢喝咖啡。")
    assert store.add("用户喜欢喝咖啡") == coffee
    assert len(store) == 3
    log = jsonl.load(tmp_path / "memory" / "2026-11-30.jsonl").records
    assert [record["text"] for record in log] == [
        "User prefers tabs.",
        "Tabs: the user prefers.",
        "用户喜欢喝咖啡。",
    ]


def test_texts_that_differ_in_a_number_or_word_order_are_different_facts(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    assert store.add("The API listens on port 8080.") != store.add("The API listens on port 8081.")
    assert store.add("喜欢咖啡") != store.add("咖啡喜欢")  # same characters, other pairs


def test_a_forgotten_memory_never_comes_back(tmp_path: Path) -> None:
    clock = Clock()
    store = store_at(tmp_path, clock)
    coffee = store.add("用户喜欢喝咖啡", "preference")
    store.add("The user drinks tea in the afternoon.", "preference")
    clock.next_day()
    store.forget(coffee)  # recorded in the next day's log
    assert [hit.id for hit in store.search("咖啡")] == []

    reopened = store_at(tmp_path, clock)
    assert coffee not in reopened.records()
    assert reopened.search("咖啡") == []
    assert len(reopened) == 1

    again = reopened.add("用户喜欢喝咖啡", "preference")
    assert again != coffee  # stored afresh under a new id; the old id stays retired
    assert [hit.id for hit in store_at(tmp_path, clock).search("咖啡")] == [again]


def test_forgetting_an_unknown_id_says_so(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    kept = store.add("Uses uv.", "tool")
    store.forget(kept)
    for memory_id in (kept, "m-20990101-0001"):
        with pytest.raises(KeyError, match=f"no memory with id '{memory_id}'"):
            store.forget(memory_id)


def test_a_new_store_on_the_same_root_sees_everything_and_continues_the_ids(
    tmp_path: Path,
) -> None:
    store = store_at(tmp_path)
    for text in ["Uses Neovim as editor.", "Prefers pytest over unittest.", "订单服务用 Java 写的"]:
        store.add(text, "tool")
    store.forget("m-20261130-0002")
    reopened = store_at(tmp_path)
    assert reopened.records() == store.records()
    assert reopened.problems == []
    for query in ["editor", "pytest", "订单 Java"]:
        assert reopened.search(query) == store.search(query)
    assert reopened.add("Formats with ruff.", "tool") == "m-20261130-0004"  # 0002 not reused


def same_size_other_text(log: Path, old: str, new: str, *, keep_time: bool) -> None:
    """Rewrite `old` as `new` (as long) in `log`, its time of change kept or not."""
    before = log.stat()
    log.write_text(log.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    assert log.stat().st_size == before.st_size
    if keep_time:
        os.utime(log, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_fresh_store_opens_the_index_without_reading_the_logs(tmp_path: Path) -> None:
    """The logs are not read again while they are as the index saw them: a change that
    keeps a log's size and time is not seen (what a hand edit in the same instant would
    be), the proof that opening and searching read the index alone."""
    store_at(tmp_path).add("Local Postgres runs on port 5433.", "project")
    log = tmp_path / "memory" / "2026-11-30.jsonl"
    same_size_other_text(log, "Postgres", "Postgrex", keep_time=True)
    assert [hit.text for hit in store_at(tmp_path).search("postgres")] == [
        "Local Postgres runs on port 5433."
    ]
    assert store_at(tmp_path).search("postgrex") == []


def test_a_log_that_changed_without_growing_is_read_again(tmp_path: Path) -> None:
    """A fresh clone of a folder that shipped its index has the same logs at new times:
    the index is built again from them, so it never says what the logs do not."""
    store_at(tmp_path).add("Local Postgres runs on port 5433.", "project")
    log = tmp_path / "memory" / "2026-11-30.jsonl"
    same_size_other_text(log, "Postgres", "Postgrex", keep_time=False)
    os.utime(log, ns=(log.stat().st_atime_ns, log.stat().st_mtime_ns + 1_000_000))
    reopened = store_at(tmp_path)
    found = [hit.text for hit in reopened.search("postgrex")]
    assert found == ["Local Postgrex runs on port 5433."]
    assert reopened.search("postgres") == []


def test_a_store_sees_what_another_writer_appended(tmp_path: Path) -> None:
    kept = store_at(tmp_path)
    other = store_at(tmp_path)  # as another process opens it
    other.add("Uses uv to install.", "tool")
    assert [hit.text for hit in kept.search("uv")] == ["Uses uv to install."]
    assert kept.add("Formats with ruff.", "tool").endswith("-0002")  # the next number
    assert [hit.text for hit in other.search("ruff")] == ["Formats with ruff."]


def test_a_store_starts_over_after_a_log_was_edited_by_hand(tmp_path: Path) -> None:
    kept = store_at(tmp_path)
    kept.add("Uses Neovim as editor.", "tool")
    kept.add("Prefers pytest over unittest.", "tool")
    log = next((tmp_path / "memory").glob("*.jsonl"))
    log.write_text(log.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    assert kept.search("pytest") == []
    again = store_at(tmp_path)
    assert [record["text"] for record in again.records().values()] == ["Uses Neovim as editor."]
    assert again.search("pytest") == []


def test_the_index_updated_in_place_ranks_like_one_built_afresh(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    texts = [line["text"] for line in dataset() if line["kind"] == "memory"]
    ids = [store.add(text, "note") for text in texts]
    for memory_id in ids[::3]:  # forget a third, spread across the store
        store.forget(memory_id)
    store.add("Neovim 和 VS Code 都用，主要是 Neovim。", "tool")

    queries = [tokenize(line["text"]) for line in dataset() if line["kind"] == "query"]
    kept = (
        store.index.vocabulary(),
        store.index.totals(),
        [bm25(store.index, q, 5) for q in queries],
    )
    del store  # and its file closed with it: Windows deletes no open file
    (tmp_path / "memory" / INDEX).unlink()  # the next store builds it from the logs alone
    fresh = store_at(tmp_path)
    assert kept == (
        fresh.index.vocabulary(),
        fresh.index.totals(),
        [bm25(fresh.index, q, 5) for q in queries],
    )


def test_a_store_no_longer_used_lets_go_of_its_index_at_once(tmp_path: Path) -> None:
    """No cycle keeps a store alive: when the last reference goes, so does its connection
    to the index file (which Windows would not let a folder be deleted with)."""
    store = store_at(tmp_path)
    store.add("Uses uv to install.", "tool")
    index = tmp_path / "memory" / INDEX
    assert index in open_files()
    gc.disable()  # freed by its reference count alone, not by a later collection
    try:
        gone = weakref.ref(store), weakref.ref(store.index)
        del store
        assert [ref() for ref in gone] == [None, None]
        assert index not in open_files()
    finally:
        gc.enable()


def open_files() -> set[Path]:
    """The files this process holds open, where the system says (Linux's /proc)."""
    folder = Path("/proc/self/fd")
    if not folder.is_dir():
        pytest.skip("no /proc/self/fd on this system to list open files")
    return {Path(os.path.realpath(fd)) for fd in folder.iterdir()}


def test_a_torn_daily_log_still_loads(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    store.add("Staging deploys from main.", "project")
    log = tmp_path / "memory" / "2026-11-30.jsonl"
    with log.open("ab") as file:
        file.write(b'{"kind": "not a memory"}\n')
        file.write(log.read_bytes().splitlines(keepends=True)[0])  # the same id again
        file.write(jsonl.encode({"id": "m-20261130-0002", "text": "cut"})[:15])  # killed midway

    reopened = store_at(tmp_path)
    assert [hit.text for hit in reopened.search("staging")] == ["Staging deploys from main."]
    assert reopened.problems == [
        "2026-11-30.jsonl:4: torn last line dropped (15 bytes)",
        "2026-11-30.jsonl: not a memory or forget record, skipped: {'kind': 'not a memory'}",
        "2026-11-30.jsonl: id m-20261130-0001 appears twice, second skipped",
    ]
    added = reopened.add("Production deploys need two approvals.", "decision")
    assert [hit.id for hit in store_at(tmp_path).search("approvals")] == [added]


def test_memory_md_is_not_searched(tmp_path: Path) -> None:
    """MEMORY.md is whole in every prompt (prompt.py reads it); search covers the logs."""
    store = store_at(tmp_path)
    (tmp_path / "MEMORY.md").write_text("# About me\nI answer in English.\n", encoding="utf-8")
    assert store.search("english") == []


# --- Ranking -------------------------------------------------------------------------------


def test_a_chinese_query_finds_the_memory_that_holds_its_word(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    coffee = store.add("用户喜欢喝咖啡", "preference")
    curry = store.add("午饭常吃咖喱饭", "note")
    store.add("用户喜欢喝茶", "preference")
    hits = store.search("咖啡")
    assert [hit.id for hit in hits] == [coffee, curry]  # the pair 咖啡 outranks the lone 咖
    assert hits[0].score > 2 * hits[1].score


def test_the_rarer_term_decides(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    for text in [
        "Tests first, tests always: tests before code.",
        "Write tests.",
        "Tests run in CI.",
    ]:
        store.add(text)
    pytest_memory = store.add("Use pytest.", "tool")
    best = store.search("pytest tests")[0]
    assert (best.id, best.text, best.category) == (pytest_memory, "Use pytest.", "tool")


def test_a_match_in_a_short_memory_counts_more_than_in_a_long_one(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    short = store.add("Uses pytest.", "tool")
    store.add("Uses pytest for unit tests, integration tests and the nightly suite.", "tool")
    assert store.search("pytest")[0].id == short


def test_a_repeated_query_term_counts_once(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    store.add("Use pytest.", "tool")
    store.add("Tests run in CI.", "project")
    assert store.search("pytest pytest pytest tests") == store.search("pytest tests")


def test_k_limits_the_hits_and_a_query_with_no_shared_term_finds_nothing(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    assert store.search("anything") == []  # empty store
    for number in range(6):
        store.add(f"Service {number} uses Postgres.", "project")
    store.add("用户喜欢喝咖啡", "preference")
    assert len(store.search("postgres")) == 5
    assert len(store.search("postgres", k=2)) == 2
    assert len(store.search("postgres", k=50)) == 6
    assert store.search("kubernetes helm") == []
    assert store.search("") == []
    assert store.search("?!") == []


@pytest.mark.parametrize(
    ("text", "category", "message"),
    [
        ("", "note", "memory text is empty"),
        ("   \n", "note", "memory text is empty"),
        (None, "note", "memory text must be a string, got NoneType"),
        ("Uses uv.", "secret", "unknown category 'secret'; use one of preference, project"),
        ("Uses uv.", None, "unknown category None"),
        ("?!", "note", "has no words to find it by"),
    ],
)
def test_bad_input_to_add_is_refused_with_a_readable_line(
    tmp_path: Path, text: object, category: object, message: str
) -> None:
    store = store_at(tmp_path)
    with pytest.raises(ValueError, match=re.escape(message)) as raised:
        store.add(text, category)  # type: ignore[arg-type]
    assert "\n" not in str(raised.value)
    assert not (tmp_path / "memory").exists()  # nothing was written


@pytest.mark.parametrize(
    ("query", "k", "message"),
    [
        (None, 5, "query must be text"),
        ("uv", 0, "k must be a whole number of at least 1, got 0"),
        ("uv", "3", "got '3'"),
        ("uv", True, "got True"),
    ],
)
def test_bad_input_to_search_is_refused(
    tmp_path: Path, query: object, k: object, message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        store_at(tmp_path).search(query, k)  # type: ignore[arg-type]


# --- Recall on the bilingual set ---------------------------------------------------------


def dataset() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]


def test_the_bilingual_set_is_balanced_and_consistent() -> None:
    lines = dataset()
    memories = [line for line in lines if line["kind"] == "memory"]
    queries = [line for line in lines if line["kind"] == "query"]
    assert len(memories) >= 40 and len(queries) >= 24
    for lang in ("en", "zh"):
        assert sum(m["lang"] == lang for m in memories) == len(memories) / 2
        assert sum(q["lang"] == lang for q in queries) == len(queries) / 2
    known = {m["id"] for m in memories}
    for query in queries:
        assert query["relevant"] and set(query["relevant"]) <= known
        for relevant in query["relevant"]:
            text = next(m["text"] for m in memories if m["id"] == relevant)
            assert query["text"] not in text  # paraphrased, not copied


def recall_at(store: MemoryStore, ids: dict[str, str], queries: list[dict], k: int) -> float:
    """Mean share of each query's relevant memories found in its top k."""
    shares = []
    for query in queries:
        found = {ids[hit.id] for hit in store.search(query["text"], k)}
        shares.append(len(found & set(query["relevant"])) / len(query["relevant"]))
    return sum(shares) / len(shares)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_recall_at_3_on_the_bilingual_set(tmp_path: Path, lang: str) -> None:
    store = store_at(tmp_path)
    ids = {}  # store id -> data set id
    for line in dataset():
        if line["kind"] == "memory":
            ids[store.add(line["text"], line["category"])] = line["id"]
    queries = [line for line in dataset() if line["kind"] == "query" and line["lang"] == lang]
    assert recall_at(store, ids, queries, 3) >= 0.9


# --- For the agent -------------------------------------------------------------------------


def test_the_tool_schemas_match_what_the_store_accepts() -> None:
    tools = {tool["name"]: tool for tool in MEMORY_TOOLS}
    assert set(tools) == {"memory_write", "memory_search"}
    for tool in MEMORY_TOOLS:
        assert set(tool) == {"name", "description", "input_schema"}
        schema = tool["input_schema"]
        assert schema["type"] == "object" and set(schema["required"]) <= set(schema["properties"])
    write = tools["memory_write"]["input_schema"]["properties"]
    assert write["category"]["enum"] == list(CATEGORIES)
    assert set(tools["memory_search"]["input_schema"]["properties"]) == {"query", "k"}


def test_hits_render_one_line_each(tmp_path: Path) -> None:
    store = store_at(tmp_path)
    store.add("Run the whole suite with\n  `make test`.", "tool")
    store.add("Integration tests need a Stripe key.", "project")
    hits = store.search("test")
    lines = render_hits(hits).splitlines()
    assert len(lines) == 2
    assert lines[1] == f"m-20261130-0001  tool        {hits[1].score:5.2f}  " + (
        "Run the whole suite with `make test`."
    )
    assert render_hits([]) == "no memory matches"


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX's")
def test_memories_are_readable_by_their_owner_alone_whatever_the_umask(tmp_path: Path) -> None:
    """On a shared server memory holds one learner's notes: folder 0700, files 0600."""
    previous = os.umask(0)  # the most permissive: the modes are the code's own
    try:
        store = store_at(tmp_path)
        store.add("the deploy key lives in the vault")
    finally:
        os.umask(previous)
    (log,) = store.logs.glob("*.jsonl")
    assert log.stat().st_mode & 0o777 == 0o600
    assert store.logs.stat().st_mode & 0o777 == 0o700
    kept = sorted(path.name for path in store.logs.iterdir())
    assert kept == [".lock", log.name, INDEX], kept  # the index holds every memory's text too
    assert all(path.stat().st_mode & 0o777 == 0o600 for path in store.logs.iterdir())
    (store.logs / INDEX).chmod(0o644)  # as a version that did not see to it left it
    store_at(tmp_path).search("deploy")
    assert (store.logs / INDEX).stat().st_mode & 0o777 == 0o600
