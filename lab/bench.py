"""Benchmarks: how fast the command line starts, what the loop costs per turn, what a read costs.

    python -m lab.bench

Three numbers matter for a learner's experience and each is printed with its target:

* start-up of `python -m v1_tool_loop --help` (target: under 0.3 s), which stays fast
  because provider SDKs are imported only when a live model is built;
* the loop's own overhead per turn (target: under 1 ms), measured on a 100-turn
  replay whose every turn calls a tool that does nothing, so neither a model nor a
  tool is timed, only the bookkeeping between them;
* `read_file` with `limit=2` on a 200 MB log (targets: under 10 ms and 1 MB of memory),
  which stays cheap because the tool streams the file instead of loading it.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from itertools import pairwise
from pathlib import Path

from llm import Reply, Usage
from llm.cassette import ReplayModel
from v1_tool_loop.agent import run
from v1_tool_loop.tools import run_tool

STARTUP_TARGET = 0.3  # seconds
OVERHEAD_TARGET = 1e-3  # seconds per turn
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
    """Replays scripted replies and notes when each call starts."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replay = ReplayModel(replies)
        self.name = "bench"
        self.calls: list[float] = []

    def complete(self, system, messages, tools=None, stop=None, max_tokens=4096) -> Reply:
        self.calls.append(time.perf_counter())
        return self.replay.complete(system, messages, tools, stop, max_tokens)


def loop_overheads(turns: int, runs: int) -> list[float]:
    """Seconds between consecutive model calls, over `runs` replays of `turns` turns."""
    # "noop" is no tool at all: run_tool answers it with an error at once, which is
    # the cheapest path through dispatch and result bookkeeping.
    call = {"type": "tool_use", "id": "t", "name": "noop", "input": {}}
    replies = [Reply([call], "tool_use", Usage(1000, 10)) for _ in range(turns - 1)]
    replies.append(Reply([{"type": "text", "text": "done"}], "end_turn", Usage(1000, 10)))
    gaps = []
    with tempfile.TemporaryDirectory() as workdir:
        for _ in range(runs):
            model = TimedModel(replies)
            run("benchmark", model=model, workdir=Path(workdir), max_turns=turns)
            gaps += [later - earlier for earlier, later in pairwise(model.calls)]
    return gaps


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
    parser = argparse.ArgumentParser(prog="python -m lab.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--startup-runs", type=int, default=10)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--loop-runs", type=int, default=20)
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
