"""Chapter 4: the agent loop that remembers: a session, a context budget, layers, memory.

Chapter 3's loop, with the conversation kept in a session file instead of a list:

    recall memories for the task; append the task to the session          ◄ new
         │
    ask the model ─► it answers with text and/or tool calls
         ▲                         │
         │      stop_reason == "max_tokens"? ──► go on: say it was cut off  ◄ changed
         │      stop_reason != "tool_use"?   ──► done: its text is the answer
         │                         │
         │            run every tool call; todo_write replaces the plan
         │                         │
         │            task(…); memory_write, memory_search, load_skill     ◄ new
         │                         │
         └── append the results ◄── + a reminder, when the plan was left alone
             to the session, once all are in: a line is written whole     ◄ new

Before each call the system prompt is rebuilt from layers, `window.fit` keeps the
messages in budget, and the runtime note goes last.  Every message is written to
`.agent/sessions/<id>.jsonl` as it happens: `--continue` picks the work up again.
"""

from __future__ import annotations

from pathlib import Path

from llm import Console, Model, ModelError
from llm.console import counted
from llm.result import INTERRUPTED, continuation, tool_uses
from v1_tool_loop.tools import SCHEMAS
from v2_todos.todos import REMIND_AFTER, REMINDER, TODO_TOOL, Plan
from v3_subagents.subagents import ALL_HANDLERS, TASK_TOOL, Children

from .context import ContextWindow, SessionRunResult
from .memory import HOME, MEMORY_TOOLS, MemoryStore, flush_to, memory_handlers, recall
from .prompt import assemble, layers, runtime_now
from .session import Session, SessionError, new_session, plan_of
from .skills import LOAD_SKILL_TOOL, SKILLS, skills_for

# The tools layer of the system prompt; the others (who, the project, memory) are prompt.py's.
TOOLS_GUIDANCE = """Paths are relative to the project directory. Inspect before you edit,
and run the tests or the program to check your change.

For a task of several steps, first write a plan with todo_write, then keep it up to
date: exactly one item in_progress at a time, and each item marked completed as soon
as it is done, not all at the end.

Your context is a budget. When finding the answer means reading many files, send
child agents with the task tool instead of reading everything yourself: several
explorers at once for independent questions, then a coder for a well-defined change.
Each child starts with nothing but your prompt, so make the prompt self-contained.

Long-term memory outlives this session. When the user states a preference or a fact
worth keeping, save it with memory_write; search it with memory_search before asking
the user something they may have told you before. When a task matches a skill in the
skills index, load its instructions with load_skill and follow them."""

# Chapter 3's tools (chapter 2's and `task`), then memory's and the skills'.
TOOLS = [*SCHEMAS.values(), TODO_TOOL, TASK_TOOL, *MEMORY_TOOLS, LOAD_SKILL_TOOL]


def run(
    task: str,
    *,
    model: Model,
    workdir: str | Path,
    max_turns: int = 30,
    console: Console | None = None,
    remind_after: int = REMIND_AFTER,
    session: Session | None = None,  # the history: a new session if none is given
    context_budget: int | None = None,
) -> SessionRunResult:
    """Work on `task` until the model stops asking for tools, or `max_turns` model calls."""
    console = console or Console(quiet=True)
    workdir, own_session = Path(workdir), session is None
    session = session or new_session(workdir, model.name)
    memory = MemoryStore(workdir / HOME, workdir=workdir)  # its index opens at once, any size
    recalled = recall(memory, task, console)  # what long-term memory knows of this task
    session.append({"role": "user", "content": task})
    skills = skills_for(workdir, console)  # the skills index, read once a run
    window = ContextWindow(model, session, context_budget, before_summary=flush_to(memory, console))
    usage, results = [], []  # results: the open turn's, a session line is written once, whole
    plan = Plan(plan_of(session), remind_after)  # the plan so far, read back from the session
    schemas = {tool["name"]: tool for tool in TOOLS}
    handlers = {**ALL_HANDLERS, "todo_write": plan.write, **memory_handlers(memory), **SKILLS}
    children = Children(model, Path(workdir), console, max_turns)  # the agents task starts
    stop, why, failure = "max_turns", f"stopped after {counted(max_turns, 'turn')}", ""
    try:
        for _ in range(max_turns):
            system = assemble(layers(workdir, TOOLS_GUIDANCE, recalled, skills))
            with console.thinking():  # the runtime note goes last, so all before it stays cached
                reply = window.ask(system, TOOLS, note=runtime_now(workdir, model.name).text)
            usage.append(reply.usage)
            said = session.append({"role": "assistant", "content": reply.content})
            for block in reply.content:
                if block["type"] == "text":
                    console.say(block["text"])

            if reply.stop_reason == "max_tokens":  # cut off: say so, and let it go on
                console.warn("the reply was cut off at the token limit; asking the model to go on")
                session.append(continuation(reply.content))
                continue
            if reply.stop_reason != "tool_use":
                stop, why = "done", ""
                break

            calls = tool_uses(said)
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
            session.append({"role": "user", "content": results})
            results = []  # written: none is open until the next call's results
    except KeyboardInterrupt:
        stop, why = "interrupted", INTERRUPTED
    except ModelError as error:
        stop, why, failure = error.stop, f"model error: {error}", str(error)  # ContextFull too
        usage.extend(error.spent)  # a reply that came, and was paid for, though unusable
    except SessionError as error:  # a full disk, say: nothing more can be written, or closed
        stop, why, failure = "error", "", str(error)

    session.end_run(results, why, close=own_session)  # one way out: a turn cut short is closed
    return SessionRunResult(
        stop, session.transcript(), usage, failure, children=children.records, recalled=recalled,
        session_id=session.id, compactions=window.compactions, calls=plan.tool_calls)  # fmt: skip
