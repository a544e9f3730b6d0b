"""`python -m lab compare`: every chapter on the same tasks, checked for real, in one table.

    python -m lab compare                                   featured tasks, scripted replays
    python -m lab compare --window 16000                    the same, in a small context window
    python -m lab compare --model SPEC --runs 5 --jobs 4    live: solved rates with intervals
    python -m lab compare --model SPEC --record-dir runs/   live, and kept as cassettes…
    python -m lab compare --replay-dir runs/                …to replay offline later
    python -m lab compare --html report.html                and the runs side by side, one page
    python -m lab compare --model SPEC --max-tokens-total 60000 --max-reply-tokens 1024
                                                            live, each run bounded

Each run works in a fresh copy of its task's workspace, a numbered folder inside one
scratch folder per comparison, and ends with the task's checker.  Offline, the
replies come from scripted cassettes: a plausible run of each chapter, not a
measurement of a model.  What a chapter's idea is worth on a real model is measured
live, over several runs.  Ctrl-C stops the comparison; the runs that finished are
reported and saved.  A run that fails (a cassette that runs out, a provider that
sends nonsense, a bug) is that run's verdict, never the end of the comparison.

A replay runs its cassettes' commands for real, on this machine, in a scratch copy
of the task's workspace: before a `--replay-dir` is replayed, the comparison says
so and shows the commands its cassettes will run.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from llm.cassette import read_cassette
from llm.cli import load_env_file
from llm.errors import ModelError
from llm.spec import load_model

from .. import view
from ..chapters import chapters
from ..tasks import Task, TaskError, featured_names, load_task
from . import report
from .comparison import OFFLINE_JOBS, compare, offline_jobs, plan
from .progress import Progress
from .record import UNMEASURED, Job, Limits, Record
from .sources import Live, Replayed, Scripted, Source, cassette_path

MAX_JOBS = 8  # runs in parallel at most: more mostly buys rate limits


class UsageError(Exception):
    """Flags the comparison cannot use: one line on stderr, exit code 2."""


def chapter_names(spec: str | None) -> list[str]:
    """`v0,v1` or `v0_react_text,v1_tool_loop` as chapter packages; all of them by default."""
    existing = chapters()
    if not spec:
        return existing
    names = []
    for short in (part.strip() for part in spec.split(",") if part.strip()):
        found = [name for name in existing if name == short or name.split("_")[0] == short]
        if not found:
            raise UsageError(
                f"no chapter '{short}' in --chapters; the chapters are {', '.join(existing)}"
            )
        names += found
    return list(dict.fromkeys(names))


def recorded_tasks(folder: Path) -> list[str]:
    """The tasks a `--record-dir` folder holds runs of."""
    return sorted(path.name for path in folder.iterdir() if path.is_dir())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m lab compare",
        description="Run every chapter on the same tasks, check each outcome, print one table "
        "per task.",
        epilog="Offline, each chapter replays its scripted cassette: a plausible run, not a "
        "measurement. Measure a model with --model SPEC --runs N.",
    )
    parser.add_argument(
        "--task",
        action="append",
        metavar="NAME",
        help="a task to run; repeat for more (default: the featured tasks)",
    )
    parser.add_argument("--chapters", metavar="v0,v1,…", help="chapters to run (default: all)")
    parser.add_argument("--model", metavar="SPEC", help="run live: every chapter on this model")
    parser.add_argument(
        "--runs", type=int, default=1, metavar="N", help="live: runs of each chapter on each task"
    )
    parser.add_argument(
        "--window", type=int, metavar="TOKENS", help="refuse requests estimated above this size"
    )
    parser.add_argument(
        "--max-turns",
        type=int,
        metavar="N",
        help="model calls a run may make, at most (a task's own limit still holds if lower)",
    )
    parser.add_argument(
        "--max-reply-tokens", type=int, metavar="N", help="output tokens any one reply may take"
    )
    parser.add_argument(
        "--max-tokens-total",
        type=int,
        metavar="N",
        help="input plus output tokens a run may "
        "use; it stops cleanly, saying so, before the call after it reaches N",
    )
    parser.add_argument(
        "--record-dir", type=Path, metavar="DIR", help="live: keep every run as a cassette in DIR"
    )
    parser.add_argument(
        "--replay-dir", type=Path, metavar="DIR", help="replay the runs kept in DIR"
    )
    parser.add_argument(
        "--json", type=Path, metavar="FILE", help="write a record of every run to FILE"
    )
    parser.add_argument(
        "--html", type=Path, metavar="FILE", help="write the runs side by side as one HTML page"
    )
    parser.add_argument(
        "--lang",
        choices=view.LANGS,
        default="en",
        help="the language of the tables and the --html page",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help=f"runs at a time (at most {MAX_JOBS}); by default 1 live, and offline the "
        f"machine's cores, at most {OFFLINE_JOBS}",
    )
    parser.add_argument("--keep", action="store_true", help="keep the folders the runs worked in")
    parser.add_argument(
        "--wide", action="store_true", help="one wide table per task: every count in its column"
    )
    return parser


def source_of(args: argparse.Namespace) -> Source:
    """Where the replies come from, once the flags are known to fit together."""
    if args.model and args.replay_dir:
        raise UsageError("--replay-dir replays recorded runs and --model runs live: pick one")
    if args.record_dir and not args.model:
        raise UsageError("--record-dir keeps live runs: add --model SPEC")
    if args.runs < 1:
        raise UsageError("--runs must be 1 or more")
    if args.runs > 1 and not args.model:
        raise UsageError(
            "--runs repeats live runs; a replay gives the same run every time: add --model SPEC"
        )
    if args.jobs is None:
        args.jobs = 1 if args.model else offline_jobs()
    if not 1 <= args.jobs <= MAX_JOBS:
        raise UsageError(f"--jobs must be between 1 and {MAX_JOBS}")
    if args.window is not None and args.window < 1:
        raise UsageError("--window must be a number of tokens, 1 or more")
    for flag, value in [
        ("--max-turns", args.max_turns),
        ("--max-reply-tokens", args.max_reply_tokens),
        ("--max-tokens-total", args.max_tokens_total),
    ]:
        if value is not None and value < 1:
            raise UsageError(f"{flag} must be 1 or more")
    if args.replay_dir:
        if not args.replay_dir.is_dir():
            raise UsageError(f"--replay-dir {args.replay_dir} is not a folder")
        return Replayed(args.replay_dir)
    if args.model:
        limits = Limits(args.max_turns, args.max_reply_tokens, args.max_tokens_total, args.window)
        return Live(args.model, args.record_dir, limits)
    return Scripted()


def preamble(args: argparse.Namespace, source: Source) -> str:
    """One line above the tables: where the replies came from, and how to read them."""
    if isinstance(source, Live):
        runs = f"{args.runs} run{'s' if args.runs > 1 else ''} of each chapter on each task"
        kept = f", kept in {args.record_dir}" if args.record_dir else ""
        line = f"live: {args.model}, {runs}{kept}"
    elif isinstance(source, Replayed):
        line = f"replaying the runs recorded in {args.replay_dir}"
    else:
        line = (
            "offline: scripted cassettes, each a plausible run of its chapter, not a measurement\n"
            "of a model (≈: tokens estimated); measure with --model SPEC --runs N"
        )
    if args.window:
        line += f"; simulated context window: {args.window:,} tokens"
    bounds = [
        f"{args.max_turns} turns" if args.max_turns else "",
        f"{args.max_reply_tokens:,} tokens a reply" if args.max_reply_tokens else "",
        f"{args.max_tokens_total:,} tokens a run" if args.max_tokens_total else "",
    ]
    if any(bounds):
        line += "; at most " + ", ".join(bound for bound in bounds if bound)
    return "\n".join(report.wrapped(part) for part in line.split("\n"))


def main(argv: list[str] | None = None) -> int:
    started = time.monotonic()
    args = build_parser().parse_args(argv)
    try:
        loaded = load_env_file()
        if loaded:
            print(loaded, file=sys.stderr)
        source = source_of(args)
        chapters = chapter_names(args.chapters)
        names = args.task or (
            recorded_tasks(args.replay_dir) if args.replay_dir else featured_names()
        )
        tasks = [load_task(name) for name in dict.fromkeys(names)]
        jobs, missing = plan(tasks, chapters, args.runs, source)
        check_before_running(jobs, source, args)
    except (UsageError, TaskError, ModelError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    limits = Limits(args.max_turns, args.max_reply_tokens, args.max_tokens_total, args.window)
    comparison = compare(
        jobs,
        source,
        window=args.window,
        parallel=args.jobs,
        progress=Progress(),
        keep=args.keep,
        limits=limits,
    )
    print(preamble(args, source))
    print(tables(tasks, comparison.records, missing, lang=args.lang, wide=args.wide))
    document = report.records_document(
        comparison.records,
        model=args.model,
        window=args.window,
        interrupted=comparison.interrupted,
    )
    if args.json:
        written = keep_records(args.json, document)
        print(f"wrote {len(comparison.records)} records to {written}", file=sys.stderr)
        if written != args.json:
            return 2
    if args.html:
        try:
            view.write_page(args.html, document, lang=args.lang)
            print(f"wrote the runs side by side to {args.html}", file=sys.stderr)
        except view.ViewError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    print(comparison.timing(time.monotonic() - started, args.jobs), file=sys.stderr)
    if comparison.interrupted:
        print("interrupted: the runs above finished; the others did not run", file=sys.stderr)
        return 130
    if comparison.records and all(r.outcome in UNMEASURED for r in comparison.records):
        why = report.unfinished_cell(comparison.records, "en")
        print(f"error: no run could finish ({why}): the tables measure nothing", file=sys.stderr)
        return 1
    return 0


def check_before_running(jobs: list[Job], source: Source, args: argparse.Namespace) -> None:
    """Stop on what would fail every run, before the first one starts."""
    if not jobs:
        where = f"recorded in {args.replay_dir}" if args.replay_dir else "scripted"
        raise UsageError(f"nothing to replay: no runs {where} for these tasks; add --model SPEC")
    if isinstance(source, Live):
        load_model(args.model)  # a wrong spec or a missing key stops here
        if args.record_dir and args.record_dir.exists() and not args.record_dir.is_dir():
            raise UsageError(f"--record-dir {args.record_dir} is a file, not a folder")
    else:
        for job in jobs:  # every cassette is read and checked now, not halfway through
            source.open(job)
    for path in (args.json, args.html):
        if path:  # found out now, not after an hour of live runs
            check_writable(path)
    if isinstance(source, Replayed):
        print(replay_warning(args.replay_dir, jobs), file=sys.stderr)


def check_writable(path: Path) -> None:
    """Refuse an output path that no run could make writable: a folder, no folder, or one
    where a file cannot be made (a read-only folder, a virtual file system), found by
    making it, not by asking."""
    folder = path.parent
    if path.is_dir():
        raise UsageError(f"cannot write {path}: it is a folder; give a file name")
    if not folder.is_dir():
        raise UsageError(f"cannot write {path}: there is no folder {folder}")
    existed = path.exists()
    try:
        with open(path, "a", encoding="utf-8"):  # appends nothing: an old file is kept as it is
            pass
    except OSError as error:
        raise UsageError(f"cannot write {path}: {error.strerror or error}") from None
    if not existed:
        path.unlink()


def keep_records(path: Path, document: dict[str, Any]) -> Path:
    """Write the records to `path`, or, if that fails after all the runs, to a private file
    in the temporary folder: where they went, said on stderr, never a traceback that loses
    them."""
    try:
        report.write_json(path, document)
        return path
    except OSError as error:
        fd, name = tempfile.mkstemp(prefix="lab-records-", suffix=".json")
        os.close(fd)
        report.write_json(Path(name), document)
        print(f"error: cannot write {path}: {error.strerror or error}", file=sys.stderr)
        return Path(name)


SHOWN_COMMANDS = 8  # commands listed before a replay; the rest are counted


def replay_warning(folder: Path, jobs: list[Job]) -> str:
    """What replaying runs recorded elsewhere will do here: run their commands for real."""
    commands: list[str] = []
    for job in jobs:
        _, entries = read_cassette(cassette_path(folder, job))
        for entry in entries:
            for block in entry["reply"]["content"]:
                if block.get("type") == "tool_use" and block.get("name") == "bash":
                    commands.append(" ".join(str(block["input"].get("command", "")).split()))
    unique = list(dict.fromkeys(commands))
    lines = [
        f"replaying {folder}: the tools run for real, on this machine, in a scratch copy of "
        f"each task's workspace; these cassettes run {len(commands)} commands "
        "(and chapter 0's actions, written as text). Replay only runs you trust."
    ]
    lines += [f"  $ {command[:100]}" for command in unique[:SHOWN_COMMANDS]]
    if len(unique) > SHOWN_COMMANDS:
        lines.append(f"  … and {len(unique) - SHOWN_COMMANDS} other commands")
    return "\n".join(lines)


def tables(
    tasks: list[Task],
    records: list[Record],
    missing: dict[str, list[str]],
    *,
    wall: bool = True,
    lang: str = "en",
    wide: bool = False,
) -> str:
    """Every task's heading and table, and a line naming the chapters that had nothing to run."""
    parts = []
    for task in tasks:
        rows = [record for record in records if record.task == task.name]
        if not rows and task.name not in missing:
            continue
        parts.append("\n" + report.task_heading(task) + "\n")
        if rows:
            parts.append(report.task_table(rows, wall=wall, lang=lang, wide=wide))
        if task.name in missing:
            chapters = ", ".join(missing[task.name])
            parts.append(f"not run, nothing to replay: {chapters} (run live with --model SPEC)")
    return "\n".join(parts)
