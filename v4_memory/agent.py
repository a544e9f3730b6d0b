"""Chapter 4: the agent loop that remembers: a session on disk, a context kept in budget,
a system prompt rebuilt from layers, skills loaded on demand, and long-term memory.

Chapter 3's loop, with the conversation kept in a session file instead of a list:

    recall memories for the task; append the task to the session          ◄ new
         │
    ask the model ◄── system prompt rebuilt from layers every call         ◄ new
         ▲            messages = window.fit(): within budget, in stages    ◄ new
         │            + the runtime note (clock, model, work dir) at the end ◄ new
         │                         │
         │      stop_reason == "max_tokens"? ──► go on: say it was cut off  ◄ changed
         │      stop_reason != "tool_use"?   ──► done: its text is the answer
         │                         │
         │            run every tool call (memory, skills, children, …)
         │                         │
         └── append the results to the session, once, whole                ◄ new

Every message is written to `.agent/sessions/<id>.jsonl` as it happens, so a crash
loses at most the line being written and `--continue` picks the work up again.
"""

from __future__ import annotations

import threading
from datetime import datetime
from functools import partial
from pathlib import Path

from llm import Console, Model, ModelError
from llm.cassette import for_child
from llm.console import counted
from llm.errors import ContextTooLong
from llm.result import INTERRUPTED, tool_uses
from v1_tool_loop.tools import HANDLERS, ToolResult, run_tool
from v2_todos.todos import REMIND_AFTER, REMINDER, TodoList, latest_plan, reminder_due
from v3_subagents.agent import ALL_SCHEMAS as CHAPTER_3_SCHEMAS
from v3_subagents.agent import CHILDREN
from v3_subagents.agent import MAIN as CHAPTER_3_MAIN
from v3_subagents.agent import run as run_child
from v3_subagents.search import SEARCH_HANDLERS
from v3_subagents.subagents import (
    AgentType,
    Child,
    StoppableModel,
    child_report,
    find_type,
    finish,
    first_line,
)

from .context import ContextWindow, SessionRunResult, continuation, default_budget
from .memory import MEMORY_TOOLS, Hit, MemoryStore, flush, render_hits
from .prompt import HOME, Layer, assemble, build_layers, runtime, with_runtime
from .session import SESSIONS_DIR, Session, SessionStore
from .skills import LOAD_SKILL_TOOL, find_skills, load_skill, skills_index

RECALL = 3  # memories recalled for each task: the few most relevant, not the whole store

# The tools layer of the system prompt: how to use the tools well.  Who the agent is,
# the project's files, the memories and the clock are layers of their own (prompt.py).
TOOLS_GUIDANCE = """Paths are relative to the project directory. Inspect before you edit,
and run the tests or the program to check your change.

For a task of several steps, first write a plan with todo_write, then keep it up to
date: exactly one item in_progress at a time, each marked completed as soon as it is done.

Your context is a budget. To read many files, send child agents with the task tool:
several explorers at once for independent questions, then a coder for a well-defined
change. Each child starts with nothing but your prompt, so make it self-contained.

Long-term memory outlives this session. When the user states a preference or a fact
worth keeping, save it with memory_write; search it with memory_search before asking
the user something they may have told you before. When a task matches a skill in the
skills index, load its instructions with load_skill and follow them."""

MAIN = AgentType(
    "the agent the person talks to, with a memory",
    TOOLS_GUIDANCE,
    (*CHAPTER_3_MAIN.tools, "memory_write", "memory_search", "load_skill"),
)
SCHEMAS_BY_NAME = {
    **CHAPTER_3_SCHEMAS,
    **{tool["name"]: tool for tool in MEMORY_TOOLS},
    "load_skill": LOAD_SKILL_TOOL,
}
TOOLS = [SCHEMAS_BY_NAME[name] for name in MAIN.tools]


def layers(
    workdir: Path, recalled: list[Hit] | None = None, skills: str | None = None
) -> list[Layer]:
    """The system prompt's layers for the next call, its files read afresh (they may have
    changed); `skills`, the skills index, when the caller has it already."""
    if skills is None:
        skills = skills_index(find_skills(workdir)[0])
    return build_layers(
        workdir, recalled=recalled or [], skills_index=skills, tools_guidance=MAIN.system
    )


def runtime_now(workdir: Path, model_name: str) -> Layer:
    """The runtime note for the next call: it ends the request, after the conversation."""
    return runtime(workdir, model_name, datetime.now().astimezone())


