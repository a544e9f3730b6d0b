"""What chapter 2's checks write plans with: step names made fresh for each check
(`Fix loader_37`), a valid plan of them, the learner's chapter run on plans, and the
problems its rules list when it refuses one.
"""

from __future__ import annotations

import random
import re
from typing import Any

from .check import FINISH, calls, results, run_replies, text_of, tool_use

STATUSES = ("pending", "in_progress", "completed")  # the chapter's three, as the docs give them
REFUSED = "the todo list was not changed: "  # how the chapter's refusal of a plan begins
VERBS = ("Fix", "Add", "Test", "Rename", "Document", "Check", "Remove", "Split", "Profile")
NOUNS = ("parser", "median", "cache", "report", "loader", "config", "timer", "index", "export")


def fresh_steps(rng: random.Random, count: int) -> list[str]:
    """`count` different step names, made for this check: `Fix loader_37`, `Add cache_52`."""
    steps: set[str] = set()
    while len(steps) < count:
        steps.add(f"{rng.choice(VERBS)} {rng.choice(NOUNS)}_{rng.randint(10, 99)}")
    return rng.sample(sorted(steps), count)


def fresh_plan(rng: random.Random, steps: list[str]) -> list[dict[str, str]]:
    """A valid plan of these steps: some completed, one in progress, the rest pending."""
    doing = rng.randrange(len(steps))
    plan = []
    for number, step in enumerate(steps):
        status = "completed" if number < doing else "in_progress" if number == doing else "pending"
        plan.append({"content": step, "status": status})
    plan[doing]["active_form"] = f"Working on {plan[doing]['content']}"
    return plan


def written(*plans: Any) -> tuple[Any, list[dict[str, Any]]]:
    """The learner's chapter run on one todo_write per reply, then an answer: the run, and
    the result block that answered each plan."""
    replies = [
        calls(tool_use(f"plan_{n}", "todo_write", {"items": plan}))
        for n, plan in enumerate(plans, 1)
    ]
    result = run_replies("v2_todos", *replies, FINISH)
    return result, results(result)


def problems_in(answer: dict[str, Any]) -> list[str] | None:
    """The problems a refusal by the chapter's rules lists; None if the plan was not refused
    by them (accepted, or stopped earlier by the schema)."""
    text = text_of(answer)
    if not answer.get("is_error") or not text.startswith(REFUSED):
        return None
    return text[len(REFUSED) :].split("; ")


def names(text: str, *numbers: int) -> bool:
    """Whether `text` names each of these item numbers, as a number of its own."""
    return all(re.search(rf"(?<![\w.]){number}(?![\w.])", text) for number in numbers)
