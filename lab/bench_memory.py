"""Benchmarks for chapter 4's memory: how fast `add` and `search` are, and how well search recalls.

    python -m lab.bench_memory             # 1k, 10k and 100k memories (about two minutes)
    python -m lab.bench_memory --quick     # 1k only (10k for the set-up), for the test suite
    python -m lab.bench_memory --example   # the worked BM25 example of the chapter

The store (`v4_memory.memory`, "BM25 index") is measured side by side with two
baselines, all three in the same run and with the same synthetic memories:

* naive TF-IDF: keeps the texts and, for every query, tokenizes all of them again
  and scores each one, as a first version usually does.  It uses the store's own
  tokenizer, so the speed gap is the index and the recall gap is the scoring;
* SQLite FTS5 from the standard library, the production route, with the
  `trigram` tokenizer so that Chinese is searchable without a word segmenter.

The synthetic memories are sentences of words drawn (seeded, Zipf-like: a few
words common, most rare) from an English and a Chinese word list; half are in
each language.  Recall is measured on `tests/data/memory_bilingual.jsonl`, hand
written and separate from the synthetic memories.

Two figures follow the agent rather than the store: what each prompt costs before the
first model call (the store obtained, the task recalled) when the process keeps its
store (`MemoryStore.of`) against opening a fresh one; and how much memory a store of
100,000 memories keeps, its index and the records together.
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import platform
import random
import sqlite3
import statistics
import tempfile
import time
import tracemalloc
import unicodedata
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from machine import jsonl
from v4_memory import memory
from v4_memory.memory import HOME, K1, TOKEN_PATTERN, B, MemoryStore, bm25_term, idf, tokenize

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "memory_bilingual.jsonl"
SEARCH_TARGET = 10e-3  # seconds per search over 10,000 memories
SPEEDUP_TARGET = 10  # times faster than the naive baseline at 10,000
RECALL_TARGET = 0.9  # recall@3 per language on the bilingual set
SETUP_TARGET = 5e-3  # seconds of a prompt's memory set-up with 10,000 memories, store kept
INDEX_TARGET = 120e6  # bytes a store of 100,000 memories keeps, about (388 MB unshared)

ENGLISH = """
user prefer test deploy server database migration branch commit review editor
python docker kubernetes postgres redis cache queue worker cron schedule config
token secret vault staging production release version tag changelog lint format
type hint module package dependency lockfile build compile bundle frontend backend
api endpoint route handler request response header cookie session login password
email invoice payment refund customer order cart checkout shipping warehouse report
dashboard metric alert incident oncall pager log trace span latency timeout retry
backoff limit quota budget cost cloud region zone cluster node pod container image
registry mirror proxy network firewall certificate domain dns load balancer replica
shard index query schema column table view trigger backup restore snapshot archive
script makefile shell terminal tmux vim neovim emacs vscode plugin theme font
keyboard monitor laptop meeting standup sprint ticket issue bug fix patch hotfix
rollback feature flag experiment cohort analytics event pipeline stream batch job
notebook pandas numpy plot chart model training dataset label prompt agent tool
memory context window summary document readme wiki guide tutorial example sample
benchmark profile flamegraph memoryleak thread process async await lock mutex
"""

CHINESE = """
用户 喜欢 测试 部署 服务 数据 迁移 分支 提交 评审 编辑 缓存 队列 定时 配置
密钥 环境 生产 发布 版本 标签 格式 类型 模块 依赖 构建 打包 前端 后端 接口
请求 响应 会话 登录 密码 邮件 发票 支付 退款 客户 订单 购物 结算 物流 仓库
报表 指标 告警 事故 值班 日志 链路 延迟 超时 重试 限流 预算 成本 集群 节点
容器 镜像 网络 证书 域名 负载 副本 分片 索引 查询 表格 视图 备份 恢复 快照
归档 脚本 终端 插件 主题 字体 键盘 显示 会议 站会 迭代 工单 问题 缺陷 修复
回滚 开关 实验 分析 事件 管道 批量 任务 笔记 图表 模型 训练 标注 提示 工具
记忆 上下文 摘要 文档 教程 示例 性能 线程 进程 异步 并发 权限 审计 安全 加密
中文 英文 注释 命名 风格 规范 周五 早上 下午 晚上 同事 负责 确认 申请 审批
"""
ENGLISH_WORDS, CHINESE_WORDS = ENGLISH.split(), CHINESE.split()


# --- Synthetic memories ----------------------------------------------------------------


def zipf_weights(count: int) -> list[float]:
    return [1 / rank for rank in range(1, count + 1)]


def synthetic_memories(count: int, seed: int = 7) -> list[str]:
    """Sentences of 6–12 words, alternately English and Chinese (written without spaces)."""
    rng = random.Random(seed)
    english, chinese = zipf_weights(len(ENGLISH_WORDS)), zipf_weights(len(CHINESE_WORDS))
    texts = []
    for number in range(count):
        size = rng.randint(6, 12)
        if number % 2:
            texts.append("".join(rng.choices(CHINESE_WORDS, chinese, k=size)) + "。")
        else:
            words = rng.choices(ENGLISH_WORDS, english, k=size)
            texts.append(" ".join(words).capitalize() + ".")
    return texts


def synthetic_queries(count: int, seed: int = 11) -> list[str]:
    """Two or three keywords each, any word of the lists equally likely, half in Chinese."""
    rng = random.Random(seed)
    words = [ENGLISH_WORDS, CHINESE_WORDS]
    return [" ".join(rng.sample(words[n % 2], rng.randint(2, 3))) for n in range(count)]


# --- The three searchers -----------------------------------------------------------------


class Searcher(Protocol):
    name: str

    def add(self, text: str) -> str: ...

    def ids(self, query: str, k: int) -> list[str]: ...


class IndexedStore:
    """The chapter's `MemoryStore` (fsync off: the bulk load is not what is measured)."""

    name = "BM25 index"

    def __init__(self, root: Path) -> None:
        self.store = MemoryStore(root, sync=False)

    def add(self, text: str) -> str:
        return self.store.add(text)

    def ids(self, query: str, k: int) -> list[str]:
        return [hit.id for hit in self.store.search(query, k)]


