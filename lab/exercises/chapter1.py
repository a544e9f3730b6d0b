"""The checks of chapter 1's exercises: the tool loop, its tools and its cassettes.

Each check makes its case fresh (`fresh_random`): a cassette of another length, folders
with other names, other numbers for the commands to print. So an answer written for one
case (a hard-coded listing, a line found by guessing) fails the next one.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import shutil
import tempfile
import traceback
from pathlib import Path
from random import Random
from typing import Any

from llm.cassette import CassetteError, ReplayModel, read_cassette
from llm.wrapper import Wrapper

from .chapter1_calls import calls_at_once
from .check import (
    EXPLAIN,
    FINISH,
    REPO,
    Exercise,
    ExerciseInputError,
    Said,
    Verdict,
    calls,
    fresh_random,
    named_file,
    results,
    run_chapter,
    run_replies,
    text_of,
    tool_use,
)

# --- 1.2: the line that refuses to invent a reply ------------------------------------------


class Witness(Wrapper):
    """The replay, watched: keeps where its refusal was raised, before the run turns the
    error into a stop and the traceback is gone."""

    raised_at: tuple[Path, int] | None = None

    def complete(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self.inner.complete(*args, **kwargs)
        except CassetteError as error:
            frame = traceback.extract_tb(error.__traceback__)[-1]
            self.raised_at = (Path(frame.filename).resolve(), frame.lineno or 0)
            raise


def named_line(words: list[str]) -> tuple[Path, int]:
    """The FILE:LINE the learner names; a relative FILE is taken from here or the course."""
    answer = words[0] if words else ""
    name, _, number = answer.rpartition(":")
    if not name or not number.isdigit():
        raise ExerciseInputError(
            Said(
                "name the line as FILE:LINE: python -m lab exercise 1.2 llm/cassette.py:LINE",
                "用 FILE:LINE 的形式给出那一行：python -m lab exercise 1.2 llm/cassette.py:LINE",
            )
        )
    path = Path(name).expanduser()
    if not path.is_absolute() and not path.exists():
        path = REPO / path
    return path.resolve(), int(number)


def statement_lines(path: Path, line: int) -> range:
    """The lines of the innermost statement of `path` that holds `line` (a raise may span six)."""
    spans = [
        range(node.lineno, (node.end_lineno or node.lineno) + 1)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or line)
    ]
    return min(spans, key=len, default=range(line, line + 1))


def refusing_line(words: list[str]) -> Verdict:
    path, line = named_line(words)
    rng = fresh_random()
    replies = [
        calls(tool_use(f"t{n}", "bash", {"command": f"echo {rng.randint(10, 99)}"}))
        for n in range(1, rng.randint(2, 7) + 1)
    ]
    with tempfile.TemporaryDirectory() as scratch:
        cassette = scripted(Path(scratch) / "dry.jsonl", replies)
        model = Witness(ReplayModel(cassette))
        result = run_chapter("v1_tool_loop", cassette, model=model)
    said = re.search(r"has \d+ repl\w+ and the run asked for reply \d+", result.error or "")
    ran = Said(
        f"a fresh cassette of {len(replies)} replies, run dry, ended with `{result.stop}` "
        f"({said.group() if said else result.error[:80]})",
        f"一盘新的 {len(replies)} 条回复的录像带放完后，运行以 `{result.stop}` 结束"
        f"（{said.group() if said else result.error[:80]}）",
    )
    if model.raised_at is None:
        hint = Said(
            "the chapter's run should stop when the cassette runs out",
            "录像带放完时本章的运行应当停下",
        )
        return Verdict(False, ran, hint)
    where, raised = model.raised_at
    shown = f"{shown_path(path)}:{line}"
    if path == where and line in statement_lines(where, raised):
        seen = Said(ran.en + f"; raised at {shown}", ran.zh + f"；在 {shown} 抛出")
        return Verdict(True, seen)
    yours = line_text(path, line)
    seen = Said(
        ran.en + f"; {shown} ({yours}) is not where that error was raised",
        ran.zh + f"；{shown}（{yours}）不是抛出这个错误的地方",
    )
    hint = Said(
        "find the raise of the message the run ended with, in ReplayModel",
        "在 ReplayModel 里找到抛出这条消息的 raise",
    )
    return Verdict(False, seen, hint)


def line_text(path: Path, line: int) -> str:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return "no such file"
    return repr(lines[line - 1].strip()[:60]) if 0 < line <= len(lines) else "past the end"


def shown_path(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def scripted(path: Path, replies: list[dict[str, Any]], task: str = "An exercise check.") -> Path:
    header = {"format": "cassette/1", "provenance": "scripted", "chapter": "v1_tool_loop"}
    lines = [{**header, "task": task}, *({"reply": reply} for reply in replies)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


# --- 1.3: list_dir -------------------------------------------------------------------------


def fresh_name(rng: Random, taken: set[str]) -> str:
    while True:
        name = "".join(rng.choice("abcdefghjkmnpqrstuvwxyz") for _ in range(rng.randint(4, 8)))
        if name not in taken:
            taken.add(name)
            return name


def list_dir_tool(words: list[str]) -> Verdict:
    rng, taken = fresh_random(), set()
    top = fresh_name(rng, taken)
    folders = [fresh_name(rng, taken) for _ in range(rng.randint(1, 3))]
    files = [fresh_name(rng, taken) + rng.choice([".txt", ".py", ".md"]) for _ in range(3)]
    inner = fresh_name(rng, taken) + ".py"
    made = [f"mkdir -p {top}/{folder}" for folder in folders]
    made += [f"echo x > {top}/{name}" for name in [*files, f"{folders[0]}/{inner}"]]
    link = fresh_name(rng, taken)  # a link in the work directory to a folder outside it
    made.append(f"ln -s / {link}")
    climb = f"{top}/{folders[0]}/../../.."  # starts inside, ends outside
    asked = [top, f"{top}/{folders[0]}", "..", "/", climb, link]  # outside by four roads
    replies = [calls(tool_use("t0", "bash", {"command": " && ".join(made)}))]
    replies += [
        calls(tool_use(f"t{n}", "list_dir", {"path": path})) for n, path in enumerate(asked)
    ]
    answers = results(run_replies("v1_tool_loop", *replies, FINISH))[1:]
    expected = {top: {*files, *(f + "/" for f in folders)}, asked[1]: {inner}}
    held = ", ".join(sorted(expected[top]))
    case = Said(f"{top}/ holding {held}", f"{top}/，里面有 {held}")
    for path, answer in zip(asked, answers, strict=False):
        if path not in expected:
            break
        got = text_of(answer)
        seen = Said(
            f"list_dir {path!r} (a fresh folder {case.en}) answered {got[:100]!r}",
            f"list_dir {path!r}（一个新建的文件夹 {case.zh}）的回答：{got[:100]!r}",
        )
        if "unknown tool" in got:
            hint = Said(
                "add its schema to TOOLS and its handler to HANDLERS in tools.py",
                "在 tools.py 里把它的 schema 加进 TOOLS，处理函数加进 HANDLERS",
            )
            return Verdict(False, seen, hint)
        if answer.get("is_error") or set(got.splitlines()) != expected[path]:
            hint = Said(
                "list the names in the folder asked for, one per line, folders ending with /",
                "列出所要的文件夹里的名字，一行一个，文件夹以 / 结尾",
            )
            return Verdict(False, seen, hint)
    outside = (answers[2:] + [{}] * len(asked))[: len(asked) - 2]
    said = [(path, text_of(answer)[:60]) for path, answer in zip(asked[2:], outside, strict=True)]
    seen = Said(
        f"list_dir listed a fresh folder {case.en} and its folder {folders[0]}/; "
        + "; ".join(f"list_dir {path!r} answered {text!r}" for path, text in said),
        f"list_dir 列出了新建的文件夹 {case.zh}；又列出了其中的 {folders[0]}/；"
        + "；".join(f"list_dir {path!r} 的回答：{text!r}" for path, text in said),
    )
    if all(answer.get("is_error") for answer in outside):
        return Verdict(True, seen)
    hint = Said(
        "resolve the path with safe_path, which refuses a folder outside the work directory",
        "用 safe_path 解析路径，它会拒绝工作目录之外的文件夹",
    )
    return Verdict(False, seen, hint)


# --- 1.4: a recording, replayed strictly ---------------------------------------------------


def strict_replay(words: list[str]) -> Verdict:
    path = named_file(words, Said("recording", "录制文件"), "1.4")
    header, entries = read_cassette(path)
    spec = importlib.import_module("v1_tool_loop.__main__").CHAPTER
    problem = recording_problem(header, entries, spec.demo_cassette)
    if problem:
        seen = Said(f"{path} {problem.en}", f"{path} {problem.zh}")
        hint = Said(
            "record it with --record FILE, from a live model or the course's fake provider",
            "用 --record FILE 录制，来自在线模型或课程的假服务商",
        )
        return Verdict(False, seen, hint)
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch) / "ws"
        shutil.copytree(spec.demo_workspace, workdir)
        model = ReplayModel(path, strict=True)
        result = spec.run(header.get("task", ""), model=model, workdir=workdir)
    seen = Said(
        f"a recording of {header.get('model')}; replayed strictly on a fresh copy of the demo "
        f"workspace, it ended with `{result.stop}` {result.error}".strip(),
        f"{header.get('model')} 的录制；在演示工作区的新副本上严格回放，以 `{result.stop}` 结束 "
        f"{result.error}".strip(),
    )
    if result.stop == "done":
        return Verdict(True, seen)
    hint = Said(
        "record on a task whose tools print the same thing every time",
        "选一个工具每次输出都相同的任务来录制",
    )
    return Verdict(False, seen, hint)


def recording_problem(header: dict, entries: list[dict], demo: Path) -> Said | None:
    """Why the file is not a recording of a model's run with tools, or None."""
    model = str(header.get("model", ""))
    if header.get("provenance") != "recorded" or not all("request" in e for e in entries):
        kind = header.get("provenance", "not a recording")
        return Said(f"is {kind}, without request digests", f"是 {kind}，没有请求摘要")
    if model.startswith("replay:"):
        return Said(
            f"recorded a replay ({model[:60]}), not a model",
            f"录下的是一次回放（{model[:60]}），不是模型",
        )
    replies = [entry["reply"].get("content") for entry in entries]
    scripted = [entry["reply"].get("content") for entry in read_cassette(demo)[1]]
    if len(replies) == len(scripted) and replies[:-1] == scripted[:-1]:  # the last one: any
        return Said("holds the scripted demo's replies", "里是脚本演示的回复")
    if not any(block.get("type") == "tool_use" for reply in replies for block in reply or []):
        return Said("holds no tool call", "里没有工具调用")
    return None


