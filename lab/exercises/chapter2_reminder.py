"""The check of chapter 2's exercise 4: the reminder shows the plan as it stands.

A fresh plan is left alone until the reminder comes; then a changed plan (a step
dropped, two added), followed by a plan the tool refuses, is left alone again; then the
same steps with their statuses moved on: every reminder must show the plan of its moment
(the one the tool took, not the one it refused; its statuses too), after the results in
the same message.
"""

from __future__ import annotations

from .chapter2_plans import fresh_plan, fresh_steps
from .check import FINISH, Said, Verdict, calls, fresh_random, run_replies, tool_use


def reminder_shows_the_plan(words: list[str]) -> Verdict:
    """The policy change the exercise suggests, the current list in the reminder, on a run
    of the chapter: a fresh plan left alone until reminded, then a changed plan (a step
    dropped, two added) left alone again.  Every reminder shows the plan as it stands,
    after the results in the same message, and `result.reminders` still counts them.
    What the change costs is the measurement the solutions page grades."""
    rng = fresh_random()
    after = rng.randint(2, 3)  # with 1, a reminder after every quiet turn would look right
    steps = fresh_steps(rng, 6)
    first = fresh_plan(rng, steps[:4])
    second = [dict(item, status="completed") for item in first[1:2]]
    second += [*fresh_plan(rng, steps[2:-1]), {"content": steps[-1], "status": "pending"}]
    third = moved_on(second)  # the same steps, their statuses moved on, one still pending
    refused = [{"content": step, "status": "in_progress"} for step in fresh_steps(rng, 2)]
    look = calls(tool_use("look", "read_file", {"path": "README.md"}))
    replies = [calls(tool_use("plan_1", "todo_write", {"items": first})), *[look] * after]
    replies += [calls(tool_use("plan_2", "todo_write", {"items": second}))]
    replies += [calls(tool_use("bad", "todo_write", {"items": refused})), *[look] * after]
    replies += [calls(tool_use("plan_3", "todo_write", {"items": third})), *[look] * after]
    result = run_replies("v2_todos", *replies, FINISH, remind_after=after)

    sent, turn, plan = [], 0, first
    for message in result.messages:
        if message["role"] == "assistant":
            turn += 1
            plan = {after + 2: second, 2 * after + 4: third}.get(turn, plan)
            continue
        content = message["content"] if isinstance(message["content"], list) else []
        kinds = [block.get("type") for block in content]
        for at, block in enumerate(content):
            if block.get("type") == "text":
                placed = "tool_result" in kinds[:at] and "tool_result" not in kinds[at:]
                sent.append((turn, block.get("text", ""), plan, placed))
    case = Said(
        f"remind_after={after}, the plan {steps[:4]}, then {steps[1:]}",
        f"remind_after={after}，计划 {steps[:4]}，然后 {steps[1:]}",
    )
    turns = [turn for turn, *_ in sent]
    after_zh = f"提醒在第 {'、'.join(map(str, turns))} 轮之后" if turns else "没有提醒"
    seen = Said(f"{case.en}: reminders after turns {turns}", f"{case.zh}：{after_zh}")
    if turns != [after + 1, 2 * after + 3, 3 * after + 4]:  # a refused write is no quiet turn
        hint = Said(
            f"keep when it comes: after {after} quiet turns, once for each plan",
            f"提醒的时机不变：{after} 轮没有更新之后，每份计划各一次",
        )
        return Verdict(False, seen, hint)
    for turn, text, plan, placed in sent:
        shown = Said(
            f"{case.en}: the reminder after turn {turn} is {text[:300]!r}",
            f"{case.zh}：第 {turn} 轮之后的提醒是 {text[:300]!r}",
        )
        if not placed:
            said = Said(
                shown.en + ", not after the results of its message",
                shown.zh + "，不在它那条消息的结果之后",
            )
            hint = Said(
                "append the reminder to the results, after the last tool_result",
                "把提醒追加到结果里，放在最后一个 tool_result 之后",
            )
            return Verdict(False, said, hint)
        missing = [item["content"] for item in plan if not shows(text, item)]
        stale = [steps[0]] if plan is not first and steps[0] in text else []  # the step dropped
        stale += [item["content"] for item in refused if item["content"] in text]
        if missing or stale:
            said = Said(
                shown.en + f": it lacks {missing}" + f" and shows {stale}, dropped" * bool(stale),
                shown.zh + f"：缺了 {missing}" + f"，还有已去掉的 {stale}" * bool(stale),
            )
            hint = Said(
                "put the list as it stands (plan.todos.render()) into the reminder",
                "把当前的清单 plan.todos.render() 放进提醒",
            )
            return Verdict(False, said, hint)
    if not any(line_of(sent[1][1], item) != line_of(sent[2][1], item) for item in sent[1][2]):
        said = Said(
            f"{case.en}: the reminder after turn {turns[2]} shows each step as the one after "
            f"turn {turns[1]} does, though the plan's statuses moved on in between",
            f"{case.zh}：第 {turns[2]} 轮之后的提醒里，每一步的写法都和第 {turns[1]} 轮之后的一样，"
            "可计划的状态在这之间已经变了",
        )
        hint = Said(
            "show each item's status too, as plan.todos.render() does",
            "把每一项的状态也显示出来，就像 plan.todos.render() 那样",
        )
        return Verdict(False, said, hint)
    if result.reminders != turns:
        seen = Said(
            seen.en + f", each with the plan; but result.reminders is {result.reminders}",
            seen.zh + f"，每次都带着计划；但是 result.reminders 是 {result.reminders}",
        )
        hint = Said(
            "reminders() in todos.py reads them back: let it find the longer text",
            "todos.py 里的 reminders() 负责把提醒读回来：让它认出更长的文本",
        )
        return Verdict(False, seen, hint)
    return Verdict(
        True,
        Said(
            seen.en + ", each with the plan as it stood (the measurement: see the rubric)",
            seen.zh + "，每次都带着当时的计划（测量部分见评分标准）",
        ),
    )


def moved_on(plan: list[dict[str, str]]) -> list[dict[str, str]]:
    """The plan one step further: the item in progress completed, the next one begun."""
    doing = next(n for n, item in enumerate(plan) if item["status"] == "in_progress")
    moved = [{k: v for k, v in item.items() if k != "active_form"} for item in plan]
    moved[doing]["status"] = "completed"
    if doing + 1 < len(moved):
        moved[doing + 1] |= {"status": "in_progress", "active_form": "Now on the next step"}
    return moved


def shows(text: str, item: dict[str, str]) -> bool:
    """Whether a reminder's text shows this item: its content, or its active form."""
    return item["content"] in text or bool(item.get("active_form")) and item["active_form"] in text


def line_of(text: str, item: dict[str, str]) -> str:
    """The line of a reminder that shows this item (by its content), or "" if none does:
    a status moved on must change that line, not only something else in the text."""
    return next((line for line in text.splitlines() if item["content"] in line), "")
