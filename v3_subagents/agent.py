"""Chapter 3: the agent loop that can hand a subtask to a child agent with a fresh context.

Chapter 2's loop, plus one tool that starts chapter 2's loop again, small:

    ask the model ─► it answers with text and/or tool calls
         ▲                         │
         │      stop_reason == "max_tokens"? ──► stopped: the reply was cut off
         │      stop_reason != "tool_use"?   ──► done: its text is the answer
         │                         │
         │            run every tool call; todo_write replaces the plan
         │                         │
         │            task(description, prompt, agent_type)                ◄ new
         │              └─► a child: fresh messages, the type's system        ◄ new
         │                  prompt and tools; several side by side (subagents.py)
         │                         │
         └── append the results ◄── + a reminder, when the plan was left alone

A child's whole conversation stays in the child; the parent's context grows by the
child's final report only.  That is the idea of the chapter: context is a budget,
and delegation spends a child's budget instead of the parent's.
"""

from __future__ import annotations

from pathlib import Path

from llm import Console, Message, Model, ModelError
from llm.console import counted
from llm.result import CUT_OFF, INTERRUPTED, close_open_turn, tool_uses
from v1_tool_loop.tools import SCHEMAS
from v2_todos.todos import REMIND_AFTER, REMINDER, Plan, latest_plan

from .subagents import ALL_HANDLERS, ALL_SCHEMAS, AgentType, Children, DelegationRunResult

SYSTEM = """You are a coding agent working in a project directory on the user's machine.
Use the tools to look around, run commands, and change files; paths are relative to
the project directory. Work step by step: inspect before you edit, and run the tests
or the program to check your change. When the task is done, reply with a short
summary of what you did and what you found, without calling a tool.

For a task of several steps, first write a plan with todo_write, then keep it up to
date: exactly one item in_progress at a time, and each item marked completed as soon
as it is done, not all at the end.

Your context is a budget. When finding the answer means reading many files, send
child agents with the task tool instead of reading everything yourself: several
explorers at once for independent questions, then a coder for a well-defined change.
Each child starts with nothing but your prompt, so make the prompt self-contained."""

# The agent the person talks to is one more type: chapter 2's tools plus `task`.
MAIN = AgentType("the agent the person talks to", SYSTEM, (*SCHEMAS, "todo_write", "task"), 30)


def run(
    task: str,
    *,
    model: Model,
    workdir: str | Path,
    max_turns: int = 30,
    history: list[Message] | None = None,
    console: Console | None = None,
    remind_after: int = REMIND_AFTER,
) -> DelegationRunResult:
    """Work on `task` until the model stops asking for tools, or `max_turns` model calls."""
    console = console or Console(quiet=True)
    messages: list[Message] = [*(history or []), {"role": "user", "content": task}]
    usage = []
    # The plan so far, read back from the history, and chapter 2's tools plus task.
    plan = Plan(latest_plan(messages), remind_after)
    schemas = {name: ALL_SCHEMAS[name] for name in MAIN.tools}
    handlers = {**ALL_HANDLERS, "todo_write": plan.write}
    children = Children(model, Path(workdir), console, max_turns)  # the agents task starts
    stop, why, failure = "max_turns", f"stopped after {counted(max_turns, 'turn')}", ""
    try:
        for _ in range(max_turns):
            with console.thinking():
                reply = model.complete(SYSTEM, messages, tools=list(schemas.values()))
            usage.append(reply.usage)
            messages.append({"role": "assistant", "content": reply.content})
            for block in reply.content:
                if block["type"] == "text":
                    console.say(block["text"])

            if reply.stop_reason == "max_tokens":  # cut off: a call in it may be half written
                stop, why = "max_tokens", CUT_OFF
                break
            if reply.stop_reason != "tool_use":
                stop, why = "done", ""
                break

            # Appended before the tools run, so an interrupt keeps the finished results.
            results: list[dict] = []
            messages.append({"role": "user", "content": results})
            calls = tool_uses(messages[-2])
            # Task calls start children side by side; every result comes in call order.
            for call, result in children.run_calls(calls, schemas, handlers):
                if call["name"] == "todo_write" and not result.is_error:
                    console.listing(result.content)  # the person watches the plan move
                else:
                    console.tool_result(result.content, result.is_error)
                results.append(result.to_block(call))

            # The reminder rides in the same message as the results, after them, so
            # every tool_use is still answered in the very next message.
            quiet_turns = plan.quiet_turns_after(calls)
            if quiet_turns:  # left alone for `remind_after` turns: bring the plan back up
                results.append({"type": "text", "text": REMINDER})
                console.note(f"  (reminder sent: no todo_write for {counted(quiet_turns, 'turn')})")
    except KeyboardInterrupt:
        stop, why = "interrupted", INTERRUPTED
    except ModelError as error:
        stop, why, failure = error.stop, f"model error: {error}", str(error)
        usage.extend(error.spent)  # a reply that came, and was paid for, though unusable

    if why:  # the one way out: a turn cut short gets an answer for each open call, and why
        close_open_turn(messages, why)
    return DelegationRunResult(stop, messages, usage, failure, children=children.records)
