"""The command line every chapter shares: flags, one-shot and interactive runs, the summary.

A chapter's `__main__.py` describes itself with a `Chapter` (`llm/chapter.py`) and
calls `main`; the offline demo is `llm/demo.py`'s.  This module never imports a
chapter; it is handed the chapter's `run` function.  Input
it cannot use (a flag, the task, ./.env, a cassette) is one line on stderr and
exit code 2, never a traceback.

    python -m v1_tool_loop --demo            replay the bundled demo, offline
    python -m v1_tool_loop --copy-demo DIR   a private copy of the demo workspace to work in
    python -m v1_tool_loop "fix the tests"   one task, live
    python -m v1_tool_loop                   interactive prompt, history kept
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from pathlib import Path
from typing import Any

from .budget import Budgeted
from .chapter import DEFAULT_TURNS, Chapter
from .console import Console, counted, fit_streams, shown_path
from .demo import (
    check_demo_replay,
    check_demo_steps,
    copy_demo,
    copy_demo_workspace,
    demo_task_and_model,
    run_demo_steps,
)
from .errors import ModelError, UsageError
from .recording import RecordingModel, recorded_bounds
from .result import RunResult, tool_uses
from .spec import ENV_FILE_SETTINGS, FROM_ENV_FILE, load_model, read_env_file, redirected_keys
from .stepping import Stepping
from .text_calls import ToolCallInText
from .types import Model

__all__ = ["Chapter", "UsageError", "load_env_file", "main"]

PATH_FLAGS = ("workdir", "record", "copy_demo")
EXIT_CODES = {"done": 0, "error": 2}  # every other stop (max_turns, interrupted, …) is 1
NOT_UTF8 = "holds bytes that are not UTF-8 text: check your terminal's encoding"


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
    parser.add_argument(
        "--workdir", metavar="DIR", help="where the tools work (default: the current folder)"
    )
    parser.add_argument(
        "--max-turns", metavar="N", type=int, default=DEFAULT_TURNS, help="model calls"
    )
    parser.add_argument("--record", metavar="FILE", help="save the model's replies as a cassette")
    parser.add_argument("--quiet", action="store_true", help="print only the final answer")
    parser.add_argument(
        "--demo",
        action="store_true",
        help="run the chapter's demo task in a fresh copy of "
        "the demo workspace (offline replay unless --model is given)",
    )
    parser.add_argument(
        "--copy-demo",
        metavar="DIR",
        help="copy the demo workspace into DIR (new or empty), readable by you alone, and stop",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="with a replay: stop if a request differs from the one the cassette recorded",
    )
    parser.add_argument(
        "--step",
        action="store_true",
        help="pause before each model call: show what is about to be sent and wait for Enter "
        "(r: the whole request, c: run to the end)",
    )
    parser.add_argument(
        "--max-tokens-total",
        metavar="N",
        type=int,
        help="stop the run cleanly once it has used N tokens, input plus output",
    )
    if chapter.sessions:
        chapter.sessions.add_flags(parser)
    return parser


def main(chapter: Chapter, argv: list[str] | None = None) -> int:
    """Run the chapter's agent as the flags say; returns the process exit code."""
    fit_streams()
    args = build_parser(chapter).parse_args(argv)
    for name in PATH_FLAGS:
        if getattr(args, name):  # a leading ~ is the user's home, in PowerShell too
            setattr(args, name, os.path.expanduser(getattr(args, name)))
    try:
        check_arguments(args)
        if args.copy_demo:
            print(copy_demo(chapter, Path(args.copy_demo)))
            return 0
        loaded = load_env_file()
        console = Console(quiet=args.quiet)  # after .env, which may set NO_COLOR
        if loaded:
            console.note(loaded)
        return _main(chapter, args, console)
    except (UsageError, ModelError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # outside a turn, e.g. while a live client is being built
        print("\ninterrupted", file=sys.stderr)
        return 130


def check_arguments(args: argparse.Namespace) -> None:
    """Refuse, before anything runs, what the flags and the task cannot mean."""
    task = " ".join(args.task)
    for what, text in [
        ("the task", task),
        ("--model", args.model),
        ("--workdir", args.workdir),
        ("--record", args.record),
        ("--copy-demo", args.copy_demo),
    ]:
        if text and not _is_utf8(text):
            raise UsageError(f"{what} {NOT_UTF8}")
    if args.task and not task.strip():  # no task at all means the interactive prompt
        raise UsageError(
            "the task is empty: say what the agent should do, "
            "or give no task at all for the interactive prompt"
        )
    if args.copy_demo and (args.task or args.demo or args.workdir or args.record):
        raise UsageError(
            "--copy-demo only copies the demo workspace: run the task in it afterwards, "
            f"with --workdir {args.copy_demo}"
        )
    if args.demo and args.task:
        raise UsageError("--demo runs its own task: drop the task, or drop --demo")
    if args.demo and args.workdir:
        raise UsageError("--demo always works in a fresh temporary copy: drop --workdir")
    if args.workdir and not Path(args.workdir).is_dir():
        raise UsageError(f"--workdir {args.workdir} is not a folder")
    if args.max_turns < 1:
        raise UsageError("--max-turns must be 1 or more")
    if args.max_tokens_total is not None and args.max_tokens_total < 1:
        raise UsageError("--max-tokens-total must be 1 or more")


def load_env_file() -> str | None:
    """Add the settings of ./.env to the environment, without replacing any already set.

    Only the current folder's .env: one in a folder above may belong to someone else,
    and a base URL it sets decides where your key goes.  Only the course's own settings
    (ENV_FILE_SETTINGS): any other variable is left out, with a warning.  A .env that
    others can read gets a warning: on a shared server, a class key in it is everyone's.
    Returns a note that names what was set, never a value (None without a .env);
    warnings go to stderr.
    """
    path = Path(".env")
    if not path.is_file():
        return None
    try:
        settings, skipped = read_env_file(path)
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        raise UsageError(
            f"./.env is not UTF-8 text (byte {exc.object[exc.start]:#04x} on line {line}): "
            "save it as UTF-8"
        ) from None
    except OSError as exc:
        raise UsageError(f"cannot read ./.env: {exc.strerror}") from None
    # Only where a system has users and modes (not Windows, whose files all read 0o666).
    if hasattr(os, "getuid") and path.stat().st_mode & 0o044:
        print(
            "warning: ./.env can be read by other users of this machine, and it may hold "
            "an API key: run `chmod 600 .env`",
            file=sys.stderr,
        )
    for name in sorted(settings.keys() - ENV_FILE_SETTINGS):
        print(
            f"warning: ./.env sets {name}, which is not a setting of the course: left out "
            "(export it yourself if you mean it)",
            file=sys.stderr,
        )
    settings = {name: value for name, value in settings.items() if name in ENV_FILE_SETTINGS}
    new = {name: value for name, value in settings.items() if name not in os.environ}
    kept = sorted(settings.keys() - new.keys())
    for number in skipped:
        print(f"warning: ./.env:{number}: skipped, not a NAME=VALUE line", file=sys.stderr)
    for warning in redirected_keys(new, os.environ):
        print(f"warning: {warning}", file=sys.stderr)
    os.environ.update(new)
    os.environ[FROM_ENV_FILE] = ",".join(new)  # the agent's commands never get them
    note = f"loaded ./.env: {counted(len(new), 'setting')}"
    if new:
        note += f" ({', '.join(new)})"
    if kept:
        note += f"; kept from the environment: {', '.join(kept)}"
    return note


def _main(chapter: Chapter, args: argparse.Namespace, console: Console) -> int:
    if args.demo:
        task, model = demo_task_and_model(chapter, args, console)
    else:
        task, model = " ".join(args.task).strip(), load_model(args.model, strict=args.strict)
    taken = take_recorded_bounds(model, args)
    if taken:
        console.note(f"replaying under the bounds it was recorded with: {taken}")
    if args.record:  # refuses a target it would lose before the model is ever called
        bounds = {"max_turns": args.max_turns} if args.max_turns != DEFAULT_TURNS else {}
        bounds |= {"total_tokens": args.max_tokens_total} if args.max_tokens_total else {}
        model = RecordingModel(
            model, args.record, chapter=chapter.name, task=task or None, bounds=bounds
        )
        console.note(
            f"recording the model's replies to {args.record}; "
            f"they are written to {shown_path(model.partial)} until the run ends"
        )
    steps = True
    if args.demo:
        check_demo_replay(chapter, task, model)
        steps = check_demo_steps(chapter, args)
        if not steps:
            console.note("the recording holds the demo's first step alone, as far as it went")
    recorder = model
    model = bounded(model, args)
    try:
        workdir = copy_demo_workspace(chapter, console) if args.demo else Path(args.workdir or ".")
        # The keyword arguments of every run: the model, and what the chapter adds.
        state = {"model": model}
        if chapter.sessions:
            state.update(chapter.sessions.open(args, workdir, model, console))
        if not task:
            return interactive(chapter, workdir, args.max_turns, console, state)
        turns = args.max_turns
        result = chapter.run(task, workdir=workdir, max_turns=turns, console=console, **state)
        report(result, console, args.max_turns)
        if tools_reached(result, args.max_turns):
            return 0  # the check that tools reach the model passed
        if args.demo and result.stop == "done" and steps:
            run_demo_steps(chapter, args, workdir, console)
        if args.demo:
            console.note(f"the demo workspace is kept at {workdir}: look at what the agent changed")
        return EXIT_CODES.get(result.stop, 1)
    finally:  # however the run ended: done, error, Ctrl-C, or the prompt left
        if isinstance(recorder, RecordingModel):
            _save_recording(recorder, console)


def take_recorded_bounds(model: Model, args: argparse.Namespace) -> str:
    """A recording's bounds taken for those the command line does not give, so that a run
    stopped by one replays to the same stop; what was taken, as flags."""
    bounds, taken = recorded_bounds(model), []
    for key, flag, unset in [
        ("max_turns", "--max-turns", DEFAULT_TURNS),
        ("total_tokens", "--max-tokens-total", None),
    ]:
        name = flag.removeprefix("--").replace("-", "_")
        if key in bounds and getattr(args, name) == unset:  # one given on the command line wins
            setattr(args, name, bounds[key])
            taken.append(f"{flag} {bounds[key]}")
    return " ".join(taken)


def bounded(model: Model, args: argparse.Namespace) -> Model:
    """The model with what --max-tokens-total and --step add around it (outside any
    recording, which keeps the provider's replies as they came)."""
    if args.max_tokens_total:
        model = Budgeted(model, args.max_tokens_total)
    if args.step:
        model = Stepping(model)
    return model


def _save_recording(recorder: RecordingModel, console: Console) -> None:
    if recorder.close():
        console.note(f"recorded {counted(recorder.replies, 'reply', 'replies')} to {recorder.path}")
    else:
        console.note(f"no reply was recorded, so {recorder.path} was left as it was")


def interactive(
    chapter: Chapter, workdir: Path, max_turns: int, console: Console, state: dict[str, Any]
) -> int:
    """A prompt loop; each task sees the whole conversation so far (`state["history"]`)."""
    print(f"{chapter.name} with {state['model'].name} in {workdir.resolve()}")
    print("Type a task. /exit or Ctrl-D leaves; Ctrl-C stops the current turn.")
    commands = {**(chapter.sessions.commands() if chapter.sessions else {}), **chapter.commands}
    if commands:
        print(f"Also: {', '.join(commands)}.")
    if isinstance(sys.stdin, io.TextIOWrapper):
        # A line that is not UTF-8 then arrives as text to refuse, instead of an error
        # that throws away whatever was read with it.
        sys.stdin.reconfigure(errors="surrogateescape")
    if not chapter.sessions:  # else the session is the history
        state["history"] = []
    while True:
        try:
            line = input("> ").strip()
            line.encode("utf-8")  # fails for a line typed in another encoding
        except EOFError:
            print()
            return 0
        except KeyboardInterrupt:
            print("\n(/exit or Ctrl-D to leave)")
            continue
        except UnicodeError:
            print(f"that line {NOT_UTF8}; type it again", file=sys.stderr)
            continue
        if line in ("/exit", "/quit"):
            return 0
        if not line:
            continue
        name, _, argument = line.partition(" ")
        if name in commands:
            print(commands[name](state, argument.strip()))
            continue
        result = chapter.run(line, workdir=workdir, max_turns=max_turns, console=console, **state)
        if not chapter.sessions:
            state["history"] = result.messages
        report(result, console, max_turns)


def report(result: RunResult, console: Console, max_turns: int) -> None:
    """The answer (in --quiet mode), a one-line summary, and why the run stopped if not done."""
    if console.quiet and result.answer:
        print(result.answer)
    usage = result.usage
    # An estimate (a scripted replay) must not read like a provider's measure.
    about, estimated = ("≈", " (estimated)") if usage.estimated else ("", "")
    console.note(
        f"── {result.stop}: {counted(result.turns, 'turn')}, "
        f"{counted(result.tool_calls, 'tool call')}, "
        f"{about}{usage.input_tokens:,} tokens in, {about}{usage.output_tokens:,} out{estimated}"
    )
    for line in result.highlights():
        console.note(line)
    if tools_reached(result, max_turns):
        calls = next(c for m in reversed(result.messages) if (c := tool_uses(m)))
        names = ", ".join(dict.fromkeys(call["name"] for call in calls))
        console.note(
            f"the tools reached the model: its one turn called {names} "
            "(raise --max-turns to let it finish the task)"
        )
    elif result.stop == "max_turns":
        print(
            f"stopped: the model used all {counted(max_turns, 'turn')} (--max-turns) "
            "without finishing",
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
    elif result.stop == ToolCallInText.stop:
        print(f"stopped: {result.error}", file=sys.stderr)
    elif result.stop != "done":
        print(result.messages[-1]["content"].strip("[]"), file=sys.stderr)  # the closing note


def tools_reached(result: RunResult, max_turns: int) -> bool:
    """A run of one turn whose reply called a tool: `--max-turns 1` is how the docs check
    that a server passes the tools on, so that run succeeded."""
    return result.stop == "max_turns" and max_turns == 1 and result.tool_calls > 0


def _is_utf8(text: str) -> bool:
    """False for text decoded from bytes that are not UTF-8: Python keeps those as surrogates."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
