"""The checks of chapter 4's exercises: the prompt's layers, repairs and memory search.

Both checks make their cases afresh at every run, so no answer can be fitted to them.
The prompt check runs the chapter on a copy of its demo workspace holding a USER.md of a
new size, and reads the system prompt the model was sent; the repair check writes
sessions with empty text blocks in new places, loads them, appends them to a running
session and crashes one, and compares each history with the one expected without them.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .check import EXPLAIN, LIVE, MEASURE, Exercise, Said, Verdict, fresh_random, tool_use

USER_CAP = 500  # the cap exercise 4.2 asks for, on the file's text as the layer shows it
SYLLABLES = ["ka", "lo", "mi", "ren", "ta", "vo", "zu", "shi", "an", "del", "per", "qua"]
ROLES = ["backend developer", "data engineer", "student", "maintainer", "SRE", "designer"]
LANGUAGES = ["Python", "Rust", "Go", "中文", "English", "français", "Deutsch", "TypeScript"]


def word(rng: random.Random) -> str:
    """A made-up word: no answer can hold it in advance."""
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))


def profile(rng: random.Random, tokens: int) -> str:
    """A USER.md of about `tokens` tokens: who the person is, then short lines of notes."""
    from llm.tokens import estimate_text

    name = f"{word(rng).title()} {word(rng).title()}"
    lines = [
        f"Name: {name}",
        f"Role: {rng.choice(ROLES)} at {word(rng).title()}",
        f"Languages: {', '.join(rng.sample(LANGUAGES, 3))}",
    ]
    while estimate_text("\n".join(lines)) < tokens:
        lines.append(f"- {word(rng)} {word(rng)} {word(rng)} {rng.randint(10, 9999)}")
    return "\n".join(lines) + "\n"


class Recorder:
    """A model that answers "Done." at once and keeps the system prompt it was sent."""

    def __init__(self) -> None:
        from llm.cassette import ReplayModel
        from llm.types import Reply

        finish = Reply([{"type": "text", "text": "Done."}], "end_turn")
        self.replay, self.name, self.systems = ReplayModel([finish]), "replay:check", []

    def complete(self, system: str, messages: list, **options: Any) -> Any:
        self.systems.append(system)
        return self.replay.complete(system, messages, **options)


def prompt_with(files: dict[str, str]) -> tuple[str, list]:
    """The system prompt chapter 4's run sends from its demo workspace with `files` added,
    and the layers the chapter builds there (what `/prompt` shows)."""
    from v4_memory.__main__ import CHAPTER
    from v4_memory.agent import layers

    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch) / "ws"
        shutil.copytree(CHAPTER.demo_workspace, workdir)
        for name, text in files.items():
            (workdir / name).parent.mkdir(parents=True, exist_ok=True)
            (workdir / name).write_text(text, encoding="utf-8")
        model = Recorder()
        CHAPTER.run("Say hello.", model=model, workdir=workdir)
        return model.systems[0], layers(workdir)


def user_layer(words: list[str]) -> Verdict:
    """A USER.md of a size made for this run, once within the cap and once over it: the
    layer must show the file's own text, whole or cut to the cap, right after soul."""
    from llm.tokens import estimate_text

    rng = fresh_random()
    soul = f"Answer like {word(rng)} would."
    short, long = profile(rng, rng.randint(40, 300)), profile(rng, rng.randint(800, 3000))
    size = {text: f"{estimate_text(text.strip()):,}" for text in (short, long)}
    for text in (short, long):
        case = Said(
            f"a USER.md of {size[text]} tokens starting {text[:24]!r}",
            f"一份 {size[text]} token、开头是 {text[:24]!r} 的 USER.md",
        )
        files = {".agent/SOUL.md": soul, ".agent/USER.md": text}
        verdict = user_layer_on(text, *prompt_with(files), case)
        if not verdict.done:
            return verdict
    _, built = prompt_with({".agent/SOUL.md": soul})
    left = [layer for layer in built if layer.name == "user" and layer.text]
    if left:
        seen = Said(
            f"without a USER.md the user layer still says {left[0].text[:60]!r}",
            f"没有 USER.md 时 user 层仍然是 {left[0].text[:60]!r}",
        )
        hint = Said("read the layer from the file, as soul is", "像 soul 那样从文件读这一层")
        return Verdict(False, seen, hint)
    seen = Said(
        f"a USER.md of {size[short]} tokens is shown whole, one of {size[long]} is cut to "
        "the cap, each right after soul, and none leaves the layer empty",
        f"{size[short]} token 的 USER.md 完整显示，{size[long]} token 的按上限截断，"
        "都紧跟在 soul 之后；没有这个文件时这一层为空",
    )
    return Verdict(True, seen)


