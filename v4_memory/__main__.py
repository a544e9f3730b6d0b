"""`python -m v4_memory`: the chapter 4 agent on the command line, in one session.

On top of the flags every chapter has: --continue (the latest session of the work
directory), --resume ID and --context-budget N; in the interactive prompt: /sessions,
/resume ID, /compact, /prompt, /todos.  The demo has three steps, the last two run as
new processes by the shared command line (`DEMO_STEPS`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from llm import Console, Model, ModelError
from llm.cli import Chapter, UsageError, main
from llm.console import counted, shown_size
from machine import adopt_orphans
from v2_todos.todos import render

from .agent import TOOLS, TOOLS_GUIDANCE, run
from .context import ContextWindow
from .prompt import assemble, describe, layers, runtime_now
from .session import SESSIONS_DIR, Session, SessionError, SessionStore, plan_of

DEMO = Path(__file__).parent / "demo"
# After the long task: the same session, resumed by a new process; then a new session,
# which recalls what the first one saved.  Each step replays its own cassette in DEMO.
DEMO_STEPS = [("resume.jsonl", ["--continue"]), ("recall.jsonl", [])]


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
    """Every run's extra arguments: the budget, and the session they all work in, resumed
    or new, one for the whole interactive prompt.  The demo's first run starts its own
    session and closes it, so that the next step's process can resume it."""
    if args.demo and (args.resume is not None or args.resume_latest):
        raise UsageError("--demo starts its own session: drop --continue and --resume")
    if args.context_budget is not None and args.context_budget < 1000:
        raise UsageError("--context-budget must be 1000 tokens or more")
    state: dict[str, Any] = {"context_budget": args.context_budget}
    if args.demo:
        return state
    store = SessionStore(workdir / SESSIONS_DIR, workdir=workdir)
    try:
        if args.resume is None and not args.resume_latest:
            new = store.create({"model": model.name, "chapter": "v4_memory"})
            return state | {"session": new}
        session = store.open(latest_id(store) if args.resume is None else args.resume)
    except SessionError as error:
        raise UsageError(str(error)) from None
    console.note(resumed(session))
    for repair in session.repairs:
        console.warn(f"repaired: {repair}")
    return state | {"session": session}


def latest_id(store: SessionStore) -> str:
    latest = store.latest()
    if latest is None:
        raise UsageError(f"no session to continue in {store.root}: start one with a task")
    return latest.id


def resumed(session: Session) -> str:
    return f"resumed session {session.id}: {counted(len(session.messages()), 'message')}"


def workdir_of(session: Session) -> Path:
    """The work directory a session belongs to: its file is .agent/sessions/ID.jsonl in it."""
    return session.path.parents[2]


# --- the interactive commands: each gets the next run's arguments and the rest of the line


def list_sessions(state: dict[str, Any], _: str) -> str:
    session = state["session"]
    rows = [
        f"{'*' if info.id == session.id else ' '} {info.id}  "
        f"{info.last_active:%Y-%m-%d %H:%M}  {info.messages:>4} messages "
        f"{shown_size(info.size):>8}  {info.first_line[:50]}"
        for info in SessionStore(session.path.parent, workdir=workdir_of(session)).list()
    ]
    return "\n".join(rows) or "no sessions yet"


def resume(state: dict[str, Any], session_id: str) -> str:
    """Go on in another session: the tasks typed next are added to it."""
    if not session_id:
        return "/resume ID: /sessions lists the ids"
    current = state["session"]
    try:
        session = SessionStore(current.path.parent, workdir=workdir_of(current)).open(session_id)
    except SessionError as error:
        return str(error)
    current.close()
    state["session"] = session
    return resumed(session)


def compact(state: dict[str, Any], _: str) -> str:
    """Stage 2 on demand: summarise the whole conversation now."""
    model, session = state["model"], state["session"]
    system = assemble(layers(workdir_of(session), TOOLS_GUIDANCE))
    try:
        done = ContextWindow(model, session, state["context_budget"]).compact_now(system, TOOLS)
    except (ModelError, SessionError) as error:  # the prompt stays: the person may try again
        return f"/compact failed, nothing was changed: {error}"
    if done is None:
        return "nothing to summarise yet"
    return f"compacted: {done.detail}, ≈{done.tokens_before:,} → ≈{done.tokens_after:,} tokens"


def show_prompt(state: dict[str, Any], _: str) -> str:
    workdir = workdir_of(state["session"])
    return describe(layers(workdir, TOOLS_GUIDANCE), runtime_now(workdir, state["model"].name))


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
        "/todos": lambda state, _: render(plan_of(state["session"])),
    },
    flags=flags,
    setup=setup,
    demo_steps=DEMO_STEPS,
    demo_passes_on=["--context-budget"],
    history=False,  # the session is the history
)

if __name__ == "__main__":
    adopt_orphans()  # what a command leaves behind, however detached, stays ours to stop
    raise SystemExit(main(CHAPTER))
