"""Benchmarks of chapter 4's session files: how long a resume takes, and what a turn costs.

    python -m lab.bench.sessions [--quick] [--dir DIR]

A session is loaded once, when it is resumed, and appended to twice a turn (the
model's reply, then the tool results).  Printed, each with its target:

* load time for sessions of 1,000, 10,000 and 100,000 messages, per message (target:
  under 50 µs, and linear: the same per message at every size), with the peak memory
  the load takes (Python's heap, traced by tracemalloc in a second load) and that peak
  against the file's size (target: under 3.5 times).  The file is read line by line,
  so the peak is the loaded messages themselves, about 2.8 times the file's bytes as
  Python objects, and no copy of the file on top of them;
* the cost of one append, with fsync (what the chapter does) and without, at each
  size: the same figure at every size shows that an append never reads the file;
* the store's share of one turn in a session of 1,000 messages, two appends and one
  `messages()` (target: under 1 ms, the loop's own budget per turn), then the same
  with the two fsyncs, which take what the disk takes.

The messages are realistic: tool calls, tool results of a few hundred bytes to a few
KB, now and then a user request and a text answer.  fsync costs what the disk under
`--dir` makes it cost (default: the system's temporary directory).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

from llm.types import Message
from v4_memory.session import Session, SessionStore

LOAD_TARGET = 50e-6  # seconds per message
TURN_TARGET = 1e-3  # seconds per turn
PEAK_TARGET = 3.5  # peak memory of a load, as a multiple of the file's size
SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (200, 2_000)
WORDS = (  # what tool output is made of, Chinese included: JSON keeps it as UTF-8
    "def return self None import test assert value error file line path the a of to and "
    "in is for with passed failed ok result config 模型 会话 工具 0 1 42 3.14 {} [] :"
)


def conversation(rng: random.Random) -> Iterator[Message]:
    """An endless, plausible agent conversation: mostly tool calls and their results."""
    corpus = " ".join(rng.choices(WORDS.split(), k=20_000))  # sliced, so text costs nothing to make

    def text(low: int, high: int) -> str:
        size = rng.randint(low, high)
        start = rng.randrange(len(corpus) - size)
        return corpus[start : start + size]

    call = 0
    while True:
        yield {"role": "user", "content": text(40, 400)}
        for _ in range(rng.randint(2, 12)):
            call += 1
            tool = {"type": "tool_use", "id": f"toolu_{call:08d}", "name": "bash"}
            tool["input"] = {"command": text(10, 120)}
            yield {"role": "assistant", "content": [{"type": "text", "text": text(20, 300)}, tool]}
            result = {"type": "tool_result", "tool_use_id": tool["id"], "is_error": False}
            result["content"] = text(200, 4_000)
            yield {"role": "user", "content": [result]}
        yield {"role": "assistant", "content": [{"type": "text", "text": text(50, 800)}]}


def fill(session: Session, messages: Iterator[Message], count: int) -> None:
    for _ in range(count):
        session.append(next(messages))
    # End on a finished turn, as a resumed session usually does.
    while session.messages()[-1]["role"] != "assistant":
        session.append(next(messages))


def seconds(action: Callable[[], object], repeats: int) -> float:
    """The fastest of `repeats` runs: the others were slowed by something else."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


def load(store: SessionStore, session_id: str) -> None:
    store.open(session_id).close()


def peak_memory(store: SessionStore, session_id: str) -> int:
    """Bytes of Python heap at the peak of a load."""
    tracemalloc.start()
    try:
        load(store, session_id)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def append_cost(session: Session, messages: Iterator[Message], count: int) -> float:
    """Median seconds of one append."""
    times = []
    for _ in range(count):
        message = next(messages)
        start = time.perf_counter()
        session.append(message)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def turn_cost(session: Session, messages: Iterator[Message], turns: int) -> float:
    """Median seconds the store adds to one turn: the reply and the results saved, the
    history read back for the next request."""
    times = []
    for _ in range(turns):
        reply, results = next(messages), next(messages)
        start = time.perf_counter()
        session.append(reply)
        session.append(results)
        session.messages()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def verdict(value: float, target: float) -> str:
    return "ok" if value < target else "OVER TARGET"


