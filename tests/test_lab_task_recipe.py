"""Adding a lab task or a cassette: what the recipe of docs/en/lab.md (section 6) asks for is
checked, and a missing piece is named in words, not as a set difference.

Every cassette a task holds is named for the chapter that replays it and holds the task's
prompt; a cassette of a task that is not featured (the comparison's own tests replay the
featured ones) solves its task when its chapter replays it; every task has a worked fix in
tests/test_lab_tasks.py, and one with tests in its workspace has a way to fake them there.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from lab.compare.record import Job
from lab.compare.runs import run_job
from lab.compare.sources import Scripted
from lab.tasks import Task, load_task, shown, task_names
from llm.cassette import read_cassette
from tests.test_lab_tasks import FIXES, TAMPERED

REPO = Path(__file__).resolve().parent.parent
# Tasks whose checker reads an answer, not tests: there is nothing in the workspace to fake.
ANSWERED = {"long-task", "codebase-question"}


def header_problems(task: Task, chapter: str, path: Path) -> list[str]:
    """What is wrong with the header of a task's cassette, one sentence each."""
    header, _ = read_cassette(path)
    problems = []
    if header.get("chapter") != chapter:
        problems.append(
            f"{shown(path)}: its header names chapter {header.get('chapter')!r}, but the task "
            f"replays it for {chapter}: a cassette is named for the chapter it was written for"
        )
    if header.get("task") != task.prompt:
        problems.append(
            f"{shown(path)}: its header's task is not the prompt of "
            f"{shown(task.folder / 'task.json')}: copy the prompt into the header"
        )
    return problems


def solve_problems(task: Task, chapter: str, scratch: Path) -> list[str]:
    """Whether the chapter, replaying the task's cassette, leaves the task solved."""
    record = run_job(Job(chapter, task), Scripted(), scratch)
    if record.solved:
        return []
    return [
        f"{shown(task.cassettes[chapter])}: replayed by {chapter}, it does not solve "
        f"{task.name} ({record.stop}: {record.verdict}); a scripted cassette shows a run that "
        "works: fix the replies, or record a run that solves the task"
    ]


CASSETTES = [(name, chapter) for name in task_names() for chapter in load_task(name).cassettes]
NOT_FEATURED = [(name, chapter) for name, chapter in CASSETTES if not load_task(name).featured]


@pytest.mark.parametrize("name, chapter", CASSETTES)
def test_each_cassette_is_named_for_its_chapter_and_holds_the_prompt(
    name: str, chapter: str
) -> None:
    task = load_task(name)
    problems = header_problems(task, chapter, task.cassettes[chapter])
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name, chapter", NOT_FEATURED)
def test_a_task_that_is_not_featured_is_solved_by_its_cassettes(
    name: str, chapter: str, tmp_path: Path
) -> None:
    problems = solve_problems(load_task(name), chapter, tmp_path)
    assert not problems, "\n".join(problems)


def test_a_cassette_of_another_chapter_and_one_that_does_not_solve_are_caught(
    tmp_path: Path,
) -> None:
    """The two faults, made on purpose from a real task and a real cassette."""
    one_bug = load_task("one-bug")
    misnamed = tmp_path / "v1_tool_loop.jsonl"
    misnamed.write_bytes(one_bug.cassettes["v2_todos"].read_bytes())
    problems = header_problems(one_bug, "v1_tool_loop", misnamed)
    assert problems == [
        f"{shown(misnamed)}: its header names chapter 'v2_todos', but the task replays it for "
        "v1_tool_loop: a cassette is named for the chapter it was written for"
    ]

    add_flag = load_task("add-flag")
    header = {"format": "cassette/1", "provenance": "scripted", "chapter": "v1_tool_loop"}
    reply = {"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"}
    quits = tmp_path / "quits.jsonl"
    lines = [header | {"task": add_flag.prompt}, {"reply": reply}]
    quits.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    task = replace(add_flag, cassettes={"v1_tool_loop": quits})
    assert header_problems(task, "v1_tool_loop", quits) == []
    [problem] = solve_problems(task, "v1_tool_loop", tmp_path)
    assert problem.startswith(
        f"{shown(quits)}: replayed by v1_tool_loop, it does not solve add-flag"
    )


@pytest.mark.parametrize("name", task_names())
def test_every_task_has_a_worked_fix_and_a_way_to_fake_its_tests(name: str) -> None:
    task = load_task(name)
    if name != "codebase-question":  # its answer is a sentence: tests/test_lab_tasks.py checks it
        assert name in FIXES, (
            f"lab/tasks/{name} has no entry in FIXES of tests/test_lab_tasks.py: add a function "
            "that does the work in a copy of the workspace, so the checker is shown to pass it"
        )
    has_tests = any(task.workspace.rglob("test*.py"))
    if has_tests and name not in ANSWERED:
        assert name in TAMPERED, (
            f"lab/tasks/{name} has tests in its workspace but no entry in TAMPERED of "
            "tests/test_lab_tasks.py: say what an agent that fakes the work would leave (a test "
            "deleted or emptied), so the checker is shown not to be fooled"
        )
