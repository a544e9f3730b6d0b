"""Benchmarks: start-up, the loop's own cost per turn, the token estimate, and a streamed read.

    python -m lab.bench.basics

These numbers matter for a learner's experience; each is printed with its target:

* start-up of `python -m v1_tool_loop --help` (target: under 0.3 s), which stays fast
  because provider SDKs are imported only when a live model is built;
* the loop's own overhead per turn (target: under 1 ms), measured on a 100-turn
  replay whose every turn calls a tool that does nothing, so neither a model nor a
  tool is timed, only the bookkeeping between them;
* the token estimate of `llm/tokens.py`, which chapter 4 runs before every call on
  sessions of thousands of messages: its speed per 1,000 characters of mixed text,
  and the time to estimate a whole 1,000-message request with nothing cached;
* `read_file` with `limit=2` on a 200 MB log (targets: under 10 ms and 1 MB of memory),
  which stays cheap because the tool streams the file instead of loading it.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from itertools import cycle
from pathlib import Path

from lab.token_check import corpus
from llm import Message, Reply
from llm.cassette import ReplayModel
from llm.tokens import estimate_request, estimate_text
from v1_tool_loop.agent import SYSTEM, run
from v1_tool_loop.tools import TOOLS, run_tool

STARTUP_TARGET = 0.3  # seconds
OVERHEAD_TARGET = 1e-3  # seconds per turn
# Chapter 4 estimates its whole request before every call; a live call takes seconds.
ESTIMATE_TARGET = 100e-6  # seconds per 1,000 characters
REQUEST_TARGET = 0.1  # seconds for a request of 1,000 messages, nothing cached
READ_TIME_TARGET = 10e-3  # seconds for read_file(limit=2)
READ_MEMORY_TARGET = 1_000_000  # bytes allocated at most during read_file(limit=2)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def startup_times(runs: int) -> list[float]:
    """Wall time of `python -m v1_tool_loop --help`, one fresh interpreter per run."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "v1_tool_loop", "--help"], check=True, capture_output=True
        )
        times.append(time.perf_counter() - start)
    return times


class TimedModel:
    """Replays scripted replies and notes when each call starts and when it returns.

    The replay's own work (it estimates the usage of every request) is the model's
    time, not the loop's, so the gaps are measured from one return to the next call.
    """

    def __init__(self, replies: list[Reply]) -> None:
        self.replay = ReplayModel(replies)
        self.name = "bench"
        self.calls: list[float] = []
        self.returns: list[float] = []

    def complete(self, system, messages, tools=None, stop=None, max_tokens=4096) -> Reply:
        self.calls.append(time.perf_counter())
        reply = self.replay.complete(system, messages, tools, stop, max_tokens)
        self.returns.append(time.perf_counter())
        return reply


def loop_overheads(turns: int, runs: int) -> list[float]:
    """Seconds between consecutive model calls, over `runs` replays of `turns` turns."""
    # "noop" is no tool at all: run_tool answers it with an error at once, which is
    # the cheapest path through dispatch and result bookkeeping.
    call = {"type": "tool_use", "id": "t", "name": "noop", "input": {}}
    replies = [Reply([call], "tool_use") for _ in range(turns - 1)]
    replies.append(Reply([{"type": "text", "text": "done"}], "end_turn"))
    gaps = []
    with tempfile.TemporaryDirectory() as workdir:
        for _ in range(runs):
            model = TimedModel(replies)
            run("benchmark", model=model, workdir=Path(workdir), max_turns=turns)
            returned, called = model.returns[:-1], model.calls[1:]
            gaps += [call - ret for ret, call in zip(returned, called, strict=True)]
    return gaps


def estimate_speed(runs: int) -> tuple[float, int]:
    """Seconds per 1,000 characters of `estimate_text` over the mixed texts of lab.token_check."""
    texts = [text for samples in corpus().values() for text in samples]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for text in texts:
            estimate_text(text)
        times.append(time.perf_counter() - start)
    characters = sum(map(len, texts))
    return statistics.median(times) / characters * 1000, characters


