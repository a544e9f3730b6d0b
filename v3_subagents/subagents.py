"""The kinds of child agent the parent can start, and what a child hands back.

A child agent is the same loop as its parent, started fresh: its own message list
holding only the prompt the parent wrote, its own system prompt, its own turn limit,
and a tool set chosen by its type.  It can read forty files; the parent sees only
the summary it writes at the end.  The table below is meant to be read and extended:
add a type, name its tools, and the `task` tool offers it.

No type gets `task`.  A child that could start children could start them without
end, each level paying for its own context, and nobody could see what happened
three levels down; one level keeps the cost bounded and the story readable.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import v2_todos  # a child agent is chapter 2's agent, run with its type's prompt and tools
from llm import Block, Console, Message, Model, RunResult, Usage
from llm.console import counted
from llm.result import text_of, tool_uses
from llm.tokens import estimate_message
from llm.wrapper import Wrapper, for_child
from machine import ToolError, cap_output, stop_running_commands, wait_through_ctrl_c
from v1_tool_loop.tools import HANDLERS, SCHEMAS, ToolResult, run_tool
from v2_todos.todos import TODO_TOOL, PlanRunResult

from .search import SEARCH_HANDLERS, SEARCH_TOOLS

CHILD_TURNS = 20  # a child that has not finished in 20 turns is lost; the parent decides


@dataclass(frozen=True)
class AgentType:
    """One kind of child: what it is for, how it is told to work, what it may use."""

    description: str
    system: str
    tools: tuple[str, ...]
    max_turns: int = CHILD_TURNS


READ_ONLY = ("read_file", "list_files", "grep")

AGENT_TYPES: dict[str, AgentType] = {
    "explore": AgentType(
        description="finds and reads code to answer a question; cannot change anything",
        system="""You are an explorer working for another agent, in a project directory.
Find and read what answers the question you are given; you can list files, search
them and read them, and nothing else. Be thorough but brief: when you know the
answer, reply without calling a tool, with what you found, naming files, functions
and line numbers, so the agent that sent you can act without reading it all again.""",
        tools=READ_ONLY,
    ),
    "plan": AgentType(
        description="reads the code and proposes a plan of changes; cannot change anything",
        system="""You are a planner working for another agent, in a project directory.
Read what you need (you can list, search and read files, nothing else) and answer
with a short, numbered plan of changes: which file, which function, what to change
and how to check it. Do not write code beyond a line or two per step.""",
        tools=READ_ONLY,
    ),
    "code": AgentType(
        description="changes code and runs commands to finish a well-defined piece of work",
        system="""You are a coding agent working for another agent, in a project directory.