# --- 1.5: the door ---------------------------------------------------------------------------

DOORS = {
    "argument_problem": Said("a bad argument (argument_problem)", "错误的参数（argument_problem）"),
    "refusal_reason": Said("a refused command (refusal_reason)", "被拒绝的命令（refusal_reason）"),
    "timeout": Said("a command that timed out (bash)", "超时的命令（bash）"),
}


def which_door(args: Any, answer: str) -> str | None:
    """Which of the three doors refused this bash call, judged by the chapter's own rules."""
    from machine.guard import refusal_reason
    from v1_tool_loop.tools import SCHEMAS, argument_problem

    if argument_problem(SCHEMAS["bash"], args):
        return "argument_problem" if answer.startswith("bash: ") else None
    if refusal_reason(args["command"]):
        return "refusal_reason" if answer.startswith("refused: ") else None
    last = answer.rstrip().rsplit("\n", 1)[-1]  # the loop's own note ends what it timed out
    return "timeout" if last.startswith("[timed out after") else None


def door_holds(words: list[str]) -> Verdict:
    result = run_chapter("v1_tool_loop", named_file(words, Said("cassette", "录像带"), "1.5"))
    asked = {
        block["id"]: block
        for message in result.messages
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_use"
    }
    doors = set()
    for answer in results(result):
        call = asked.get(answer["tool_use_id"], {})
        if answer.get("is_error") and call.get("name") == "bash":
            doors.add(which_door(call.get("input"), text_of(answer)))
    held = [door for door in DOORS if door in doors]
    seen = Said(
        f"the bash calls were refused by {[DOORS[d].en for d in held] or 'none of the three'}, "
        f"and the run ended with `{result.stop}`",
        f"bash 调用被拒绝的方式：{[DOORS[d].zh for d in held] or '三种都没有'}，"
        f"运行以 `{result.stop}` 结束",
    )
    if len(held) == len(DOORS) and result.stop == "done":
        return Verdict(True, seen)
    missing = [door for door in DOORS if door not in doors]
    hint = Said(
        "bash calls refused in all three ways, then end_turn; missing: "
        + ", ".join(DOORS[d].en for d in missing),
        "bash 调用以全部三种方式被拒绝，然后 end_turn；还缺："
        + "、".join(DOORS[d].zh for d in missing),
    )
    return Verdict(False, seen, hint)


EXERCISES = {
    "1.1": Exercise(Said("Stop early", "提前停下"), unchecked=EXPLAIN),
    "1.2": Exercise(Said("Run a cassette dry", "把录像带放完"), refusing_line),
    "1.3": Exercise(Said("Add a list_dir tool", "加一个 list_dir 工具"), list_dir_tool),
    "1.4": Exercise(Said("Record, then replay strictly", "先录制，再严格回放"), strict_replay),
    "1.5": Exercise(Said("Watch the door hold", "看看这个入口守不守得住"), door_holds),
    "1.6": Exercise(Said("Run independent calls at once", "同时执行互不相关的调用"), calls_at_once),
}
