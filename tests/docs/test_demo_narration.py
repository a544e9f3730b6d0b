"""What the docs say a demo run does (how many items, which call comes first, what a flag
prints) is checked against the run itself, in both languages.

Tables and transcripts are printed into the docs by `lab.figures`; the sentences around
them are written by hand, so each sentence that states a count or an order is paired
here with the fact it states, measured from the demo.  When a cassette changes, the
failure names the sentence to rewrite in docs/en and docs/zh.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from lab.figures import demo_stdout, run_demo
from lab.tasks import load_task
from llm.result import tool_uses
from tests import REPO
from tests.markdown import without_code_blocks
from tests.solutions import handed_out_without_solutions

NUMBERS_EN = {3: "three", 4: "four", 5: "five", 6: "six"}
NUMBERS_ZH = {3: "三", 4: "四", 5: "五", 6: "六"}


def doc(lang: str, name: str) -> str:
    return without_code_blocks((REPO / "docs" / lang / f"{name}.md").read_text(encoding="utf-8"))


def says(lang: str, name: str, sentence: str, fact: str) -> None:
    """The doc holds the sentence; it was written from the fact measured below."""
    assert sentence in doc(lang, name), (
        f"docs/{lang}/{name}.md should say {sentence!r}, since the demo shows that {fact}; "
        "rewrite the sentence that says otherwise (both languages)"
    )


def plans(name: str) -> list[tuple[int, list[dict]]]:
    """(turn, items) of each todo_write call of the chapter's demo, in order."""
    found = []
    for turn, step in enumerate(run_demo(name).turns, start=1):
        for call in tool_uses({"role": "assistant", "content": step.reply.content}):
            if call["name"] == "todo_write":
                found.append((turn, call["input"]["items"]))
    return found


def test_chapter_2_first_reply_runs_the_tests_and_the_plan_comes_second() -> None:
    turns = run_demo("v2_todos").turns
    assert turns[0].tools == ["bash"], "the demo's first reply should call only bash"
    first_turn, items = plans("v2_todos")[0]
    fact = f"the first plan comes at turn {first_turn} with {len(items)} items"
    assert first_turn == 2, fact
    says("en", "v2_todos", "The first reply calls only `bash`", fact)
    says("zh", "v2_todos", "第一条回复只调用了 `bash`", fact)
    says("en", "v2_todos", f"a list of {NUMBERS_EN[len(items)]} items, the first in", fact)
    says("zh", "v2_todos", f"一张{NUMBERS_ZH[len(items)]}项的清单", fact)
    says("en", "v2_todos", f"marks all {NUMBERS_EN[len(items)]} done", fact)
    says("zh", "v2_todos", f"把{NUMBERS_ZH[len(items)]}项全部标成完成", fact)


def test_chapter_2_plan_goes_quiet_where_the_docs_say() -> None:
    written = [turn for turn, _ in plans("v2_todos")]
    quiet = [turn for turn in range(written[0] + 1, written[1])]
    fact = f"the plan is written at turns {written}, so turns {quiet} are quiet"
    assert quiet == [3, 4, 5], fact
    says("en", "v2_todos", "Turns 3, 4 and 5 fix", fact)
    says("zh", "v2_todos", "第 3、4、5 轮修好了", fact)
    if not handed_out_without_solutions():
        says("en", "solutions", "The demo writes the plan at turn 2", fact)
        says("zh", "solutions", "演示在第 2 轮写计划", fact)


def test_the_plan_the_docs_quote_is_printed_by_the_demo() -> None:
    """Every `Todos (…)` line the chapter quotes in its prose is one the demo prints."""
    output = demo_stdout("v2_todos")
    for lang in ("en", "zh"):
        for quoted in re.findall(r"`(Todos \(\d+/\d+ done\))`", doc(lang, "v2_todos")):
            assert quoted in output, f"docs/{lang}/v2_todos.md quotes {quoted}, never printed"


def test_the_model_sentences_the_docs_quote_are_in_the_cassette() -> None:
    """A reply the chapter quotes ("…, in the demo below") is in the demo's cassette."""
    cassette = (REPO / "v2_todos/demo/cassette.jsonl").read_text(encoding="utf-8")
    replies = " ".join(
        block.get("text", "")
        for line in cassette.splitlines()[1:]
        for block in json.loads(line)["reply"]["content"]
    )
    for lang, quote in (("en", r'"([A-Z][^"]{10,})"'), ("zh", r"“([A-Z][^”]{10,})”")):
        for sentence in re.findall(quote, doc(lang, "v2_todos")):
            if re.fullmatch(r"[\x20-\x7e]+", sentence) and " " in sentence:
                assert sentence in replies or sentence.startswith("Run"), (
                    f"docs/{lang}/v2_todos.md quotes {sentence!r}, which no reply of the "
                    "demo's cassette says"
                )


