"""Chapter 2's exercise checks against the answers a learner might hand in: each wrong or
gamed answer, applied to a copy of the course, is "not done", and a right answer
written another way than the worked solution is "done".  The check runs as the
learner runs it, `python -m lab exercise 2.N`, in the copy.

The wrong answers of 2.3 and 2.4 change the chapter as it ships, so those tests carry
the `docs` mark: once a learner has done the exercise, its code is no longer there to
change the wrong way (`pytest -m "not docs"` leaves them out)."""

from __future__ import annotations

import json
import shlex
import textwrap
from pathlib import Path

import pytest

from tests.solutions import REPO, apply_diff, copy_course, run_check

HEADER = {"format": "cassette/1", "provenance": "scripted", "chapter": "v2_todos"}


def check(tmp_path: Path, number: str, *diffs: str, words: str = "") -> str:
    """The check's output on a copy of the course with these diffs applied; asserts its
    exit code agrees with what it says."""
    course, home = copy_course(tmp_path / "course"), tmp_path / "home"
    home.mkdir(exist_ok=True)
    for diff in diffs:
        apply_diff(course, textwrap.dedent(diff), f"a wrong answer to {number}")
    quoted = shlex.quote(words) if words else ""  # a path, which may hold a space
    done = run_check(f"python -m lab exercise {number} {quoted}".strip(), course, home)
    said = done.stdout + done.stderr
    assert done.returncode == (0 if ": done." in done.stdout else 1), said
    return said


def not_done(said: str) -> bool:
    return "not done yet." in said


# --- 2.2 Break the rules on purpose ------------------------------------------------------


def item(content: str, status: str = "pending", **more: str) -> dict:
    return {"content": content, "status": status, **more}


def write_plan(call_id: str, items: object) -> dict:
    call = {"type": "tool_use", "id": call_id, "name": "todo_write", "input": {"items": items}}
    return {"content": [call], "stop_reason": "tool_use"}


FINISH = {"content": [{"type": "text", "text": "Planned."}], "stop_reason": "end_turn"}
VALID = [item("Fix word_count", "in_progress"), item("Fix top_words")]
THREE_RULES = [item("Fix word_count", "in_progress"), item("Fix top_words", "in_progress")]
THREE_RULES.append(item("", "done"))