Do the piece of work you are given: inspect before you edit, change the files, and
run the tests or the program to check your change. For several steps, keep a plan
with todo_write. When done, reply without calling a tool, with a short report of
what you changed and how you checked it.""",
        tools=("bash", "read_file", "write_file", "edit_file", "todo_write"),
    ),
}

TASK_TOOL: dict[str, Any] = {
    "name": "task",
    "description": (
        "Start a child agent on a subtask, in a fresh context of its own, and get back only "
        "its final report. Use it to keep your own context small: send an explorer to read "
        "many files and report what matters, or a coder to finish a well-defined change. "
        "The child sees nothing of this conversation, so the prompt must say everything it "
        "needs. Several task calls in one reply run at the same time. Agent types: "
        + "; ".join(f"{name}: {kind.description}" for name, kind in AGENT_TYPES.items())
        + "."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "Three to five words, for the log."},
            "prompt": {"type": "string", "description": "The whole subtask, self-contained."},
            "agent_type": {"type": "string", "enum": list(AGENT_TYPES)},
        },
        "required": ["description", "prompt", "agent_type"],
    },
}


# Every tool an agent of this chapter may be given, by name: its type picks from these.
ALL_SCHEMAS = {
    **SCHEMAS,
    **{tool["name"]: tool for tool in SEARCH_TOOLS},
    "todo_write": TODO_TOOL,
    "task": TASK_TOOL,
}
# And what runs them: chapter 1's handlers and the search tools' (each agent adds its
# own plan's todo_write; no child gets `task`, so nothing here can start another child).
ALL_HANDLERS = {**HANDLERS, **SEARCH_HANDLERS}
CHILDREN = ThreadPoolExecutor(max_workers=4, thread_name_prefix="child")  # at most 4 at once


def find_type(name: str) -> AgentType:
    """The type called `name`, or a ToolError listing the types (the model picked one)."""
    if name not in AGENT_TYPES:
        raise ToolError(f"unknown agent_type '{name}'; choose one of {', '.join(AGENT_TYPES)}")
    return AGENT_TYPES[name]


def first_line(prompt: str) -> str:
    """The prompt's first line, for the log; a ToolError for an empty prompt, which the
    child could do nothing with."""
    lines = prompt.strip().splitlines()
    if not lines:
        raise ToolError("the prompt is empty: write the whole subtask for the child in it")
    return lines[0]


def child_report(kind: str, child: RunResult) -> str:
    """What the parent gets back: the child's final text and a one-line footer.

    A child that did not finish (turn limit, provider error, Ctrl-C) is an error result:
    the parent reads why, and what the child had said so far, and decides what next.
    The report is capped as a command's output is (`cap_output`): a child that writes
    a 5 MB answer must not flood the parent's context it was meant to keep small.
    """
    usage = child.usage
    footer = (
        f"[{kind} agent: {counted(child.turns, 'turn')}, {counted(child.tool_calls, 'tool call')}, "
        f"{'≈' if usage.estimated else ''}{usage.input_tokens + usage.output_tokens:,} tokens]"
    )
    if child.stop == "done":
        return f"{cap_output(child.answer)}\n\n{footer}"
    said = [text_of(m["content"]) for m in child.messages if m["role"] == "assistant"]
    last = next((text for text in reversed(said) if text and not text.startswith("[")), "")
    reason = child.error or child.stop
    raise ToolError(
        f"the {kind} agent stopped without finishing ({reason}). "
        + (f"Its last words: {cap_output(last)}\n\n" if last else "")
        + footer
    )


class StoppableModel(Wrapper):
    """A child's model, which stops the child at its next call once `stop` is set (Ctrl-C).

    Ctrl-C reaches only the main thread; the children, in threads of their own, learn
    of it here and end as interrupted, so the parent gets their results and goes on.
    """

    def __init__(self, inner: Model, stop: threading.Event) -> None:
        super().__init__(inner)
        self.stop = stop

    def before(self, system: str, messages: list[Message], tools: list[dict] | None) -> None:
        if self.stop.is_set():
            raise KeyboardInterrupt


@dataclass
class Child:
    """One child agent as the parent started it, and how its run went."""

    call_id: str
    description: str
    agent_type: str
    result: RunResult


@dataclass
class DelegationRunResult(PlanRunResult):
    """A RunResult that keeps each child's own result, nested, in the order of the calls."""

    children: list[Child] = field(default_factory=list)

    def __post_init__(self) -> None:
        """The children in the order of their calls, looked for from the end, where the
        run's own calls are: a resumed session's earlier turns are not read."""
        wanted, order, back = {child.call_id for child in self.children}, {}, itertools.count()
        for message in reversed(self.messages):
            if wanted <= order.keys():
                break
            for call in reversed(tool_uses(message)):
                order[call["id"]] = -next(back)  # an earlier call, a smaller key
        self.children.sort(key=lambda child: order[child.call_id])

    @property
    def usage(self) -> Usage:
        """The parent's tokens and every child's: delegation moves the cost, it does not hide it."""
        return sum((child.result.usage for child in self.children), super().usage)

    def counts(self) -> dict[str, int]:
        return {**super().counts(), "children": len(self.children)}

    def details(self) -> dict[str, Any]:
        """The plan, and each child's run as it happened, so a reader can unfold it."""
        children = [
            {
                "call_id": child.call_id,
                "description": child.description,
                "agent_type": child.agent_type,
                "stop": child.result.stop,
                "turns": child.result.turns,
                "tool_calls": child.result.tool_calls,
                "input_tokens": child.result.usage.input_tokens,
                "output_tokens": child.result.usage.output_tokens,
                "context_per_turn": child.result.context_tokens,
                "messages": child.result.messages,
                "details": child.result.details(),
            }
            for child in self.children
        ]
        return {**super().details(), "children": children}

    def highlights(self) -> list[str]:
        """The parent's context against what it would have held had it read it all itself."""
        if not self.children:
            return []
        read = sum(estimate_message(m) for c in self.children for m in c.result.messages[1:])
        peak = max(self.context_tokens, default=0)
        return [
            f"delegation: {counted(len(self.children), 'child', 'children')}; the parent's "
            "context peaked at "
            f"≈{peak:,} tokens; doing the children's work itself, it would have held "
            f"≈{peak + read:,}"
        ]


