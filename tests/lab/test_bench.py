"""The benchmarks (`python -m lab bench`, `lab/bench/`) print every figure the docs quote.

Each runs a quick version of a benchmark in a process of its own and reads what it printed:
the figures' shape and, where bytes or counts are the same on every machine, their verdict.
A benchmark measures; it takes seconds, so these are `slow` (CI runs them, README says how)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests import REPO

pytestmark = pytest.mark.slow


def printed(module: str, *flags: str) -> str:
    """What `python -m MODULE FLAGS` printed, run from the course's folder; it must succeed."""
    done = subprocess.run(
        [sys.executable, "-m", module, *flags],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_basics_benchmark_prints_its_figures() -> None:
    out = printed(
        "lab.bench.basics", "--startup-runs", "1", "--turns", "5", "--loop-runs", "1",
        "--estimate-runs", "1",
    )  # fmt: skip
    assert "start-up" in out and "loop overhead per turn: median" in out
    assert "token estimate: " in out and "1,000-message request" in out
    assert "read_file limit=2 on a 200 MB file: median" in out


def test_the_context_benchmark_prints_its_figures() -> None:
    out = printed("lab.bench.context", "--quick")
    assert re.search(r"session of [\d,]+ messages", out), out
    for case in ("under the budget", "stage 1 on"):
        figure = rf"fit \+ note_usage, {case}: [\d.]+ ms median over \d+ turns"
        assert re.search(rf"{figure} \(target < 1 ms: (ok|OVER TARGET)\)", out), out
    figure = r"fit \+ note_usage, stage 1 on, 3,000 messages: [\d.]+ ms median over \d+ turns"
    assert re.search(rf"{figure} \(target < 1 ms: (ok|OVER TARGET)\)", out), out
    assert re.search(r"first fit after a resume \(the estimates read back\): [\d.]+ ms", out), out
    assert re.search(r"one stage-1 view from nothing: [\d.]+ ms", out), out
    assert re.search(r"one stage-2 compaction, model excluded: [\d.]+ ms", out), out
    for size in ("100", "1,000", "2,000"):
        resumed = rf"chapter 4 resumed on +{size} messages: open [\d.]+ s, first prompt [\d.]+ s"
        assert re.search(rf"{resumed}, then [\d.]+ ms per turn", out), out
    for target in (r"first prompt at 2,000: [\d.]+ \(target < 0.1 s", "per turn, 2,000 / 100"):
        assert re.search(rf"  {target}.*: (ok|OVER TARGET)\)", out), out


def test_the_sessions_benchmark_prints_its_figures() -> None:
    out = printed("lab.bench.sessions", "--quick")
    rows = [line.split() for line in out.splitlines() if line.lstrip()[:1].isdigit()]
    # One row per size: messages, file, load, per message, peak memory, × file, append, + fsync.
    assert len(rows) == 2, out
    assert all(row[4] == "ms" and row[6] == "µs" and row[8] == "MB" for row in rows), out
    assert all(row[9].endswith("×") for row in rows), out
    assert "load time per message (target < 50 µs, linear)" in out
    figure = r"session load peak memory against file size \(target < 3.5×\): ×[\d.]+ at [\d,]+"
    assert re.search(rf"{figure}, ×[\d.]+ at [\d,]+ \((ok|OVER TARGET)\)", out)
    assert "store cost per turn at 1,000 messages (2 appends + messages()):" in out


def test_the_view_benchmark_prints_its_figures() -> None:
    """`python -m lab.bench.view` prints the page's size and time at two lengths of run, and
    how the size grows (bytes are the same on every machine, so its verdict is checked)."""
    out = printed("lab.bench.view", "--quick")
    for turns in (50, 250):
        page = rf"page of a {turns}-turn run: [\d.]+ MB \([\d.]+ MB without what was sent\)"
        assert re.search(rf"{page}, written in [\d.]+ s", out), out
    growth = r"5× the turns: ([\d.]+)× the bytes \(target ≤ 6×: ok\), [\d.]+× the time"
    found = re.search(growth, out)
    assert found and float(found.group(1)) < 6, out