def user_layer_on(text: str, sent: str, built: list, case: Said) -> Verdict:
    """The user layer the chapter built and sent for one USER.md, judged against the file."""
    from llm.tokens import estimate_text

    names = [layer.name for layer in built]
    seen = Said(f"{case.en}: the layers are {names}", f"{case.zh}：各层是 {names}")
    if "user" not in names:
        hint = Said(
            "read .agent/USER.md with read_capped, as soul is read",
            "像读 soul 那样，用 read_capped 读 .agent/USER.md",
        )
        return Verdict(False, seen, hint)
    if names.index("user") != names.index("soul") + 1:
        return Verdict(
            False, seen, Said("put the user layer right after soul", "把 user 层放在 soul 之后")
        )
    layer, soul = built[names.index("user")], built[names.index("soul")]
    file = text.strip()
    start = layer.text.find(file[:20])
    if start < 0:
        seen = Said(
            f"{case.en}: the user layer does not show it: {layer.text[:80]!r}",
            f"{case.zh}：user 层里没有它：{layer.text[:80]!r}",
        )
        hint = Said("the layer's text is the file's text", "这一层的内容就是文件的内容")
        return Verdict(False, seen, hint)
    if layer.text not in sent or sent.find(layer.text) < sent.find(soul.text):
        seen = Said(
            f"{case.en}: the prompt the run sent has no user layer after soul",
            f"{case.zh}：运行发出的提示词里 soul 之后没有 user 层",
        )
        hint = Said("build_layers is what the loop sends", "循环发送的就是 build_layers 的结果")
        return Verdict(False, seen, hint)
    part = layer.text[start:]  # the file's text as shown, and the cut note: the cap's share
    shown = len(os.path.commonprefix([part, file]))
    tokens, kept = estimate_text(part), estimate_text(file[:shown])
    seen = Said(
        f"{case.en}: the layer shows {kept:,} tokens of it, {tokens:,} with the cut note"
        + (", marked cut" if layer.cut else ""),
        f"{case.zh}：这一层显示了其中 {kept:,} token，连同截断说明 {tokens:,} token"
        + ("，标记为已截断" if layer.cut else ""),
    )
    if estimate_text(file) <= USER_CAP:
        if file in part and not layer.cut:
            return Verdict(True, seen)
        hint = Said("a file within the cap is shown whole", "没超过上限的文件要完整显示")
        return Verdict(False, seen, hint)
    # A cut ends at a line's end, and the note takes its share: the cap, within a line.
    if layer.cut and USER_CAP - 25 <= tokens <= USER_CAP + 3 and kept >= USER_CAP - 60:
        return Verdict(True, seen)
    hint = Said(
        f"cap the file's text at {USER_CAP} tokens, as read_capped does (the heading is extra)",
        f"像 read_capped 那样把文件内容限制在 {USER_CAP} token（标题不算在内）",
    )
    return Verdict(False, seen, hint)


EMPTY = {"type": "text", "text": ""}


def words_of(rng: random.Random, count: int) -> str:
    return " ".join(word(rng) for _ in range(count)).capitalize() + "."


