"""The right answers of the quiz, each read from what a chapter does when it is run.

One function per question: it runs (once per process, `demos.py`) what the question's
command runs and reads the answer from the result, with an explanation in both
languages that quotes the run.  Nothing here is an answer typed in; tests/lab/test_quiz.py
checks each one against the chapter's behaviour.

Imports the chapters (their readers of a run: `v2_todos.todos`, chapter 3's agent
types), `lab.exercises.check.Said` and `lab.quiz.demos`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from lab.exercises.check import Said
from llm.result import tool_uses

from .demos import demo


@dataclass(frozen=True)
class Right:
    """The right answer, as the learner would type it, and why it is right."""

    answer: str
    why: Said


def yes_no(value: bool) -> str:
    return "yes" if value else "no"


# --- chapter 0 -------------------------------------------------------------------------

V0 = "v0_react_text"


def v0_turns() -> Right:
    result = demo(V0).result
    return Right(
        str(result.turns),
        Said(
            f"the summary line says `done: {result.turns} turns`: one turn is one call to the "
            "model, whatever the reply held",
            f"结尾的汇总行写着 `done: {result.turns} turns`：每调用一次模型就是一轮，"
            "不管回复里写了什么",
        ),
    )


def v0_tool_calls() -> Right:
    result = demo(V0).result
    idle = result.turns - result.tool_calls
    return Right(
        str(result.tool_calls),
        Said(
            f"{result.tool_calls} tool calls in {result.turns} turns: a reply of chapter 0 holds "
            f"one Action at most, and {idle} turns ran none (a format error, the final answer)",
            f"{result.turns} 轮里有 {result.tool_calls} 次工具调用：第 0 章的一条回复最多一个 "
            f"Action，另外 {idle} 轮没有运行工具（一次格式错误，以及最后的答复）",
        ),
    )


def v0_format_errors() -> Right:
    errors = demo(V0).result.counts()["format errors"]
    return Right(
        str(errors),
        Said(
            f"{errors}: the `!` line says the Action Input is not valid JSON; the loop answers "
            "it with an Observation that says what is wrong, and the next reply parses",
            f"{errors} 次：`!` 那一行说 Action Input 不是合法的 JSON；循环把错在哪里写进 "
            "Observation 发回去，下一条回复就能解析了",
        ),
    )


def v0_first_stop() -> Right:
    reason = demo(V0).replies[0].stop_reason
    return Right(
        reason,
        Said(
            f"`{reason}`: the first reply ran past its Action and wrote an Observation of its "
            "own; the loop cuts that invented text off (the first `!` line) and runs the tool",
            f"`{reason}`：第一条回复写完 Action 还没停，自己编了一段 Observation；"
            "循环把编出来的部分切掉（第一行 `!`），再真正运行工具",
        ),
    )


def v0_request_three() -> Right:
    sent = len(demo(V0).request(3))
    return Right(
        str(sent),
        Said(
            f"{sent}: the task, then two replies, each followed by the Observation the loop "
            "wrote back as a user message; the model keeps nothing between calls",
            f"{sent} 条：任务，再加两条回复，每条后面跟着循环以用户消息发回的 Observation；"
            "模型在两次调用之间什么也不记得",
        ),
    )


# --- chapter 1 -------------------------------------------------------------------------

V1 = "v1_tool_loop"


def v1_turns() -> Right:
    result = demo(V1).result
    return Right(
        str(result.turns),
        Said(
            f"{result.turns} turns, {result.tool_calls} tool calls: the loop calls the model "
            "until a reply asks for no tool",
            f"{result.turns} 轮，{result.tool_calls} 次工具调用：循环一直调用模型，"
            "直到某条回复不再请求工具",
        ),
    )


def v1_request_three() -> Right:
    sent = len(demo(V1).request(3))
    return Right(
        str(sent),
        Said(
            f"{sent}: the task, and for each of the two turns before, the reply with its "
            "tool_use and the user message with its tool_result; the whole history is sent "
            "every time",
            f"{sent} 条：任务，再加前两轮各两条，带 tool_use 的回复和带 tool_result 的用户消息；"
            "每次都把整段历史发出去",
        ),
    )


def v1_tools_offered() -> Right:
    offered = demo(V1).tools_offered[0]
    return Right(
        str(len(offered)),
        Said(
            f"{len(offered)}: {', '.join(offered)}; every request carries their schemas, and "
            "the dispatch table runs the one the reply names",
            f"{len(offered)} 个：{'、'.join(offered)}；每个请求都带上这些工具的 schema，"
            "回复点名哪个，分发表就运行哪个",
        ),
    )


def v1_editor() -> Right:
    messages = demo(V1).result.messages
    changers = [
        call["name"]
        for message in messages
        if message["role"] == "assistant"
        for call in tool_uses(message)
        if call["name"] in ("write_file", "edit_file")
    ]
    return Right(
        changers[0],
        Said(
            f"`{changers[0]}`: the fix replaces one line of stats.py; `bash` only ran the tests",
            f"`{changers[0]}`：修复只替换了 stats.py 的一行；`bash` 只用来跑测试",
        ),
    )


def v1_last_stop() -> Right:
    reason = demo(V1).replies[-1].stop_reason
    return Right(
        reason,
        Said(
            f"`{reason}`: the model answered without asking for a tool, so the run is done; "
            "every reply before it ended with `tool_use`",
            f"`{reason}`：模型作答时不再请求工具，于是运行完成；"
            "在这之前的每条回复都以 `tool_use` 结束",
        ),
    )


# --- chapter 2 -------------------------------------------------------------------------

V2 = "v2_todos"


def v2_plan_items() -> Right:
    from v2_todos.todos import latest_plan

    plan = latest_plan(demo(V2).result.messages)
    return Right(
        str(len(plan)),
        Said(
            f"{len(plan)}: {'; '.join(item['content'] for item in plan)}",
            f"{len(plan)} 项：{'；'.join(item['content'] for item in plan)}",
        ),
    )


def v2_plan_writes() -> Right:
    from v2_todos.todos import plan_updates

    turns = [turn for turn, _ in plan_updates(demo(V2).result.messages)]
    listed = ", ".join(map(str, turns))
    return Right(
        str(len(turns)),
        Said(
            f"{len(turns)} todo_write calls, at turns {listed}: each sends the whole list again",
            f"{len(turns)} 次 todo_write，在第 {'、'.join(map(str, turns))} 轮："
            "每次都把整张清单重新发一遍",
        ),
    )


def v2_reminder_turn() -> Right:
    from v2_todos.todos import reminders

    after = reminders(demo(V2).result.messages)
    return Right(
        str(after[0]),
        Said(
            f"after turn {after[0]}: the line `(reminder sent: …)` comes right after that "
            "turn's tool results, in the same user message",
            f"第 {after[0]} 轮之后：`(reminder sent: …)` 这一行紧跟在这一轮的工具结果后面，"
            "放在同一条用户消息里",
        ),
    )


def v2_quiet_turns() -> Right:
    from v2_todos.todos import plan_updates, reminders

    messages = demo(V2).result.messages
    reminded = reminders(messages)[0]
    last_write = max(turn for turn, _ in plan_updates(messages) if turn <= reminded)
    quiet = reminded - last_write
    return Right(
        str(quiet),
        Said(
            f"{quiet}: the plan was written at turn {last_write}, and turns "
            f"{last_write + 1} to {reminded} called other tools only; that many quiet turns "
            "bring the plan back up",
            f"{quiet} 轮：计划在第 {last_write} 轮写下，第 {last_write + 1} 到第 {reminded} "
            "轮只调用了别的工具；安静了这么多轮，循环就把计划重新提出来",
        ),
    )


def v2_all_done() -> Right:
    from v2_todos.todos import latest_plan

    plan = latest_plan(demo(V2).result.messages)
    done = sum(1 for item in plan if item["status"] == "completed")
    return Right(
        str(done),
        Said(
            f"{done} of {len(plan)}: the last todo_write marks them completed after the whole "
            "suite passes",
            f"{len(plan)} 项里完成了 {done} 项：整套测试通过之后，"
            "最后一次 todo_write 把这些项标为完成",
        ),
    )


# --- chapter 3 -------------------------------------------------------------------------

V3 = "v3_subagents"


def v3_children() -> Right:
    children = demo(V3).result.children
    kinds = [child.agent_type for child in children]
    count, en, zh = len(children), ", ".join(kinds), "、".join(kinds)
    return Right(
        str(count),
        Said(
            f"{count} `task` calls, so {count} children ({en}), each with a fresh conversation",
            f"{count} 次 `task` 调用，也就是 {count} 个子智能体（{zh}），各自从全新的对话开始",
        ),
    )


def v3_explorers() -> Right:
    kinds = [child.agent_type for child in demo(V3).result.children]
    explorers = kinds.count("explore")
    return Right(
        str(explorers),
        Said(
            f"{explorers}: the `▶ explore agent` lines; the others are {len(kinds) - explorers} "
            "of another type",
            f"{explorers} 个：看 `▶ explore agent` 开头的行；其余 {len(kinds) - explorers} "
            "个是别的类型",
        ),
    )


def v3_children_calls() -> Right:
    result = demo(V3).result
    theirs = sum(child.result.tool_calls for child in result.children)
    return Right(
        str(theirs),
        Said(
            f"{theirs}: the indented lines under each child's label; the parent made "
            f"{result.tool_calls} of its own, and saw of the children's only their reports",
            f"{theirs} 次：每个子智能体标签下缩进的那些行；父智能体自己调用了 "
            f"{result.tool_calls} 次，子智能体的工作只以报告的形式回到父智能体",
        ),
    )


def v3_explore_edits() -> Right:
    from v3_subagents.subagents import AGENT_TYPES

    tools = AGENT_TYPES["explore"].tools
    can = "edit_file" in tools
    return Right(
        yes_no(can),
        Said(
            f"{yes_no(can)}: an explore child is given {', '.join(tools)} only",
            f"{'能' if can else '不能'}：explore 子智能体只拿到 {'、'.join(tools)}",
        ),
    )


def v3_child_task() -> Right:
    from v3_subagents.subagents import AGENT_TYPES

    can = any("task" in kind.tools for kind in AGENT_TYPES.values())
    return Right(
        yes_no(can),
        Said(
            f"{yes_no(can)}: no agent type's tools include `task`, so a child cannot start "
            "children of its own and the tree stays one level deep",
            f"{'能' if can else '不能'}：没有哪种智能体类型的工具里有 `task`，"
            "所以子智能体不能再派出子智能体，树只有一层",
        ),
    )


# --- chapter 4 -------------------------------------------------------------------------

V4 = "v4_memory"


def v4_turns() -> Right:
    result = demo(V4).result
    return Right(
        str(result.turns),
        Said(
            f"{result.turns} turns in step 1, then step 2 resumes the same session",
            f"第 1 步有 {result.turns} 轮，之后第 2 步接着同一个会话继续",
        ),
    )


def stage(number: int) -> Callable[[], Right]:
    """The question's answer: the turn before which the window took stage `number`."""

    def right() -> Right:
        taken = [c for c in demo(V4).result.compactions if c.stage == number]
        first = taken[0]
        before, after = f"≈{first.tokens_before:,}", f"≈{first.tokens_after:,}"
        return Right(
            str(first.turn),
            Said(
                f"before turn {first.turn}: the `context: stage {number}` line, {before} → "
                f"{after} tokens ({first.detail})",
                f"第 {first.turn} 轮之前：`context: stage {number}` 那一行，"
                f"{before} → {after} tokens（{first.detail}）",
            ),
        )

    return right


def v4_summarised() -> Right:
    summary = next(c for c in demo(V4).result.compactions if c.stage == 2)
    count = re.search(r"\d+", summary.detail)
    summarised = count.group() if count else "0"
    return Right(
        summarised,
        Said(
            f"{summarised}: the older messages go into one summary; the recent turns stay as "
            "they were",
            f"{summarised} 条：较早的消息合成一段摘要；最近几轮保持原样",
        ),
    )


def v4_plan_writes() -> Right:
    writes = demo(V4).result.counts()["plan updates"]
    return Right(
        str(writes),
        Said(
            f"{writes}: the plan of chapter 2 is still there, and is what the summary keeps "
            "of the work in hand",
            f"{writes} 次：第 2 章的计划还在，摘要靠计划记住手头的工作",
        ),
    )
