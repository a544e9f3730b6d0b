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
from pathlib import Path
from typing import Any

from .chapter4_fts5 import fts5_store
from .check import EXPLAIN, LIVE, MEASURE, Exercise, Said, Verdict, fresh_random, tool_use

USER_CAP = 500  # the cap exercise 4.2 asks for, on the file's text as the layer shows it
NOTE_AT_LEAST = 5  # tokens after a cut file's text: a note that says so (read_capped's ≈ 20)
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
    from v4_memory.agent import TOOLS_GUIDANCE
    from v4_memory.prompt import layers

    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch) / "ws"
        shutil.copytree(CHAPTER.demo_workspace, workdir)
        for name, text in files.items():
            (workdir / name).parent.mkdir(parents=True, exist_ok=True)
            (workdir / name).write_text(text, encoding="utf-8")
        model = Recorder()
        CHAPTER.run("Say hello.", model=model, workdir=workdir)
        return model.systems[0], layers(workdir, TOOLS_GUIDANCE)


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
    cut_to_the_cap = layer.cut and tokens <= USER_CAP + 3 and kept >= USER_CAP - 60
    if cut_to_the_cap and tokens - kept < NOTE_AT_LEAST:  # the file's text, nothing after it
        hint = Said(
            "say in the layer that the file was cut, and where, as read_capped's note does",
            "像 read_capped 的说明那样，在这一层里说明文件被截断了、截在哪里",
        )
        return Verdict(False, seen, hint)
    if not (cut_to_the_cap and tokens >= USER_CAP - 25):
        hint = Said(
            f"cap the file's text at {USER_CAP} tokens, as read_capped does (the heading is "
            "extra)",
            f"像 read_capped 那样把文件内容限制在 {USER_CAP} token（标题不算在内）",
        )
        return Verdict(False, seen, hint)
    return Verdict(True, seen)


EMPTY = {"type": "text", "text": ""}


def words_of(rng: random.Random, count: int) -> str:
    return " ".join(word(rng) for _ in range(count)).capitalize() + "."


def conversation(rng: random.Random) -> list[tuple[dict, dict | None]]:
    """A session made for the check: each message as written, with empty text blocks, and
    as it should load without them (None: it held only an empty block, so it is left out).
    Random words and call ids; empty blocks on both sides, before and after a tool call,
    two in one message, and two assistant messages that are nothing else: one that the
    next message would join, one at the end, after a user's, that nothing joins."""
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