class NaiveTfidf:
    """A first version: no index; every query tokenizes and scores every memory again."""

    name = "naive TF-IDF"

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def add(self, text: str) -> str:
        memory_id = str(len(self.texts))
        self.texts[memory_id] = text
        return memory_id

    def ids(self, query: str, k: int) -> list[str]:
        counts = {memory_id: Counter(tokenize(text)) for memory_id, text in self.texts.items()}
        containing = Counter(term for terms in counts.values() for term in terms)
        total = len(counts)
        terms = set(tokenize(query))
        scores = {}
        for memory_id, terms_of_memory in counts.items():
            length = sum(terms_of_memory.values()) or 1
            score = sum(
                terms_of_memory[term] / length * math.log(total / containing[term])
                for term in terms
                if term in terms_of_memory
            )
            if score > 0:
                scores[memory_id] = score
        best = heapq.nlargest(k, scores.items(), key=lambda item: item[1])
        return [memory_id for memory_id, _ in best]


class Fts5Trigram:
    """SQLite FTS5 with the trigram tokenizer in an in-memory database, ranked by its bm25().

    A trigram index finds only strings of three characters or more, and most
    Chinese words are two.  So the query is split like the store's tokenizer
    splits it: English words and three-character windows of Chinese runs go to
    MATCH; two-character pieces (a Chinese run's neighbouring pairs, and English
    words such as `uv`) are looked for with instr(), a scan of every row, and fill
    the places MATCH leaves empty, ranked by how many of them a memory contains.
    instr() and not LIKE: on some SQLite versions a LIKE pattern of two Chinese
    characters on a trigram table returns no rows at all (`like_is_broken`).
    """

    name = "SQLite FTS5"

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE memories USING fts5(body, tokenize='trigram')")

    def add(self, text: str) -> str:
        return str(self.db.execute("INSERT INTO memories(body) VALUES (?)", (text,)).lastrowid)

    def ids(self, query: str, k: int) -> list[str]:
        long, short = fts5_terms(query)
        found: list[str] = []
        if long:
            match = " OR ".join('"' + term.replace('"', '""') + '"' for term in long)
            rows = self.db.execute(
                "SELECT rowid FROM memories WHERE memories MATCH ? ORDER BY rank LIMIT ?",
                (match, k),
            )
            found = [str(rowid) for (rowid,) in rows]
        if short and len(found) < k:
            shared = " + ".join("(instr(lower(body), ?) > 0)" for _ in short)
            rows = self.db.execute(
                f"SELECT rowid, {shared} AS shared FROM memories WHERE shared > 0 "
                "ORDER BY shared DESC, rowid DESC LIMIT ?",
                (*short, k + len(found)),
            )
            found += [str(rowid) for rowid, _ in rows if str(rowid) not in found]
        return found[:k]


