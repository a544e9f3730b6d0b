"""`python -m v4_memory`: the chapter 4 agent on the command line, with sessions.

On top of the flags every chapter has:

    --continue            resume the latest session of the work directory
    --resume ID           resume that session
    --context-budget N    tokens a request may take (default: from the model's window)

and in the interactive prompt: /sessions, /resume ID, /compact, /prompt, /todos.
The demo runs three steps, the last two as new processes (demo_steps.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from llm import Console, Model, ModelError, default_budget
from llm.cli import Chapter, UsageError, main
from llm.console import counted
from v2_todos.todos import latest_plan, render

from .agent import TOOLS, layers, run, runtime_now
from .context import ContextWindow
from .demo_steps import DEMO, DEMO_STEPS, after_demo, check_demo_replay  # noqa: F401 (the lab's)
from .prompt import assemble, describe
from .session import SESSIONS_DIR, Session, SessionError, SessionStore


def flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--continue", dest="resume_latest", action="store_true", help="resume the latest session"
    )
    parser.add_argument("--resume", metavar="ID", help="resume the session with this id")
    parser.add_argument(
        "--context-budget",
        metavar="N",
        type=int,
        help="tokens a request may take before older turns are trimmed and summarised "
        "(default: from the model's context window; 12,000 for replays)",
    )


def setup(args: argparse.Namespace, workdir: Path, model: Model, console: Console) -> dict:
    """Open the session every run of this command line works in: resumed, or a new one."""
    if args.demo and (args.resume is not None or args.resume_latest):
        raise UsageError("--demo starts its own session: drop --continue and --resume")
    if args.demo and (args.model or "").startswith("replay:"):
        check_demo_replay(args.model)
    if args.context_budget is not None and args.context_budget < 1000:
        raise UsageError("--context-budget must be 1000 tokens or more")
    store = SessionStore(workdir / SESSIONS_DIR, workdir=workdir)
    try:
        if args.resume is not None or args.resume_latest:
            session = store.open(latest_id(store) if args.resume is None else args.resume)
            shown = counted(len(session.messages()), "message")
            console.note(f"resumed session {session.id}: {shown}")
            for repair in session.repairs:
                console.warn(f"repaired: {repair}")
        else:
            session = store.create({"model": model.name, "chapter": "v4_memory"})
    except SessionError as error:
        raise UsageError(str(error)) from None
    return {"session": session, "context_budget": args.context_budget}


def latest_id(store: SessionStore) -> str:
    latest = store.latest()
    if latest is None:
        raise UsageError(f"no session to continue in {store.root}: start one with a task")
    return latest.id


# --- the interactive commands: each gets the next run's arguments and the rest of the line


def list_sessions(state: dict[str, Any], _: str) -> str:
    session = state["session"]
    store = SessionStore(session.path.parent, workdir=workdir_of(session))
    rows = [
        f"{'*' if info.id == state['session'].id else ' '} {info.id}  "
        f"{info.last_active:%Y-%m-%d %H:%M}  {info.messages:>4} messages  {info.first_line[:50]}"
        for info in store.list()
    ]
    return "\n".join(rows) or "no sessions yet"


def resume(state: dict[str, Any], session_id: str) -> str:
    if not session_id:
        return "/resume ID: /sessions lists the ids"
    try:
        current = state["session"]
        store = SessionStore(current.path.parent, workdir=workdir_of(current))
        session = store.open(session_id)
    except SessionError as error:
        return str(error)
    state["session"].close()
    state["session"] = session
    return f"resumed session {session.id}: {counted(len(session.messages()), 'message')}"


def compact(state: dict[str, Any], _: str) -> str:
    """Stage 2 on demand: summarise the whole conversation now."""
    model, session = state["model"], state["session"]
    budget = state["context_budget"] or default_budget(model.name)
    system = assemble(layers(workdir_of(session)))
    try:
        done = ContextWindow(model, session, budget).compact_now(system, TOOLS)
    except (ModelError, SessionError) as error:  # the prompt stays: the person may try again
        return f"/compact failed, nothing was changed: {error}"
    if done is None:
        return "nothing to summarise yet"
    return f"compacted: {done.detail}, ≈{done.tokens_before:,} → ≈{done.tokens_after:,} tokens"


def show_prompt(state: dict[str, Any], _: str) -> str:
    workdir = workdir_of(state["session"])
    return describe(layers(workdir), runtime_now(workdir, state["model"].name))


def workdir_of(session: Session) -> Path:
    """The work directory a session belongs to: its file is .agent/sessions/ID.jsonl in it."""
    return session.path.parents[2]


CHAPTER = Chapter(
    name="v4_memory",
    run=run,
    demo_workspace=DEMO / "workspace",
    demo_cassette=DEMO / "cassette.jsonl",
    summary="Chapter 4: a coding agent with sessions on disk, a context kept in budget, "
    "layered prompts, skills and long-term memory.",
    commands={
        "/sessions": list_sessions,
        "/resume": resume,
        "/compact": compact,
        "/prompt": show_prompt,
        "/todos": lambda state, _: render(latest_plan(state["session"].messages())),
    },
    flags=flags,
    setup=setup,
    after_demo=after_demo,
    history=False,  # the session is the history
)

if __name__ == "__main__":
    raise SystemExit(main(CHAPTER))
