"""The checks of chapter 4's exercises: the prompt's layers, repairs and memory search.

Each check makes its cases afresh at every run, so no answer can be fitted to them.  The
prompt check is `chapter4_layers.py`'s, the memory store's `chapter4_fts5.py`'s; the repair
check, here, writes sessions with empty text blocks in new places, loads them, appends them
to a running session and crashes one, and compares each history with the one expected.
"""

from __future__ import annotations

import random
import re
import tempfile
from pathlib import Path
from typing import Any

from .chapter4_fts5 import fts5_store
from .chapter4_layers import user_layer, word
from .check import EXPLAIN, LIVE, MEASURE, Exercise, Said, Verdict, fresh_random, tool_use

EMPTY = {"type": "text", "text": ""}


def words_of(rng: random.Random, count: int) -> str:
    return " ".join(word(rng) for _ in range(count)).capitalize() + "."


def conversation(rng: random.Random) -> list[tuple[dict, dict | None]]:
    """A session made for the check: each message as written, with empty text blocks, and
    as it should load without them (None: it held only an empty block, so it is left out).
    Random words and call ids; empty blocks on both sides, before and after a tool call,
    two in one message, and two assistant messages that are nothing else: one that the
    next message would join, one at the end, after a user's, that nothing joins; and a
    reply of one short word, which is no empty block."""
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
    short = f"{word(rng).capitalize()}."  # a reply of one word is a reply: it is kept
    pairs.append(message("assistant", [{"type": "text", "text": short}], rng, 1))
    pairs.append(({"role": "user", "content": words_of(rng, 4)},) * 2)
    pairs.append(({"role": "assistant", "content": [EMPTY]}, None))
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
