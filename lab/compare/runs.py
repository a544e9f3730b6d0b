"""One run of one chapter on one task: a fresh copy of the workspace, the agent, the checker.

    job = Job(chapter="v1_tool_loop", task=load_task("one-bug"), number=1)
    record = run_job(job, Scripted(), folder)

The model comes from a source (`sources.py`).  Around it go two thin wrappers:
`Windowed` refuses a request that would not fit a simulated context window, as a
provider refuses one that does not fit its real window, and `Watched` reports each
turn to the progress display and stops the run when the comparison is stopped.  The
run ends in a `Record` (`record.py`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from llm import Console, Message, Model, Reply
from llm.budget import Budgeted, BudgetSpent
from llm.cassette import ReplayModel
from llm.demo import copy_private, fresh_folder
from llm.errors import ContextTooLong, ModelError
from llm.recording import RecordingModel
from llm.text_calls import ToolCallInText
from llm.tokens import estimate_request
from llm.wrapper import Wrapper, for_child

from ..chapters import chapter as chapter_of
from ..tasks import (
    Task,
    changed_files,
    check,
    checker_files,
    make_inputs,
    makes_inputs,
    shown,
)
from ..tasks.checks import Verdict
from .record import CHECKED, Job, Limits, Record, outcome_of
from .sources import Source, seed_path

OnTurn = Callable[[int, int, bool], None]  # turn about to start, tokens so far, estimated?


def _ignore(turn: int, tokens: int, estimated: bool) -> None:
    """No progress display."""


# --- the two wrappers -------------------------------------------------------------------


class Windowed(Wrapper):
    """A model whose context window is `context_window` tokens, by the course's estimate.

    A request estimated above it raises ContextTooLong before it reaches the model,
    as a provider refuses a request that does not fit, so a replay shows offline
    where a run would hit the wall.  A chapter that manages its context can read
    `model.context_window` to know the limit it must keep under.
    """

    def __init__(self, inner: Model, context_window: int) -> None:
        super().__init__(inner)
        self.context_window = context_window

    def before(self, system: str, messages: list[Message], tools: list[dict] | None) -> None:
        size = estimate_request(system, messages, tools)
        if size > self.context_window:
            raise ContextTooLong(
                f"the request is ≈{size:,} tokens and the context window is "
                f"{self.context_window:,} (--window): the conversation no longer fits"
            )

    def child(self, key: str) -> Windowed:
        """A child agent's model (chapter 3) has the same window as its parent's."""
        return Windowed(for_child(self.inner, key), self.context_window)


class Watched(Wrapper):
    """Reports every turn to `on_turn(turn, tokens so far, estimated)`; raises
    KeyboardInterrupt inside the run once `stopping` is set, so that a run in a worker
    thread stops as a Ctrl-C stops one in the main thread.  It keeps the model error
    the last call raised (`failure`): a run that stops on one is judged by it.  With
    `reply_cap`, no reply may be longer than that many output tokens."""

    def __init__(
        self,
        inner: Model,
        on_turn: OnTurn,
        stopping: threading.Event,
        reply_cap: int | None = None,
    ) -> None:
        super().__init__(inner)
        self.on_turn = on_turn
        self.stopping = stopping
        self.reply_cap = reply_cap
        self.turns = 0
        self.tokens = 0
        self.estimated = False
        self.failure: ModelError | None = None
        self.sent: list[tuple[str, str, list[str]]] = []  # system, tools, messages: as JSON

    def complete(
        self,
        system: str,
        messages: list[Message],
        tools: list[dict] | None = None,
        stop: list[str] | None = None,
        max_tokens: int = 4096,
    ) -> Reply:
        if self.stopping.is_set():
            raise KeyboardInterrupt
        self.on_turn(self.turns + 1, self.tokens, self.estimated)
        if self.reply_cap:
            max_tokens = min(max_tokens, self.reply_cap)
        try:
            reply = self.inner.complete(
                system, messages, tools=tools, stop=stop, max_tokens=max_tokens
            )
        except ModelError as error:
            self.failure = error
            raise
        self.failure = None  # chapter 4 compacts and tries again after a refusal
        listed = [json.dumps(message, sort_keys=True) for message in messages]
        self.sent.append((system, json.dumps(tools or [], sort_keys=True), listed))
        self.turns += 1
        self.tokens += reply.usage.input_tokens + reply.usage.output_tokens
        self.estimated = self.estimated or reply.usage.estimated
        return reply

    def child(self, key: str) -> Watched:
        """A child agent's model (chapter 3): stopped by Ctrl-C too; its turns are not the
        run's turns, so the progress line keeps counting the parent's."""
        return Watched(for_child(self.inner, key), _ignore, self.stopping, self.reply_cap)


def sent_requests(sent: list[tuple[str, str, list[str]]], final: list[Message]) -> dict[str, Any]:
    """Every answered request of a run, each part kept once, for the viewer's "what was
    sent" folds: `systems` (each distinct system prompt), `tools` (each distinct list of
    tool schemas), `extra` (messages sent that the run's final `messages` lack: chapter
    4's trimmed results and summaries), and `calls`, one per request in order, each
    `{"system": i, "tools": j, "messages": [k, …]}`.  A message index k below
    len(messages) is the run's messages[k]; above, extra[k - len(messages)]."""
    systems: dict[str, int] = {}
    tools: dict[str, int] = {}
    known = {json.dumps(message, sort_keys=True): index for index, message in enumerate(final)}
    extra: dict[str, int] = {}
    calls = []
    for system, schemas, messages in sent:
        refs = []
        for text in messages:
            if text in known:
                refs.append(known[text])
            else:
                refs.append(len(final) + extra.setdefault(text, len(extra)))
        calls.append(
            {
                "system": systems.setdefault(system, len(systems)),
                "tools": tools.setdefault(schemas, len(tools)),
                "messages": refs,
            }
        )
    return {
        "systems": list(systems),
        "tools": [json.loads(schemas) for schemas in tools],
        "extra": [json.loads(text) for text in extra],
        "calls": calls,
    }


def answered_by(model: Model) -> str:
    """The live model's spec, the model a replayed recording was made with, or the cassette."""
    if isinstance(model, ReplayModel):
        return model.header.get("model") or f"replay:{shown(model.path)}"
    return model.name


# --- one run ------------------------------------------------------------------------------


def judged(task: Task, workdir: Path, answer: str, seed: int | None, before: dict) -> Verdict:
    """The checker's verdict, unless the checker's own files changed while the agent
    worked: the agent's `bash` can reach them, and a checker edited is no judge."""
    changed = changed_files(task, before)
    if changed:
        listed = ", ".join(changed[:3]) + (", …" if len(changed) > 3 else "")
        return Verdict(False, f"the checker's own files changed during the run: {listed}")
    return check(task, workdir, answer, seed)


def run_job(
    job: Job,
    source: Source,
    folder: Path,
    *,
    window: int | None = None,
    on_turn: OnTurn | None = None,
    stopping: threading.Event | None = None,
    limits: Limits | None = None,
) -> Record:
    """Run the job's chapter on a fresh copy of its task's workspace, then check the result.

    The copy is a numbered folder inside `folder`, so the paths the tools print, and
    with them the token estimates, are the same on every comparison.
    """
    chapter = chapter_of(job.chapter)
    workdir = fresh_folder(f"{job.task.name}-{job.chapter}-", folder)
    copy_private(job.task.workspace, workdir)
    checker = checker_files(job.task)
    seed = source.seed(job) if makes_inputs(job.task) else None
    if seed is not None:
        make_inputs(job.task, workdir, seed)
    opened, provenance = source.open(job)
    given = replace(limits or Limits(), window=window) if window else limits or Limits()
    limits = given.or_recorded(opened)
    window = limits.window  # the one given, else the one the recording was made in
    model: Model = Windowed(opened, window) if window else opened
    if limits.total_tokens:
        model = Budgeted(model, limits.total_tokens)
    watched = Watched(model, on_turn or _ignore, stopping or threading.Event(), limits.reply_tokens)
    max_turns = min(job.task.max_turns, limits.max_turns or job.task.max_turns)
    started = time.monotonic()
    try:
        result = chapter.run(
            job.task.prompt,
            model=watched,
            workdir=workdir,
            max_turns=max_turns,
            console=Console(quiet=True),
        )
    finally:
        if isinstance(opened, RecordingModel) and opened.close() and seed is not None:
            seed_path(opened.path).write_text(str(seed), encoding="utf-8")
    wall = time.monotonic() - started
    failure = watched.failure if result.stop in ("error", ToolCallInText.stop) else None
    if result.stop == "interrupted":
        if isinstance(opened, RecordingModel) and opened.replies:
            opened.path.unlink()  # a run cut short is not counted, so not kept to replay either
            seed_path(opened.path).unlink(missing_ok=True)
        solved, verdict, outcome = False, "interrupted before it finished", "interrupted"
    else:
        outcome = outcome_of(failure, False)
        if outcome in CHECKED:
            checked = judged(job.task, workdir, result.answer, seed, checker)
            solved, verdict = checked.solved, checked.detail
            outcome = outcome_of(failure, solved)
        else:  # not checked: what is in the workspace is only what the run got to
            solved, verdict = False, f"could not finish: {outcome}"
    usage, turns = result.usage, result.turns
    return Record(
        chapter=job.chapter,
        task=job.task.name,
        run=job.number,
        provenance=provenance,
        model=answered_by(opened),
        solved=solved,
        outcome=outcome,
        verdict=verdict,
        stop="max_tokens_total" if isinstance(failure, BudgetSpent) else result.stop,
        error=result.error,
        turns=turns,
        tool_calls=result.tool_calls,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        estimated=usage.estimated,
        peak_context=max(result.context_tokens, default=0),
        context_per_turn=result.context_tokens,
        wall_s=round(wall, 3),
        counts=result.counts(),
        messages=result.messages,
        details=result.details(),
        requests=sent_requests(watched.sent, result.messages),
    )