def session(length: int) -> list[Message]:
    """A session of `length` messages: a task, then tool calls and results of the course's texts."""
    texts = cycle(text for samples in corpus().values() for text in samples)
    messages: list[Message] = [{"role": "user", "content": next(texts)}]
    for turn in range(length // 2):
        call = {"type": "tool_use", "id": f"t{turn}", "name": "read_file", "input": {"path": "a"}}
        result = {"type": "tool_result", "tool_use_id": call["id"], "content": next(texts)}
        messages.append(
            {"role": "assistant", "content": [{"type": "text", "text": next(texts)}, call]}
        )
        messages.append({"role": "user", "content": [result]})
    return messages[:length]


def request_cost(length: int, runs: int) -> tuple[float, int]:
    """Seconds to estimate a request of `length` messages, nothing cached, and its characters."""
    messages = session(length)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        estimate_request(SYSTEM, messages, TOOLS)
        times.append(time.perf_counter() - start)
    return statistics.median(times), len(json.dumps(messages, ensure_ascii=False))


def write_log(path: Path, size: int) -> None:
    """A text file of `size` bytes or a little more, numbered lines like a program's log."""
    block = b"".join(b"%07d INFO request handled in 12 ms\n" % n for n in range(10_000))
    with open(path, "wb") as file:
        for _ in range(-(-size // len(block))):
            file.write(block)


def read_costs(megabytes: int, runs: int) -> tuple[list[float], int]:
    """Seconds per run, and peak bytes allocated in one traced run, of read_file(limit=2)."""
    with tempfile.TemporaryDirectory() as workdir:
        write_log(Path(workdir) / "big.log", megabytes * 1_000_000)
        args = {"path": "big.log", "limit": 2}
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            result = run_tool("read_file", args, workdir)
            times.append(time.perf_counter() - start)
        tracemalloc.start()  # a separate run: tracing slows the code it watches
        run_tool("read_file", args, workdir)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    if result.is_error:
        raise SystemExit(f"read_file failed: {result.content}")
    return times, peak


def verdict(value: float, target: float) -> str:
    return "ok" if value < target else "OVER TARGET"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lab.bench.basics", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--startup-runs", type=int, default=10)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--loop-runs", type=int, default=20)
    parser.add_argument("--estimate-runs", type=int, default=10)
    parser.add_argument("--read-mb", type=int, default=200)
    parser.add_argument("--read-runs", type=int, default=20)
    args = parser.parse_args(argv)

    print(f"python {platform.python_version()} on {platform.machine()}, {platform.system()}")
    print(f"measuring start-up ({args.startup_runs} runs) …", flush=True)
    startup = startup_times(args.startup_runs)
    median = statistics.median(startup)
    print(
        f"start-up  `python -m v1_tool_loop --help`: median {median:.3f} s, "
        f"p95 {percentile(startup, 0.95):.3f} s  (target < {STARTUP_TARGET} s: "
        f"{verdict(median, STARTUP_TARGET)})"
    )
    print(f"measuring loop overhead ({args.loop_runs} × {args.turns} turns) …", flush=True)
    gaps = loop_overheads(args.turns, args.loop_runs)
    median = statistics.median(gaps)
    print(
        f"loop overhead per turn: median {median * 1e3:.3f} ms, "
        f"p95 {percentile(gaps, 0.95) * 1e3:.3f} ms  (target < {OVERHEAD_TARGET * 1e3:.0f} ms: "
        f"{verdict(median, OVERHEAD_TARGET)})"
    )
    per_thousand, _ = estimate_speed(args.estimate_runs)
    print(
        f"token estimate: {per_thousand * 1e6:.1f} µs per 1,000 characters of mixed English, "
        f"Chinese, code and JSON  (target < {ESTIMATE_TARGET * 1e6:.0f} µs: "
        f"{verdict(per_thousand, ESTIMATE_TARGET)})"
    )
    seconds, characters = request_cost(1000, args.estimate_runs)
    print(
        f"token estimate of a 1,000-message request ({characters:,} characters): "
        f"{seconds * 1e3:.1f} ms, {seconds / 1000 * 1e6:.0f} µs a message  "
        f"(target < {REQUEST_TARGET * 1e3:.0f} ms: {verdict(seconds, REQUEST_TARGET)})"
    )
    print(f"measuring read_file on a {args.read_mb} MB file ({args.read_runs} runs) …", flush=True)
    times, peak = read_costs(args.read_mb, args.read_runs)
    median = statistics.median(times)
    within = median < READ_TIME_TARGET and peak < READ_MEMORY_TARGET
    print(
        f"read_file limit=2 on a {args.read_mb} MB file: median {median * 1e3:.2f} ms, "
        f"peak memory {peak / 1e3:.0f} KB  (target < {READ_TIME_TARGET * 1e3:.0f} ms and "
        f"< {READ_MEMORY_TARGET / 1e6:.0f} MB: {'ok' if within else 'OVER TARGET'})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
