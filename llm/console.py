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
    _turn = threading.Condition(_lock)  # told when a pause ends
    _pausing: threading.Thread | None = None  # the thread of a `--step` pause under way
    _spinning: TextIO | None = None  # where a spinner's line shows now, to be cleared

    @classmethod
    @contextmanager
    def held(cls) -> Iterator[None]:
        """While the person reads and answers a `--step` pause: one pause at a time (two
        children may ask at once), the screen the pause's alone (the other agents' lines
        wait for its end), no spinner, and the time held not counted as the model's."""
        with cls._lock:
            cls._turn.wait_for(lambda: cls._pausing is None)
            cls._pausing = threading.current_thread()
            cls._clear_spinner()
        try:
            yield
        finally:
            with cls._lock:
                cls._pausing = None
                cls._turn.notify_all()

    @classmethod
    def _wait_for_the_screen(cls) -> None:
        """Until no pause of another thread is on the screen (the lock held)."""
        me = threading.current_thread()
        cls._turn.wait_for(lambda: cls._pausing in (None, me))

    @classmethod
    def _clear_spinner(cls) -> None:
        """Take the spinner's line off the screen (the lock held)."""
        if cls._spinning is not None:
            cls._spinning.write("\r\033[K")
            cls._spinning.flush()
            cls._spinning = None

    def __init__(self, quiet: bool = False, out: TextIO | None = None, err: TextIO | None = None):
        self.quiet = quiet
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.color = is_terminal(self.out) and not os.environ.get("NO_COLOR")
        self.spinner = not quiet and is_terminal(self.err)
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
            Console._wait_for_the_screen()
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
        frame, held, held_since = 0, 0.0, None
        while not done.wait(0.1):
            now = time.monotonic()
            with Console._lock:
                if Console._pausing:  # the person is reading a pause: their time, not the model's
                    held_since = held_since or now
                    continue
                if held_since is not None:
                    held, held_since = held + now - held_since, None
                symbol = SPINNER_FRAMES[frame % len(SPINNER_FRAMES)]
                self.err.write(f"\r{symbol} thinking {now - start - held:.1f}s")
                self.err.flush()
                Console._spinning = self.err
            frame += 1
        with Console._lock:
            Console._spinning = self.err
            Console._clear_spinner()


KEY_ARGUMENTS = ("command", "pattern", "path", "description", "query", "name", "text")
NAMES = ("pattern", "path", "name")


def _key_argument(args: dict[str, Any]) -> str:
    """The one argument that says what a call does: the command, the path, … or a count."""
    key = next((key for key in KEY_ARGUMENTS if isinstance(args.get(key), str)), None)
    if key is None and isinstance(args.get("items"), list):
        return counted(len(args["items"]), "item")
    value = json.dumps(args, ensure_ascii=False) if key is None else args[key]
    if key in NAMES:  # a name is one line: its line breaks shown as escapes
        value = value.replace("\r", "\\r").replace("\n", "\\n")
    first = value.strip().splitlines()[0] if value.strip() else ""
    return first[:100] + (" …" if len(first) > 100 or "\n" in value.strip() else "")


def counted(number: int, one: str, many: str = "") -> str:
    """`1 turn`, `2 turns`, `3 replies`: a count with its noun in the right number."""
    return f"{number} {one if number == 1 else many or one + 's'}"


def shown_size(count: int) -> str:
    """A number of bytes as a person reads it: kB below a megabyte, MB from there on."""
    return f"{count / 1e6:,.1f} MB" if count >= 1_000_000 else f"{max(1, round(count / 1e3))} kB"


def shown_path(path: Path) -> str:
    """A path relative to the current folder when it is below it, else absolute: short to
    read, and the same wherever the repository is checked out."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


# --- a console that is not UTF-8 ---------------------------------------------------------

# The course's own characters, and what a console that cannot show them gets instead.
PLAIN = str.maketrans(
    {
        "→": "->", "●": "*", "│": "|", "✗": "x", "─": "-", "≈": "~", "…": "...",
        "·": "-", "—": "-", "–": "-", "►": ">", "◄": "<", "▶": ">", "▲": "^",
        "└": "+", "├": "+", "┐": "+", "┘": "+", "≤": "<=", "−": "-", "×": "x",
        "±": "+-", "√": "v", "’": "'", "：": ":", "；": ";",
        **{frame: "." for frame in SPINNER_FRAMES},
    }
)  # fmt: skip


class PlainStream:
    """A text stream for a console that cannot encode the course's characters (`→`, `●`,
    `│`): each is written as its plain equivalent, and any other character the stream
    cannot encode as its escape, so a run never stops on an encoding error."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(text.translate(PLAIN))

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding, …
        return getattr(self.stream, name)


def fit_streams() -> None:
    """Give stdout and stderr plain characters where their encoding cannot show ours.

    Redirected output on Windows is often cp1252, a misconfigured terminal ASCII:
    printing `→` there would end the run at its first line.
    """
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None or isinstance(stream, PlainStream):
            continue
        try:
            "→●│✗─≈…".encode(stream.encoding or "utf-8")
        except (UnicodeEncodeError, LookupError):
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(errors="backslashreplace")
            setattr(sys, name, PlainStream(stream))


def is_terminal(stream: TextIO) -> bool:
    return hasattr(stream, "isatty") and stream.isatty()


def content_text(content: Any) -> str:
    """A message's content as one text: its words, each tool call, each tool result."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif block.get("type") == "tool_use":
            parts.append(
                f"{block.get('name')}({json.dumps(block.get('input'), ensure_ascii=False)})"
            )
        elif block.get("type") == "tool_result":
            result = block.get("content", "")
            parts.append(result if isinstance(result, str) else json.dumps(result))
    return "\n".join(parts)  # two results of one message on lines of their own