def finish(child: Future[ToolResult], stop: threading.Event, console: Console) -> ToolResult:
    """A child's result.  Ctrl-C meanwhile asks every child to stop at its next model call,
    and their results then say they were interrupted; a second Ctrl-C also kills the
    commands still running, and once the child has ended, stops the parent's run too.

    The presses are counted while the main thread waits (`wait_through_ctrl_c`), not
    raised in the middle of the future's own locking, and acted on after the wait.
    """
    if threading.current_thread() is not threading.main_thread():
        return child.result()  # only the main thread receives Ctrl-C

    def first_ctrl_c() -> None:
        stop.set()
        console.warn("stopping the child agents (Ctrl-C again to stop their commands too)")

    # A child's command would hold the program until it ends: the second stops them.
    result, presses = wait_through_ctrl_c(child, [first_ctrl_c, stop_running_commands])
    if presses >= 2:
        raise KeyboardInterrupt  # out of every lock now: the parent stops as interrupted
    return result


class Children:
    """The child agents of one run: started side by side, stopped by Ctrl-C, kept.

    `run_calls` runs every tool call of one reply.  Each `task` call starts a child in
    the pool at once; the other calls run here meanwhile; the results come back in the
    order of the calls.  `records` keeps each child's own run, for the run's result.
    """

    def __init__(self, model: Model, workdir: Path, console: Console, max_turns: int) -> None:
        self.model, self.workdir, self.console = model, workdir, console
        self.max_turns = max_turns  # the run's: no child is given more turns than its parent
        self.stop = threading.Event()  # set by Ctrl-C: children at work stop at their next call
        self.records: list[Child] = []

    def run_calls(
        self, calls: list[Block], schemas: Mapping[str, dict], handlers: Mapping[str, Callable]
    ) -> Iterator[tuple[Block, ToolResult]]:
        """Each call of one reply with its result, in the order of the calls.

        A generator, so that the loop keeps every result taken before a Ctrl-C.  Once the
        loop stops taking them, for whatever reason, children still at work stop too.
        """
        self.stop.clear()  # a Ctrl-C of an earlier turn does not stop this turn's children
        started = {
            number: CHILDREN.submit(self.run_call, call, schemas, handlers)
            for number, call in enumerate(calls)
            if call["name"] == "task"
        }
        try:
            for number, call in enumerate(calls):
                self.console.tool_call(call["name"], call["input"])
                child = started.get(number)
                if child:
                    yield call, finish(child, self.stop, self.console)
                else:
                    yield call, self.run_call(call, schemas, handlers)
        finally:
            self.stop.set()

    def run_call(
        self, call: Block, schemas: Mapping[str, dict], handlers: Mapping[str, Callable]
    ) -> ToolResult:
        # A task call's child replays (or records) its own section, keyed by the call's id.
        table = {**handlers, "task": partial(self.delegate, call["id"])}
        return run_tool(call["name"], call["input"], self.workdir, schemas=schemas, handlers=table)

    def delegate(
        self, call_id: str, workdir: Path, description: str, prompt: str, agent_type: str
    ) -> str:
        """Run a child of `agent_type` on `prompt`, from nothing; its report is the result."""
        kind = find_type(agent_type)
        console = self.console.child(description)
        console.note(f"▶ {agent_type} agent: {first_line(prompt)[:100]}")
        child = v2_todos.run(  # chapter 2's agent, from nothing but the prompt
            prompt,
            model=StoppableModel(for_child(self.model, call_id), self.stop),
            workdir=workdir,
            max_turns=min(kind.max_turns, self.max_turns),
            console=console,
            system=kind.system,
            tools={name: ALL_SCHEMAS[name] for name in kind.tools},
            handlers=ALL_HANDLERS,
        )
        self.records.append(Child(call_id, description, agent_type, child))
        return child_report(agent_type, child)
