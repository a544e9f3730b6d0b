"""Benchmarks of chapter 4's context window: what keeping a session in the budget costs.

    python -m lab.bench_context [--quick]

The window measures the next request before every model call, so its own time is
paid at every turn; a model's time is not counted anywhere here.  Printed, each on
a session of 1,000 realistic messages (`lab.bench_sessions.conversation`):

* the harness's time per turn, `fit` and `note_usage` (target: under 1 ms), when the
  request is under the budget and when stage 1 trims old results at every turn, and
  stage 1 again in a session of 10,000 messages: only the new messages are estimated
  and trimmed, added to the window's running total, so the figure hardly grows;
* the first `fit` after a resume, when every message is estimated once;
* one stage-1 view computed from nothing (`trim_old_results`);
* one stage-2 compaction in a running session (the earlier turns already counted):
  the transcript, the session record and the new estimate, the summarising model's
  time taken out (a replay answers, timed apart);
* the whole chapter 4 loop's own time per turn in that session (target: under 1 ms):
  the prompt's layers rebuilt, the window's fit, the session's appends, a tool call
  dispatched; measured from one model call's return to the next call.

Sessions are written without fsync, so the disk's time is not counted either.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from lab.bench_sessions import conversation, fill
from llm.cassette import ReplayModel
from llm.tokens import estimate_request
from llm.types import Message, Reply, Usage
from v1_tool_loop.agent import SYSTEM
from v1_tool_loop.tools import TOOLS
from v4_memory.context import ContextWindow, trim_old_results
from v4_memory.session import SESSIONS_DIR, Session, SessionStore

TURN_TARGET = 1e-3  # seconds of harness time per turn
SIZE = 1_000  # messages in the session
LARGE = 10_000  # messages in the session where stage 1 is timed again
SUMMARY = Reply(
    [{"type": "text", "text": "The user asked for a fix; it is half done."}], "end_turn"
)


class TimedReplay:
    """A replay that keeps the time spent inside it, so the harness's share can be told apart."""

    name = "replay:bench"

    def __init__(self, replies: list[Reply]) -> None:
        self.replay = ReplayModel(replies)
        self.seconds = 0.0

    def complete(self, system, messages, tools=None, stop=None, max_tokens=4096) -> Reply:
        start = time.perf_counter()
        try:
            return self.replay.complete(system, messages, tools, stop, max_tokens)
        finally:
            self.seconds += time.perf_counter() - start


def new_session(store: SessionStore, messages: Iterator[Message], size: int = SIZE) -> Session:
    session = store.create({"chapter": "bench"})
    fill(session, messages, size)
    if session.messages()[-1]["role"] == "assistant":  # the loop fits after a user message
        session.append({"role": "user", "content": "Go on."})
    return session


def sizes(session: Session) -> tuple[int, int]:
    """The request's estimate as it is, and as its stage-1 view."""
    history = session.messages()
    full = estimate_request(SYSTEM, history, TOOLS)
    return full, estimate_request(SYSTEM, trim_old_results(history), TOOLS)


def turn_costs(session: Session, window: ContextWindow, messages: Iterator, turns: int) -> float:
    """Median seconds of `fit` + `note_usage` per turn, as the session grows by a turn each."""
    times = []
    for _ in range(turns):
        reply, results = next(messages), next(messages)
        while reply["role"] != "assistant" or results["role"] != "user":  # realign on a reply
            reply, results = results, next(messages)
        session.append(reply)
        session.append(results)
        start = time.perf_counter()
        window.fit(SYSTEM, TOOLS)
        window.note_usage(Usage(window.tokens, 40))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def verdict(seconds: float) -> str:
    return "ok" if seconds < TURN_TARGET else "OVER TARGET"


