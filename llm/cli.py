"""The command line every chapter shares: flags, the offline demo, one-shot and interactive runs.

A chapter's `__main__.py` describes itself with a `Chapter` and calls `main`.  This
module never imports a chapter; it is handed the chapter's `run` function.

    python -m v1_tool_loop --demo            replay the bundled demo, offline
    python -m v1_tool_loop "fix the tests"   one task, live
    python -m v1_tool_loop                   interactive prompt, history kept
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .cassette import RecordingModel, ReplayModel, read_cassette
from .console import Console
from .errors import CassetteError, ModelError
from .result import RunResult
from .spec import load_model
from .types import Message, Model

EXIT_CODES = {"done": 0, "error": 2}  # every other stop (max_turns, interrupted, …) is 1


@dataclass
class Chapter:
    """What the shared command line needs to know about one chapter's agent."""

    name: str  # the package name, e.g. "v1_tool_loop"
    run: Callable[..., RunResult]
    demo_workspace: Path  # copied to a fresh temporary folder for every --demo
    demo_cassette: Path  # its header holds the demo task
    summary: str


def build_parser(chapter: Chapter) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"python -m {chapter.name}",
        description=chapter.summary,
        epilog="Without a task: an interactive prompt (/exit or Ctrl-D to leave).",
    )
    parser.add_argument("task", nargs="*", help="what the agent should do")
    parser.add_argument(
        "--model",
        metavar="SPEC",
        help="anthropic:NAME, openai:NAME or replay:CASSETTE (default: AGENT_MODEL, "
        "else chosen by which API key is set)",
    )
    parser.add_argument("--workdir", metavar="DIR", default=".", help="where the tools work")
    parser.add_argument("--max-turns", metavar="N", type=int, default=30, help="model calls")
    parser.add_argument("--record", metavar="FILE", help="save the model's replies as a cassette")
    parser.add_argument("--quiet", action="store_true", help="print only the final answer")
    parser.add_argument(
        "--demo",
        action="store_true",
        help="run the chapter's demo task in a fresh copy of "
        "the demo workspace (offline replay unless --model is given)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="with a replay: stop if a request differs from the one the cassette recorded",
    )
    return parser


def main(chapter: Chapter, argv: list[str] | None = None) -> int:
    """Run the chapter's agent as the flags say; returns the process exit code."""
    parser = build_parser(chapter)
    args = parser.parse_args(argv)
    if args.demo and args.task:
        parser.error("--demo runs its own task: drop the task, or drop --demo")
    if args.max_turns < 1:
        parser.error("--max-turns must be 1 or more")
    console = Console(quiet=args.quiet)
    try:
        return _main(chapter, args, console)
    except ModelError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # outside a turn, e.g. while a live client is being built
        print("\ninterrupted", file=sys.stderr)
        return 130


def _main(chapter: Chapter, args: argparse.Namespace, console: Console) -> int:
    from dotenv import find_dotenv, load_dotenv

    load_dotenv(find_dotenv(usecwd=True))
    if args.demo:
        task, workdir, model = _prepare_demo(chapter, args, console)
    else:
        task, workdir = " ".join(args.task).strip(), Path(args.workdir)
        if not workdir.is_dir():
            print(f"error: --workdir {workdir} is not a folder", file=sys.stderr)
            return 2
        model = load_model(args.model, strict=args.strict)
    if args.record:
        model = RecordingModel(model, args.record, chapter=chapter.name, task=task or None)
        console.note(f"recording the model's replies to {args.record}")
    if not task:
        return interactive(chapter, model, workdir, args.max_turns, console)
    result = chapter.run(
        task, model=model, workdir=workdir, max_turns=args.max_turns, console=console
    )
    report(result, console, args.max_turns)
    if args.demo:
        console.note(f"the demo workspace is kept at {workdir}: look at what the agent changed")
    return EXIT_CODES.get(result.stop, 1)


def _prepare_demo(
    chapter: Chapter, args: argparse.Namespace, console: Console
) -> tuple[str, Path, Model]:
    """Copy the demo workspace to a temporary folder and pick the model for the demo task."""
    header, _ = read_cassette(chapter.demo_cassette)
    if not header.get("task"):
        raise CassetteError(f"the demo cassette {chapter.demo_cassette} has no task in its header")
    workdir = Path(tempfile.mkdtemp(prefix=f"{chapter.name}-demo-"))
    shutil.copytree(
        chapter.demo_workspace,
        workdir,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"),
    )
    if args.model:
        model = load_model(args.model, strict=args.strict)
        console.note(f"running the demo task with {model.name}")
    else:
        model = ReplayModel(chapter.demo_cassette, strict=args.strict)
        console.note(
            f"offline: replaying the {header.get('provenance', 'scripted')} demo cassette "
            f"{_shown_path(chapter.demo_cassette)} — add --model to run it live"
        )
    console.note(f"task: {header['task']}")
    console.note(f"workdir: {workdir}")
    return header["task"], workdir, model


def interactive(
    chapter: Chapter, model: Model, workdir: Path, max_turns: int, console: Console
) -> int:
    """A prompt loop; each task sees the whole conversation so far."""
    print(f"{chapter.name} with {model.name} in {workdir.resolve()}")
    print("Type a task. /exit or Ctrl-D leaves; Ctrl-C stops the current turn.")
    history: list[Message] = []
    while True:
        try:
            line = input("> ").strip()
        except EOFError:
            print()
            return 0
        except KeyboardInterrupt:
            print("\n(/exit or Ctrl-D to leave)")
            continue
        if line in ("/exit", "/quit"):
            return 0
        if not line:
            continue
        result = chapter.run(
            line,
            model=model,
            workdir=workdir,
            max_turns=max_turns,
            history=history,
            console=console,
        )
        history = result.messages
        report(result, console, max_turns)


def report(result: RunResult, console: Console, max_turns: int) -> None:
    """The answer (in --quiet mode), a one-line summary, and why the run stopped if not done."""
    if console.quiet and result.answer:
        print(result.answer)
    usage = result.usage
    # An estimate (a scripted replay) must not read like a provider's measure.
    about, estimated = ("≈", " (estimated)") if usage.estimated else ("", "")
    console.note(
        f"── {result.stop}: {result.turns} turns, {result.tool_calls} tool calls, "
        f"{about}{usage.input_tokens:,} tokens in, {about}{usage.output_tokens:,} out{estimated}"
    )
    if result.stop == "max_turns":
        print(
            f"stopped: the model used all {max_turns} turns (--max-turns) without finishing",
            file=sys.stderr,
        )
    elif result.stop == "max_tokens":
        print(
            "stopped: the model's reply was cut off at the token limit (max_tokens) before it "
            "was complete, so nothing in it ran. Ask for smaller steps (a long file written "
            "in parts, say); in the interactive prompt the conversation is kept, so you can "
            "ask it to go on.",
            file=sys.stderr,
        )
    elif result.stop == "interrupted":
        print("interrupted: the turn was stopped; the conversation is kept", file=sys.stderr)
    elif result.stop == "error":
        print(f"error: {result.error}", file=sys.stderr)
    elif result.stop != "done":
        print(result.messages[-1]["content"].strip("[]"), file=sys.stderr)  # the closing note


def _shown_path(path: Path) -> str:
    """A path relative to the current folder when it is below it, else absolute."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)
