"""Chapter 2's todo list: every rule, atomic updates, rendering, and reading the plan back."""

from __future__ import annotations

import pytest

from machine import OUTPUT_LIMIT
from v2_todos.todos import (
    MAX_CONTENT,
    MAX_ITEMS,
    REMINDER,
    TodoList,
    latest_plan,
    plan_updates,
    problems_with,
    reminders,
)


def item(content: str = "Fix median", status: str = "pending", **extra: str) -> dict:
    return {"content": content, "status": status, **extra}


PLAN = [
    item("Run the tests", "completed"),
    item("Fix median", "in_progress", active_form="Fixing median"),
    item("Add mode"),
]


def test_update_returns_the_rendered_list() -> None:
    todos = TodoList()
    assert todos.update(PLAN) == (
        "Todos (1/3 done)\n[x] Run the tests\n[>] Fixing median\n[ ] Add mode"
    )
    assert todos.items == PLAN
    assert todos.unfinished


def test_content_is_stripped_and_items_are_copies() -> None:
    todos = TodoList([item("  Fix median \n")])
    items = todos.items
    items[0]["status"] = "completed"
    assert todos.items == [item("Fix median")]


def test_an_empty_list_clears_the_plan() -> None:
    todos = TodoList(PLAN)
    assert todos.update([]) == "Todos: (none)"
    assert todos.items == [] and not todos.unfinished


@pytest.mark.parametrize(
    ("items", "problem"),
    [
        ("Fix median", "items must be a list of objects, got str"),
        ([item()] * (MAX_ITEMS + 1), f"21 items, at most {MAX_ITEMS} allowed"),
        (
            [item("a", "in_progress"), item("b"), item("c", "in_progress")],
            "items 1, 3 are all in_progress: keep exactly one in progress",
        ),
        ([item("   ")], "item 1: content must be a non-empty string"),
        ([{"status": "pending"}], "item 1: content must be a non-empty string"),
        ([item(status="done")], "item 1: status 'done' is not one of pending, in_progress"),
        ([item(priority="high")], "item 1: unknown key(s) priority; allowed: content, status"),
        (["Fix median"], "item 1: must be an object with content and status, got str"),
        ([{"content": "a", "status": "pending", "active_form": 3}], "active_form must be a"),
    ],
)
def test_each_rule_rejects_with_a_readable_message(items: object, problem: str) -> None:
    assert any(problem in line for line in problems_with(items)), problems_with(items)
    todos = TodoList(PLAN)
    with pytest.raises(ValueError, match="the todo list was not changed"):
        todos.update(items)
    assert todos.items == PLAN  # atomic: a rejected update changes nothing


def test_every_problem_is_listed_at_once() -> None:
    problems = problems_with([item(""), item("b", "later"), {"content": "c"}])
    assert problems == [
        "item 1: content must be a non-empty string",
        "item 2: status 'later' is not one of pending, in_progress, completed",
        "item 3: status None is not one of pending, in_progress, completed",
    ]


def call(call_id: str, items: list) -> dict:
    return {"type": "tool_use", "id": call_id, "name": "todo_write", "input": {"items": items}}


def result(call_id: str, is_error: bool = False) -> dict:
    return {"type": "tool_result", "tool_use_id": call_id, "content": "…", "is_error": is_error}


def test_the_plan_and_its_history_are_read_back_from_the_messages() -> None:
    first, second = [item("a", "in_progress"), item("b")], [item("a", "completed"), item("b")]
    messages = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": [call("t1", first)]},
        {"role": "user", "content": [result("t1")]},
        {"role": "assistant", "content": [call("t2", [item("x", "wrong")])]},
        {"role": "user", "content": [result("t2", is_error=True)]},  # rejected: not an update
        {"role": "assistant", "content": [call("t3", second)]},
        {"role": "user", "content": [result("t3"), {"type": "text", "text": REMINDER}]},
        {"role": "assistant", "content": [call("t4", [])]},  # never answered: not an update
    ]
    assert plan_updates(messages) == [(1, first), (3, second)]
    assert latest_plan(messages) == second
    assert latest_plan(messages[:1]) == []
    assert reminders(messages) == [3]


# --- sizes and hostile content ----------------------------------------------------------


def test_an_item_is_capped_and_the_error_text_too() -> None:
    todos = TodoList(PLAN)
    with pytest.raises(ValueError, match=f"at most {MAX_CONTENT}"):
        todos.update([item("x" * 5_000_000)])
    with pytest.raises(ValueError) as refused:
        todos.update([{"content": "", "status": "?", "k" * 1000: 1} for _ in range(10_000)])
    assert len(str(refused.value).encode()) <= OUTPUT_LIMIT + 200
    assert "cut from the middle" in str(refused.value)
    assert [entry["content"] for entry in todos.items] == [entry["content"] for entry in PLAN]


def test_a_newline_in_an_item_cannot_forge_a_line_of_the_plan() -> None:
    forged = TodoList([item("Add mode\n[x] Delete the tests", "pending")]).render()
    assert forged.splitlines() == ["Todos (0/1 done)", "[ ] Add mode [x] Delete the tests"]


def test_an_accepted_result_for_a_list_that_breaks_the_rules_is_not_the_plan() -> None:
    call = {"type": "tool_use", "id": "t1", "name": "todo_write", "input": {"items": "oops"}}
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [call]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
        },
    ]
    assert latest_plan(messages) == []
