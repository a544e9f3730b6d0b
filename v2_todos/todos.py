"""The plan: a todo list the model writes whole, through one tool, every time it changes.

Chapter 2's idea in one data structure.  The model calls

    todo_write(items=[{"content": "Fix median", "status": "in_progress",
                       "active_form": "Fixing median"}, …])

with the **whole** list each time, never a patch: a model that rewrites the list
must read it again, so the plan it sees and the plan it keeps are the same thing.
The result it gets back is the rendered list, which is also what the person sees.

The rules, each with the reason it exists:

- at most MAX_ITEMS items: a plan longer than that is a backlog, not a plan;
- at most one item `in_progress`: one thing at a time, so "what am I doing now"
  always has one answer;
- `content` is not empty, and at most MAX_CONTENT characters: an empty line
  cannot be checked off, and the plan is sent again with every result;
- `status` is one of STATUSES, and items have no keys but KEYS: a typo must fail
  loudly, not quietly become a fourth state;
- an empty list clears the plan.

A rejected update raises ValueError listing every problem at once (so the model
fixes them all in one retry), capped as tool output is, and leaves the list exactly
as it was.  An item is rendered on one line whatever it holds: a newline in its
text cannot forge another line of the plan.

The list is not a second record beside the conversation: every successful
`todo_write` is in the messages, so the plan at any point, its history and the
reminders can all be read back from them (`plan_updates`, `reminders`).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from llm import Block, Message, RunResult
from llm.result import tool_uses
from machine import cap_output

STATUSES = ("pending", "in_progress", "completed")
KEYS = ("content", "status", "active_form")
MAX_ITEMS = 20
MAX_CONTENT = 500  # characters of one item: a step, not a document
MARKS = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}

TODO_TOOL: dict[str, Any] = {
    "name": "todo_write",
    "description": (
        "Write your plan for the task as a todo list, and keep it up to date. Send the "
        "whole list every time (it replaces the old one). Use it for any task of several "
        "steps: make the list first, keep exactly one item in_progress while you work on "
        f"it, and mark it completed as soon as it is done. At most {MAX_ITEMS} items; "
        "an empty list clears the plan. Returns the list as it now stands."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "description": "The whole list, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "What to do."},
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "active_form": {
                            "type": "string",
                            "description": "Shown while in progress, e.g. 'Running the tests'.",
                        },
                    },
                    "required": ["content", "status"],
                },
            }
        },
        "required": ["items"],
    },
}

REMIND_AFTER = 3  # model turns without todo_write before the plan is brought back up

REMINDER = (
    "Reminder: your todo list is not up to date. If the task has several steps, call "
    "todo_write with the whole list: mark what is done as completed and keep exactly "
    "one item in_progress."
)


def problems_with(items: Any) -> list[str]:
    """Everything wrong with a proposed list, one readable line each; empty if it is valid."""
    if not isinstance(items, list):
        return [f"items must be a list of objects, got {type(items).__name__}"]
    problems = []
    if len(items) > MAX_ITEMS:
        problems.append(f"{len(items)} items, at most {MAX_ITEMS} allowed: merge or drop some")
    for number, item in enumerate(items, start=1):
        problems += [f"item {number}: {problem}" for problem in _item_problems(item)]
    doing = [n for n, item in enumerate(items, 1) if _status(item) == "in_progress"]
    if len(doing) > 1:
        listed = ", ".join(map(str, doing))
        problems.append(f"items {listed} are all in_progress: keep exactly one in progress")
    return problems


def _status(item: Any) -> Any:
    return item.get("status") if isinstance(item, dict) else None


def _item_problems(item: Any) -> list[str]:
    if not isinstance(item, dict):
        return [f"must be an object with content and status, got {type(item).__name__}"]
    problems = []
    unknown = sorted(str(key)[:40] for key in item if key not in KEYS)
    if unknown:
        problems.append(f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(KEYS)}")
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        problems.append("content must be a non-empty string")
    elif len(content) > MAX_CONTENT:
        problems.append(f"content is {len(content):,} characters, at most {MAX_CONTENT}")
    if item.get("status") not in STATUSES:
        problems.append(f"status {item.get('status')!r} is not one of {', '.join(STATUSES)}")
    if "active_form" in item and not isinstance(item["active_form"], str):
        problems.append("active_form must be a string")
    elif len(item.get("active_form", "")) > MAX_CONTENT:
        problems.append(f"active_form is longer than {MAX_CONTENT} characters: shorten it")
    return problems


class TodoList:
    """The current plan.  `update` replaces it whole, or not at all."""

    def __init__(self, items: list[dict[str, str]] | None = None) -> None:
        self._items: list[dict[str, str]] = []
        if items:
            self.update(items)

    @property
    def items(self) -> list[dict[str, str]]:
        """A copy: the list changes only through `update`."""
        return copy.deepcopy(self._items)

    @property
    def unfinished(self) -> bool:
        return any(item["status"] != "completed" for item in self._items)

    def update(self, items: Any) -> str:
        """Replace the list with `items` and return it rendered; ValueError leaves it as it was."""
        problems = problems_with(items)
        if problems:
            raise ValueError(cap_output("the todo list was not changed: " + "; ".join(problems)))
        self._items = [
            {key: item[key].strip() for key in KEYS if key in item} for item in items
        ]
        return self.render()

    def render(self) -> str:
        """`Todos (1/3 done)` then one line per item: `[x]` done, `[>]` doing, `[ ]` next."""
        return render(self._items)


def render(items: list[dict[str, str]]) -> str:
    if not items:
        return "Todos: (none)"
    done = sum(item["status"] == "completed" for item in items)
    lines = [f"Todos ({done}/{len(items)} done)"]
    for item in items:
        text = item["content"]
        if item["status"] == "in_progress" and item.get("active_form"):
            text = item["active_form"]
        lines.append(f"{MARKS[item['status']]} {' '.join(text.split())}")  # one line, always
    return "\n".join(lines)


def reminder_due(todos: TodoList, quiet_turns: int, tool_calls: int, after: int) -> bool:
    """Whether the next message should remind the model of its plan.

    `quiet_turns` counts the model turns since its last todo_write (or the last
    reminder).  Due after `after` such turns when the plan has unfinished items, or
    when there is no plan at all although the task has taken more than `after` tool
    calls: a task that long has steps worth writing down.  Never for a finished plan.
    """
    if quiet_turns < after:
        return False
    return todos.unfinished if todos.items else tool_calls > after


class Plan:
    """One run's plan: the todo list the model writes, and how long it has left it alone.

    `write` is the handler of todo_write.  `quiet_turns_after` counts the turns, as the
    loop finishes each, and says when the plan is due to be brought back up.
    """

    def __init__(self, items: list[dict[str, str]], remind_after: int = REMIND_AFTER) -> None:
        self.todos = TodoList(items)
        self.remind_after = remind_after
        self.quiet_turns = 0  # model turns since the plan was written or last recalled
        self.tool_calls = 0

    def write(self, workdir: Path, items: Any) -> str:
        """todo_write: replace the whole list, and return it rendered."""
        return self.todos.update(items)

    def quiet_turns_after(self, calls: list[Block]) -> int:
        """Count one more turn, that made `calls`.  When the plan is due to be recalled,
        the turns it was left alone (and the count starts again); otherwise 0."""
        self.tool_calls += len(calls)
        wrote_plan = any(call["name"] == "todo_write" for call in calls)
        self.quiet_turns = 0 if wrote_plan else self.quiet_turns + 1
        if not reminder_due(self.todos, self.quiet_turns, self.tool_calls, self.remind_after):
            return 0
        quiet_turns, self.quiet_turns = self.quiet_turns, 0
        return quiet_turns


# --- reading the plan back from the conversation --------------------------------------


def plan_updates(messages: list[Message]) -> list[tuple[int, list[dict[str, str]]]]:
    """(turn, list) for every todo_write that was accepted, in order; turns count from 1.

    A turn is one assistant message.  An update counts when its tool_result, in the
    next message, is not an error.
    """
    updates = []
    turn = 0
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        turn += 1
        accepted = _accepted_calls(messages[index + 1] if index + 1 < len(messages) else None)
        for call in tool_uses(message):
            items = call["input"].get("items") if isinstance(call["input"], dict) else None
            # A result marked accepted for a list that breaks the rules (an id the provider
            # repeated, a session file edited by hand) is not taken for the plan.
            if call["name"] == "todo_write" and call["id"] in accepted and not problems_with(items):
                updates.append((turn, TodoList(items).items))
    return updates


def _accepted_calls(message: Message | None) -> set[str]:
    """Ids of the calls that `message` answers with a result that is not an error."""
    if message is None or isinstance(message["content"], str):
        return set()
    return {
        block["tool_use_id"]
        for block in message["content"]
        if block.get("type") == "tool_result" and not block.get("is_error")
    }


class PlanRunResult(RunResult):
    """A RunResult that can tell the plan's story, read back from the messages."""

    @property
    def plan(self) -> list[dict[str, str]]:
        """The list as the run left it."""
        return latest_plan(self.messages)

    @property
    def plan_history(self) -> list[tuple[int, list[dict[str, str]]]]:
        """(turn, list) for every accepted update: how the plan moved."""
        return plan_updates(self.messages)

    @property
    def reminders(self) -> list[int]:
        """The turns after which the model was reminded of its plan."""
        return reminders(self.messages)

    def counts(self) -> dict[str, int]:
        return {"plan updates": len(self.plan_history), "reminders": len(self.reminders)}

    def details(self) -> dict[str, Any]:
        history = [{"turn": turn, "items": items} for turn, items in self.plan_history]
        return {"plan_history": history, "reminders": self.reminders}


def latest_plan(messages: list[Message]) -> list[dict[str, str]]:
    """The list as the last accepted todo_write left it; empty if there was none."""
    updates = plan_updates(messages)
    return updates[-1][1] if updates else []


def reminders(messages: list[Message]) -> list[int]:
    """The turns after which the model was reminded of its plan."""
    turns, turn = [], 0
    for message in messages:
        if message["role"] == "assistant":
            turn += 1
        elif isinstance(message["content"], list) and any(
            block.get("type") == "text" and block.get("text") == REMINDER
            for block in message["content"]
        ):
            turns.append(turn)
    return turns
