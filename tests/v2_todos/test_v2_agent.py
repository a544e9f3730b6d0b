"""The chapter 2 loop on scripted replies: the plan through the one door, the reminder, the demo."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from llm import Console
from tests import REPO
from tests.scripted import assert_valid_history, replay, text, tool
from v2_todos.agent import run
from v2_todos.todos import REMINDER


def plan(*statuses: str) -> list[dict]:
    return [{"content": f"step {n}", "status": s} for n, s in enumerate(statuses, 1)]


def write_plan(call_id: str, *statuses: str) -> dict:
    return tool(call_id, "todo_write", items=plan(*statuses))


def echo(call_id: str) -> dict:
    return tool(call_id, "bash", command=f"echo {call_id}")


def reminder_turns(messages: list[dict]) -> list[int]:
    """Indexes of the messages that carry the reminder: a text block that begins with it,
    so that a reminder which also shows the plan (exercise 2.4) is still found."""
    return [
        index
        for index, message in enumerate(messages)
        if isinstance(message["content"], list)
        and any(
            block.get("type") == "text" and block.get("text", "").startswith(REMINDER)
            for block in message["content"]
        )
    ]


def test_the_plan_goes_through_the_door_and_into_the_result(tmp_path: Path) -> None:
    model = replay(
        ([write_plan("t1", "in_progress", "pending"), echo("t2")], "tool_use"),
        ([write_plan("t3", "completed", "in_progress")], "tool_use"),
        ([write_plan("t4", "completed", "completed")], "tool_use"),
        ([text("All done.")], "end_turn"),
    )
    result = run("two steps", model=model, workdir=tmp_path)

    assert result.stop == "done"
    first = result.messages[2]["content"][0]
    assert first["content"] == "Todos (0/2 done)\n[>] step 1\n[ ] step 2"
    assert not first["is_error"]
    assert result.plan == plan("completed", "completed")
    assert [turn for turn, _ in result.plan_history] == [1, 2, 3]
    assert result.plan_history[1][1] == plan("completed", "in_progress")
    assert result.counts() == {"plan updates": 3, "reminders": 0}
    assert_valid_history(result.messages)


def test_a_rejected_plan_is_an_error_result_and_the_old_plan_stays(tmp_path: Path) -> None:
    model = replay(
        ([write_plan("t1", "in_progress", "pending")], "tool_use"),
        ([write_plan("t2", "in_progress", "in_progress", "done")], "tool_use"),
        ([tool("t3", "todo_write", items="step 1, step 2")], "tool_use"),
        ([text("ok")], "end_turn"),
    )
    result = run("plan", model=model, workdir=tmp_path)

    rejected = result.messages[4]["content"][0]
    assert rejected["is_error"]
    assert rejected["content"].startswith("the todo list was not changed: ")  # not a crash
    assert "items 1, 2 are all in_progress" in rejected["content"]
    assert "item 3: status 'done' is not one of" in rejected["content"]
    assert "must be of type array" in result.messages[6]["content"][0]["content"]
    assert result.plan == plan("in_progress", "pending")
    assert len(result.plan_history) == 1


def test_a_plan_left_alone_for_three_turns_brings_a_reminder_after_the_results(
    tmp_path: Path,
) -> None:
    model = replay(
        ([write_plan("t1", "in_progress", "pending")], "tool_use"),
        ([echo("t2")], "tool_use"),
        ([echo("t3")], "tool_use"),
        ([echo("t4"), echo("t5")], "tool_use"),  # third turn without todo_write
        ([echo("t6")], "tool_use"),
        ([text("done")], "end_turn"),
    )
    result = run("task", model=model, workdir=tmp_path)

    assert reminder_turns(result.messages) == [8]
    reminded = result.messages[8]["content"]
    assert [block["type"] for block in reminded] == ["tool_result", "tool_result", "text"]
    assert result.reminders == [4]
    assert_valid_history(result.messages)


def test_the_count_starts_again_after_a_reminder_and_after_an_update(tmp_path: Path) -> None:
    quiet = [([echo(f"q{n}")], "tool_use") for n in range(7)]
    model = replay(
        ([write_plan("t1", "in_progress", "pending")], "tool_use"),
        *quiet[:3],  # turns 2-4: reminded after turn 4
        ([write_plan("t2", "completed", "in_progress")], "tool_use"),  # turn 5
        *quiet[3:],  # turns 6-9: reminded after turn 8 only
        ([text("done")], "end_turn"),
    )
    result = run("task", model=model, workdir=tmp_path)
    assert result.reminders == [4, 8]


def test_no_reminder_once_every_item_is_completed(tmp_path: Path) -> None:
    model = replay(
        ([write_plan("t1", "completed", "completed")], "tool_use"),
        *[([echo(f"q{n}")], "tool_use") for n in range(5)],
        ([text("done")], "end_turn"),
    )
    result = run("task", model=model, workdir=tmp_path)
    assert result.reminders == []


def test_no_plan_at_all_is_reminded_once_the_task_took_more_than_three_calls(
    tmp_path: Path,
) -> None:
    model = replay(
        ([echo("t1")], "tool_use"),
        ([echo("t2")], "tool_use"),
        ([echo("t3")], "tool_use"),  # three turns, only three calls: no reminder yet
        ([echo("t4")], "tool_use"),  # four calls: due
        ([text("done")], "end_turn"),
    )
    result = run("task", model=model, workdir=tmp_path)
    assert result.reminders == [4]


def test_a_short_task_without_a_plan_is_never_reminded(tmp_path: Path) -> None:
    model = replay(([echo("t1")], "tool_use"), ([text("done")], "end_turn"))
    assert run("task", model=model, workdir=tmp_path).reminders == []


def test_how_soon_the_reminder_comes_is_a_parameter(tmp_path: Path) -> None:
    model = replay(
        ([write_plan("t1", "in_progress", "pending")], "tool_use"),
        ([echo("t2")], "tool_use"),
        ([echo("t3")], "tool_use"),
        ([text("done")], "end_turn"),
    )
    result = run("task", model=model, workdir=tmp_path, remind_after=1)
    assert result.reminders == [2, 3]


def test_the_plan_carries_over_from_the_history(tmp_path: Path) -> None:
    first = run(
        "plan it",
        model=replay(
            ([write_plan("t1", "in_progress", "pending")], "tool_use"),
            ([text("planned")], "end_turn"),
        ),
        workdir=tmp_path,
    )
    model = replay(*[([echo(f"q{n}")], "tool_use") for n in range(3)], ([text("ok")], "end_turn"))
    second = run("go on", model=model, workdir=tmp_path, history=first.messages)
    assert second.plan == plan("in_progress", "pending")
    assert second.reminders == [5]  # the unfinished plan of the first task still counts


def test_the_terminal_shows_the_whole_plan_and_the_reminder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = replay(
        ([write_plan("t1", *["pending"] * 6)], "tool_use"),
        *[([echo(f"q{n}")], "tool_use") for n in range(3)],
        ([text("done")], "end_turn"),
    )
    run("task", model=model, workdir=tmp_path, console=Console())
    out = capsys.readouterr().out
    assert "→ todo_write  6 items" in out
    assert "  Todos (0/6 done)\n" + "  [ ] step 6\n" in out.replace(
        "".join(f"  [ ] step {n}\n" for n in range(1, 6)), ""
    )
    assert "(reminder sent: no todo_write for 3 turns)" in out


# --- the command line -------------------------------------------------------------------


def chapter2(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "TMPDIR": str(cwd)}
    return subprocess.run(
        [sys.executable, "-m", "v2_todos", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_demo_plans_is_reminded_and_leaves_every_test_passing(tmp_path: Path) -> None:
    done = chapter2("--demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "(reminder sent: no todo_write for 3 turns)" in done.stdout
    assert "  Todos (4/4 done)" in done.stdout
    workspace = tmp_path / "v2_todos-demo-1"
    tests = subprocess.run(
        [sys.executable, "-m", "unittest"], cwd=workspace, capture_output=True, text=True
    )
    assert tests.returncode == 0, tests.stderr
    assert "Ran 8 tests" in tests.stderr


def test_todos_in_the_interactive_prompt_prints_the_plan(tmp_path: Path) -> None:
    cassette = tmp_path / "plan.jsonl"
    shutil.copy(REPO / "v2_todos/demo/cassette.jsonl", cassette)
    lines = cassette.read_text().splitlines()
    cassette.write_text("\n".join(lines[:3]) + "\n")  # two replies: run the tests, then plan
    done = chapter2(
        "--model",
        f"replay:{cassette}",
        "--max-turns",
        "2",
        cwd=tmp_path,
        stdin="/todos\nfix it\n/todos\n/exit\n",
    )
    assert "Also: /todos." in done.stdout
    before, after = done.stdout.split("Todos: (none)")
    assert "Todos (0/4 done)\n[>] Fixing word_count\n[ ] Fix top_words" in after
