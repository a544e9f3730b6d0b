"""What a comparison shows while it runs: one line per run, then one line per finished run.

On a terminal each running run has a live line (chapter, task, turn, tokens so far),
rewritten in place as its turns go by; several runs in parallel keep one line each,
at the bottom.  A finished run leaves one line above them.  When the output is not a
terminal (a log file, a pipe, CI), only the finished lines are written, plain.

A reply that keeps a run waiting longer than SLOW_S seconds says so: on a terminal its
live line counts the seconds; elsewhere one line is written for it, so that a log shows
where a live comparison spent its time.

It writes to stderr, so that `python -m lab compare > tables.md` keeps only the tables.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import threading
import time
from typing import TextIO

from ..plots import COLOURS

UP_AND_CLEAR = "\x1b[{}F\x1b[J"  # cursor up N lines to their start, clear to the end
SLOW_S = 30  # a reply awaited longer is slow: a local model on a CPU, or a provider queueing
TICK_S = 1.0  # how often the waiting time of a slow reply is brought up to date


class Progress:
    """The live lines of the runs in progress, and a line for each run that finished."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stderr
        self.live = hasattr(self.out, "isatty") and self.out.isatty()
        self.colour = self.live and not os.environ.get("NO_COLOR")
        self.running: dict[str, str] = {}  # label -> where it is now
        self.drawn = 0  # live lines on screen below the finished ones
        self.lock = threading.Lock()  # parallel runs report from their own threads
        self.waiting: dict[str, tuple[str, float]] = {}  # label -> its line, awaited since
        self.told_slow: set[str] = set()  # off a terminal: the replies already said to be slow

    def turn(self, label: str, turn: int, tokens: int, estimated: bool) -> None:
        """The run `label` is waiting for the reply of turn `turn`, `tokens` spent so far."""
        about = "≈" if estimated else ""
        where = f"turn {turn} · {about}{tokens:,} tokens"
        with self.lock:
            self.waiting[label] = (where, time.monotonic())
            self.told_slow.discard(label)
        if self.live:
            self._draw(label, where)

    def tick(self, now: float | None = None) -> None:
        """Say which replies are slow: how long each has been awaited, past SLOW_S seconds."""
        now = time.monotonic() if now is None else now
        with self.lock:
            slow = {
                label: (where, round(now - since))
                for label, (where, since) in self.waiting.items()
                if now - since >= SLOW_S and label not in self.told_slow
            }
            if not self.live:
                self.told_slow.update(slow)
        for label, (where, seconds) in slow.items():
            line = f"{where} · slow reply: waiting {seconds} s"
            if self.live:
                self._draw(label, line)
            else:
                self._draw(label, None, f"{label} · {line}", keep_running=True)

    def ticking(self) -> threading.Event:
        """Call `tick` every TICK_S seconds on a thread of its own, until the event is set."""
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(TICK_S):
                self.tick()

        threading.Thread(target=loop, name="progress-tick", daemon=True).start()
        return stop

    def finish(self, label: str, line: str) -> None:
        """The run is over: its live line goes, `line` stays."""
        with self.lock:
            self.waiting.pop(label, None)
        self._draw(label, None, f"{label} · {line}")

    def _draw(
        self, label: str, now: str | None, finished: str = "", keep_running: bool = False
    ) -> None:
        with self.lock:
            if now is None and not keep_running:
                self.running.pop(label, None)
            else:
                self.running[label] = now
            if not self.live:
                self.out.write(f"{finished}\n" if finished else "")
                self.out.flush()
                return
            width = shutil.get_terminal_size().columns - 1  # a wrapped live line breaks the count
            lines = [f"{self._coloured(finished)}\n"] if finished else []
            lines += [f"  {name} · {where}"[:width] + "\n" for name, where in self.running.items()]
            erase = UP_AND_CLEAR.format(self.drawn) if self.drawn else ""
            self.out.write(erase + "".join(lines))
            self.out.flush()
            self.drawn = len(self.running)

    def _coloured(self, line: str) -> str:
        """The chapter that starts a finished line in its colour, the page's and the
        notebooks' (lab/plots.py), so a chapter looks the same everywhere."""
        match = re.match(r"v(\d+)_\w+", line)
        if not self.colour or not match:
            return line
        red, green, blue = (
            int(COLOURS[int(match[1]) % len(COLOURS)][i : i + 2], 16) for i in (1, 3, 5)
        )
        return f"\x1b[1;38;2;{red};{green};{blue}m{match[0]}\x1b[0m{line[match.end() :]}"