def test_chapter_3_quiet_demo_prints_the_answer_only() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "v3_subagents", "--demo", "--quiet"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout + done.stderr
    fact = "--demo --quiet prints no tool call, no child's line and no summary line"
    assert "→" not in printed and "│" not in printed and "──" not in printed, fact
    says("en", "v3_subagents", "prints only the final answer: no tool", fact)
    says("zh", "v3_subagents", "只打印最终答案：没有工具调用", fact)


def test_chapter_3_names_the_chapters_the_lab_runs_on_wide_reading() -> None:
    task = load_task("wide-reading")
    scripted = {p.stem for p in (task.folder / "cassettes").glob("*.jsonl")} | {"v3_subagents"}
    fact = f"the lab has scripted runs of {sorted(scripted)} on wide-reading"
    assert len(scripted) == 5, fact
    says("en", "v3_subagents", "`python -m lab compare --task wide-reading` runs all five", fact)
    says("zh", "v3_subagents", "在这个任务上运行全部五章", fact)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", [p.stem for p in sorted((REPO / "docs/en").glob("v[0-9]_*.md"))])
def test_the_exercises_said_to_need_a_key_are_those_marked_so(lang: str, name: str) -> None:
    """ "One helps for exercises 3 and 4": those, and only those, are marked as wanting a key."""
    text = doc(lang, name)
    exercises = text.split("\n## 8. ")[1].split("\n## 9. ")[0]
    wants_key = {
        int(number)
        for number, mark in re.findall(r"^(\d)\. \*\*.*?\*\* · [^·]+ · ([^.。]+)", exercises, re.M)
        if mark.strip() in ("key optional", "密钥可选")
    }
    named = re.search(r"(?:exercises|做练习) (\d) (?:and|和) (\d)", text.split("\n## 1. ")[0])
    if named:
        assert {int(n) for n in named.groups()} == wants_key, (
            f"docs/{lang}/{name}.md says a key helps for exercises {named.groups()}, but the "
            f"exercises marked 'key optional' are {sorted(wants_key)}"
        )


def test_chapter_0_invents_at_the_first_reply_and_errs_at_the_third() -> None:
    turns = run_demo("v0_react_text").turns
    invented = [
        n for n, t in enumerate(turns, 1) if "the model invented an Observation" in t.warnings
    ]
    errors = [n for n, t in enumerate(turns, 1) if any("format error" in w for w in t.warnings)]
    fact = f"the demo invents an observation at turns {invented} and errs in format at {errors}"
    assert (invented, errors) == ([1], [3]), fact
    says("en", "v0_react_text", "The first reply ran past its", fact)
    says("en", "v0_react_text", "The third reply wrote a two-line", fact)
    says("zh", "v0_react_text", "第三条回复写了一个两行的", fact)


def test_chapter_1_first_turn_asks_for_two_tools() -> None:
    first = run_demo("v1_tool_loop").turns[0]
    calls = tool_uses({"role": "assistant", "content": first.reply.content})
    commands = [call["input"].get("command") for call in calls]
    fact = f"the demo's first reply runs {commands}"
    assert commands == ["ls", "python -m unittest"], fact
    says(
        "en",
        "v1_tool_loop",
        "The first turn asks for `ls` and\n  `python -m unittest` together",
        fact,
    )
    says("zh", "v1_tool_loop", "第一轮同时请求了 `ls` 和 `python -m unittest`", fact)


@pytest.mark.docs  # the course as it ships: exercise 1.3's tool, sent by chapter 4 too, moves them
def test_chapter_4_stages_and_resume_come_where_the_docs_say() -> None:
    output = demo_stdout("v4_memory")
    stages = re.findall(r"^context: stage (\d) before turn (\d+)", output, re.M)
    resumed = re.search(r"^resumed session \S+: (\d+) messages", output, re.M)
    first_plan = re.search(r"Todos \(0/(\d+) done\)", output)
    assert resumed and first_plan, "the demo no longer prints its resume and its first plan"
    fact = f"the demo's stages are {stages}, its resume {resumed.group(0)!r}"
    assert stages == [("1", "5"), ("2", "12")] and resumed.group(1) == "10", fact
    assert first_plan.group(1) == "5", f"the first plan has {first_plan.group(1)} items"
    says("en", "v4_memory", "The model plans five\n  items", fact)
    says("en", "v4_memory", "**Stage 1 before turn 5.**", fact)
    says("en", "v4_memory", "stage 2, before turn 12.**", fact)
    says("en", "v4_memory", "`resumed session …: 10 messages`", fact)
    says("zh", "v4_memory", "模型列出五项计划", fact)
    says("zh", "v4_memory", "**第 5 轮之前的第 1 阶段。**", fact)
    says("zh", "v4_memory", "**第 12 轮之前，先刷写记忆，再做第 2 阶段。**", fact)
    says("zh", "v4_memory", "`resumed session …: 10 messages`", fact)
