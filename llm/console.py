"""What a person sees while an agent runs: its words, each tool call, a glimpse of each result.

Kept out of the agents' loops so that `agent.py` shows the idea and not the
printing.  Progress goes to stdout so it can be piped into a file; the spinner goes
to stderr and only when stderr is a terminal, so piped output stays clean.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

PREVIEW_LINES = 4
SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

# Characters a terminal obeys instead of showing: ESC starts colours and cursor moves,
# "\r" rewrites the line, U+202E turns text around.  They are printed as their Python
# escapes (ESC as \x1b), so a tool's output or the model's words cannot act on the
# terminal; tab and newline keep their meaning.  The model still gets the real text.
CONTROLS = [*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, *range(0x202A, 0x202F)]
CONTROLS += range(0x2066, 0x206A)  # the bidirectional isolates, like U+202A-U+202E
ESCAPED = {code: repr(chr(code))[1:-1] for code in CONTROLS if chr(code) not in "\t\n"}


def visible(text: str) -> str:
    r"""`text` with control characters shown escaped; a Windows "\r\n" counts as a newline.

    A lone surrogate (a model can send one) is shown as its escape too: printed as it
    is, it would stop the run with an encoding error.
    """
    shown = text.replace("\r\n", "\n").translate(ESCAPED)
    return shown.encode("utf-8", "backslashreplace").decode("utf-8")


class Console:
    """Prints a run compactly; `quiet=True` prints nothing (the final answer is the caller's)."""

    # One lock for every console: agents running side by side (chapter 3's children)
    # print whole lines, never halves of two lines mixed.
    _lock = threading.Lock()

    def __init__(self, quiet: bool = False, out: TextIO | None = None, err: TextIO | None = None):
        self.quiet = quiet
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.color = _is_terminal(self.out) and not os.environ.get("NO_COLOR")
        self.spinner = not quiet and _is_terminal(self.err)
        self.prefix = ""

    def child(self, label: str) -> Console:
        """A console for an agent working on behalf of this one: every line indented and
        labelled, so the output of children running at once stays readable."""
        child = Console(self.quiet, self.out, self.err)
        child.color, child.spinner = self.color, False  # one spinner, the parent's
        child.prefix = f"{self.prefix}    {label} │ "
        return child

    def _print(self, text: str, style: str = "") -> None:
        if self.quiet:
            return
        codes = {"dim": "2", "bold": "1", "red": "31", "cyan": "36", "yellow": "33"}
        lines = []
        for line in visible(text).split("\n"):
            if self.color and style:
                line = f"\033[{codes[style]}m{line}\033[0m"
            lines.append(self.prefix + line)
        with Console._lock:
            print("\n".join(lines), file=self.out, flush=True)

    def note(self, text: str) -> None:
        """A line about the run itself (offline replay, work directory, stop reason)."""
        self._print(text, "dim")

    def warn(self, text: str) -> None:
        """Something went wrong that the model will be told about (a format error, say)."""
        self._print(f"! {text}", "yellow")

    def say(self, text: str) -> None:
        """The model's own words."""
        if text.strip():
            self._print(f"● {text.strip()}", "bold")

    def tool_call(self, name: str, args: dict[str, Any]) -> None:
        self._print(f"→ {name}  {_key_argument(args)}", "cyan")

    def tool_result(self, content: str, is_error: bool) -> None:
        # Split at newlines only: \f or U+2028 are shown escaped, not as line breaks.
        lines = visible(content.rstrip("\n")).split("\n") if content.strip() else ["(no output)"]
        shown = lines[:PREVIEW_LINES]
        if len(lines) > PREVIEW_LINES:
            shown.append(f"… (+{counted(len(lines) - PREVIEW_LINES, 'line')})")
        mark = "✗" if is_error else "│"
        for line in shown:
            self._print(f"  {mark} {line[:160]}", "red" if is_error else "dim")

    def listing(self, text: str) -> None:
        """A short block the person should see whole, such as the agent's plan: every line."""
        for line in text.splitlines():
            self._print(f"  {line}")

    @contextmanager
    def thinking(self) -> Iterator[None]:
        """Show a spinner with elapsed seconds while the model is working."""
        if not self.spinner:
            yield
            return
        done = threading.Event()
        thread = threading.Thread(target=self._spin, args=(done,), daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()

    def _spin(self, done: threading.Event) -> None:
        start = time.monotonic()
        frame = 0
        while not done.wait(0.1):
            elapsed = time.monotonic() - start
            symbol = SPINNER_FRAMES[frame % len(SPINNER_FRAMES)]
            self.err.write(f"\r{symbol} thinking {elapsed:.1f}s")
            self.err.flush()
            frame += 1
        self.err.write("\r\033[K")
        self.err.flush()


KEY_ARGUMENTS = ("command", "pattern", "path", "description", "query", "name", "text")


def _key_argument(args: dict[str, Any]) -> str:
    """The one argument that says what a call does: the command, the path, … or a count."""
    value = next((args[key] for key in KEY_ARGUMENTS if isinstance(args.get(key), str)), None)
    if value is None and isinstance(args.get("items"), list):
        return counted(len(args["items"]), "item")
    if value is None:
        value = json.dumps(args, ensure_ascii=False)
    first = value.strip().splitlines()[0] if value.strip() else ""
    return first[:100] + (" …" if len(first) > 100 or "\n" in value.strip() else "")


def counted(number: int, one: str, many: str = "") -> str:
    """`1 turn`, `2 turns`, `3 replies`: a count with its noun in the right number."""
    return f"{number} {one if number == 1 else many or one + 's'}"


def shown_path(path: Path) -> str:
    """A path relative to the current folder when it is below it, else absolute: short to
    read, and the same wherever the repository is checked out."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _is_terminal(stream: TextIO) -> bool:
    return hasattr(stream, "isatty") and stream.isatty()
