"""The check of chapter 4's exercise 2: a user layer in the system prompt.

The check runs the chapter on a copy of its demo workspace holding a USER.md of a size
made for that run, once within the cap and once over it, and reads the system prompt the
model was sent: the layer must show the file's text, whole or cut to the cap and marked,
right after soul, with every other layer kept.  Then it tries the file as a clone or a
person may leave it: changed between two prompts, a link to a key file outside the work
directory, bytes that are not UTF-8.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

from .check import Said, Verdict, fresh_random

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
    rules, fact = f"Build with {word(rng)}.", f"- The {word(rng)} service runs on port 80."
    short, long = profile(rng, rng.randint(40, 300)), profile(rng, rng.randint(800, 3000))
    size = {text: f"{estimate_text(text.strip()):,}" for text in (short, long)}
    for text in (short, long):
        case = Said(
            f"a USER.md of {size[text]} tokens starting {text[:24]!r}",
            f"一份 {size[text]} token、开头是 {text[:24]!r} 的 USER.md",
        )
        files = {".agent/SOUL.md": soul, ".agent/USER.md": text}
        files |= {"AGENTS.md": rules, ".agent/MEMORY.md": fact}
        sent, built = prompt_with(files)
        verdict = user_layer_on(text, sent, built, case)
        if verdict.done:
            verdict = others_kept(sent, built, case, files)
        if not verdict.done:
            return verdict
    problem = user_file_hazards(rng)
    if problem:
        return problem
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


LAYERS = ["identity", "soul", "user", "tools", "skills", "bootstrap", "channel", "memory"]


def others_kept(sent: str, built: list, case: Said, files: dict[str, str]) -> Verdict:
    """Every other layer still there, in its place, and the project's files still in the
    prompt sent: a user layer is one more, not one instead of any."""
    names = [layer.name for layer in built if layer.text]
    lost = [f for f in ("AGENTS.md", ".agent/MEMORY.md") if files[f].strip() not in sent]
    if names == LAYERS and not lost:
        return Verdict(True, Said("", ""))
    seen = Said(
        f"{case.en}: the layers with text are {names}"
        + f", and the prompt lacks {lost}" * bool(lost),
        f"{case.zh}：有内容的各层是 {names}" + f"，提示词里没有 {lost}" * bool(lost),
    )
    hint = Said(
        f"add the user layer and keep every other one, in this order: {', '.join(LAYERS)}",
        f"加上 user 层，其余各层都保留，顺序是：{', '.join(LAYERS)}",
    )
    return Verdict(False, seen, hint)


def user_file_hazards(rng: random.Random) -> Verdict | None:
    """USER.md as a clone may hold it, or a person edits it: changed between two prompts (the
    second must show the change), a link to a file outside the work directory (its text
    must never reach the prompt), and bytes that are not UTF-8 (a note, not a crash)."""
    from v4_memory.__main__ import CHAPTER
    from v4_memory.agent import TOOLS_GUIDANCE
    from v4_memory.prompt import assemble, layers

    with tempfile.TemporaryDirectory() as scratch:
        workdir, secret = Path(scratch) / "ws", f"sk-{word(rng)}-{rng.randint(1000, 9999)}"
        shutil.copytree(CHAPTER.demo_workspace, workdir)
        (Path(scratch) / "keys.txt").write_text(f"API_KEY={secret}\n", encoding="utf-8")
        user = workdir / ".agent" / "USER.md"
        first, second = profile(rng, 60), profile(rng, 60)
        user.write_text(first, encoding="utf-8")
        layers(workdir, TOOLS_GUIDANCE)
        user.write_text(second, encoding="utf-8")
        if second.strip() not in assemble(layers(workdir, TOOLS_GUIDANCE)):
            seen = Said(
                "a USER.md changed after one prompt: the next prompt does not show the change",
                "USER.md 在一次提示词之后改了：下一次的提示词里没有这处改动",
            )
            hint = Said(
                "read the file afresh for every prompt, as soul is",
                "像 soul 那样，每次都重新读文件",
            )
            return Verdict(False, seen, hint)
        user.unlink()
        try:
            user.symlink_to(Path(scratch) / "keys.txt")
        except OSError:  # a system without links for this user: nothing to try
            pass
        else:
            if secret in assemble(layers(workdir, TOOLS_GUIDANCE)):
                seen = Said(
                    "a USER.md that is a link to a key file outside the work directory: the "
                    "key is in the prompt",
                    "USER.md 是指向工作目录外一个密钥文件的链接：密钥进了提示词",
                )
                hint = Said(
                    "read .agent/USER.md with read_capped, which keeps to chapter 1's path rule",
                    "用 read_capped 读 .agent/USER.md，它遵守第 1 章的路径规则",
                )
                return Verdict(False, seen, hint)
            user.unlink()
        user.write_bytes(f"Name: {word(rng).title()} Zoë\n".encode("latin-1"))
        try:
            assemble(layers(workdir, TOOLS_GUIDANCE))
        except Exception as error:  # noqa: BLE001 - whatever the learner's reading raises
            seen = Said(
                f"a USER.md that is not UTF-8 stops the prompt: {error!r}",
                f"一份不是 UTF-8 的 USER.md 让提示词出错：{error!r}",
            )
            hint = Said(
                "read it with read_capped, which leaves a note instead",
                "用 read_capped 读它，它会留一条说明，而不是出错",
            )
            return Verdict(False, seen, hint)
    return None


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
            f"cap the file's text at {USER_CAP} tokens, as read_capped does (the heading is extra)",
            f"像 read_capped 那样把文件内容限制在 {USER_CAP} token（标题不算在内）",
        )
        return Verdict(False, seen, hint)
    return Verdict(True, seen)
