"""`python -m v2_todos`: the chapter 2 agent on the command line."""

from pathlib import Path

from llm.cli import Chapter, main
from machine import adopt_orphans

from .agent import run
from .todos import latest_plan, render

DEMO = Path(__file__).parent / "demo"

CHAPTER = Chapter(
    name="v2_todos",
    run=run,
    demo_workspace=DEMO / "workspace",
    demo_cassette=DEMO / "cassette.jsonl",
    summary="Chapter 2: a coding agent that writes a plan as a todo list and keeps it up to date.",
    commands={"/todos": lambda state, _: render(latest_plan(state["history"]))},
)

if __name__ == "__main__":
    adopt_orphans()  # what a command leaves behind, however detached, stays ours to stop
    raise SystemExit(main(CHAPTER))
