"""Chapter 2's figures: the plan, read back from the demo's messages."""

from __future__ import annotations

import shutil

from lab.chapters import chapter
from lab.words import word
from llm import Message
from llm.cassette import ReplayModel, read_cassette
from llm.demo import copy_private, fresh_folder
from llm.result import tool_uses
from llm.tokens import estimate_block, estimate_message
from v2_todos.todos import MARKS

from .demos import requests, run_demo, scratch_folder
from .markdown import number, stamp, table


def plan_call_ids(messages: list[Message]) -> set[str]:
    return {
        call["id"]
        for message in messages
        if message["role"] == "assistant"
        for call in tool_uses(message)
        if call["name"] == "todo_write"
    }


def tokens_after(messages: list[Message], index: int, block: int | None = None) -> int:
    """Estimated tokens that follow message `index` (or only its block `block`) to the end."""
    rest = sum(estimate_message(message) for message in messages[index + 1 :])
    if block is None:
        return rest
    return rest + sum(estimate_block(later) for later in messages[index]["content"][block + 1 :])


def latest_plan_result(messages: list[Message]) -> tuple[int, int] | None:
    """(message, block) of the last todo_write result that was accepted, if any."""
    calls = plan_call_ids(messages)
    found = None
    for index, message in enumerate(messages):
        if isinstance(message["content"], str):
            continue
        for place, block in enumerate(message["content"]):
            accepted = block.get("type") == "tool_result" and not block.get("is_error")
            if accepted and block["tool_use_id"] in calls:
                found = (index, place)
    return found


def plan_tokens(messages: list[Message]) -> int:
    """Estimated tokens of the plan's own blocks: every todo_write call and its result."""
    calls = plan_call_ids(messages)
    return sum(
        estimate_block(block)
        for message in messages
        if not isinstance(message["content"], str)
        for block in message["content"]
        if block.get("id") in calls or block.get("tool_use_id") in calls
    )


def plan_distance(name: str, lang: str = "en") -> str:
    """At each call: how far back the first reply lies, and how far back the latest plan.

    Without a plan (chapter 1), the only statement of what remains to do is the
    model's first reply, and every turn pushes it further back.  With one, the latest
    accepted todo_write result is rewritten near the end each time the plan moves.
    Measured in the tokens the model reads after it, by `llm`'s token estimate.
    """
    run = run_demo(name)
    headers = [
        "turn",
        "context (tokens in)",
        "plan blocks in it (tokens)",
        "after the first reply (tokens)",
        "after the latest plan (tokens)",
    ]
    rows = []
    for index, (turn, request) in enumerate(zip(run.turns, requests(run), strict=True), start=1):
        first = next((i for i, m in enumerate(request) if m["role"] == "assistant"), None)
        plan = latest_plan_result(request)
        rows.append(
            [
                str(index),
                number(turn.reply.usage.input_tokens),
                number(plan_tokens(request)),
                "—" if first is None else number(tokens_after(request, first)),
                "—" if plan is None else number(tokens_after(request, *plan)),
            ]
        )
    return stamp() + "\n" + table([word(h, lang) for h in headers], rows)


def plan_history(name: str, lang: str = "en") -> str:
    """Every item of the plan at every turn the model rewrote it, and when it was reminded.

    `[x]` done, `[>]` in progress, `[ ]` not started; an empty cell is a turn
    without a todo_write, which is what the reminder counts.
    """
    run = run_demo(name)
    if not hasattr(run.result, "plan_history"):
        raise SystemExit(f"{name} keeps no plan: plan-history needs chapter 2 or later")
    statuses = {
        turn: {item["content"]: item["status"] for item in plan}
        for turn, plan in run.result.plan_history
    }
    turns = range(1, len(run.turns) + 1)
    items = dict.fromkeys(content for plan in statuses.values() for content in plan)
    rows = []
    for content in items:
        marks = [statuses.get(turn, {}).get(content) for turn in turns]
        rows.append([content, *(f"`{MARKS[mark]}`" if mark else "" for mark in marks)])
    sent = [word("sent", lang) if turn in run.result.reminders else "" for turn in turns]
    rows.append([word("reminder", lang), *sent])
    return table([word("item \\ turn", lang), *map(str, turns)], rows)


def reminder_tuning(lang: str = "en") -> str:
    """Exercise 2.4's measurement, as its script makes it: the demo replayed with each
    `remind_after` in one folder (its name is in the results), when the reminders came and
    what the whole run read."""
    demo = chapter("v2_todos")
    task = read_cassette(demo.demo_cassette)[0]["task"]
    rows = []
    with scratch_folder() as scratch:
        for after in (1, 2, 3, 4):
            workdir = fresh_folder("v2_todos-demo-", scratch)
            copy_private(demo.demo_workspace, workdir)
            model = ReplayModel(demo.demo_cassette)
            result = demo.run(task, model=model, workdir=workdir, remind_after=after)
            shutil.rmtree(workdir)
            turns = ", ".join(map(str, result.reminders)) or "—"
            rows.append([str(after), turns, number(result.usage.input_tokens)])
    headers = ["remind_after", "reminders after turns", "tokens in"]
    return stamp() + "\n" + table([word(h, lang) for h in headers], rows)