def conversation(rng: random.Random) -> list[tuple[dict, dict | None]]:
    """A session made for the check: each message as written, with empty text blocks, and
    as it should load without them (None: it held only an empty block, so it is left out).
    Random words and call ids; empty blocks on both sides, before and after a tool call,
    two in one message, and one assistant message that is nothing else."""
    pairs: list[tuple[dict, dict | None]] = [({"role": "user", "content": words_of(rng, 6)},) * 2]
    turns = rng.randint(2, 4)
    for turn in range(turns):
        ids = [f"toolu_{rng.randrange(16**8):08x}" for _ in range(rng.randint(1, 2))]
        said = [{"type": "text", "text": words_of(rng, 5)}] if rng.random() < 0.7 else []
        asked = said + [tool_use(i, "bash", {"command": f"ls {word(rng)}"}) for i in ids]
        empties = 1 if turn else 2  # the first has two, one after its first call
        pairs.append(message("assistant", asked, rng, empties, after=len(said) + 1))
        answers = [
            {"type": "tool_result", "tool_use_id": i, "content": words_of(rng, 3)} for i in ids
        ]
        if rng.random() < 0.5:
            answers.append({"type": "text", "text": words_of(rng, 4)})
        pairs.append(message("user", answers, rng, 1 if turn == turns - 1 else rng.randint(0, 1)))
        if turn == 0:
            pairs.append(({"role": "assistant", "content": [EMPTY]}, None))
    pairs.append(message("assistant", [{"type": "text", "text": words_of(rng, 7)}], rng, 1))
    return pairs


def message(
    role: str, kept: list[dict], rng: random.Random, empties: int, after: int = 0
) -> tuple[dict, dict]:
    """A message with `empties` empty text blocks among `kept`, the first at `after` or
    later (at random), and the same message without them."""
    written = list(kept)
    for _ in range(empties):
        written.insert(rng.randint(min(after, len(written)), len(written)), EMPTY)
        after = 0
    return {"role": role, "content": written}, {"role": role, "content": list(kept)}


def session_file(root: Path, lines: list[bytes]) -> tuple[Any, str]:
    """A session as a crash or an older program left it, byte for byte, and its store: in
    one folder always the same session, so that the notes of two loads name one file."""
    from v4_memory.session import SessionStore

    store = SessionStore(root, sync=False)
    if latest := store.latest():
        session_id = latest.id
    else:
        with store.create() as session:
            session_id = session.id
    path = store.root / f"{session_id}.jsonl"
    header = path.read_bytes().splitlines(keepends=True)[0]
    path.write_bytes(header + b"".join(lines))
    return store, session_id


def loaded(root: Path, lines: list[bytes]) -> tuple[list[dict], list[str]]:
    """What the learner's chapter loads from these lines: the history and its repairs."""
    store, session_id = session_file(root, lines)
    with store.open(session_id) as session:
        return session.messages(), list(session.repairs)


def naming(notes: list[str], number: int) -> list[str]:
    return [note for note in notes if re.search(rf"\bmessage {number}\b", note)]


def empty_text_repaired(words: list[str]) -> Verdict:
    """Sessions made for this run, with empty text blocks anywhere: loaded, appended, and
    crashed, each must give the history without them, every other block kept, and a note
    naming each message mended."""
    from machine import jsonl

    pairs = conversation(fresh_random())
    dirty = [written for written, _ in pairs]
    expected = [clean for _, clean in pairs if clean is not None]
    mended = [n for n, m in enumerate(dirty, start=1) if EMPTY in content_of(m)]
    blanks = sum(content_of(m).count(EMPTY) for m in dirty)
    case = Said(
        f"a session of {len(dirty)} messages with {blanks} empty text blocks in messages {mended}",
        f"一个 {len(dirty)} 条消息的会话，第 {mended} 条消息里共有 {blanks} 个空文字块",
    )
    hint = Said(
        "drop empty text blocks in mend, in llm/repair.py, with a note naming the message",
        "在 llm/repair.py 的 mend 里丢掉空文字块，并记一笔写明是第几条消息",
    )
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        history, repairs = loaded(root / "sound", [jsonl.encode(m) for m in dirty])
        if problem := difference(history, expected):
            return Verdict(
                False,
                Said(f"{case.en}, loaded: {problem.en}", f"{case.zh}，加载后：{problem.zh}"),
                hint,
            )
        unnoted = [n for n in mended if not naming(repairs, n)]
        if unnoted or len(repairs) != sum(len(naming(repairs, n)) for n in mended):
            seen = Said(
                f"{case.en}, loaded: the right history, and the repairs {repairs}",
                f"{case.zh}，加载后：历史正确，修复记录是 {repairs}",
            )
            return Verdict(False, seen, hint)
        store, session_id = session_file(root / "running", [])
        with store.open(session_id) as session:
            for each in dirty:
                session.append(each)
            running = session.messages()
        with store.open(session_id) as session:
            reloaded = session.messages()
        if problem := difference(running, expected) or difference(reloaded, running):
            seen = Said(
                f"{case.en}, appended to a running session: {problem.en}",
                f"{case.zh}，追加到运行中的会话：{problem.zh}",
            )
            return Verdict(False, seen, hint)
        verdict = crashed(root, pairs, case)
    return verdict or Verdict(
        True,
        Said(
            f"{case.en}: loaded, appended and crashed, each is mended",
            f"{case.zh}：加载、追加、崩溃后都修好了",
        ),
    )


