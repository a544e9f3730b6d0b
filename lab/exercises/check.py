"""What every exercise check is made of: its verdict in two languages, the chapter run on
a cassette, and inputs the learner cannot know in advance.

A check decides from what the learner's chapter *does*, never from the shape of its
code: it runs the chapter (on a fresh copy of its demo workspace, with a cassette
written here or the one the learner names) or calls the function the exercise
changes.  Where a fixed input would let an answer written for that one input pass,
the check makes its inputs fresh each time (`fresh_random`), and says in its verdict
which case it tried, so a learner can reproduce a "not done".

The learner's code runs in this process.  That is deliberate: an exercise check
guards against honest mistakes and shortcuts (a special case, a hard-coded answer),
not against a learner who rewrites the check, who could as well edit this file.  A
teacher who collects a class's work runs each hand-in in a scratch copy of its own.
"""

from __future__ import annotations

import importlib
import json
import random
import secrets
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm import Model, RunResult
from llm.cassette import ReplayModel, read_cassette

REPO = Path(__file__).resolve().parent.parent.parent
LANGS = ("en", "zh")


@dataclass(frozen=True)
class Said:
    """One message in both languages of the course; the command prints the learner's."""

    en: str
    zh: str

    def __call__(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


@dataclass(frozen=True)
class Verdict:
    """What the check saw, and, when the exercise is not done, what to try."""

    done: bool
    seen: Said
    hint: Said | None = None


class ExerciseInputError(ValueError):
    """The command names no file, or one that is not there: a usage error, exit code 2."""

    def __init__(self, said: Said) -> None:
        super().__init__(said.en)
        self.said = said


@dataclass(frozen=True)
class Exercise:
    """One exercise: its title, and either its check or why no program can judge it."""

    title: Said
    check: Callable[[list[str]], Verdict] | None = None  # given the words after N.M
    unchecked: Said | None = None  # why no program can tell; the rubric is in docs/*/rubrics.md


LIVE = Said(
    "it needs a live model: compare your runs with the table the exercise asks for; "
    "docs/en/rubrics.md has its rubric",
    "它需要在线模型：把你的运行和练习要求的表格对照；评分标准见 docs/zh/rubrics.md",
)
MEASURE = Said(
    "it asks for a measurement and what you make of it: docs/en/rubrics.md has its rubric",
    "它要求测量并解读结果：评分标准见 docs/zh/rubrics.md",
)
EXPLAIN = Said(
    "it asks you to explain what a command prints: docs/en/rubrics.md has its rubric",
    "它要求解释命令的输出：评分标准见 docs/zh/rubrics.md",
)


def fresh_random() -> random.Random:
    """A generator seeded anew at every check, so no answer can be fitted to its cases."""
    return random.Random(secrets.randbits(64))


# --- running the learner's chapter ------------------------------------------------------


def run_chapter(
    chapter: str,
    cassette: Path,
    task: str | None = None,
    wrap: Callable[[Model], Model] = lambda model: model,
    inside: Path | None = None,
    **options: Any,
) -> RunResult:
    """The chapter's own run, replaying `cassette` (through `wrap`, when the check watches
    the calls), on a fresh copy of its demo workspace: in a temporary folder, or in folder
    `inside` that the check keeps for as long as what the run left running may need it."""
    spec = importlib.import_module(f"{chapter}.__main__").CHAPTER
    header, _ = read_cassette(cassette)
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(inside or scratch) / "ws"
        shutil.copytree(spec.demo_workspace, workdir)
        model = wrap(options.pop("model", None) or ReplayModel(cassette))
        return spec.run(
            task or header.get("task") or "Fix the tests", model=model, workdir=workdir, **options
        )


def run_replies(chapter: str, *replies: dict[str, Any], **options: Any) -> RunResult:
    """The chapter's run on a scripted cassette of these replies, written for the check."""
    header = {"format": "cassette/1", "provenance": "scripted", "chapter": chapter}
    header["task"] = "An exercise check."
    lines = [json.dumps(header), *(json.dumps({"reply": reply}) for reply in replies)]
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "check.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return run_chapter(chapter, path, **options)


def calls(*blocks: dict[str, Any]) -> dict[str, Any]:
    """A reply asking for these tool calls."""
    return {"content": list(blocks), "stop_reason": "tool_use"}


def tool_use(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


FINISH = {"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"}


def results(result: RunResult) -> list[dict[str, Any]]:
    """Every tool_result block of the run, in order."""
    return [
        block
        for message in result.messages
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def text_of(block: dict[str, Any]) -> str:
    content = block.get("content", "")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return str(content)


def named_file(words: list[str], what: Said, number: str) -> Path:
    """The file the learner wrote, named after the exercise number."""
    if not words:
        raise ExerciseInputError(
            Said(
                f"name the {what.en}: python -m lab exercise {number} FILE",
                f"请给出{what.zh}：python -m lab exercise {number} FILE",
            )
        )
    path = Path(words[0]).expanduser()
    if not path.is_file():
        raise ExerciseInputError(
            Said(
                f"no file {path}: name the {what.en} you wrote",
                f"没有文件 {path}：请给出你写的{what.zh}",
            )
        )
    return path
