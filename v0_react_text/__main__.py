"""`python -m v0_react_text`: the chapter 0 agent on the command line."""

from pathlib import Path

import v1_tool_loop
from llm.cli import Chapter, main
from machine import adopt_orphans

from .agent import run

DEMO = Path(__file__).parent / "demo"
# The demo task is chapter 1's, on chapter 1's workspace: only the protocol differs.
V1_DEMO = Path(v1_tool_loop.__file__).parent / "demo"


CHAPTER = Chapter(
    name="v0_react_text",
    run=run,
    demo_workspace=V1_DEMO / "workspace",
    demo_cassette=DEMO / "cassette.jsonl",
    summary="Chapter 0: a coding agent that reads the model's plain-text Thought/Action replies.",
)

if __name__ == "__main__":
    adopt_orphans()  # what a command leaves behind, however detached, stays ours to stop
    raise SystemExit(main(CHAPTER))
