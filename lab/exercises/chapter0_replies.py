"""Fresh ReAct replies for chapter 0's checks, each with the step it must parse to.

A check that parses one fixed reply can be passed by a parser that knows that reply.
These replies are made anew at every check from the check's own generator: the
thought, the tool, its arguments and the way each keyword is written (bold, case,
colon, spaces, Chinese) vary, so only a parser that follows the rule reads them all.
Each reply carries what it must parse to, in the shape of the corpus's `expect`
(tests/data/react_replies.jsonl), so that one judge reads both.

Every variant made here is one that the course's parser already reads, except the one
an exercise asks the learner to add; the checks say which reply they tried.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ENGLISH = {"thought": "Thought", "action": "Action", "input": "Action Input"}
ENGLISH["final"] = "Final Answer"
CHINESE = {"thought": "思考", "action": "行动", "input": "行动输入", "final": "最终答案"}

# How models write a keyword line's start; the parser reads every one of them.
STYLES: dict[str, Callable[[str], str]] = {
    "plain": lambda word: f"{word}: ",
    "bold": lambda word: f"**{word}:** ",
    "bold, colon outside": lambda word: f"**{word}**: ",
    "lower case": lambda word: f"{word.lower()}: ",
    "upper case": lambda word: f"{word.upper()}: ",
    "full-width colon": lambda word: f"{word}：",
    "spaces around the colon": lambda word: f"{word} :  ",
    "indented": lambda word: f"  {word}: ",
}

# How an invented observation begins, for the stop-sequence check; the first two are
# cut by the shipped STOP, the last two only by a full-width entry.
INVENTED = {
    "plain": "Observation: ",
    "bold": "**Observation:** ",
    "full-width": "Observation：",
    "bold, full-width": "**Observation：** ",
}

NAMES = ["median", "mean", "top_words", "word_count", "load_config", "parse_row"]
NAMES += ["render_page", "retry_after", "slugify", "merge_totals", "read_csv", "clamp"]
FOLDERS = ["src", "app", "lib", "tools", "report", "笔记"]
EN_THOUGHTS = [
    "I'll read {file} to see what {name} does.",
    "The test of {name} fails; I want to see it fail on its own.",
    "{name} is called from {file}, so I need its signature.",
    "Before changing {name} I should list what is next to {file}.",
    "The traceback ends in {name}; {file} is where to look.",
]
ZH_THOUGHTS = [
    "我先读一下 {file}，看看 {name} 做什么。",
    "{name} 的测试失败了，我单独运行它看看。",
    "{name} 在 {file} 里被调用，我需要知道它的参数。",
    "改 {name} 之前，先看看 {file} 旁边还有什么。",
]
EN_ANSWERS = [
    "Fixed {name} in {file}; all {n} tests pass.",
    "{name} now handles the empty case; {n} tests pass.",
    "{file} defines {name}, which {n} tests cover.",
]
ZH_ANSWERS = [
    "已修复 {file} 里的 {name}，{n} 个测试全部通过。",
    "{name} 现在能处理空输入了。\n共 {n} 个测试，全部通过。",
]
# Files of chapter 1's demo workspace, where a check's replies really run.
WORKSPACE_FILES = ["README.md", "stats.py", "test_stats.py"]


@dataclass(frozen=True)
class Reply:
    """A reply a model could write, and what chapter 0's parser must make of it."""

    text: str
    expect: dict[str, Any]  # the corpus's shape: type action / final / error, and its fields


Spelling = dict[str, str]  # keyword ("thought", "action", "input", "final") -> line start


def english(rng: random.Random) -> Spelling:
    """One style for the whole reply, as a model keeps to the one it chose."""
    style = STYLES[rng.choice(list(STYLES))]
    return {key: style(word) for key, word in ENGLISH.items()}


CHINESE_STYLES = [name for name in STYLES if "case" not in name]  # no case in Chinese


def chinese(rng: random.Random, used: tuple[str, ...], style_name: str | None = None) -> Spelling:
    """Translated keywords, either colon, mixed with English ones, in one style for the
    whole reply (bold, indented, spaced: what the parser reads in English; `style_name`, or
    one drawn); one of `used` at least is Chinese."""
    chosen = {key: rng.random() < 0.7 for key in CHINESE}
    if not any(chosen[key] for key in used):
        chosen[rng.choice(used)] = True
    style = STYLES[style_name or rng.choice(CHINESE_STYLES)]
    colon = rng.choice("：:")
    return {
        key: style(CHINESE[key]).replace(":", colon) if chosen[key] else style(ENGLISH[key])
        for key in CHINESE
    }


