"""Chapter 1: the agent loop with structured tool use.

The whole agent is this loop:

    ask the model ─► it answers with text and/or tool calls
         ▲                         │
         │      stop_reason == "max_tokens"? ──► stopped: the reply was cut off
         │      stop_reason != "tool_use"?   ──► done: its text is the answer
         │                         │
         └── append the results ◄── run every tool call

The model never touches the machine.  It *asks* for a tool by name with JSON
arguments; this code runs it and sends back what happened.  Everything else in the
folder (terminal output, flags, the demo) is plumbing around `run`.
"""

from __future__ import annotations

from pathlib import Path

from llm import Console, Message, Model, ModelError, RunResult
from llm.console import counted
from llm.result import CUT_OFF, INTERRUPTED, close_open_turn, tool_uses

from .tools import TOOLS, run_tool

SYSTEM = """You are a coding agent working in a project directory on the user's machine.
Use the tools to look around, run commands, and change files; paths are relative to
the project directory. Work step by step: inspect before you edit, and run the tests
or the program to check your change. When the task is done, reply with a short
summary of what you did and what you found, without calling a tool."""


def run(
    task: str,
    *,
    model: Model,
    workdir: str | Path,
    max_turns: int = 30,
    history: list[Message] | None = None,
    console: Console | None = None,
) -> RunResult:
    """Work on `task` until the model stops asking for tools, or `max_turns` model calls."""
    console = console or Console(quiet=True)
    messages: list[Message] = [*(history or []), {"role": "user", "content": task}]
    usage = []
    stop, why, failure = "max_turns", f"stopped after {counted(max_turns, 'turn')}", ""
    try:
        for _ in range(max_turns):
            with console.thinking():
                reply = model.complete(SYSTEM, messages, tools=TOOLS)
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
            for call in tool_uses(messages[-2]):
                console.tool_call(call["name"], call["input"])
                result = run_tool(call["name"], call["input"], workdir)
                console.tool_result(result.content, result.is_error)
                results.append(result.to_block(call))
    except KeyboardInterrupt:
        stop, why = "interrupted", INTERRUPTED
    except ModelError as error:
        stop, why, failure = error.stop, f"model error: {error}", str(error)
        usage.extend(error.spent)  # a reply that came, and was paid for, though unusable

    if why:  # the one way out: a turn cut short gets an answer for each open call, and why
        close_open_turn(messages, why)
    return RunResult(stop, messages, usage, failure)
