"""The checks of chapter 2's exercises: the todo list and its rules."""

from __future__ import annotations

from .check import (
    EXPLAIN,
    LIVE,
    MEASURE,
    Exercise,
    Said,
    Verdict,
    named_file,
    results,
    run_chapter,
    text_of,
)


def rules_broken(words: list[str]) -> Verdict:
    cassette = named_file(words, Said("cassette", "录像带"), "2.2")
    plans = [
        block
        for block in results(run_chapter("v2_todos", cassette))
        if "todo" in text_of(block).lower()
    ]
    if not plans:
        seen = Said("no todo_write result in the run", "运行里没有 todo_write 的结果")
        hint = Said("the first reply calls todo_write", "第一条回复调用 todo_write")
        return Verdict(False, seen, hint)
    first = text_of(plans[0])
    seen = Said(f"the first plan's result: {first[:120]}", f"第一份计划的结果：{first[:120]}")
    if plans[0].get("is_error") and first.startswith("the todo list was not changed:"):
        return Verdict(True, seen)
    hint = Said(
        "two items in_progress, a third empty with the status done",
        "两项 in_progress，第三项内容为空、状态为 done",
    )
    return Verdict(False, seen, hint)


def no_duplicates(words: list[str]) -> Verdict:
    from v2_todos.todos import problems_with

    items = [{"content": "Fix median", "status": "pending"}]
    items.append({"content": " fix MEDIAN ", "status": "pending"})
    problems = problems_with(items)
    seen = Said(
        f"problems_with on 'Fix median' and ' fix MEDIAN ': {problems}",
        f"problems_with 对 'Fix median' 和 ' fix MEDIAN ' 的回答：{problems}",
    )
    if any("same" in problem for problem in problems):
        return Verdict(True, seen)
    hint = Said(
        "compare the items' content stripped and lower-cased",
        "比较各项去掉首尾空白并转成小写后的内容",
    )
    return Verdict(False, seen, hint)


EXERCISES = {
    "2.1": Exercise(Said("Read the plan back", "把计划读回来"), unchecked=EXPLAIN),
    "2.2": Exercise(Said("Break the rules on purpose", "故意违反规则"), rules_broken),
    "2.3": Exercise(Said("No duplicate items", "不许有重复项"), no_duplicates),
    "2.4": Exercise(
        Said("Tune the reminder and measure it", "调整提醒并测量它"), unchecked=MEASURE
    ),
    "2.5": Exercise(Said("Measure the benefit live", "在线测量收益"), unchecked=LIVE),
}