def measure_turns(store: SessionStore, turns: int, size: int = SIZE) -> None:
    messages = conversation(random.Random(6))
    session = new_session(store, messages, size)
    full, trimmed = sizes(session)
    print(
        f"session of {len(session.messages()):,} messages: ≈{full:,} tokens, "
        f"≈{trimmed:,} as a stage-1 view"
    )
    runs = {
        "under the budget": full * 10,
        "stage 1 on": (full + trimmed) // 2,  # trimmed at every turn, never summarised
    }
    if size != SIZE:  # the larger session: stage 1 alone, the case whose view grows
        runs = {f"stage 1 on, {size:,} messages": runs["stage 1 on"]}
    for label, budget in runs.items():
        window = ContextWindow(ReplayModel([]), session, budget)  # a summary call would fail
        window.fit(SYSTEM, TOOLS)  # the first fit counts everything: timed apart below
        cost = turn_costs(session, window, messages, turns)
        print(
            f"fit + note_usage, {label}: {cost * 1e3:.3f} ms median over {turns} turns "
            f"(target < {TURN_TARGET * 1e3:.0f} ms: {verdict(cost)})"
        )
    session.close()


def measure_cold(store: SessionStore, repeats: int) -> None:
    messages = conversation(random.Random(7))
    session = new_session(store, messages)
    session.close()
    resumes, views = [], []
    for _ in range(repeats):
        with store.open(session.id) as resumed:
            window = ContextWindow(ReplayModel([]), resumed, 10**9)
            start = time.perf_counter()
            window.fit(SYSTEM, TOOLS)
            resumes.append(time.perf_counter() - start)
            history = resumed.messages()
            start = time.perf_counter()
            trim_old_results(history)
            views.append(time.perf_counter() - start)
    print(f"first fit after a resume (every message counted): {min(resumes) * 1e3:.1f} ms")
    print(f"one stage-1 view from nothing: {min(views) * 1e3:.2f} ms")


def measure_summary(store: SessionStore, repeats: int) -> None:
    messages = conversation(random.Random(8))
    times, compaction = [], None
    for _ in range(repeats):
        session = new_session(store, messages)  # a fresh one each time: a summary changes it
        model = TimedReplay([SUMMARY])
        window = ContextWindow(model, session, 10**9)
        window.fit(SYSTEM, TOOLS)  # an earlier turn, as in a running session: all counted
        window.budget = sizes(session)[1] // 2
        start = time.perf_counter()
        window.fit(SYSTEM, TOOLS)
        times.append(time.perf_counter() - start - model.seconds)
        compaction = window.compactions[-1]
        session.close()
    assert compaction is not None and compaction.stage == 2
    print(
        f"one stage-2 compaction, model excluded: {min(times) * 1e3:.1f} ms "
        f"({compaction.detail}, ≈{compaction.tokens_before:,} → ≈{compaction.tokens_after:,} "
        "tokens)"
    )


def measure_loop(root: Path, turns: int) -> None:
    """Chapter 4's `run` resumed on a 1,000-message session: the gaps between model calls."""
    from lab.bench import TimedModel  # the loop overhead of lab.bench, on chapter 4
    from v4_memory.agent import run

    workdir = root / "loop"
    store = SessionStore(workdir / SESSIONS_DIR, sync=False)
    session = new_session(store, conversation(random.Random(9)))
    call = {"type": "tool_use", "id": "t", "name": "noop", "input": {}}  # answered at once
    replies = [Reply([call], "tool_use") for _ in range(turns - 1)]
    model = TimedModel([*replies, Reply([{"type": "text", "text": "done"}], "end_turn")])
    run("Go on.", model=model, workdir=workdir, max_turns=turns, session=session,
        context_budget=10**9)  # fmt: skip
    gaps = [call - ret for ret, call in zip(model.returns[:-1], model.calls[1:], strict=True)]
    cost = statistics.median(gaps)
    print(
        f"chapter 4's loop, its own time per turn in a session of {len(session.messages()):,} "
        f"messages: {cost * 1e3:.3f} ms median over {turns} turns "
        f"(target < {TURN_TARGET * 1e3:.0f} ms: {verdict(cost)}; fsync off)"
    )
    session.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lab.bench_context", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="fewer turns and repeats")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-context-") as root:
        store = SessionStore(Path(root), sync=False)
        print(f"python {platform.python_version()} on {platform.machine()}, {platform.system()}")
        measure_turns(store, 20 if args.quick else 100)
        measure_turns(store, 20 if args.quick else 100, LARGE)
        measure_cold(store, 2 if args.quick else 5)
        measure_summary(store, 1 if args.quick else 3)
        measure_loop(Path(root), 20 if args.quick else 100)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
