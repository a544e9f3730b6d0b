"""Chapter 3: the agent loop that can hand a subtask to a child agent with a fresh context.

Chapter 2's loop, plus one tool that starts the same loop again, small:

    ask the model ─► it answers with text and/or tool calls
         ▲                         │
         │      stop_reason == "max_tokens"? ──► stopped: the reply was cut off
         │      stop_reason != "tool_use"?   ──► done: its text is the answer
         │                         │
         │            run every tool call; todo_write replaces the plan
         │                         │
         │            task(description, prompt, agent_type)                ◄ new
         │              └─► run(prompt) with fresh messages, the type's      ◄ new
         │                  system prompt and tools; several side by side
         │                         │
         └── append the results ◄── + a reminder, when the plan was left alone

A child's whole conversation stays in the child; the parent's context grows by the
child's final report only.  That is the idea of the chapter: context is a budget,
and delegation spends a child's budget instead of the parent's.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

from llm import Console, Message, Model, ModelError
from llm.cassette import for_child
from llm.console import counted
from llm.result import CUT_OFF, INTERRUPTED, close_open_turn, tool_uses
from v1_tool_loop.tools import HANDLERS, SCHEMAS, ToolResult, run_tool
from v2_todos.todos import REMIND_AFTER, REMINDER, TODO_TOOL, TodoList, latest_plan, reminder_due

from .search import SEARCH_HANDLERS, SEARCH_TOOLS
from .subagents import (
    TASK_TOOL,
    AgentType,
    Child,
    DelegationRunResult,
    StoppableModel,
    child_report,
    find_type,
    finish,
    first_line,
)

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
CHILDREN = ThreadPoolExecutor(max_workers=4, thread_name_prefix="child")  # at most 4 at once
ALL_SCHEMAS = {
    **SCHEMAS,
    **{tool["name"]: tool for tool in SEARCH_TOOLS},
    "todo_write": TODO_TOOL,
    "task": TASK_TOOL,
}


def run(
    task: str,
    *,
    model: Model,
    workdir: str | Path,
    max_turns: int = 30,
    history: list[Message] | None = None,
    console: Console | None = None,
    remind_after: int = REMIND_AFTER,
    kind: AgentType = MAIN,
) -> DelegationRunResult:
    """Work on `task` until the model stops asking for tools, or `max_turns` model calls.

    `kind` says who is working: the main agent, or a child of one of the types in
    `subagents.AGENT_TYPES` (with its system prompt and only its tools).
    """
    console = console or Console(quiet=True)
    messages: list[Message] = [*(history or []), {"role": "user", "content": task}]
    usage = []
    children: list[Child] = []
    stop_children = threading.Event()  # set by Ctrl-C while children work
    # The plan so far, read back from the history, and the tools this kind of agent may use.
    todos = TodoList(latest_plan(messages))

    def delegate(
        call_id: str, workdir: Path, description: str, prompt: str, agent_type: str
    ) -> str:
        """Run a child of `agent_type` on `prompt`, from nothing; its report is the result."""
        child_kind = find_type(agent_type)
        child_console = console.child(description)
        child_console.note(f"▶ {agent_type} agent: {first_line(prompt)[:100]}")
        child = run(
            prompt,
            model=StoppableModel(for_child(model, call_id), stop_children),
            workdir=workdir,
            max_turns=child_kind.max_turns,
            console=child_console,
            kind=child_kind,
        )
        children.append(Child(call_id, description, agent_type, child))
        return child_report(agent_type, child)

    schemas = {name: ALL_SCHEMAS[name] for name in kind.tools}
    handlers = {
        **HANDLERS,
        **SEARCH_HANDLERS,
        "todo_write": lambda workdir, items: todos.update(items),
    }

    def run_call(call: dict) -> ToolResult:
        # A task call's child replays (or records) its own section, keyed by the call's id.
        table = {**handlers, "task": partial(delegate, call["id"])}
        return run_tool(call["name"], call["input"], workdir, schemas=schemas, handlers=table)

    quiet_turns = tool_calls = 0  # turns since the plan was written or last recalled
    try:
        for _ in range(max_turns):
            with console.thinking():
                reply = model.complete(kind.system, messages, tools=list(schemas.values()))
            usage.append(reply.usage)
            messages.append({"role": "assistant", "content": reply.content})
            for block in reply.content:
                if block["type"] == "text":
                    console.say(block["text"])

            if reply.stop_reason == "max_tokens":  # cut off: a call in it may be half written
                close_open_turn(messages, CUT_OFF)
                return DelegationRunResult("max_tokens", messages, usage, children=children)
            if reply.stop_reason != "tool_use":
                return DelegationRunResult("done", messages, usage, children=children)

            # Appended before the tools run, so an interrupt keeps the finished results.
            results: list[dict] = []
            messages.append({"role": "user", "content": results})
            calls = tool_uses(messages[-2])
            # Children start first and work side by side, in threads; the other calls run
            # here meanwhile, and every result is taken in the order of the calls.
            stop_children.clear()  # a Ctrl-C of an earlier turn does not stop this turn's
            tasks = [number for number, call in enumerate(calls) if call["name"] == "task"]
            started = {number: CHILDREN.submit(run_call, calls[number]) for number in tasks}
            for number, call in enumerate(calls):
                console.tool_call(call["name"], call["input"])
                child = started.get(number)
                result = finish(child, stop_children, console) if child else run_call(call)
                if call["name"] == "todo_write" and not result.is_error:
                    console.listing(result.content)  # the person watches the plan move
                else:
                    console.tool_result(result.content, result.is_error)
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": call["id"],
                        "content": result.content,
                        "is_error": result.is_error,
                    }
                )

            # The reminder rides in the same message as the results, after them, so
            # every tool_use is still answered in the very next message.
            tool_calls += len(calls)
            wrote_plan = any(call["name"] == "todo_write" for call in calls)
            quiet_turns = 0 if wrote_plan else quiet_turns + 1
            planning = "todo_write" in schemas  # an explorer keeps no plan to be reminded of
            if planning and reminder_due(todos, quiet_turns, tool_calls, remind_after):
                results.append({"type": "text", "text": REMINDER})
                console.note(f"  (reminder sent: no todo_write for {counted(quiet_turns, 'turn')})")
                quiet_turns = 0
    except KeyboardInterrupt:
        stop_children.set()  # children still at work stop at their next model call
        close_open_turn(messages, INTERRUPTED)
        return DelegationRunResult("interrupted", messages, usage, children=children)
    except ModelError as error:
        close_open_turn(messages, f"model error: {error}")
        return DelegationRunResult(error.stop, messages, usage, error=str(error), children=children)

    close_open_turn(messages, f"stopped after {counted(max_turns, 'turn')}")
    return DelegationRunResult("max_turns", messages, usage, children=children)
