"""What a comparison shows while it runs: one line per run, then one line per finished run.

On a terminal each running run has a live line (chapter, task, turn, tokens so far),
rewritten in place as its turns go by; several runs in parallel keep one line each,
at the bottom.  A finished run leaves one line above them.  When the output is not a
terminal (a log file, a pipe, CI), only the finished lines are written, plain.

It writes to stderr, so that `python -m lab compare > tables.md` keeps only the tables.
"""

from __future__ import annotations

import shutil
import sys
import threading
from typing import TextIO

UP_AND_CLEAR = "\x1b[{}F\x1b[J"  # cursor up N lines to their start, clear to the end


class Progress:
    """The live lines of the runs in progress, and a line for each run that finished."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stderr
        self.live = hasattr(self.out, "isatty") and self.out.isatty()
        self.running: dict[str, str] = {}  # label -> where it is now
        self.drawn = 0  # live lines on screen below the finished ones
        self.lock = threading.Lock()  # parallel runs report from their own threads

    def turn(self, label: str, turn: int, tokens: int, estimated: bool) -> None:
        """The run `label` is waiting for the reply of turn `turn`, `tokens` spent so far."""
        if self.live:
            about = "≈" if estimated else ""
            self._draw(label, f"turn {turn} · {about}{tokens:,} tokens")

    def finish(self, label: str, line: str) -> None:
        """The run is over: its live line goes, `line` stays."""
        self._draw(label, None, f"{label} · {line}")

    def _draw(self, label: str, now: str | None, finished: str = "") -> None:
        with self.lock:
            if now is None:
                self.running.pop(label, None)
            else:
                self.running[label] = now
            if not self.live:
                self.out.write(f"{finished}\n" if finished else "")
                self.out.flush()
                return
            width = shutil.get_terminal_size().columns - 1  # a wrapped live line breaks the count
            lines = [f"{finished}\n"] if finished else []
            lines += [f"  {name} · {where}"[:width] + "\n" for name, where in self.running.items()]
            erase = UP_AND_CLEAR.format(self.drawn) if self.drawn else ""
            self.out.write(erase + "".join(lines))
            self.out.flush()
            self.drawn = len(self.running)
