"""`python -m v0_react_text`: the chapter 0 agent on the command line."""

from pathlib import Path
from typing import Any

import v1_tool_loop
from llm.cli import Chapter, main

from .agent import ReactRunResult, run

DEMO = Path(__file__).parent / "demo"
# The demo task is chapter 1's, on chapter 1's workspace: only the protocol differs.
V1_DEMO = Path(v1_tool_loop.__file__).parent / "demo"


def run_and_count(task: str, **options: Any) -> ReactRunResult:
    """Run the agent, then say how often the text protocol broke: the chapter's lesson."""
    result = run(task, **options)
    console = options.get("console")
    if console and (result.format_errors or result.hallucinated_observations):
        console.note(
            f"text protocol: {result.format_errors} format error(s) answered, "
            f"{result.hallucinated_observations} invented observation(s) discarded"
        )
    return result


CHAPTER = Chapter(
    name="v0_react_text",
    run=run_and_count,
    demo_workspace=V1_DEMO / "workspace",
    demo_cassette=DEMO / "cassette.jsonl",
    summary="Chapter 0: a coding agent that reads the model's plain-text Thought/Action replies.",
)

if __name__ == "__main__":
    raise SystemExit(main(CHAPTER))