def cassette(tmp_path: Path, *replies: dict) -> Path:
    path = tmp_path / "rules.jsonl"
    lines = [HEADER | {"task": "Plan the work"}, *({"reply": reply} for reply in replies)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


WRONG_CASSETTES = {
    "one rule of three": [write_plan("t1", [*VALID[:1], item("b", "in_progress")])],
    "two rules of three": [write_plan("t1", [*VALID, item("", "done")])],
    "items that are not a list": [write_plan("t1", "Fix word_count, Fix top_words")],
}


@pytest.mark.parametrize("wrong", WRONG_CASSETTES)
def test_a_first_plan_that_does_not_break_the_three_rules_is_not_done(
    wrong: str, tmp_path: Path
) -> None:
    rules = cassette(tmp_path, *WRONG_CASSETTES[wrong], write_plan("t2", VALID), FINISH)
    said = check(tmp_path, "2.2", words=str(rules))
    assert not_done(said) and "hint: the first plan also needs" in said, said


def test_the_demo_cassette_is_not_done(tmp_path: Path) -> None:
    said = check(tmp_path, "2.2", words=str(REPO / "v2_todos/demo/cassette.jsonl"))
    assert not_done(said) and "breaks 0 of the 3 rules" in said, said


def test_three_broken_rules_without_the_valid_plan_after_them_is_not_done(
    tmp_path: Path,
) -> None:
    said = check(tmp_path, "2.2", words=str(cassette(tmp_path, write_plan("t1", THREE_RULES))))
    assert not_done(said) and "accepted updates at turns []" in said, said


def test_a_chapter_that_lets_two_items_in_progress_through_is_not_done(tmp_path: Path) -> None:
    """Three problems still come back (an unknown key makes the third), but a plan of the
    check's own with only two items in progress is accepted."""
    first = [*THREE_RULES[:2], item("", "done", priority="high")]
    rules = cassette(tmp_path, write_plan("t1", first), write_plan("t2", VALID), FINISH)
    no_rule = """\
        --- a/v2_todos/todos.py
        +++ b/v2_todos/todos.py
        @@ def problems_with(
        -    if len(doing) > 1:
        +    if len(doing) > 99:
        """
    said = check(tmp_path, "2.2", no_rule, words=str(rules))
    assert not_done(said) and "; but two items in_progress at item(s)" in said, said


def test_three_rules_broken_another_way_are_done(tmp_path: Path) -> None:
    first = [item("  ", "in_progress"), item("Fix top_words", "finished"), VALID[0]]
    rules = cassette(tmp_path, write_plan("t1", first), write_plan("t2", VALID), FINISH)
    said = check(tmp_path, "2.2", words=str(rules))
    assert "done. the first plan breaks 3 of the 3 rules" in said, said


# --- 2.3 No duplicate items --------------------------------------------------------------


def duplicate_rule(code: str) -> str:
    """A diff that adds `code` at the end of problems_with, where the exercise asks."""
    added = "".join(f"+    {line}\n" for line in textwrap.dedent(code).strip().splitlines())
    header = "--- a/v2_todos/todos.py\n+++ b/v2_todos/todos.py\n@@ def problems_with(\n"
    return header + added + "     return problems\n"


def pairs_by(key: str, message: str = 'f"items {same} and {number} are the same: merge them"'):
    return f"""
        first: dict[str, int] = {{}}
        for number, item in enumerate(items, start=1):
            content = item.get("content") if isinstance(item, dict) else None
            if isinstance(content, str) and content.strip():
                same = first.setdefault({key}, number)
                if same != number:
                    problems.append({message})
        """


WRONG_RULES = {
    "the exercise's example only": """
        contents = [item.get("content") for item in items if isinstance(item, dict)]
        if "Fix median" in contents and " fix MEDIAN " in contents:
            problems.append("items 1 and 2 are the same: merge them")
        """,
    "case ignored, spaces not": pairs_by("content.lower()"),
    "spaces ignored, case not": pairs_by("content.strip()"),
    "no item numbers": pairs_by("content.strip().lower()", '"two items are the same"'),
    "neighbours only": """
        for number in range(2, len(items) + 1):
            a, b = items[number - 2], items[number - 1]
            if isinstance(a, dict) and isinstance(b, dict):
                if str(a.get("content")).strip().lower() == str(b.get("content")).strip().lower():
                    problems.append(f"items {number - 1} and {number} are the same: merge them")
        """,
    "against the first item only": """
        head = items[0].get("content") if items and isinstance(items[0], dict) else None
        for number, item in enumerate(items[1:], start=2):
            content = item.get("content") if isinstance(item, dict) else None
            if isinstance(content, str) and isinstance(head, str):
                if content.strip().lower() == head.strip().lower():
                    problems.append(f"items 1 and {number} are the same: merge them")
        """,
    "items numbered among the objects only": """
        objects = [item for item in items if isinstance(item, dict)]
        first: dict[str, int] = {}
        for number, item in enumerate(objects, start=1):
            content = item.get("content")
            if isinstance(content, str) and content.strip():
                same = first.setdefault(content.strip().lower(), number)
                if same != number:
                    problems.append(f"items {same} and {number} are the same: merge them")
        """,
    "content read from every object": """
        first: dict[str, int] = {}
        for number, item in enumerate(items, start=1):
            if isinstance(item, dict):
                same = first.setdefault(item["content"].strip().lower(), number)
                if same != number:
                    problems.append(f"items {same} and {number} are the same: merge them")
        """,
    "any two items": """
        if len(items) > 1:
            problems.append("items 1 and 2 are the same: merge them")
        """,
    "a step that starts like another": """
        texts = [str(item.get("content")).strip().lower() for item in items]
        for later, text in enumerate(texts):
            for earlier, before in enumerate(texts[:later]):
                if text.startswith(before) or before.startswith(text):
                    problems.append(f"items {earlier + 1} and {later + 1} are the same")
        """,
}


@pytest.mark.docs  # the chapter as it ships: the exercise not done yet
@pytest.mark.parametrize("wrong", WRONG_RULES)
def test_a_duplicate_rule_that_is_wrong_somewhere_is_not_done(wrong: str, tmp_path: Path) -> None:
    said = check(tmp_path, "2.3", duplicate_rule(WRONG_RULES[wrong]))
    refuses_close_steps = wrong in ("a step that starts like another", "any two items")
    why = (
        "problems_with refuses the distinct steps" if refuses_close_steps else "problems_with adds"
    )
    why = "problems_with failed on the plan" if wrong == "content read from every object" else why
    assert not_done(said) and why in said, said


@pytest.mark.docs  # the chapter as it ships: the exercise not done yet
def test_a_duplicate_rule_in_update_instead_of_problems_with_is_not_done(tmp_path: Path) -> None:
    in_update = """\
        --- a/v2_todos/todos.py
        +++ b/v2_todos/todos.py
        @@ def update(
                 problems = problems_with(items)
        +        texts = [str(i.get("content")).strip().lower() for i in items]
        +        if len(texts) != len(set(texts)):
        +            problems.append("two items are the same: merge them")
        """
    said = check(tmp_path, "2.3", in_update)
    assert not_done(said) and "problems_with adds []" in said, said


def test_a_duplicate_rule_written_another_way_is_done(tmp_path: Path) -> None:
    another = """
        seen: list[str] = []
        for number, item in enumerate(items, start=1):
            text = item.get("content", "").strip().casefold() if isinstance(item, dict) else ""
            if text and text in seen:
                problems.append(f"item {number} repeats item {seen.index(text) + 1}")
            seen.append(text)
        """
    said = check(tmp_path, "2.3", duplicate_rule(another))
    assert "2.3 No duplicate items: done. 12 generated plans and a run of the chapter" in said


# --- 2.4 Tune the reminder and measure it ------------------------------------------------


def reminder_line(new: str) -> str:
    """A diff that replaces the line of run that sends the reminder."""
    return (
        "--- a/v2_todos/agent.py\n+++ b/v2_todos/agent.py\n"
        "@@ quiet_turns = plan.quiet_turns_after(calls)\n"
        '-                results.append({"type": "text", "text": REMINDER})\n'
        + "".join(
            f"+                {line}\n" for line in textwrap.dedent(new).strip().splitlines()
        )
    )


READ_BACK = """\
    --- a/v2_todos/todos.py
    +++ b/v2_todos/todos.py
    @@ def reminders(
    -            block.get("type") == "text" and block.get("text") == REMINDER
    +            block.get("type") == "text" and str(block.get("text", "")).startswith(REMINDER)
    """
WITH_THE_PLAN = 'results.append({"type": "text", "text": f"{REMINDER}\\n\\n{plan.todos.render()}"})'
DEMO_LIST = "\\n[>] Fixing word_count\\n[ ] Fix top_words\\n[ ] Add reading_time"
FIRST_PLAN = """\
    --- a/v2_todos/agent.py
    +++ b/v2_todos/agent.py
    @@ from .todos import
    +from .todos import plan_updates, render
    """
WRONG_REMINDERS = {
    "the demo's list, typed in": [
        reminder_line(f'results.append({{"type": "text", "text": REMINDER + "{DEMO_LIST}"}})'),
        READ_BACK,
    ],
    "the first plan for ever": [
        FIRST_PLAN,
        reminder_line(
            "first = render(plan_updates(messages)[0][1])\n"
            'results.append({"type": "text", "text": f"{REMINDER}\\n\\n{first}"})'
        ),
        READ_BACK,
    ],
    "the list, but reminders() not told": [reminder_line(WITH_THE_PLAN)],
    "a message of its own": [
        reminder_line(
            'messages.append({"role": "user", "content": '
            '[{"type": "text", "text": f"{REMINDER}\\n\\n{plan.todos.render()}"}]})'
        ),
        READ_BACK,
    ],
    "before the results": [
        reminder_line(
            'results.insert(0, {"type": "text", "text": f"{REMINDER}\\n\\n{plan.todos.render()}"})'
        ),
        READ_BACK,
    ],
    "the list on the console only": [
        reminder_line(
            'results.append({"type": "text", "text": REMINDER})\n'
            "console.listing(plan.todos.render())"
        ),
        READ_BACK,
    ],
    "every quiet turn": [
        "--- a/v2_todos/agent.py\n+++ b/v2_todos/agent.py\n"
        "@@ quiet_turns = plan.quiet_turns_after(calls)\n"
        '-            if quiet_turns and "todo_write" in tools:'
        "  # left alone for `remind_after` turns\n"
        "+            if quiet_turns or plan.quiet_turns:\n",
        reminder_line(WITH_THE_PLAN),
        READ_BACK,
    ],
    "the steps without their statuses": [
        reminder_line(
            'steps = ", ".join(item["content"] for item in plan.todos.items)\n'
            'results.append({"type": "text", "text": f"{REMINDER}\\n\\nSteps: {steps}"})'
        ),
        READ_BACK,
    ],
    "the steps and the turn, without their statuses": [
        reminder_line(
            'steps = "\\n".join(f"- {item[\'content\']}" for item in plan.todos.items)\n'
            'results.append({"type": "text", "text": f"{REMINDER}\\n\\nAs of turn {len(usage)}:'
            '\\n{steps}"})'
        ),
        READ_BACK,
    ],
    "the last plan written, even one the tool refused": [
        reminder_line(
            "written = [b['input'].get('items', []) for m in messages if m['role'] == "
            "'assistant' for b in m['content'] if b.get('name') == 'todo_write'][-1]\n"
            "steps = '\\n'.join(f\"[{i['status']}] {i['content']}\" for i in written)\n"
            'results.append({"type": "text", "text": f"{REMINDER}\\n\\n{steps}"})'
        ),
        READ_BACK,
    ],
}


WHY = {
    "the steps without their statuses": "though the plan's statuses moved on",
    "the steps and the turn, without their statuses": "though the plan's statuses moved on",
    "the last plan written, even one the tool refused": "dropped",
    "the list, but reminders() not told": "but result.reminders is []",
    "a message of its own": "not after the results of its message",
    "before the results": "not after the results of its message",
    "every quiet turn": "hint: keep when it comes",
}


@pytest.mark.docs  # the chapter as it ships: the exercise not done yet
@pytest.mark.parametrize("wrong", WRONG_REMINDERS)
def test_a_reminder_without_the_plan_as_it_stands_is_not_done(wrong: str, tmp_path: Path) -> None:
    said = check(tmp_path, "2.4", *WRONG_REMINDERS[wrong])
    assert not_done(said) and "remind_after=" in said and WHY.get(wrong, ": it lacks") in said


@pytest.mark.docs  # the chapter as it ships: the exercise not done yet
def test_the_reminder_as_shipped_is_not_done(tmp_path: Path) -> None:
    said = check(tmp_path, "2.4")
    assert not_done(said) and "hint: put the list as it stands" in said and "it lacks" in said


@pytest.mark.docs  # the chapter as it ships: the exercise not done yet
def test_a_reminder_with_the_plan_in_a_format_of_its_own_is_done(tmp_path: Path) -> None:
    own = (
        "steps = \"\\n\".join(f\"- {i['content']} ({i['status']})\" for i in plan.todos.items)\n"
        'results.append({"type": "text", "text": f"{REMINDER}\\n<todos>\\n{steps}\\n</todos>"})'
    )
    said = check(tmp_path, "2.4", reminder_line(own), READ_BACK)
    assert "2.4 Tune the reminder and measure it: done." in said, said


@pytest.mark.docs  # the chapter as it ships: the exercise not done yet
def test_the_checks_name_the_plan_they_tried_in_both_languages(tmp_path: Path) -> None:
    course, home = copy_course(tmp_path / "course"), tmp_path / "home"
    home.mkdir()
    for lang, word in (("en", "the plan"), ("zh", "计划")):
        done = run_check(f"python -m lab exercise 2.4 --lang {lang}", course, home)
        assert done.returncode == 1 and word in done.stdout and "remind_after=" in done.stdout