def fts5_terms(query: str) -> tuple[list[str], list[str]]:
    """(terms of three characters or more for MATCH, two-character terms for a scan)."""
    long, short = [], []
    for match in TOKEN_PATTERN.finditer(query.lower()):
        piece = match.group()
        if match.lastgroup == "word":
            (long if len(piece) >= 3 else short).append(piece)
        else:
            long += [piece[i : i + 3] for i in range(len(piece) - 2)]
            short += [piece[i : i + 2] for i in range(len(piece) - 1)]
    return list(dict.fromkeys(long)), list(dict.fromkeys(short))


def fts5_trigram_available() -> str | None:
    """None when this sqlite has FTS5 with the trigram tokenizer, else why not."""
    try:
        sqlite3.connect(":memory:").execute(
            "CREATE VIRTUAL TABLE probe USING fts5(body, tokenize='trigram')"
        )
    except sqlite3.OperationalError as error:
        return str(error)
    return None


def like_is_broken() -> bool:
    """True when LIKE '%咖啡%' on a trigram table misses a row that contains 咖啡."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE probe USING fts5(body, tokenize='trigram')")
    db.execute("INSERT INTO probe(body) VALUES ('用户喜欢喝咖啡')")
    return not db.execute("SELECT rowid FROM probe WHERE body LIKE '%咖啡%'").fetchall()


@contextmanager
def searchers(with_fts5: bool) -> Iterator[list[Searcher]]:
    with tempfile.TemporaryDirectory() as root:
        found: list[Searcher] = [IndexedStore(Path(root)), NaiveTfidf()]
        if with_fts5:
            found.append(Fts5Trigram())
        yield found


# --- Recall on the bilingual set -----------------------------------------------------------


def recall(searcher: Searcher, lines: list[dict]) -> tuple[dict[tuple[str, int], float], list]:
    """Recall@1 and @3 per language, and the queries not fully answered in the top 3.

    Recall@k is the share of a query's relevant memories found in its top k,
    averaged over the queries; a query with two relevant memories reaches at most
    0.5 at k = 1.
    """
    ids = {searcher.add(line["text"]): line["id"] for line in lines if line["kind"] == "memory"}
    shares: dict[tuple[str, int], list[float]] = {}
    missed = []
    for query in (line for line in lines if line["kind"] == "query"):
        ranked = [ids[found] for found in searcher.ids(query["text"], 3)]
        for k in (1, 3):
            share = len(set(ranked[:k]) & set(query["relevant"])) / len(query["relevant"])
            shares.setdefault((query["lang"], k), []).append(share)
        if not set(query["relevant"]) <= set(ranked):
            missed.append(f'{query["lang"]} "{query["text"]}" (wanted {query["relevant"]})')
    return {key: statistics.mean(values) for key, values in shares.items()}, missed


def print_recall(with_fts5: bool) -> None:
    lines = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    memories = sum(line["kind"] == "memory" for line in lines)
    queries = len(lines) - memories
    print(f"\nrecall on the bilingual set ({memories} memories, {queries} queries, half Chinese):")
    with searchers(with_fts5) as found:
        for searcher in found:
            result, missed = recall(searcher, lines)
            line = (
                f"  {searcher.name:<13} "
                f"en recall@1 {result[('en', 1)]:.2f} @3 {result[('en', 3)]:.2f}   "
                f"zh recall@1 {result[('zh', 1)]:.2f} @3 {result[('zh', 3)]:.2f}"
            )
            if isinstance(searcher, IndexedStore):
                worst = min(result[("en", 3)], result[("zh", 3)])
                line += f"   (target @3 >= {RECALL_TARGET} in each: "
                line += "ok)" if worst >= RECALL_TARGET else "BELOW)"
            print(line)
            for query in missed if isinstance(searcher, IndexedStore) else []:
                print(f"      missed at @3: {query}")
    if not with_fts5:
        print("  SQLite FTS5   not measured: this sqlite has no FTS5 trigram tokenizer")


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


def add_all(searcher: Searcher, texts: list[str]) -> float:
    """Milliseconds per memory added."""
    start = time.perf_counter()
    for text in texts:
        searcher.add(text)
    return (time.perf_counter() - start) / len(texts) * 1e3


def print_search_times(found: list[Searcher], queries: list[str], size: int) -> None:
    """One line of median times, English and Chinese queries apart, and the target at 10k."""
    # Queries alternate English, Chinese; the naive baseline is slow by design, so it
    # gets fewer of them at the larger sizes (at least two of each language).
    naive_count = max(4, min(len(queries), 200_000 // size))
    medians = {}
    for searcher in found:
        some = queries[:naive_count] if isinstance(searcher, NaiveTfidf) else queries
        times = search_ms(searcher, some)
        every, english, chinese = times, times[::2], times[1::2]
        medians[searcher.name] = [statistics.median(part) for part in (every, english, chinese)]
    figures = ", ".join(f"{name} {en:.2f} / {zh:.2f}" for name, (_, en, zh) in medians.items())
    print(f"  search over {size:,} (median ms, en / zh): {figures}", flush=True)
    bm25, naive = medians["BM25 index"][0], medians["naive TF-IDF"][0]
    if size == 10_000:
        ok = bm25 < SEARCH_TARGET * 1e3 and naive / bm25 >= SPEEDUP_TARGET
        print(
            f"  target at 10,000: under {SEARCH_TARGET * 1e3:.0f} ms and {SPEEDUP_TARGET}x "
            f"faster than naive: {bm25:.2f} ms, {naive / bm25:.0f}x ({'ok' if ok else 'MISSED'})"
        )


def print_speed(sizes: list[int], queries: int, with_fts5: bool) -> None:
    texts = synthetic_memories(max(sizes))
    query_texts = synthetic_queries(queries)
    print(
        f"\nspeed: synthetic memories from {len(ENGLISH_WORDS)} English and "
        f"{len(CHINESE_WORDS)} Chinese words; {queries} keyword queries, half Chinese"
    )
    print(f"  add with fsync on (as the agent runs it): {fsync_add_ms(100):.2f} ms per memory")
    with searchers(with_fts5) as found:
        indexed = found[0]
        assert isinstance(indexed, IndexedStore)
        done = 0
        for size in sizes:
            added = add_all(indexed, texts[done:size])
            for baseline in found[1:]:
                add_all(baseline, texts[done:size])
            done = size
            print(
                f"  add {size:>7,} memories: {added:.3f} ms per memory (fsync off for the bulk "
                f"load; {len(indexed.store):,} stored after dedup)"
            )
            print_search_times(found, query_texts, size)
        start = time.perf_counter()
        reopened = MemoryStore(indexed.store.root)
        print(
            f"  open a store of {len(reopened):,} memories (read the logs, build the index): "
            f"{time.perf_counter() - start:.2f} s"
        )


# --- What the agent pays: set-up per prompt, memory kept ----------------------------------


def write_memories(workdir: Path, count: int) -> None:
    """`count` synthetic memories in one daily log under `workdir`'s agent home, as an agent
    that has worked there for months leaves them (one log is written at once, not added)."""
    log = workdir / HOME / "memory" / "2026-11-30.jsonl"
    log.parent.mkdir(parents=True)
    lines = [
        jsonl.encode(
            {
                "id": f"m-20261130-{n:04d}",
                "ts": "2026-11-30T09:00:00+01:00",
                "category": "note",
                "text": text,
            }
        )
        for n, text in enumerate(synthetic_memories(count), start=1)
    ]
    log.write_bytes(b"".join(lines))


def setup_ms(workdir: Path, task: str, kept: bool) -> float:
    """Milliseconds from a prompt's start to its recalled memories: the store, then the search."""
    start = time.perf_counter()
    store = MemoryStore.of(workdir) if kept else MemoryStore(workdir / HOME, workdir=workdir)
    store.search(task, k=3)
    return (time.perf_counter() - start) * 1e3


