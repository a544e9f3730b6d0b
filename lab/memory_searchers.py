"""What chapter 4's memory benchmark measures side by side: the searchers, and the memories.

    from lab.memory_searchers import searchers, synthetic_memories, synthetic_queries

Every searcher is given the same memories and the same queries, and each ranks by BM25
over the same terms, those of the store's `tokenize`, unless it says otherwise:

* "BM25 index", the chapter's `MemoryStore`;
* "SQLite FTS5", the standard library's full-text index, given the store's terms
  (`Fts5Terms`): the peer a real project would move to, at its documented best;
* "naive TF-IDF", a first version with no index, there to show what the index buys;
* "FTS5 trigram", FTS5 on the raw text with its `trigram` tokenizer, a second row
  that shows what a different input does, not the comparison itself.

The synthetic memories are sentences of words drawn (seeded, Zipf-like: a few words
common, most rare) from an English and a Chinese word list; half are in each language.
"""

from __future__ import annotations

import heapq
import math
import random
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from v4_memory.memory import TOKEN_PATTERN, MemoryStore, tokenize

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


# --- The searchers -------------------------------------------------------------------------


class Searcher(Protocol):
    name: str

    def add(self, text: str) -> str: ...

    def loaded(self) -> None: ...

    def ids(self, query: str, k: int) -> list[str]: ...


class IndexedStore:
    """The chapter's `MemoryStore` (fsync off: the bulk load is not what is measured)."""

    name = "BM25 index"

    def __init__(self, root: Path) -> None:
        self.store = MemoryStore(root, sync=False)

    def add(self, text: str) -> str:
        return self.store.add(text)

    def loaded(self) -> None:
        """Nothing to do after a bulk load: every `add` is in the index at once."""

    def ids(self, query: str, k: int) -> list[str]:
        return [hit.id for hit in self.store.search(query, k)]


class Fts5Terms:
    """SQLite FTS5 given the store's own terms, ranked by FTS5's bm25(), in memory.

    Each memory is indexed as its `tokenize` terms joined by spaces, and a query is its
    distinct terms joined by OR, as the store looks each one up once.  The `ascii`
    tokenizer splits only at ASCII spaces and punctuation and folds only ASCII case, so
    every term of the store (letters, digits or CJK characters, lower-cased already)
    is one FTS5 term, unchanged; `tests/lab/test_bench_memory.py` compares the two
    vocabularies.  bm25() has the store's k1 (1.2) and b (0.75); its idf is the textbook
    one, without the store's `1 +`.  Ties go to the newer memory, as in the store.  After
    a bulk load (one transaction), `loaded` commits and runs FTS5's `optimize`, which its
    documentation gives for merging the index into one b-tree for faster queries.
    """

    name = "SQLite FTS5"
    TABLE = "memories USING fts5(text UNINDEXED, terms, tokenize='ascii')"

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute(f"CREATE VIRTUAL TABLE {self.TABLE}")

    def add(self, text: str) -> str:
        terms = " ".join(tokenize(text))
        row = self.db.execute("INSERT INTO memories(text, terms) VALUES (?, ?)", (text, terms))
        return str(row.lastrowid)

    def loaded(self) -> None:
        self.db.execute("INSERT INTO memories(memories) VALUES ('optimize')")
        self.db.commit()

    def ids(self, query: str, k: int) -> list[str]:
        terms = dict.fromkeys(tokenize(query))
        if not terms:
            return []
        match = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
        rows = self.db.execute(
            "SELECT rowid FROM memories WHERE memories MATCH ? ORDER BY rank, rowid DESC LIMIT ?",
            (match, k),
        )
        return [str(rowid) for (rowid,) in rows]


class NaiveTfidf:
    """A first version: no index; every query tokenizes and scores every memory again."""

    name = "naive TF-IDF"

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def add(self, text: str) -> str:
        memory_id = str(len(self.texts))
        self.texts[memory_id] = text
        return memory_id

    def loaded(self) -> None:
        """Nothing to prepare: this is the version that prepares nothing."""

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


class Fts5Trigram(Fts5Terms):
    """The second row: FTS5 on the raw text with the `trigram` tokenizer, so its input is
    not the store's terms.  It shows what that choice costs, and is not the comparison.

    A trigram index finds only strings of three characters or more, and most
    Chinese words are two.  So the query is split like the store's tokenizer
    splits it: English words and three-character windows of Chinese runs go to
    MATCH; two-character pieces (a Chinese run's neighbouring pairs, and English
    words such as `uv`) are looked for with instr(), a scan of every row, and fill
    the places MATCH leaves empty, ranked by how many of them a memory contains.
    instr() and not LIKE: on some SQLite versions a LIKE pattern of two Chinese
    characters on a trigram table returns no rows at all (`like_is_broken`).
    """

    name = "FTS5 trigram"
    TABLE = "memories USING fts5(body, tokenize='trigram')"

    def add(self, text: str) -> str:
        return str(self.db.execute("INSERT INTO memories(body) VALUES (?)", (text,)).lastrowid)

    def ids(self, query: str, k: int) -> list[str]:
        long, short = trigram_terms(query)
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


def trigram_terms(query: str) -> tuple[list[str], list[str]]:
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


def fts5_missing(searcher: type[Fts5Terms] = Fts5Terms) -> str | None:
    """None when this sqlite can make the searcher's FTS5 table, else why not."""
    try:
        sqlite3.connect(":memory:").execute(f"CREATE VIRTUAL TABLE {searcher.TABLE}")
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
def searchers() -> Iterator[list[Searcher]]:
    """One of each searcher this Python's sqlite can make, the store first, in a scratch folder."""
    with tempfile.TemporaryDirectory() as root:
        found: list[Searcher] = [IndexedStore(Path(root))]
        found += [Fts5Terms()] if fts5_missing(Fts5Terms) is None else []
        found.append(NaiveTfidf())
        found += [Fts5Trigram()] if fts5_missing(Fts5Trigram) is None else []
        yield found