def difference(got: list[dict], expected: list[dict]) -> Said | None:
    """How a loaded history differs from the one expected, in a few words, or None."""
    if got == expected:
        return None
    left = sum(blocks.count(EMPTY) for blocks in map(content_of, got))
    kept = [block for blocks in map(content_of, got) for block in blocks]
    lost = [b for blocks in map(content_of, expected) for b in blocks if b not in kept]
    if left or lost:
        return Said(
            f"{left} empty text block(s) left, {len(lost)} other block(s) lost",
            f"还剩 {left} 个空文字块，丢了 {len(lost)} 个别的块",
        )
    at = next(
        (n for n, (a, b) in enumerate(zip(got, expected, strict=False)) if a != b), len(expected)
    )
    return Said(
        f"{len(got)} messages where {len(expected)} were expected, the first different at {at + 1}",
        f"得到 {len(got)} 条消息，应为 {len(expected)} 条，第一处不同在第 {at + 1} 条",
    )


def content_of(message: dict) -> list[dict]:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def crashed(root: Path, pairs: list[tuple[dict, dict | None]], case: Said) -> Verdict | None:
    """The same session cut by a crash after its last tool call, the results' line torn:
    loaded as it is loaded without the empty blocks, with every repair of that load kept
    and one more for each message mended.  None when it is."""
    from machine import jsonl

    last_call = max(
        n
        for n, (m, _) in enumerate(pairs)
        if m["role"] == "assistant" and any(b["type"] == "tool_use" for b in m["content"])
    )
    torn = jsonl.encode(pairs[last_call + 1][0])[:30]
    dirty = [jsonl.encode(written) for written, _ in pairs[: last_call + 1]]
    clean = [
        jsonl.encode(kept or {"role": "assistant", "content": []})
        for _, kept in pairs[: last_call + 1]
    ]
    history, repairs = loaded(root / "crashed", [*dirty, torn])
    expected, expected_repairs = loaded(root / "crashed", [*clean, torn])
    mended = [n for n, (m, _) in enumerate(pairs[: last_call + 1], 1) if EMPTY in content_of(m)]
    gone = [n for n, (_, kept) in enumerate(pairs[: last_call + 1], 1) if kept is None]
    kept_notes = [note for note in expected_repairs if not any(naming([note], n) for n in gone)]
    noted = all(set(naming(repairs, n)) - set(expected_repairs) for n in mended)
    crash = Said(
        f"{case.en}, cut after message {last_call + 1} and its results torn",
        f"{case.zh}，在第 {last_call + 1} 条消息之后中断、结果那一行写了一半",
    )
    if problem := difference(history, expected):
        return Verdict(
            False,
            Said(f"{crash.en}: {problem.en}", f"{crash.zh}：{problem.zh}"),
            Said(
                "mend's other rules still apply after yours",
                "你的规则之后，mend 的其他规则照样适用",
            ),
        )
    if not noted or any(note not in repairs for note in kept_notes):
        seen = Said(
            f"{crash.en}: the repairs are {repairs}, where {expected_repairs} and a note for "
            f"each of {mended} were expected",
            f"{crash.zh}：修复记录是 {repairs}，应为 {expected_repairs}，外加第 {mended} "
            "条消息各一笔",
        )
        return Verdict(False, seen, Said("keep every other note", "其他修复记录都要保留"))
    return None


