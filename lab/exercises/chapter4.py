"""The checks of chapter 4's exercises: the prompt's layers, repairs and memory search."""

from __future__ import annotations

import tempfile
from pathlib import Path

from .check import EXPLAIN, LIVE, MEASURE, Exercise, Said, Verdict, tool_use


def user_layer(words: list[str]) -> Verdict:
    from v4_memory.prompt import build_layers

    with tempfile.TemporaryDirectory() as scratch:
        (Path(scratch) / ".agent").mkdir()
        (Path(scratch) / ".agent" / "USER.md").write_text("Name: Ada. " * 400, encoding="utf-8")
        layers = build_layers(scratch)
    names = [layer.name for layer in layers]
    seen_en, seen_zh = f"the layers are {names}", f"各层是 {names}"
    if "user" not in names:
        hint = Said(
            "read .agent/USER.md with read_capped, as soul is read",
            "像读 soul 那样，用 read_capped 读 .agent/USER.md",
        )
        return Verdict(False, Said(seen_en, seen_zh), hint)
    user = layers[names.index("user")]
    seen = Said(
        seen_en + f"; a long USER.md gives a user layer of {user.tokens} tokens",
        seen_zh + f"；一份很长的 USER.md 得到 {user.tokens} token 的 user 层",
    )
    if names.index("user") != names.index("soul") + 1:
        return Verdict(
            False, seen, Said("put the user layer right after soul", "把 user 层放在 soul 之后")
        )
    if user.tokens > 500 or not user.cut:
        return Verdict(False, seen, Said("cap the layer at 500 tokens", "把这一层限制在 500 token"))
    return Verdict(True, seen)


def empty_text_repaired(words: list[str]) -> Verdict:
    from machine import jsonl
    from v4_memory.session import SessionStore

    call = tool_use("t1", "bash", {"command": "ls"})
    answer = {"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}
    messages = [
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": [{"type": "text", "text": ""}, call]},
        {"role": "user", "content": [answer]},
    ]
    with tempfile.TemporaryDirectory() as scratch:
        store = SessionStore(Path(scratch))
        with store.create() as session:
            pass
        with open(session.path, "ab") as file:
            file.write(b"".join(jsonl.encode(message) for message in messages))
        with store.open(session.id) as loaded:
            kept, repairs = loaded.messages(), loaded.repairs
    blocks = kept[1]["content"] if len(kept) > 1 else []
    empty = [b for b in blocks if b.get("type") == "text" and not b.get("text")]
    seen = Said(
        f"after loading, {len(empty)} empty text block(s) and the repairs {repairs}",
        f"加载之后还有 {len(empty)} 个空文字块，修复记录是 {repairs}",
    )
    if not empty and repairs:
        return Verdict(True, seen)
    hint = Said(
        "drop empty text blocks in mend, in llm/repair.py, and add a note to repairs",
        "在 llm/repair.py 的 mend 里丢掉空文字块，并在 repairs 里记一笔",
    )
    return Verdict(False, seen, hint)


def fts5_searcher(words: list[str]) -> Verdict:
    from lab.bench_memory import searchers

    with searchers(True) as found:
        built_in = {"IndexedStore", "NaiveTfidf", "Fts5Trigram"}
        added = [s for s in found if type(s).__name__ not in built_in]
        names = [s.name for s in found]
        if not added:
            seen = Said(f"the bench's searchers are {names}", f"基准测试的检索器是 {names}")
            return Verdict(False, seen, Said("add yours to `searchers`", "把你的加进 `searchers`"))
        mine = added[0]
        wanted = mine.add("用户喜欢喝咖啡，不加糖。")
        mine.add("Integration tests are slow.")
        hits = list(mine.ids("咖啡", 1))
    seen = Said(
        f"{mine.name} finds {hits} for 咖啡 (the memory is {wanted})",
        f"{mine.name} 为 咖啡 找到 {hits}（那条记忆是 {wanted}）",
    )
    if hits == [wanted]:
        return Verdict(True, seen)
    hint = Said(
        "index each memory as the store's own terms joined by spaces",
        "每条记忆以记忆库自己切出的词项、用空格连起来建索引",
    )
    return Verdict(False, seen, hint)


EXERCISES = {
    "4.1": Exercise(
        Said("Crash a session and watch it repaired", "弄坏一个会话，看它被修复"), unchecked=EXPLAIN
    ),
    "4.2": Exercise(Said("A new prompt layer", "新的一层提示词"), user_layer),
    "4.3": Exercise(Said("A repair rule", "一条修复规则"), empty_text_repaired),
    "4.4": Exercise(
        Said("Change the recall k and measure it", "改变召回的 k 并测量"), unchecked=MEASURE
    ),
    "4.5": Exercise(Said("Memory in SQLite FTS5", "把记忆搬进 SQLite FTS5"), fts5_searcher),
    "4.6": Exercise(Said("A long session, live", "在线跑一段长会话"), unchecked=LIVE),
}
