"""The checks of chapter 0's exercises: the text protocol and its parser."""

from __future__ import annotations

import json
from typing import Any

from .check import LIVE, REPO, Exercise, Said, Verdict, named_file, run_chapter

CORPUS = REPO / "tests" / "data" / "react_replies.jsonl"


def three_strikes(words: list[str]) -> Verdict:
    what = Said("cassette of three replies", "三条回复的录像带")
    result = run_chapter("v0_react_text", named_file(words, what, "0.1"))
    seen = Said(
        f"the run ended with `{result.stop}` after {result.turns} turns",
        f"运行在 {result.turns} 轮后以 `{result.stop}` 结束",
    )
    if result.stop == "format_errors" and result.turns == 3:
        return Verdict(True, seen)
    hint = Said(
        "three malformed replies in a row end the run with format_errors",
        "连续三条格式错误的回复会让运行以 format_errors 结束",
    )
    return Verdict(False, seen, hint)


def corpus_case(name: str) -> dict[str, Any]:
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    return next(case for case in map(json.loads, lines) if case["id"] == name)


def parsed_as_action(name: str) -> tuple[bool, Said]:
    """Whether chapter 0's parser reads a corpus case as an action, and how it read it."""
    from v0_react_text.parser import Action, parse

    try:
        step = parse(corpus_case(name)["text"])
    except ValueError as error:
        return False, Said(f"`{name}` is a format error: {error}", f"`{name}` 是格式错误：{error}")
    return isinstance(step, Action), Said(
        f"`{name}` parses as {step!r}", f"`{name}` 解析为 {step!r}"
    )


def one_more_variant(words: list[str]) -> Verdict:
    is_action, seen = parsed_as_action("single-backticks")
    expected = corpus_case("single-backticks")["expect"]["type"] == "action"
    if is_action and expected:
        return Verdict(True, seen)
    if is_action:
        hint = Said(
            "change the case's `expect` in the corpus to that action",
            "把语料里这一条的 `expect` 改成这个行动",
        )
        return Verdict(False, seen, hint)
    hint = Said(
        "let `_unfence` take off one backtick on each side", "让 `_unfence` 去掉两边各一个反引号"
    )
    return Verdict(False, seen, hint)


def full_width_stop(words: list[str]) -> Verdict:
    from v0_react_text.agent import STOP

    seen = Said(f"STOP is {STOP!r}", f"STOP 是 {STOP!r}")
    if "Observation：" in STOP:
        return Verdict(True, seen)
    hint = Said(
        'add "Observation：" (a full-width colon) to STOP in agent.py',
        '在 agent.py 的 STOP 里加上 "Observation："（全角冒号）',
    )
    return Verdict(False, seen, hint)


def chinese_keywords(words: list[str]) -> Verdict:
    is_action, seen = parsed_as_action("zh-translated-keywords")
    cases = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    chinese = [c for c in cases if "行动：" in c["text"] and c["expect"]["type"] == "action"]
    seen = Said(
        seen.en + f"; {len(chinese)} corpus case(s) with 行动： expect an action",
        seen.zh + f"；语料中有 {len(chinese)} 条含 行动： 的例子期望得到行动",
    )
    if is_action and len(chinese) >= 3:
        return Verdict(True, seen)
    if not is_action:
        hint = Said(
            "accept 思考：, 行动：, 行动输入： and 最终答案：",
            "接受 思考：、行动：、行动输入： 和 最终答案：",
        )
        return Verdict(False, seen, hint)
    hint = Said(
        "move the case to an expected action and add two of your own",
        "把这一条改为期望行动，再加两条你自己的",
    )
    return Verdict(False, seen, hint)


EXERCISES = {
    "0.1": Exercise(Said("Three strikes", "三振出局"), three_strikes),
    "0.2": Exercise(Said("Accept one more variant", "多接受一种变体"), one_more_variant),
    "0.3": Exercise(Said("Add the full-width stop sequence", "加上全角停止序列"), full_width_stop),
    "0.4": Exercise(Said("Take the stop sequences away", "拿掉停止序列"), unchecked=LIVE),
    "0.5": Exercise(Said("Support Chinese keywords", "支持中文关键字"), chinese_keywords),
    "0.6": Exercise(Said("Measure the fragility", "量一量有多脆弱"), unchecked=LIVE),
}
