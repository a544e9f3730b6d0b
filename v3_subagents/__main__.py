"""`python -m v3_subagents`: the chapter 3 agent on the command line."""

from pathlib import Path

from llm.cli import Chapter, main
from machine import adopt_orphans
from v2_todos.todos import latest_plan, render

from .agent import run

DEMO = Path(__file__).parent / "demo"

CHAPTER = Chapter(
    name="v3_subagents",
    run=run,
    demo_workspace=DEMO / "workspace",
    demo_cassette=DEMO / "cassette.jsonl",
    summary="Chapter 3: a coding agent that hands subtasks to child agents with fresh contexts.",
    commands={"/todos": lambda state, _: render(latest_plan(state["history"]))},
)

if __name__ == "__main__":
    adopt_orphans()  # what a command leaves behind, however detached, stays ours to stop
    raise SystemExit(main(CHAPTER))