def measure_sizes(root: Path, sizes: tuple[int, ...], appends: int) -> None:
    rng = random.Random(4)
    messages = conversation(rng)
    synced, unsynced = SessionStore(root), SessionStore(root, sync=False)
    print(
        f"{'messages':>9} {'file':>9} {'load':>9} {'per message':>12} {'peak memory':>12} "
        f"{'× file':>7} {'append':>9} {'+ fsync':>9}"
    )
    per_message, peaks = [], []
    for size in sizes:
        with unsynced.create({"chapter": "bench"}) as session:
            fill(session, messages, size)
        count = len(session.messages())
        load_time = seconds(lambda: load(synced, session.id), 5 if size <= 10_000 else 3)
        peak = peak_memory(synced, session.id)
        megabytes = session.path.stat().st_size / 1e6
        peaks.append(peak / session.path.stat().st_size)
        with unsynced.open(session.id) as session:
            plain = append_cost(session, messages, appends)
        os.sync()  # so that the fsyncs timed flush their own line, not megabytes written before
        with synced.open(session.id) as session:
            durable = append_cost(session, messages, max(10, appends // 4))
        per_message.append(load_time / count)
        print(
            f"{count:>9,} {megabytes:>6.1f} MB {load_time * 1e3:>6.0f} ms "
            f"{load_time / count * 1e6:>9.1f} µs {peak / 1e6:>9.1f} MB {peaks[-1]:>6.1f}× "
            f"{plain * 1e6:>6.0f} µs {durable * 1e6:>6.0f} µs  "
            f"({verdict(load_time / count, LOAD_TARGET)})"
        )
    growth = per_message[-1] / per_message[0]
    print(
        f"load time per message (target < {LOAD_TARGET * 1e6:.0f} µs, linear): "
        f"×{growth:.2f} from {sizes[0]:,} to {sizes[-1]:,} messages "
        f"({'linear' if growth < 2 else 'NOT LINEAR'})"
    )
    shown = ", ".join(f"×{peak:.1f} at {size:,}" for peak, size in zip(peaks, sizes, strict=True))
    print(
        f"session load peak memory against file size (target < {PEAK_TARGET}×): {shown} "
        f"({verdict(max(peaks), PEAK_TARGET)})"
    )


def measure_turns(root: Path, turns: int) -> None:
    messages = conversation(random.Random(5))
    costs = {}
    for sync in (True, False):
        with SessionStore(root, sync=False).create({"chapter": "bench"}) as session:
            fill(session, messages, 1_000)
        os.sync()
        with SessionStore(root, sync=sync).open(session.id) as session:
            costs[sync] = turn_cost(session, messages, turns)
    print(
        f"store cost per turn at 1,000 messages (2 appends + messages()): "
        f"{costs[False] * 1e3:.3f} ms of work (target < {TURN_TARGET * 1e3:.0f} ms: "
        f"{verdict(costs[False], TURN_TARGET)}), {costs[True] * 1e3:.3f} ms with the 2 fsyncs, "
        "whose share is the disk's"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lab.bench.sessions", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help=f"sizes {QUICK_SIZES} only")
    parser.add_argument("--dir", type=Path, help="where to write the sessions (default: temp)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench-sessions-") as root:
        print(f"python {platform.python_version()} on {platform.machine()}, {platform.system()}")
        print(f"sessions written under {root}", flush=True)
        quick = args.quick
        measure_sizes(Path(root), QUICK_SIZES if quick else SIZES, 50 if quick else 200)
        measure_turns(Path(root), 20 if quick else 100)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