def _fill(rng: random.Random, template: str) -> str:
    name = f"{rng.choice(NAMES)}{rng.choice(['', '_v2', '_fast', str(rng.randrange(2, 99))])}"
    file = f"{rng.choice(FOLDERS)}/{name}.py"
    return template.format(name=name, file=file, n=rng.randrange(3, 60))


def thought(rng: random.Random, zh: bool = False) -> str:
    return _fill(rng, rng.choice(ZH_THOUGHTS if zh else EN_THOUGHTS))


def answer(rng: random.Random, zh: bool = False) -> str:
    return _fill(rng, rng.choice(ZH_ANSWERS if zh else EN_ANSWERS))


def arguments(rng: random.Random, runnable: bool = False) -> tuple[str, dict[str, Any]]:
    """A tool and its arguments; `runnable` ones are harmless in chapter 1's demo workspace."""
    name = rng.choice(NAMES)
    if runnable:
        if rng.random() < 0.5:
            args: dict[str, Any] = {"path": rng.choice(WORKSPACE_FILES)}
            if rng.random() < 0.5:
                args |= {"offset": rng.randrange(1, 5), "limit": rng.randrange(1, 20)}
            return "read_file", args
        return "bash", {"command": rng.choice([f"echo {name}", "ls", f"grep -c {name} stats.py"])}
    path = f"{rng.choice(FOLDERS)}/{name}.py"
    tool = rng.choice(["bash", "read_file", "write_file", "edit_file"])
    if tool == "bash":
        command = rng.choice([f"grep -rn {name} .", f"python -m pytest -q -k {name}", "ls -la"])
        args = {"command": command} | (
            {"timeout": rng.randrange(5, 120)} if rng.random() < 0.3 else {}
        )
    elif tool == "read_file":
        args = {"path": path} | ({"offset": rng.randrange(1, 300)} if rng.random() < 0.4 else {})
    elif tool == "write_file":
        args = {"path": path, "content": f"def {name}(x):\n    return x * {rng.randrange(2, 9)}\n"}
    else:
        n = rng.randrange(1, 9)
        args = {"path": path, "old_text": f"return x + {n}", "new_text": f"return x - {n}"}
    return tool, args


def as_json(rng: random.Random, args: dict[str, Any]) -> str:
    """The arguments as a model writes them: one line, Chinese escaped or not."""
    return json.dumps(args, ensure_ascii=rng.random() < 0.5)


def _with_thought(
    rng: random.Random, spelling: Spelling, lines: list[str], zh: bool
) -> tuple[list[str], str]:
    """The reply's lines with its thought as a Thought line, as prose before, or none."""
    said = thought(rng, zh)
    where = rng.choice(["keyword", "keyword", "prose", "none"])
    if where == "keyword":
        return [spelling["thought"] + said, *lines], said
    if where == "prose":
        return [said, "", *lines], said
    return lines, ""


def action(
    rng: random.Random,
    spelling: Spelling,
    *,
    tool: str | None = None,
    args: dict[str, Any] | None = None,
    written: str | None = None,
    zh: bool = False,
    runnable: bool = False,
) -> Reply:
    """An action reply; `written` is the Action Input as it appears (default: its JSON)."""
    if tool is None or args is None:
        tool, args = arguments(rng, runnable)
    written = as_json(rng, args) if written is None else written
    lines = [spelling["action"] + tool, spelling["input"] + written]
    lines, said = _with_thought(rng, spelling, lines, zh)
    expect = {"type": "action", "tool": tool, "args": args, "thought": said}
    return Reply("\n".join(lines), expect)


def final(rng: random.Random, spelling: Spelling, zh: bool = False) -> Reply:
    said = answer(rng, zh)
    lines, reason = _with_thought(rng, spelling, [spelling["final"] + said], zh)
    return Reply("\n".join(lines), {"type": "final", "answer": said, "thought": reason})


def error(text: str) -> Reply:
    """A reply that must stay a format error."""
    return Reply(text, {"type": "error", "message_contains": []})


def invented_observation(rng: random.Random, how: str) -> str:
    """What a model writes on past its Action Input when nothing stops it."""
    result = rng.choice(
        [f"{rng.randrange(2, 40)} passed in 0.0{rng.randrange(1, 9)}s", "FAILED (failures=1)"]
        + [f"{rng.choice(NAMES)}.py  README.md  tests", "OK"]
    )
    tail = f"\n{INVENTED[how]}{result}"
    if rng.random() < 0.5:
        tail += f"\nThought: {thought(rng)}\nFinal Answer: {answer(rng)}"
    return tail


def text_reply(text: str, stop_reason: str = "end_turn") -> dict[str, Any]:
    """The reply line of a cassette holding this text."""
    return {"content": [{"type": "text", "text": text}], "stop_reason": stop_reason}
