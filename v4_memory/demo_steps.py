"""The demo's later steps: each a new process, as a person would start it.

`python -m v4_memory --demo` runs a long task (it compacts), then resumes the same
session in a new process (`--continue`), then starts a new session that recalls what
the first one saved.  Each step replays its own cassette, beside the first one's; a
live demo with `--record FILE` records each step beside FILE.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

from llm import Console
from llm.cassette import read_cassette
from llm.cli import UsageError
from llm.console import shown_path
from llm.errors import CassetteError

DEMO = Path(__file__).parent / "demo"
# After the first task: the same session resumed by a new process, then a new session.
DEMO_STEPS = [("resume.jsonl", ["--continue"]), ("recall.jsonl", [])]


def step_file(path: str | Path, cassette: str) -> Path:
    """Where a later step of the demo is recorded, or replayed from, beside the first
    step's cassette: `run.jsonl` → `run.resume.jsonl`, `run.recall.jsonl`.  The bundled
    demo cassette's steps are the bundled ones (`resume.jsonl`, `recall.jsonl`)."""
    path = Path(path)
    if path.resolve() == (DEMO / "cassette.jsonl").resolve():
        return DEMO / cassette
    return path.with_name(f"{path.stem}.{Path(cassette).stem}{path.suffix}")


def check_demo_replay(spec: str) -> None:
    """Refuse, before the demo starts, a replay whose later steps are missing or were
    recorded for other tasks: each step replays its own cassette, never another's."""
    for cassette, _ in DEMO_STEPS:
        path = step_file(spec.removeprefix("replay:"), cassette)
        task = read_cassette(DEMO / cassette)[0]["task"]
        try:
            recorded = read_cassette(path)[0].get("task")
        except CassetteError as error:
            raise UsageError(
                f"the demo's steps 2 and 3 replay {path.name} and the like beside the first "
                f"step's cassette ({error}): record all three with --demo --model M --record FILE"
            ) from None
        if recorded != task:
            raise UsageError(
                f"{path} was recorded for another task ({str(recorded)[:40]!r}), not for this "
                "step of the demo: record the demo again with --demo --model M --record FILE"
            )


def after_demo(
    state: dict[str, Any], workdir: Path, args: argparse.Namespace, console: Console
) -> None:
    """The demo's next steps, each in a new process, printed as a person would type them.

    With `--record FILE`, each step is recorded beside FILE (`step_file`); with
    `--model replay:FILE`, each step replays its own cassette from there.
    """
    state["session"].close()  # let the next process take the session over
    for cassette, extra in DEMO_STEPS:
        header, _ = read_cassette(DEMO / cassette)
        model = args.model or f"replay:{shown_path(DEMO / cassette)}"
        if model.startswith("replay:") and args.model:
            model = f"replay:{step_file(model.removeprefix('replay:'), cassette)}"
        budget = state["context_budget"]
        extra = [*extra, *(["--context-budget", str(budget)] if budget else [])]
        extra += ["--record", str(step_file(args.record, cassette))] if args.record else []
        extra += ["--strict"] if args.strict else []
        command = ["--workdir", str(workdir), *extra, "--model", model, header["task"]]
        shown = " ".join(arg if " " not in arg else f'"{arg}"' for arg in command[:-1])
        console.note(f'\n$ python -m v4_memory {shown} "{header["task"][:60]}…"')
        step = subprocess.run([sys.executable, "-m", "v4_memory", *command], check=False)
        if step.returncode != 0:
            console.warn("this step did not finish, so the demo stops here")
            return
