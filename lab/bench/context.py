"""Benchmarks of chapter 4's context window: what keeping a session in the budget costs.

    python -m lab.bench.context [--quick]

The window measures the next request before every model call, so its own time is
paid at every turn; a model's time is not counted anywhere here.  Printed, each on
a session of 1,000 realistic messages (`lab.bench.sessions.conversation`):

* the harness's time per turn, `fit` and `note_usage` (target: under 1 ms), when the
  request is under the budget and when stage 1 trims old results at every turn, and
  stage 1 again in a session of 10,000 messages: only the new messages are estimated
  (by the session, as they are appended) and trimmed, so the figure hardly grows;
* the first `fit` after a resume, on the estimates the session's lines keep;
* one stage-1 view computed from nothing (`trim_old_results`);
* one stage-2 compaction in a running session (the earlier turns already counted):
  the transcript, the session record and the new estimate, the summarising model's
  time taken out (a replay answers, timed apart);
* the whole chapter 4 loop's own time per turn in that session (target: under 1 ms):
  the prompt's layers rebuilt, the window's fit, the session's appends, a tool call
  dispatched; measured from one model call's return to the next call.

And how the costs grow with the session (`measure_growth`): chapter 4's `run` resumed on
sessions of 100 to 100,000 messages, in CPU seconds, with a model that answers at once
and estimates nothing, so every figure is the harness's own:

* opening the session (its file read back, every message's stored estimate with it);
* the first prompt: from the session open to the first model call (the prompt's
  layers, the plan read back, the first fit of the window);
* the harness's time per turn after that (median over the turns).

Targets, as ratios measured in the same run: the first prompt at 100,000 messages
under 0.1 s and at most 5 times that at 1,000; opening plus the first prompt at 100,000
under 2.5 s; the time per turn at 100,000 at most 3 times that at 100.

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

from lab.bench.sessions import conversation, fill
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
GROWTH = (100, 1_000, 10_000, 100_000)  # session sizes of `measure_growth`
QUICK_LARGE, QUICK_GROWTH = 3_000, (100, 1_000, 2_000)  # the same, smaller, for the tests
FIRST_TARGET = 0.1  # CPU seconds of the first prompt at 100,000 messages
FIRST_RATIO = 5  # the first prompt at 100,000 messages against 1,000, at most
OPEN_FIRST_TARGET = 2.5  # CPU seconds: opening plus the first prompt at 100,000 messages
TURN_RATIO = 3  # the time per turn at 100,000 messages against 100, at most
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
    print(f"first fit after a resume (the estimates read back): {min(resumes) * 1e3:.1f} ms")
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
    from lab.bench.basics import TimedModel  # the loop overhead of lab.bench, on chapter 4
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


class ClockedModel:
    """Answers at once, `turns` calls in all, and notes the process's CPU time at each
    call and return.  Its replies carry no usage, so nothing is estimated on its side."""

    name = "bench"

    def __init__(self, turns: int) -> None:
        self.turns = turns
        self.calls: list[float] = []
        self.returns: list[float] = []

    def complete(self, system, messages, tools=None, stop=None, max_tokens=4096) -> Reply:
        self.calls.append(time.process_time())
        if len(self.calls) < self.turns:  # "noop" is no tool: answered at once, as an error
            call = {"type": "tool_use", "id": f"t{len(self.calls)}", "name": "noop", "input": {}}
            reply = Reply([call], "tool_use")
        else:
            reply = Reply([{"type": "text", "text": "done"}], "end_turn")
        self.returns.append(time.process_time())
        return reply


def saved_session(workdir: Path, size: int) -> tuple[SessionStore, str]:
    """A session of `size` messages in `workdir`, closed, and gone from memory once returned."""
    store = SessionStore(workdir / SESSIONS_DIR, workdir=workdir, sync=False)
    with store.create({"chapter": "bench"}) as session:
        fill(session, conversation(random.Random(10)), size)
    return store, session.id


def growth_costs(root: Path, size: int, turns: int) -> tuple[float, float, float]:
    """CPU seconds to open a session of `size` messages, of the first prompt, and per turn."""
    from v4_memory.agent import run

    workdir = root / f"growth-{size}"
    store, session_id = saved_session(workdir, size)
    start = time.process_time()
    session = store.open(session_id)
    opened = time.process_time()
    model = ClockedModel(turns)
    with session:
        run("Go on.", model=model, workdir=workdir, max_turns=turns, session=session,
            context_budget=10**9)  # fmt: skip
    gaps = [call - ret for ret, call in zip(model.returns[:-1], model.calls[1:], strict=True)]
    return opened - start, model.calls[0] - opened, statistics.median(gaps)


def measure_growth(root: Path, sizes: tuple[int, ...], turns: int) -> None:
    costs = {}
    for size in sizes:
        costs[size] = opening, first, turn = growth_costs(root, size, turns)
        print(
            f"chapter 4 resumed on {size:>7,} messages: open {opening:.3f} s, first prompt "
            f"{first:.3f} s, then {turn * 1e3:.3f} ms per turn (CPU, median of {turns - 1})"
        )
    largest, smallest = max(sizes), min(sizes)
    opening, first, turn = costs[largest]
    checks = [
        (f"first prompt at {largest:,}", first, f"< {FIRST_TARGET} s", first < FIRST_TARGET),
        (
            f"open + first prompt at {largest:,}",
            opening + first,
            f"< {OPEN_FIRST_TARGET} s",
            opening + first < OPEN_FIRST_TARGET,
        ),
    ]
    if 1_000 in costs and largest > 1_000:
        ratio = first / costs[1_000][1]
        checks.append(
            (f"first prompt, {largest:,} / 1,000", ratio, f"≤ {FIRST_RATIO}×", ratio <= FIRST_RATIO)
        )
    ratio = turn / costs[smallest][2]
    checks.append(
        (f"per turn, {largest:,} / {smallest:,}", ratio, f"≤ {TURN_RATIO}×", ratio <= TURN_RATIO)
    )
    for label, value, target, ok in checks:
        print(f"  {label}: {value:.3f} (target {target}: {'ok' if ok else 'OVER TARGET'})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lab.bench.context", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="fewer turns and repeats")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-context-") as root:
        store = SessionStore(Path(root), sync=False)
        print(f"python {platform.python_version()} on {platform.machine()}, {platform.system()}")
        measure_turns(store, 20 if args.quick else 100)
        measure_turns(store, 20 if args.quick else 100, QUICK_LARGE if args.quick else LARGE)
        measure_cold(store, 2 if args.quick else 5)
        measure_summary(store, 1 if args.quick else 3)
        measure_loop(Path(root), 20 if args.quick else 100)
        measure_growth(Path(root), QUICK_GROWTH if args.quick else GROWTH, 20 if args.quick else 50)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
