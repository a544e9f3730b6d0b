"""Chapter 2: the agent loop with a plan the model keeps up to date.

Chapter 1's loop, plus one tool and one nudge:

    ask the model ─► it answers with text and/or tool calls
         ▲                         │
         │      stop_reason == "max_tokens"? ──► stopped: the reply was cut off
         │      stop_reason != "tool_use"?   ──► done: its text is the answer
         │                         │
         │            run every tool call; todo_write replaces the plan   ◄ new
         │                         │
         └── append the results ◄── + a reminder, when the plan was left   ◄ new
                                      alone for REMIND_AFTER turns

The plan lives in the conversation: the model writes it with `todo_write`, reads it
back in the tool result, and the person watches it move in the terminal.  The loop
only keeps count of how long the model has ignored it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from llm import Console, Message, Model, ModelError
from llm.console import counted
from llm.result import CUT_OFF, INTERRUPTED, close_open_turn, tool_uses
from v1_tool_loop.tools import HANDLERS, SCHEMAS, run_tool

from .todos import REMIND_AFTER, REMINDER, TODO_TOOL, Plan, PlanRunResult, latest_plan

SYSTEM = """You are a coding agent working in a project directory on the user's machine.
Use the tools to look around, run commands, and change files; paths are relative to
the project directory. Work step by step: inspect before you edit, and run the tests
or the program to check your change. When the task is done, reply with a short
summary of what you did and what you found, without calling a tool.

For a task of several steps, first write a plan with todo_write, then keep it up to
date: exactly one item in_progress at a time, and each item marked completed as soon
as it is done, not all at the end."""

TOOLS = {**SCHEMAS, "todo_write": TODO_TOOL}  # chapter 1's tools, and the plan's


def run(
    task: str,
    *,
    model: Model,
    workdir: str | Path,
    max_turns: int = 30,
    history: list[Message] | None = None,
    console: Console | None = None,
    remind_after: int = REMIND_AFTER,
    system: str = SYSTEM,
    tools: Mapping[str, dict] = TOOLS,
    handlers: Mapping[str, Callable[..., str]] = HANDLERS,
) -> PlanRunResult:
    """Work on `task` until the model stops asking for tools, or `max_turns` model calls.

    `system` and `tools` (with the `handlers` that run them) are this chapter's agent's
    unless given: chapter 3 starts its child agents here, each with its type's."""
    console = console or Console(quiet=True)
    messages: list[Message] = [*(history or []), {"role": "user", "content": task}]
    usage = []
    # The plan so far, read back from the history; todo_write, when offered, replaces it.
    plan = Plan(latest_plan(messages), remind_after)
    handlers = {**handlers, "todo_write": plan.write}
    stop, why, failure = "max_turns", f"stopped after {counted(max_turns, 'turn')}", ""
    try:
        for _ in range(max_turns):
            with console.thinking():
                reply = model.complete(system, messages, tools=list(tools.values()))
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
            for call in calls:
                console.tool_call(call["name"], call["input"])
                result = run_tool(
                    call["name"], call["input"], workdir, schemas=tools, handlers=handlers
                )
                if call["name"] == "todo_write" and not result.is_error:
                    console.listing(result.content)  # the person watches the plan move
                else:
                    console.tool_result(result.content, result.is_error)
                results.append(result.to_block(call))

            # The reminder rides in the same message as the results, after them, so
            # every tool_use is still answered in the very next message.
            quiet_turns = plan.quiet_turns_after(calls)
            if quiet_turns and "todo_write" in tools:  # left alone for `remind_after` turns
                results.append({"type": "text", "text": REMINDER})
                console.note(f"  (reminder sent: no todo_write for {counted(quiet_turns, 'turn')})")
    except KeyboardInterrupt:
        stop, why = "interrupted", INTERRUPTED
    except ModelError as error:
        stop, why, failure = error.stop, f"model error: {error}", str(error)
        usage.extend(error.spent)  # a reply that came, and was paid for, though unusable

    if why:  # the one way out: a turn cut short gets an answer for each open call, and why
        close_open_turn(messages, why)
    return PlanRunResult(stop, messages, usage, failure)
