"""Benchmarks: how fast the command line starts, and what the loop itself costs per turn.

    python -m lab.bench

Two numbers matter for a learner's experience and both are printed with their target:

* start-up of `python -m v1_tool_loop --help` (target: under 0.3 s), which stays fast
  because provider SDKs are imported only when a live model is built;
* the loop's own overhead per turn (target: under 1 ms), measured on a 100-turn
  replay whose every turn calls a tool that does nothing, so neither a model nor a
  tool is timed, only the bookkeeping between them.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path

from llm import Reply, Usage
from llm.cassette import ReplayModel
from v1_tool_loop.agent import run

STARTUP_TARGET = 0.3  # seconds
OVERHEAD_TARGET = 1e-3  # seconds per turn


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


def verdict(value: float, target: float) -> str:
    return "ok" if value < target else "OVER TARGET"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--startup-runs", type=int, default=10)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--loop-runs", type=int, default=20)
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
