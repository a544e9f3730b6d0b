"""`python -m v4_memory`: the chapter 4 agent on the command line, in one session.

On top of the flags every chapter has: --continue (the latest session of the work
directory) and --resume ID, which the shared command line gives every chapter that keeps
sessions (`llm/sessions.py`), and --context-budget N; in the interactive prompt:
/sessions and /resume ID (the same), /compact, /prompt, /todos.  The demo has three
steps, the last two run as new processes by the shared command line (`DEMO_STEPS`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from llm import Console, Model, ModelError
from llm.cli import Chapter, UsageError, main
from llm.sessions import Sessions
from machine import adopt_orphans
from v2_todos.todos import render

from .agent import TOOLS, TOOLS_GUIDANCE, run
from .context import ContextWindow
from .prompt import assemble, describe, layers, runtime_now
from .session import SESSIONS_DIR, SessionError, SessionStore, plan_of

DEMO = Path(__file__).parent / "demo"
# After the long task: the same session, resumed by a new process; then a new session,
# which recalls what the first one saved.  Each step replays its own cassette in DEMO.
DEMO_STEPS = [("resume.jsonl", ["--continue"]), ("recall.jsonl", [])]


def flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--context-budget",
        metavar="N",
        type=int,
        help="tokens a request may take before older turns are trimmed and summarised "
        "(default: from the model's context window; 12,000 for replays)",
    )


def setup(args: argparse.Namespace, workdir: Path, model: Model, console: Console) -> dict:
    """Every run's budget; the session is the shared command line's (`Sessions.open`)."""
    if args.context_budget is not None and args.context_budget < 1000:
        raise UsageError("--context-budget must be 1000 tokens or more")
    return {"context_budget": args.context_budget}


def compact(state: dict[str, Any], _: str) -> str:
    """Stage 2 on demand: summarise the whole conversation now."""
    model, session = state["model"], state["session"]
    system = assemble(layers(session.workdir, TOOLS_GUIDANCE))
    try:
        done = ContextWindow(model, session, state["context_budget"]).compact_now(system, TOOLS)
    except (ModelError, SessionError) as error:  # the prompt stays: the person may try again
        return f"/compact failed, nothing was changed: {error}"
    if done is None:
        return "nothing to summarise yet"
    return f"compacted: {done.detail}, ≈{done.tokens_before:,} → ≈{done.tokens_after:,} tokens"


def show_prompt(state: dict[str, Any], _: str) -> str:
    workdir = state["session"].workdir
    return describe(layers(workdir, TOOLS_GUIDANCE), runtime_now(workdir, state["model"].name))


CHAPTER = Chapter(
    name="v4_memory",
    run=run,
    demo_workspace=DEMO / "workspace",
    demo_cassette=DEMO / "cassette.jsonl",
    summary="Chapter 4: a coding agent with sessions on disk, a context kept in budget, "
    "layered prompts, skills and long-term memory.",
    commands={
        "/compact": compact,
        "/prompt": show_prompt,
        "/todos": lambda state, _: render(plan_of(state["session"])),
    },
    sessions=Sessions(  # the session is the history: --continue, --resume, /sessions, /resume
        store=lambda workdir: SessionStore(workdir / SESSIONS_DIR, workdir=workdir),
        error=SessionError,
        flags=flags,
        setup=setup,
        demo_steps=DEMO_STEPS,
        demo_passes_on=["--context-budget"],
    ),
)

if __name__ == "__main__":
    adopt_orphans()  # what a command leaves behind, however detached, stays ours to stop
    raise SystemExit(main(CHAPTER))