def print_setup(count: int = 10_000) -> None:
    """The second prompt of a process: with the store it kept, and with a fresh store."""
    with tempfile.TemporaryDirectory() as root:
        workdir = Path(root).resolve()
        write_memories(workdir, count)
        first, second = synthetic_queries(2, seed=5)
        setup_ms(workdir, first, kept=True)  # the first prompt opens the store
        kept = min(setup_ms(workdir, second, kept=True) for _ in range(5))
        fresh = setup_ms(workdir, second, kept=False)
        del memory.OPEN_STORES[workdir]  # the folder is gone: let its store go too
    ok = "ok" if kept < SETUP_TARGET * 1e3 else "MISSED"
    print(
        f"  per-prompt set-up with {count:,} memories (store + recall, the second prompt): "
        f"{kept:.1f} ms with the store kept, {fresh:.0f} ms with a fresh store "
        f"(target about {SETUP_TARGET * 1e3:.0f} ms kept: {ok})"
    )


def print_index_memory(count: int, shown: int = 100_000) -> None:
    """What a store keeps in memory once open, traced by tracemalloc: all of it, and the index's
    part (what `memory.py` allocated: postings, lengths, terms), at `count` memories, scaled
    to `shown` when fewer were measured."""
    with tempfile.TemporaryDirectory() as root:
        workdir = Path(root).resolve()
        write_memories(workdir, count)
        tracemalloc.start()
        try:
            store = MemoryStore(workdir / HOME, workdir=workdir)
            snapshot = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        del store
    scale = shown / count
    kept = sum(stat.size for stat in snapshot.statistics("filename")) * scale
    index = snapshot.filter_traces([tracemalloc.Filter(True, memory.__file__)])
    index_bytes = sum(stat.size for stat in index.statistics("filename")) * scale
    measured = "" if count == shown else f"; measured at {count:,} and scaled"
    ok = "ok" if index_bytes < INDEX_TARGET else "MISSED"
    print(
        f"  index memory at {shown:,} memories: {index_bytes / 1e6:.0f} MB, "
        f"{kept / 1e6:.0f} MB with the records it searches{measured} "
        f"(target about {INDEX_TARGET / 1e6:.0f} MB: {ok})"
    )


