"""Every job of a comparison run, one after another or several at a time, into records.

`plan` turns tasks, chapters and a number of runs into jobs; `compare` runs them
(`runs.py`), each in a numbered folder of one scratch folder, shows their progress,
and stops them all at Ctrl-C, keeping the runs that finished.  `offline_records` is
the scripted comparison of one task, what the docs' figures are made from.
"""

from __future__ import annotations

import io
import shutil
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from llm.demo import fresh_folder
from machine import cores

from ..chapters import chapters
from ..tasks import Task, load_task
from .progress import Progress
from .record import Job, Limits, Record
from .runs import run_job
from .sources import Live, Replayed, Scripted, Source

# A replay asks no provider: its runs go side by side on the machine's cores, a few at most
# (on a shared server, thirty learners' comparisons share the cores too).  Live, one at a
# time unless --jobs says otherwise: a provider's rate limit is the learner's to spend.
OFFLINE_JOBS = 4


def offline_jobs() -> int:
    """Replayed runs at a time: the cores this process may use, at most OFFLINE_JOBS."""
    return min(OFFLINE_JOBS, cores())


@dataclass
class Comparison:
    """The runs that finished, in the order of the plan, and whether Ctrl-C cut it short;
    the seconds spent on each job from its copy to its verdict, in the order they ended."""

    records: list[Record] = field(default_factory=list)
    interrupted: bool = False
    job_seconds: list[float] = field(default_factory=list)

    def timing(self, seconds: float, parallel: int) -> str:
        """Where `seconds` of a comparison went: the agents' loops, what each run does
        around its loop (copying the workspace, the checker), and the rest (loading the
        tasks, the tables, the records, the page)."""
        runs = len(self.records)
        loops = sum(record.wall_s for record in self.records)
        around = sum(self.job_seconds) - loops
        if parallel > 1:  # the runs' own times overlap: their sums, not parts of the whole
            return (
                f"{runs} runs in {seconds:.1f} s, {parallel} at a time; summed over the runs: "
                f"the loops {loops:.1f} s, copying and checking {around:.1f} s"
            )
        rest = seconds - sum(self.job_seconds)
        return (  # within 100 columns, as every line the lab prints
            f"{runs} runs in {seconds:.1f} s: the loops {loops:.1f} s, copying and checking "
            f"{around:.1f} s, loading and printing {rest:.1f} s"
        )


def compare(
    jobs: list[Job],
    source: Source,
    *,
    window: int | None = None,
    parallel: int = 1,
    progress: Progress | None = None,
    scratch: Path | None = None,
    keep: bool = False,
    limits: Limits | None = None,
) -> Comparison:
    """Run every job (`parallel` at a time) and collect the records of those that finished."""
    progress = progress or Progress()
    folder = fresh_folder("lab-compare-", scratch)
    stopping = threading.Event()
    done: dict[int, Record] = {}
    spent: list[float] = []

    def one(index: int) -> None:
        if stopping.is_set():  # a run queued for a worker thread when Ctrl-C came
            return
        job, started = jobs[index], time.monotonic()

        def on_turn(turn: int, tokens: int, estimated: bool) -> None:
            progress.turn(job.label, turn, tokens, estimated)

        try:
            record = run_job(
                job, source, folder,
                window=window, on_turn=on_turn, stopping=stopping, limits=limits,
            )  # fmt: skip
        except Exception as error:  # this run failed; the others go on, and it says why
            record = failed_record(job, source, error)
        if record.stop == "interrupted":  # Ctrl-C reached the chapter's loop: stop them all
            stopping.set()
            progress.finish(job.label, "interrupted, not counted")
            return
        done[index] = record
        spent.append(time.monotonic() - started)
        progress.finish(job.label, finished_line(record))

    ticking = progress.ticking()  # a slow reply says so on its line while it is awaited
    try:
        if parallel == 1:
            for index in range(len(jobs)):
                one(index)
        else:
            in_parallel(one, len(jobs), parallel, stopping)
    except KeyboardInterrupt:  # between turns: while copying, checking, or waiting on threads
        stopping.set()
    finally:
        ticking.set()
        if keep:
            print(f"the runs' workspaces are kept in {folder}", file=sys.stderr)
        else:
            shutil.rmtree(folder, ignore_errors=True)
    records = [done[index] for index in sorted(done)]
    return Comparison(records, interrupted=stopping.is_set(), job_seconds=spent)


def in_parallel(
    one: Callable[[int], None], count: int, parallel: int, stopping: threading.Event
) -> None:
    """Run one(0) … one(count - 1) on `parallel` threads; Ctrl-C lets running runs stop
    at their next turn and starts no new one."""
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        pending: set[Future] = {pool.submit(one, index) for index in range(count)}
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    future.result()  # a bug in a run surfaces here, not silently
        except KeyboardInterrupt:
            stopping.set()
            for future in pending:
                future.cancel()
            raise


def failed_record(job: Job, source: Source, error: Exception) -> Record:
    """The record of a run that ended in an exception: not solved, and the reason."""
    reason = f"{type(error).__name__}: {error}"
    provenance = "live" if isinstance(source, Live) else "recorded"
    if isinstance(source, Scripted):
        provenance = "scripted"
    return Record(
        chapter=job.chapter, task=job.task.name, run=job.number, provenance=provenance,
        model="", solved=False, outcome="not solved", verdict=f"the run failed: {reason}"[:300],
        stop="error",
        error=reason, turns=0, tool_calls=0, input_tokens=0, output_tokens=0, estimated=False,
        peak_context=0, context_per_turn=[], wall_s=0.0, counts={}, messages=[],
    )  # fmt: skip


def finished_line(record: Record) -> str:
    about = "≈" if record.estimated else ""
    solved = "solved" if record.solved else f"not solved ({record.stop})"
    if not record.finished:
        solved = f"could not finish: {record.outcome}"
    tokens = record.input_tokens + record.output_tokens
    return f"{solved} · {record.turns} turns · {about}{tokens:,} tokens · {record.wall_s:.1f} s"


def plan(
    tasks: list[Task], chapters: list[str], runs: int, source: Source
) -> tuple[list[Job], dict[str, list[str]]]:
    """The jobs to run, task by task, chapter by chapter; and, per task, the chapters that
    have nothing to replay (no scripted cassette, no recorded run)."""
    jobs: list[Job] = []
    missing: dict[str, list[str]] = {}
    for task in tasks:
        for chapter in chapters:
            count = available_runs(source, task, chapter, runs)
            if not count:
                missing.setdefault(task.name, []).append(chapter)
            jobs += [Job(chapter, task, number, count) for number in range(1, count + 1)]
    return jobs, missing


def available_runs(source: Source, task: Task, chapter: str, runs: int) -> int:
    if isinstance(source, Scripted):
        return 1 if task.cassette(chapter) else 0
    if isinstance(source, Replayed):
        return len(list((source.folder / task.name / chapter).glob("*.jsonl")))
    return runs


def offline_records(task: str, window: int | None, scratch: Path) -> list[Record]:
    """Every chapter's scripted run of one task, checked: what a lab figure is made from."""
    jobs, _ = plan([load_task(task)], chapters(), 1, Scripted())
    quiet = Progress(io.StringIO())
    comparison = compare(
        jobs, Scripted(), window=window, parallel=offline_jobs(), progress=quiet, scratch=scratch
    )
    return comparison.records
