"""`python -m v1_tool_loop`: the chapter 1 agent on the command line."""

from pathlib import Path

from llm.cli import Chapter, main
from machine import adopt_orphans

from .agent import run

DEMO = Path(__file__).parent / "demo"

CHAPTER = Chapter(
    name="v1_tool_loop",
    run=run,
    demo_workspace=DEMO / "workspace",
    demo_cassette=DEMO / "cassette.jsonl",
    summary="Chapter 1: a coding agent built from one loop and four tools.",
)

if __name__ == "__main__":
    adopt_orphans()  # what a command leaves behind, however detached, stays ours to stop
    raise SystemExit(main(CHAPTER))