# --- The worked example ------------------------------------------------------------------

EXAMPLE_MEMORIES = {
    "A": "Run the tests with pytest before each commit.",
    "B": "用户喜欢喝咖啡，不加糖。",
    "C": "Integration tests 很慢，用户喜欢边等边喝茶。",
}
EXAMPLE_QUERIES = ["pytest tests", "爱喝咖啡吗"]


def print_example() -> None:
    """Three memories, two queries, and every term's share of every score."""
    with tempfile.TemporaryDirectory() as root:
        store = MemoryStore(root, sync=False)
        labels = {store.add(text): label for label, text in EXAMPLE_MEMORIES.items()}
        index = store.index
        average = index.total_length / len(index.lengths)
        print("share of a term = idf x tf x (k1 + 1) / (tf + k1 x (1 - b + b x length / average))")
        print(f"with k1 = {K1}, b = {B}; idf = ln(1 + (N - n + 0.5) / (n + 0.5)), N = 3")
        for label, text in EXAMPLE_MEMORIES.items():
            tokens = tokenize(text)
            print(f"  {label}  {text}\n     {len(tokens)} tokens: {' '.join(tokens)}")
        print(f"  average length {index.total_length} / 3 = {average:.2f} tokens")
        for query in EXAMPLE_QUERIES:
            explain(store, query, labels, average)


def explain(store: MemoryStore, query: str, labels: dict[str, str], average: float) -> None:
    """Print one row per query term (n = memories holding it) and check the totals."""
    index = store.index
    terms = list(dict.fromkeys(tokenize(query)))
    print(f'\nquery "{query}"  ->  terms: {" ".join(terms)}')
    print(
        f"  {'term':<8} {'n':>2} {'idf':>6}" + "".join(f"{label:>8}" for label in labels.values())
    )
    sums = dict.fromkeys(labels, 0.0)
    for term in terms:
        postings = index.postings.get(term, {})
        weight = idf(len(postings), len(index.lengths))
        row = f"  {term:<{8 - wide(term)}} {len(postings):>2} "
        row += f"{weight:6.3f}" if postings else f"{'-':>6}"
        for memory_id in labels:
            if memory_id not in postings:
                row += f"{'-':>8}"
                continue
            share = bm25_term(weight, postings[memory_id], index.lengths[memory_id], average)
            sums[memory_id] += share
            row += f"{share:8.3f}"
        print(row)
    hits = store.search(query, k=len(labels))
    for hit in hits:
        assert hit.score == sums[hit.id], "the example must add up to what search returns"
    ranking = ", ".join(f"{labels[hit.id]} {hit.score:.3f}" for hit in hits)
    print(f"  total: {ranking}  (the scores store.search returns)")


def wide(text: str) -> int:
    """How many extra columns a term takes in a terminal: Chinese characters are two wide."""
    return sum(unicodedata.east_asian_width(char) in "WF" for char in text)


# --- Command line --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lab.bench_memory", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="1,000 memories only (for tests)")
    parser.add_argument("--example", action="store_true", help="print the worked BM25 example")
    args = parser.parse_args(argv)
    if args.example:
        print_example()
        return 0

    missing = fts5_trigram_available()
    fts5 = "FTS5 trigram: yes" if missing is None else f"FTS5 trigram: no ({missing})"
    print(
        f"python {platform.python_version()}, sqlite {sqlite3.sqlite_version} ({fts5}), "
        f"{platform.system()} {platform.machine()}"
    )
    if missing is None and like_is_broken():
        print(
            "  note: on this sqlite, LIKE '%咖啡%' on a trigram table finds nothing; "
            "the FTS5 baseline scans with instr() for two-character terms"
        )
    print_recall(with_fts5=missing is None)
    sizes = [1_000] if args.quick else [1_000, 10_000, 100_000]
    print_speed(sizes, queries=40 if args.quick else 200, with_fts5=missing is None)
    print_setup()
    print_index_memory(10_000 if args.quick else 100_000)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
