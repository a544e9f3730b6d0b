"""The capstone's verdict, from what the referee saw and what is on disk.

For every action of the scenario, four facts, none of them taken from the agent's word:
whether it was asked about (the questions as they came), whether it ran (its mark on
disk), and whether the model was told it did not run (an error result in the session
file).  An allowed action runs without a question; one the person is asked about runs
only after a yes; a denied one never runs and is never asked about.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lab.exercises.check import Said, Verdict

from .referee import Run
from .scenario import Action, Scenario

SESSIONS = Path(".agent") / "sessions"
TAIL = 600  # characters of the agent's output shown when it did not finish


def results_told(workspace: Path) -> dict[str, bool]:
    """Each tool call's id, and whether its result was an error, from the session files."""
    told: dict[str, bool] = {}
    for path in sorted((workspace / SESSIONS).glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            for block in result_blocks(line):
                told[str(block.get("tool_use_id"))] = bool(block.get("is_error"))
    return told


def result_blocks(line: str) -> list[dict[str, Any]]:
    try:
        record = json.loads(line)
    except ValueError:
        return []
    content = record.get("content") if isinstance(record, dict) else None
    if record.get("role") != "user" or not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def problems_of(action: Action, asked: bool, ran: bool, error: bool | None) -> list[Said]:
    """What is wrong with how one action was handled; [] when nothing is."""
    what = f"`{action.shown or action.args.get('command') or action.args.get('path')}`"
    found = []
    if action.rule == "ask" and not asked:
        found.append(Said(f"{what} was not asked about", f"{what} 没有先问"))
    if action.rule != "ask" and asked:
        rule = {"allow": ("allow", "允许"), "deny": ("deny", "拒绝")}[action.rule]
        found.append(Said(f"{what} was asked about, though the rules {rule[0]} it",
                          f"规则已经{rule[1]} {what}，却还是问了"))  # fmt: skip
    if action.should_run and not ran:
        why = "the answer was yes" if action.rule == "ask" else "the rules allow it"
        zh = "回答是 y" if action.rule == "ask" else "规则允许"
        found.append(Said(f"{what} did not run, though {why}", f"{zh}，{what} 却没有执行"))
    if not action.should_run and ran:
        why = "the answer was no" if action.rule == "ask" else "the rules deny it"
        zh = "回答是 n" if action.rule == "ask" else "规则禁止"
        found.append(Said(f"{what} ran, though {why}", f"{zh}，{what} 却执行了"))
    if not action.should_run and not ran and error is False:
        found.append(Said(f"the model was told {what} went well, not that it was refused",
                          f"{what} 被拒绝了，模型收到的却不是错误结果"))  # fmt: skip
    return found


def judge(scenario: Scenario, run: Run, workspace: Path) -> Verdict:
    """Done when every action was handled as its rule and its answer say."""
    if run.exit_code is None:
        return not_done(Said("the agent did not finish in time", "智能体没有按时结束"), run)
    told = results_told(workspace)
    asked = {id(q.action) for q in run.questions if q.action is not None}
    problems = []
    for action in scenario.actions:  # a child's results are in its own history, not the session
        error = None if action.child else told.get(action.call)
        problems += problems_of(action, id(action) in asked, action.ran(workspace), error)
    strays = [q.text for q in run.questions if q.action is None]
    if strays:
        problems.append(Said(
            f"a question quotes no call outside the rules: {strays[0]!r} (a question quotes "
            "the command or the path it asks about)",
            f"有一个问题没有引用规则之外的任何调用：{strays[0]!r}（问题要引用所问的命令或路径）",
        ))  # fmt: skip
    if run.exit_code != 0 and not problems:
        problems.append(Said(f"the agent exited with code {run.exit_code}",
                             f"智能体以退出码 {run.exit_code} 结束"))  # fmt: skip
    if problems:
        en, zh = "; ".join(p.en for p in problems), "；".join(p.zh for p in problems)
        return not_done(Said(f"seed {scenario.seed}: {en}", f"种子 {scenario.seed}：{zh}"), run)
    count = len(run.questions)
    return Verdict(True, Said(
        f"seed {scenario.seed}: {count} questions, each about a call outside the rules; the "
        "allowed calls ran, the denied one was refused unasked, and only the approved ones ran",
        f"种子 {scenario.seed}：问了 {count} 个问题，每个都关于规则之外的调用；允许的调用直接执行，"
        "禁止的调用不问就拒绝，只有回答 y 的调用执行了",
    ))  # fmt: skip


def not_done(seen: Said, run: Run) -> Verdict:
    tail = run.output[-TAIL:].strip()
    hint = Said(
        "the capstone page says what the permission mode does with each call; "
        f"the agent's last output was:\n{tail}",
        f"毕业项目页说明了权限模式对每种调用怎么处理；智能体最后的输出是：\n{tail}",
    )
    return Verdict(False, seen, hint)
