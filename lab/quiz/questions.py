"""The quiz's questions, five or six a chapter, each with its right answer read from a run.

Every question names the command that shows the answer; `right` runs (once per process)
what that command runs and reads the answer from the result, with an explanation that
quotes what the run did.  Nothing here holds an answer typed in: tests/test_quiz.py
checks each one against the chapter's behaviour, so that a change to a chapter that
changes an answer is seen there.

Imports the chapters (their readers of a run: `v2_todos.todos`, chapter 3's agent
types) and `lab.quiz.demos`; nothing of the command.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from lab.exercises.check import Said
from llm.result import tool_uses

from .demos import demo

YES_NO = ("yes", "no")
STOP_REASONS = ("end_turn", "tool_use", "max_tokens", "stop_sequence")


@dataclass(frozen=True)
class Right:
    """The right answer, as the learner would type it, and why it is right."""

    answer: str
    why: Said


@dataclass(frozen=True)
class Question:
    """One question: what it asks, the answers it offers (none: a whole number), and the
    function that runs the chapter to find the right one."""

    ask: Said
    right: Callable[[], Right]
    choices: tuple[str, ...] = ()


def yes_no(value: bool) -> str:
    return "yes" if value else "no"


# --- chapter 0 -------------------------------------------------------------------------

V0 = "v0_react_text"
V0_RUN = "python -m v0_react_text --demo"


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
V1_RUN = "python -m v1_tool_loop --demo --step"


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
            f"`{reason}`: the loop's one way out; every reply before it ended with `tool_use`",
            f"`{reason}`：这是循环唯一的出口；在这之前的每条回复都以 `tool_use` 结束",
        ),
    )


# --- chapter 2 -------------------------------------------------------------------------

V2 = "v2_todos"
V2_RUN = "python -m v2_todos --demo"


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
            f"{len(turns)} 次 todo_write，在第 {listed} 轮：每次都把整张清单重新发一遍",
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
V3_RUN = "python -m v3_subagents --demo"


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
V4_RUN = "python -m v4_memory --demo"


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


QUIZZES: dict[int, list[Question]] = {
    0: [
        Question(
            Said(f"Run `{V0_RUN}`: how many turns does it take?", f"运行 `{V0_RUN}`：一共几轮？"),
            v0_turns,
        ),
        Question(
            Said(
                f"Run `{V0_RUN}`: how many tool calls ran?",
                f"运行 `{V0_RUN}`：一共运行了几次工具调用？",
            ),
            v0_tool_calls,
        ),
        Question(
            Said(
                f"Run `{V0_RUN}`: how many replies broke the text format?",
                f"运行 `{V0_RUN}`：有几条回复不合文本格式？",
            ),
            v0_format_errors,
        ),
        Question(
            Said(
                f"Run `{V0_RUN}`: with which stop_reason did the first reply end?",
                f"运行 `{V0_RUN}`：第一条回复的 stop_reason 是什么？",
            ),
            v0_first_stop,
            STOP_REASONS,
        ),
        Question(
            Said(
                f"Run `{V0_RUN}`: how many messages does the request of turn 3 hold?",
                f"运行 `{V0_RUN}`：第 3 轮的请求里有几条消息？",
            ),
            v0_request_three,
        ),
    ],
    1: [
        Question(
            Said(f"Run `{V1_RUN}`: how many turns does it take?", f"运行 `{V1_RUN}`：一共几轮？"),
            v1_turns,
        ),
        Question(
            Said(
                f"Run `{V1_RUN}`: how many messages does the request of turn 3 hold?",
                f"运行 `{V1_RUN}`：第 3 轮的请求里有几条消息？",
            ),
            v1_request_three,
        ),
        Question(
            Said(
                f"Run `{V1_RUN}`: how many tools does each request offer the model?",
                f"运行 `{V1_RUN}`：每个请求给模型提供几个工具？",
            ),
            v1_tools_offered,
        ),
        Question(
            Said(
                f"Run `{V1_RUN}`: which tool changed stats.py?",
                f"运行 `{V1_RUN}`：哪个工具改了 stats.py？",
            ),
            v1_editor,
            ("bash", "read_file", "write_file", "edit_file"),
        ),
        Question(
            Said(
                f"Run `{V1_RUN}`: with which stop_reason did the last reply end?",
                f"运行 `{V1_RUN}`：最后一条回复的 stop_reason 是什么？",
            ),
            v1_last_stop,
            STOP_REASONS,
        ),
    ],
    2: [
        Question(
            Said(
                f"Run `{V2_RUN}`: how many items does the plan hold?",
                f"运行 `{V2_RUN}`：计划里有几项？",
            ),
            v2_plan_items,
        ),
        Question(
            Said(
                f"Run `{V2_RUN}`: how many times does the model write the plan?",
                f"运行 `{V2_RUN}`：模型一共写了几次计划？",
            ),
            v2_plan_writes,
        ),
        Question(
            Said(
                f"Run `{V2_RUN}`: after which turn is the reminder sent?",
                f"运行 `{V2_RUN}`：提醒在第几轮之后发出？",
            ),
            v2_reminder_turn,
        ),
        Question(
            Said(
                f"Run `{V2_RUN}`: for how many turns in a row had the plan been left "
                "alone when the reminder came?",
                f"运行 `{V2_RUN}`：提醒到来时，计划已经连续几轮没人动过？",
            ),
            v2_quiet_turns,
        ),
        Question(
            Said(
                f"Run `{V2_RUN}`: how many items are completed when the run ends?",
                f"运行 `{V2_RUN}`：运行结束时完成了几项？",
            ),
            v2_all_done,
        ),
    ],
    3: [
        Question(
            Said(
                f"Run `{V3_RUN}`: how many child agents does the parent start?",
                f"运行 `{V3_RUN}`：父智能体派出了几个子智能体？",
            ),
            v3_children,
        ),
        Question(
            Said(
                f"Run `{V3_RUN}`: how many of them are of type explore?",
                f"运行 `{V3_RUN}`：其中几个是 explore 类型？",
            ),
            v3_explorers,
        ),
        Question(
            Said(
                f"Run `{V3_RUN}`: how many tool calls do the children make, all together?",
                f"运行 `{V3_RUN}`：子智能体一共调用了几次工具？",
            ),
            v3_children_calls,
        ),
        Question(
            Said(
                "Can an explore child edit a file? (`AGENT_TYPES` in v3_subagents/subagents.py)",
                "explore 子智能体能改文件吗？（看 v3_subagents/subagents.py 里的 `AGENT_TYPES`）",
            ),
            v3_explore_edits,
            YES_NO,
        ),
        Question(
            Said("Can a child start a child of its own?", "子智能体能再派出自己的子智能体吗？"),
            v3_child_task,
            YES_NO,
        ),
    ],
    4: [
        Question(
            Said(
                f"Run `{V4_RUN}`: how many turns does step 1 take?",
                f"运行 `{V4_RUN}`：第 1 步有几轮？",
            ),
            v4_turns,
        ),
        Question(
            Said(
                f"Run `{V4_RUN}`: before which turn of step 1 are old tool results first "
                "cut (stage 1)?",
                f"运行 `{V4_RUN}`：第 1 步里，旧的工具结果在第几轮之前第一次被截短（第 1 阶段）？",
            ),
            stage(1),
        ),
        Question(
            Said(
                f"Run `{V4_RUN}`: before which turn of step 1 is the older conversation "
                "summarised (stage 2)?",
                f"运行 `{V4_RUN}`：第 1 步里，较早的对话在第几轮之前被总结（第 2 阶段）？",
            ),
            stage(2),
        ),
        Question(
            Said(
                f"Run `{V4_RUN}`: how many messages does that summary replace?",
                f"运行 `{V4_RUN}`：这段摘要替换了几条消息？",
            ),
            v4_summarised,
        ),
        Question(
            Said(
                f"Run `{V4_RUN}`: how many times does step 1 write the plan?",
                f"运行 `{V4_RUN}`：第 1 步写了几次计划？",
            ),
            v4_plan_writes,
        ),
    ],
}
