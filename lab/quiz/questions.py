"""The quiz's questions, five a chapter, each with the function that finds its right answer.

Every question names the command that shows the answer; its `right` is a function of
`answers.py`, which runs what that command runs and reads the answer from the result.
Nothing here holds an answer typed in.

Imports `lab.quiz.answers` and `lab.exercises.check.Said`; nothing of the command.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lab.exercises.check import Said

from .answers import (
    Right,
    stage,
    v0_first_stop,
    v0_format_errors,
    v0_request_three,
    v0_tool_calls,
    v0_turns,
    v1_editor,
    v1_last_stop,
    v1_request_three,
    v1_tools_offered,
    v1_turns,
    v2_all_done,
    v2_plan_items,
    v2_plan_writes,
    v2_quiet_turns,
    v2_reminder_turn,
    v3_child_task,
    v3_children,
    v3_children_calls,
    v3_explore_edits,
    v3_explorers,
    v4_plan_writes,
    v4_summarised,
    v4_turns,
)

YES_NO = ("yes", "no")
STOP_REASONS = ("end_turn", "tool_use", "max_tokens", "stop_sequence")
V0_RUN = "python -m v0_react_text --demo"
V1_RUN = "python -m v1_tool_loop --demo --step"
V2_RUN = "python -m v2_todos --demo"
V3_RUN = "python -m v3_subagents --demo"
V4_RUN = "python -m v4_memory --demo"


@dataclass(frozen=True)
class Question:
    """One question: what it asks, the answers it offers (none: a whole number), and the
    function that runs the chapter to find the right one."""

    ask: Said
    right: Callable[[], Right]
    choices: tuple[str, ...] = ()


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