FTS5_CHILD = """
import json, sys
from lab.memory_searchers import Fts5Store
job = json.load(sys.stdin)
store = Fts5Store(job["path"])
if job["queries"]:
    print(json.dumps([store.ids(query, 3) for query in job["queries"]]))
else:
    ids = [store.add(text) for text in job["add"][: job["first"]]]
    for number in job["forget"]:
        store.forget(ids[number])
    ids += [store.add(text) for text in job["add"][job["first"] :]]
    print(json.dumps(ids))
"""  # one process adds, forgets, adds more and ends without closing anything; another searches
CONSONANTS, VOWELS = "bdfgklmnprtvz", "aeiou"


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
    three as long.  A Chinese query is a new pair of characters: one memory holds the pair,
    and another as long the two characters apart or, every other query, the pair once where
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
        queries.append((f"{a} {b}", found))
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
    import json
    import subprocess
    import sys

    from .check import REPO

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
    import sqlite3

    seed = int(words[0]) if words and words[0].isdigit() else fresh_random().randrange(10**6)
    case = fts5_case(random.Random(seed))
    number = Said(f"case {seed}", f"第 {seed} 号用例")
    with tempfile.TemporaryDirectory() as scratch:
        path = str(Path(scratch) / "memories.db")
        job = {"path": path, "add": case.memories, "first": case.first, "forget": case.forget}
        ids, error = in_child(job | {"queries": []})
        if not error:
            found, error = in_child({"path": path, "queries": [q for q, _ in case.relevant]})
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
        db = sqlite3.connect(path)
        try:
            tables = " ".join(sql or "" for (sql,) in db.execute("SELECT sql FROM sqlite_master"))
        except sqlite3.DatabaseError:
            tables = ""
        finally:
            db.close()
    added, gone, asked = len(case.memories), len(case.forget), len(case.relevant)
    summary = Said(
        f"{number.en}: {added} new memories added by one process, {gone} of them forgotten "
        f"on the way; {asked} queries asked by another",
        f"{number.zh}：一个进程加入 {added} 条新记忆，中途遗忘其中 {gone} 条；"
        f"另一个进程查询 {asked} 次",
    )
    return fts5_verdict(summary, tables, case, ids, found)


def fts5_verdict(
    summary: Said, tables: str, case: Fts5Case, ids: list[str], found: list[list[str]]
) -> Verdict:
    """What the second process found, against what the case knows it must find."""
    memories, asked = case.memories, list(zip(case.relevant, found, strict=True))
    commit = Said(
        "connect to the file at path and commit each change (`with self.db:`)",
        "连接 path 这个文件，并提交每一次改动（`with self.db:`）",
    )
    if "fts5" not in tables.lower():
        seen = Said(
            f"{summary.en}; the file holds no FTS5 table", f"{summary.zh}；文件里没有 FTS5 表"
        )
        hint = Said(
            "keep the memories in an FTS5 table in the SQLite file at path",
            "把记忆存在 path 这个 SQLite 文件里的一张 FTS5 表里",
        )
        return Verdict(False, seen, hint)
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
    seen = Said(
        f"{summary.en}: each query found its memory first, and no forgotten one came back",
        f"{summary.zh}：每个查询都把它的那条记忆排在第一，遗忘的记忆一条也没有回来",
    )
    return Verdict(True, seen)


EXERCISES = {
    "4.1": Exercise(
        Said("Crash a session and watch it repaired", "弄坏一个会话，看它被修复"), unchecked=EXPLAIN
    ),
    "4.2": Exercise(Said("A new prompt layer", "新的一层提示词"), user_layer),
    "4.3": Exercise(Said("A repair rule", "一条修复规则"), empty_text_repaired),
    "4.4": Exercise(
        Said("Change the recall k and measure it", "改变召回的 k 并测量"), unchecked=MEASURE
    ),
    "4.5": Exercise(Said("Memory in SQLite FTS5", "把记忆搬进 SQLite FTS5"), fts5_store),
    "4.6": Exercise(Said("A long session, live", "在线跑一段长会话"), unchecked=LIVE),
}