def run(
    task: str,
    *,
    model: Model,
    workdir: str | Path,
    max_turns: int = 30,
    history: list | None = None,
    console: Console | None = None,
    remind_after: int = REMIND_AFTER,
    session: Session | None = None,
    context_budget: int | None = None,
) -> SessionRunResult:
    """Work on `task` in `session` (a new one if none is given) until the model stops
    asking for tools, or `max_turns` model calls.  The session is the history: `history`
    is accepted for the shared command line, and ignored."""
    console = console or Console(quiet=True)
    workdir = Path(workdir)
    own_session = session is None
    meta = {"model": model.name, "chapter": "v4_memory"}
    session = session or SessionStore(workdir / SESSIONS_DIR, workdir=workdir).create(meta)
    memory = MemoryStore(workdir / HOME, workdir=workdir)
    for problem in memory.problems:
        console.warn(f"memory: {problem}")
    recalled = memory.search(task, k=RECALL)  # what long-term memory knows of this task
    if recalled:
        console.note(f"recalled: {'; '.join(' '.join(hit.text.split()) for hit in recalled)}")
    session.append({"role": "user", "content": task})
    found, skipped = find_skills(workdir)  # once a run: parsing them takes time
    for problem in skipped:
        console.warn(f"skill {problem}")
    skills = skills_index(found)
    budget = context_budget or default_budget(model.name)
    system = ""  # rebuilt before every call; the flush before a summary uses the latest

    def save_before_summary(view: list) -> None:
        side = for_child(model, f"flush-{session.compactions + 1}")
        saved = flush(side, system, view, memory)
        console.note(f"memory flush before older turns are summarised: {len(saved)} saved")

    window = ContextWindow(model, session, budget, before_summary=save_before_summary)
    usage = []
    children: list[Child] = []
    stop_children = threading.Event()  # set by Ctrl-C while children work
    # The plan so far, read back from the history, and the tools this agent may use.
    todos = TodoList(latest_plan(session.messages()))

    def delegate(
        call_id: str, workdir: Path, description: str, prompt: str, agent_type: str
    ) -> str:
        """Run a chapter 3 child of `agent_type` on `prompt`, from nothing, in memory only."""
        child_kind = find_type(agent_type)
        child_console = console.child(description)
        child_console.note(f"▶ {agent_type} agent: {first_line(prompt)[:100]}")
        child = run_child(
            prompt,
            model=StoppableModel(for_child(model, call_id), stop_children),
            workdir=workdir,
            max_turns=child_kind.max_turns,
            console=child_console,
            kind=child_kind,
        )
        children.append(Child(call_id, description, agent_type, child))
        return child_report(agent_type, child)

    schemas = {tool["name"]: tool for tool in TOOLS}
    handlers = {
        **HANDLERS,
        **SEARCH_HANDLERS,
        "todo_write": lambda workdir, items: todos.update(items),
        "memory_write": lambda workdir, text, category: f"saved as {memory.add(text, category)}",
        "memory_search": lambda workdir, query, k=5: render_hits(memory.search(query, k)),
        "load_skill": load_skill,
    }

    def run_call(call: dict) -> ToolResult:
        # A task call's child replays (or records) its own section, keyed by the call's id.
        table = {**handlers, "task": partial(delegate, call["id"])}
        return run_tool(call["name"], call["input"], workdir, schemas=schemas, handlers=table)

    def result(stop: str, error: str = "") -> SessionRunResult:
        if own_session:
            session.close()
        return SessionRunResult(
            stop, session.transcript(), usage, error, children, session.id, window.compactions,
            recalled, tool_calls,
        )  # fmt: skip

    quiet_turns = tool_calls = 0  # turns since the plan was written or last recalled
    results: list[dict] = []
    try:
        for _ in range(max_turns):
            system, tools = assemble(layers(workdir, recalled, skills)), TOOLS
            note = runtime_now(workdir, model.name)  # last, so all before it stays cached
            with console.thinking():
                try:
                    messages = with_runtime(window.fit(system, tools), note)
                    reply = model.complete(system, messages, tools=tools)
                except ContextTooLong:  # the estimate was low: make room, and ask again once
                    messages = with_runtime(window.fit_after_overflow(system, tools), note)
                    reply = model.complete(system, messages, tools=tools)
            window.note_usage(reply.usage)
            usage.append(reply.usage)
            session.append({"role": "assistant", "content": reply.content})
            for block in reply.content:
                if block["type"] == "text":
                    console.say(block["text"])

            if reply.stop_reason == "max_tokens":  # cut off: say so, and let it go on
                console.warn("the reply was cut off at the token limit; asking the model to go on")
                session.append(continuation(reply.content))
                continue
            if reply.stop_reason != "tool_use":
                return result("done")

            # Appended once the tools have run: a session line is written once, whole.
            results = []
            calls = tool_uses({"role": "assistant", "content": reply.content})
            # Children start first and work side by side, in threads; the other calls run
            # here meanwhile, and every result is taken in the order of the calls.
            stop_children.clear()  # a Ctrl-C of an earlier turn does not stop this turn's
            tasks = [number for number, call in enumerate(calls) if call["name"] == "task"]
            started = {number: CHILDREN.submit(run_call, calls[number]) for number in tasks}
            for number, call in enumerate(calls):
                console.tool_call(call["name"], call["input"])
                child = started.get(number)
                outcome = finish(child, stop_children, console) if child else run_call(call)
                if call["name"] == "todo_write" and not outcome.is_error:
                    console.listing(outcome.content)  # the person watches the plan move
                else:
                    console.tool_result(outcome.content, outcome.is_error)
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": call["id"],
                        "content": outcome.content,
                        "is_error": outcome.is_error,
                    }
                )

            # The reminder rides in the same message as the results, after them, so
            # every tool_use is still answered in the very next message.
            tool_calls += len(calls)
            wrote_plan = any(call["name"] == "todo_write" for call in calls)
            quiet_turns = 0 if wrote_plan else quiet_turns + 1
            if reminder_due(todos, quiet_turns, tool_calls, remind_after):
                results.append({"type": "text", "text": REMINDER})
                console.note(f"  (reminder sent: no todo_write for {counted(quiet_turns, 'turn')})")
                quiet_turns = 0
            session.append({"role": "user", "content": results})
            results = []
    except KeyboardInterrupt:
        stop_children.set()  # children still at work stop at their next model call
        session.close_turn(results, INTERRUPTED)
        return result("interrupted")
    except ModelError as error:  # ContextFull, stage 3 of the window, is one too
        session.close_turn(results, f"model error: {error}")
        return result(error.stop, str(error))

    session.close_turn([], f"stopped after {counted(max_turns, 'turn')}")
    return result("max_turns")
