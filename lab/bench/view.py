"""Benchmark of the run viewer on long runs: how big the page gets and how long it takes.

    python -m lab.bench.view [--quick]

A live run can go on for hundreds of turns, and every turn's "what was sent" fold shows
a request that holds the whole conversation so far.  Printed, for one synthetic run of
chapter 1 at 100 and at 500 turns (`long_run`: a tool call and a result of a few hundred
characters per turn, every call sending every message before it, as the loop does):

* the page's size, and its size with the "what was sent" data left out;
* the time `render_page` takes to write it (the best of `--runs`);
* how both grow from 100 to 500 turns.  The target is a page that grows with the run:
  five times the turns should make at most six times the bytes (a page that repeats
  every earlier message at every turn grows with the square of the turns, 25 times
  here), and the page of 500 turns stays under 5 MB and is written in under 5 s.  The
  time is printed without a target for its growth: the records list every message of
  every request by number (lab/compare/runs.py), a list that does grow with the square, and
  the page is written from it.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time
from typing import Any

from lab.compare.report import FORMAT
from lab.compare.runs import sent_requests
from lab.view import render_page
from llm.types import Message
from v1_tool_loop.agent import SYSTEM
from v1_tool_loop.tools import TOOLS

TURNS = (100, 500)
QUICK_TURNS = (50, 250)
GROWTH_TARGET = 6.0  # at most this many times the bytes for 5 times the turns
SIZE_TARGET = 5_000_000  # bytes of the page of the longer run
TIME_TARGET = 5.0  # seconds to write it
WORDS = "def return self None import test assert value error file line path the a of to and "
WORDS += "in is for with passed failed ok result config 模型 会话 工具 0 1 42 3.14 {} [] :"


def long_run(turns: int, seed: int = 0) -> dict[str, Any]:
    """A record of chapter 1 on a task of `turns` turns, with its requests as a live run
    keeps them (lab/compare/runs.py `sent_requests`): each call sends every message before it."""
    rng = random.Random(seed)
    messages: list[Message] = [{"role": "user", "content": "Tidy every module of the package."}]
    schemas = json.dumps(TOOLS, sort_keys=True)
    sent = []
    for turn in range(1, turns):
        sent.append((SYSTEM, schemas, [json.dumps(m, sort_keys=True) for m in messages]))
        call_id = f"toolu_{turn:04d}"
        read = {"path": f"m{turn}.py"}
        call = {"type": "tool_use", "id": call_id, "name": "read_file", "input": read}
        output = " ".join(rng.choices(WORDS.split(), k=rng.randint(40, 160)))
        said = {"type": "text", "text": f"Reading module {turn} next."}
        messages.append({"role": "assistant", "content": [said, call]})
        result = {"type": "tool_result", "tool_use_id": call_id, "content": output}
        messages.append({"role": "user", "content": [result]})
    sent.append((SYSTEM, schemas, [json.dumps(m, sort_keys=True) for m in messages]))
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "All tidy."}]})
    return {
        "chapter": "v1_tool_loop", "task": "long-run", "run": 1, "provenance": "scripted",
        "model": "replay:synthetic", "solved": True, "outcome": "solved", "verdict": "synthetic",
        "stop": "done", "error": "", "turns": turns, "tool_calls": turns - 1,
        "input_tokens": 0, "output_tokens": 0, "estimated": True, "peak_context": 0,
        "context_per_turn": [400 + 150 * n for n in range(turns)], "wall_s": 0.0,
        "counts": {}, "messages": messages, "details": {},
        "requests": sent_requests(sent, messages),
    }  # fmt: skip


def document_of(*records: dict[str, Any]) -> dict[str, Any]:
    """Records as `python -m lab compare --json` writes them."""
    return {
        "format": FORMAT, "created_at": "2025-06-01T09:30:00Z", "model": None,
        "window": None, "interrupted": False, "records": list(records),
    }  # fmt: skip


def page_cost(record: dict[str, Any], runs: int) -> tuple[int, int, float]:
    """The page's bytes, its bytes without the requests, and the best time to write it."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        page = render_page(document_of(record))
        times.append(time.perf_counter() - start)
    bare = render_page(document_of({**record, "requests": {}}))
    return len(page.encode("utf-8")), len(bare.encode("utf-8")), min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lab.bench.view", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help=f"runs of {QUICK_TURNS} turns, once")
    parser.add_argument("--runs", type=int, default=3, help="writes timed per size (best kept)")
    args = parser.parse_args(argv)
    sizes, runs = (QUICK_TURNS, 1) if args.quick else (TURNS, args.runs)
    print(f"python {platform.python_version()} on {platform.machine()}, {platform.system()}")
    figures = []
    for turns in sizes:
        size, bare, seconds = page_cost(long_run(turns), runs)
        figures.append((size, seconds))
        print(
            f"page of a {turns}-turn run: {size / 1e6:.2f} MB ({bare / 1e6:.2f} MB without "
            f"what was sent), written in {seconds:.2f} s",
            flush=True,
        )
    (small, fast), (large, slow) = figures
    times = sizes[1] // sizes[0]
    grows, slows = large / small, slow / max(fast, 1e-9)
    within = "ok" if grows <= GROWTH_TARGET else "OVER TARGET"
    print(
        f"{times}× the turns: {grows:.1f}× the bytes (target ≤ {GROWTH_TARGET:.0f}×: {within}), "
        f"{slows:.1f}× the time"
    )
    if not args.quick:
        ok = "ok" if large < SIZE_TARGET and slow < TIME_TARGET else "OVER TARGET"
        print(
            f"the {sizes[1]}-turn page: {large / 1e6:.2f} MB in {slow:.2f} s  (target < "
            f"{SIZE_TARGET / 1e6:.0f} MB and < {TIME_TARGET:.0f} s: {ok})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
