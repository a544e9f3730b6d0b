"""The checks of chapter 2's exercises: the todo list, its rules and its reminder.

Every plan a check writes is made fresh for that check: step names no answer can
know in advance (`Fix loader_37`), at random positions, with random statuses.  A
rule written for the exercise's own example (`Fix median`), a rule that refuses
every list, or a reminder that carries one fixed list are all "not done".  Each
verdict names the plan it tried, so a "not done" can be reproduced by hand.
"""

from __future__ import annotations

import random
from typing import Any

from llm.result import tool_uses

from .chapter2_plans import (
    STATUSES,
    fresh_plan,
    fresh_steps,
    names,
    problems_in,
    written,
)
from .chapter2_reminder import reminder_shows_the_plan
from .check import (
    EXPLAIN,
    LIVE,
    Exercise,
    Said,
    Verdict,
    fresh_random,
    named_file,
    results,
    run_chapter,
    text_of,
)

# --- 2.2 Break the rules on purpose ------------------------------------------------------

RULES = {
    "in_progress": Said("two items in_progress", "两项 in_progress"),
    "empty": Said("an item with an empty content", "一项的内容为空"),
    "status": Said("a status that is not one of the three (done)", "三种之外的状态（done）"),
}


def rules_of(items: Any) -> list[str]:
    """Which of the exercise's three rules a plan breaks, read here, not by the chapter."""
    objects = [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []
    broken = []
    if sum(item.get("status") == "in_progress" for item in objects) >= 2:
        broken.append("in_progress")
    if any(not str(item.get("content") or "").strip() for item in objects):
        broken.append("empty")
    if any(item.get("status") not in STATUSES for item in objects):
        broken.append("status")
    return broken


def listed(rules: list[str], lang: str) -> str:
    said = [getattr(RULES[rule], lang) for rule in rules]
    return ("、" if lang == "zh" else ", ").join(said) or ("无" if lang == "zh" else "none")


def rules_broken(words: list[str]) -> Verdict:
    """The learner's cassette, replayed by the chapter: its first plan breaks all three rules
    and is refused with every problem in one result, and its valid second plan is the one
    update.  Then fresh plans of the check's own, each breaking one rule at a random
    place, show that the chapter refuses each rule on its own: a refusal of anything would
    list problems too."""
    result = run_chapter("v2_todos", named_file(words, Said("cassette", "录像带"), "2.2"))
    plans = [
        call
        for message in result.messages
        if message["role"] == "assistant"
        for call in tool_uses(message)
        if call["name"] == "todo_write"
    ]
    if not plans:
        seen = Said("no todo_write call in the run", "运行里没有 todo_write 调用")
        hint = Said("the first reply calls todo_write", "第一条回复调用 todo_write")
        return Verdict(False, seen, hint)
    call = plans[0]
    answer = next(block for block in results(result) if block["tool_use_id"] == call["id"])
    broken = rules_of(call["input"].get("items") if isinstance(call["input"], dict) else None)
    shown = text_of(answer)[:300]
    seen = Said(
        f"the first plan breaks {len(broken)} of the 3 rules ({listed(broken, 'en')}); "
        f"its result: {shown}",
        f"第一份计划违反了 3 条规则中的 {len(broken)} 条（{listed(broken, 'zh')}）；结果：{shown}",
    )
    missing = [rule for rule in RULES if rule not in broken]
    if missing:
        hint = Said(
            f"the first plan also needs {listed(missing, 'en')}",
            f"第一份计划还要有：{listed(missing, 'zh')}",
        )
        return Verdict(False, seen, hint)
    problems = problems_in(answer)
    if problems is None or len(problems) < len(RULES):
        hint = Said(
            "the chapter refuses such a plan with every problem listed: is the call's "
            "input {'items': [...]}, and are the chapter's rules as shipped?",
            "章节拒绝这样的计划时会列出每个问题：调用的输入是 {'items': [...]} 吗？"
            "章节的规则还是原样吗？",
        )
        return Verdict(False, seen, hint)
    updates = [turn for turn, _ in result.plan_history]
    if updates != [2] or result.stop != "done":
        seen = Said(
            seen.en + f"; accepted updates at turns {updates}, the run ended `{result.stop}`",
            seen.zh + f"；被接受的更新在第 {updates} 轮，运行以 `{result.stop}` 结束",
        )
        hint = Said(
            "the second reply writes a valid list, the one update, at turn 2; then end_turn",
            "第二条回复写一份合法的清单，它是唯一一次更新，在第 2 轮；然后 end_turn",
        )
        return Verdict(False, seen, hint)
    fresh = rules_hold(fresh_random())
    if fresh is not None:
        return Verdict(False, Said(seen.en + "; but " + fresh.en, seen.zh + "；但是" + fresh.zh))
    done = Said(
        f"; {len(problems)} problems in one refusal, the valid list accepted at turn 2, and "
        "fresh plans breaking one rule each are refused",
        f"；一次拒绝里列出 {len(problems)} 个问题，合法的清单在第 2 轮被接受，"
        "每份只违反一条规则的新计划也都被拒绝",
    )
    return Verdict(True, Said(seen.en + done.en, seen.zh + done.zh))


def rules_hold(rng: random.Random) -> Said | None:
    """The chapter on plans of the check's own: a valid one is accepted; one that breaks a
    single rule, at a random place, is refused and the refusal names that place.  None if
    all hold, else what did not."""
    valid = fresh_plan(rng, fresh_steps(rng, rng.randint(3, 6)))
    broken: dict[str, tuple[list[dict[str, str]], list[int]]] = {}
    for rule in RULES:
        plan = [dict(item) for item in valid]
        places = rng.sample(range(len(plan)), 2 if rule == "in_progress" else 1)
        for place in places:
            if rule == "in_progress":
                plan[place]["status"] = "in_progress"
            elif rule == "empty":
                plan[place]["content"] = rng.choice(["", " ", "  \t"])
            else:
                plan[place]["status"] = rng.choice(["done", "todo", "finished", "blocked"])
        if rule == "in_progress":  # exactly those two: the plan's own one moves to them
            for number, item in enumerate(plan):
                if item["status"] == "in_progress" and number not in places:
                    item["status"] = "pending"
        broken[rule] = (plan, sorted(place + 1 for place in places))
    _, answers = written(valid, *(plan for plan, _ in broken.values()))
    steps = [item["content"] for item in valid]
    if answers[0].get("is_error"):
        return Said(
            f"a valid plan of {steps} is refused: {text_of(answers[0])[:160]}",
            f"一份合法的计划 {steps} 被拒绝了：{text_of(answers[0])[:160]}",
        )
    for (rule, (_, numbers)), answer in zip(broken.items(), answers[1:], strict=True):
        problems = problems_in(answer) or []
        if not any(names(problem, *numbers) for problem in problems):
            where = ", ".join(map(str, numbers))
            return Said(
                f"{RULES[rule].en} at item(s) {where} of {steps}: {text_of(answer)[:160]}",
                f"{steps} 的第 {where} 项{RULES[rule].zh}：{text_of(answer)[:160]}",
            )
    return None


# --- 2.3 No duplicate items --------------------------------------------------------------

CASES = 12  # generated lists for problems_with, besides the run of the chapter


def variant(text: str, rng: random.Random) -> str:
    """The same step written another way: other letters upper-cased, spaces around it."""
    while True:
        cased = "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in text)
        before, after = rng.choice(["", " ", "  ", "\t"]), rng.choice(["", " ", " \t", "   "])
        if cased != text and (before or after):
            return before + cased + after


def near_miss(text: str, kind: int) -> str:
    """A different step that starts or ends like this one, in one of four ways."""
    return [text + "s", text + " tests", "Re" + text.lower(), text[:-1] + "x"][kind % 4]


def duplicate_case(rng: random.Random, shape: int) -> tuple[list[Any], list[Any], tuple[int, int]]:
    """A plan of distinct steps, the same plan with step j written as a variant of step i,
    and (i, j) counted from 1.  By `shape`, the two are anywhere, apart (not neighbours),
    or after the first item.  Some plans also hold an item that is not an object, or has
    no content, which other rules report: the duplicate is the one problem more (every
    fourth shape, a text before the pair, so that numbers counted among objects alone show;
    every fourth another, an object with no content)."""
    plan: list[Any] = fresh_plan(rng, fresh_steps(rng, rng.randint(3, 7)))
    last = len(plan) - 1
    if shape % 3 == 1:  # not neighbours
        first = rng.randrange(last - 1)
        second = rng.randint(first + 2, last)
    elif shape % 3 == 2:  # neither is the first item
        first = rng.randrange(1, last)
        second = rng.randint(first + 1, last)
    else:
        first, second = sorted(rng.sample(range(len(plan)), 2))
    same = [dict(item) for item in plan]
    same[second]["content"] = variant(plan[first]["content"], rng)
    before = shape % 4 == 3  # a text before the pair: items are numbered with it counted
    bare = shape % 4 == 1  # an object with no content: a rule must not fail on it
    if before or bare or rng.random() < 0.3:
        kinds: list[Any] = ["a step"] if before else [{"status": "pending"}] if bare else []
        odd = rng.choice(kinds or ["a step", {"status": "pending"}])
        at = rng.randrange(first + 1) if before else rng.randrange(len(plan) + 1)
        plan.insert(at, odd)
        same.insert(at, odd)
        first, second = first + (at <= first), second + (at <= second)
    return plan, same, (first + 1, second + 1)


def no_duplicates(words: list[str]) -> Verdict:
    """problems_with on generated plans: a step written twice (in other case, with spaces
    around it, anywhere in the list) is one problem more, naming both items; distinct
    steps, even close ones, are no problem.  Then the chapter itself refuses such a plan,
    with the other problems in the same message, and keeps the plan it had."""
    from v2_todos.todos import problems_with

    rng = fresh_random()
    for case in range(CASES):
        plan, same, (first, second) = duplicate_case(rng, case)
        clean = [item for item in plan if isinstance(item, dict) and "content" in item]
        close = [dict(item) for item in clean]
        at = rng.randrange(1, len(close))
        close[at]["content"] = near_miss(close[rng.randrange(at)]["content"], case)
        for distinct in (clean, close):
            wrong = problems_with(distinct)
            if wrong:
                steps = [item["content"] for item in distinct]
                seen = Said(
                    f"problems_with refuses the distinct steps {steps}: {wrong}",
                    f"problems_with 拒绝了互不相同的步骤 {steps}：{wrong}",
                )
                hint = Said(
                    "refuse only the same content, not close steps or any two items",
                    "只拒绝内容相同的项，相近的步骤或任意两项都不算",
                )
                return Verdict(False, seen, hint)
        try:
            told = problems_with(plan)
            new = [problem for problem in problems_with(same) if problem not in told]
        except Exception as error:  # noqa: BLE001 - whatever the learner's rule raises
            seen = Said(
                f"problems_with failed on the plan {same}: {error!r}",
                f"problems_with 在计划 {same} 上出错：{error!r}",
            )
            hint = Said(
                "an item may be no object, or have no content: other rules report it; skip it",
                "有的项可能不是对象，或者没有内容：别的规则会报告它；跳过它",
            )
            return Verdict(False, seen, hint)
        pair = (plan[first - 1]["content"], same[second - 1]["content"])
        seen = Said(
            f"items {first} and {second} of {len(same)} are {pair[0]!r} and {pair[1]!r}; "
            f"problems_with adds {new}",
            f"{len(same)} 项里的第 {first} 项和第 {second} 项是 {pair[0]!r} 和 {pair[1]!r}；"
            f"problems_with 多报了 {new}",
        )
        if not any(names(problem, first, second) for problem in new):
            hint = Said(
                "compare every two items' content, stripped and lower-cased; name both numbers",
                "两两比较各项去掉首尾空白、转成小写后的内容，并说出两项的编号",
            )
            return Verdict(False, seen, hint)
    return duplicate_refused_by_the_chapter(rng)


def duplicate_refused_by_the_chapter(rng: random.Random) -> Verdict:
    """The chapter's run: a valid plan, then a plan that repeats a step and has two items in
    progress (refused with both problems, the valid plan kept), then a plan of close but
    distinct steps (accepted)."""
    steps = fresh_steps(rng, rng.randint(3, 6))
    valid = fresh_plan(rng, steps)
    first, second = sorted(rng.sample(range(len(steps)), 2))
    twice = [dict(item, status="pending") for item in valid]
    twice[second]["content"] = variant(steps[first], rng)
    twice[first]["status"] = twice[second]["status"] = "in_progress"
    close = [dict(item) for item in valid]
    close[second]["content"] = near_miss(steps[first], rng.randrange(4))
    result, answers = written(valid, twice, close)
    problems = problems_in(answers[1]) or []
    about_both = [p for p in problems if names(p, first + 1, second + 1)]
    seen = Said(
        f"the chapter, given {[item['content'] for item in twice]}, answers: "
        f"{text_of(answers[1])[:240]}",
        f"章节收到 {[item['content'] for item in twice]}，回答：{text_of(answers[1])[:240]}",
    )
    if len(about_both) < 2 or answers[0].get("is_error"):
        hint = Said(
            "the duplicate and the two items in progress are both refused, in one message",
            "重复项和两项 in_progress 都被拒绝，在同一条消息里",
        )
        return Verdict(False, seen, hint)
    if answers[2].get("is_error"):
        steps = [item["content"] for item in close]
        refusal = text_of(answers[2])[:160]
        seen = Said(
            f"the chapter refuses the distinct steps {steps}: {refusal}",
            f"章节拒绝了互不相同的步骤 {steps}：{refusal}",
        )
        hint = Said("refuse only the same content", "只拒绝内容相同的项")
        return Verdict(False, seen, hint)
    kept = [turn for turn, _ in result.plan_history]
    if kept != [1, 3]:
        seen = Said(f"accepted updates at turns {kept}", f"被接受的更新在第 {kept} 轮")
        hint = Said("a refused plan leaves the old one in place", "被拒绝的计划不改变原来的计划")
        return Verdict(False, seen, hint)
    return Verdict(
        True,
        Said(
            f"{CASES} generated plans and a run of the chapter; the last: " + seen.en,
            f"{CASES} 份生成的计划和一次章节运行；最后一次：" + seen.zh,
        ),
    )


EXERCISES = {
    "2.1": Exercise(Said("Read the plan back", "把计划读回来"), unchecked=EXPLAIN),
    "2.2": Exercise(Said("Break the rules on purpose", "故意违反规则"), rules_broken),
    "2.3": Exercise(Said("No duplicate items", "不许有重复项"), no_duplicates),
    "2.4": Exercise(
        Said("Tune the reminder and measure it", "调整提醒并测量它"), reminder_shows_the_plan
    ),
    "2.5": Exercise(Said("Measure the benefit live", "在线测量收益"), unchecked=LIVE),
}
