"""What a person sees: a spinner only on a terminal, compact tool calls, silence when quiet."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from llm import Console
from llm.stepping import Stepping


class Terminal(io.StringIO):
    """A text stream that says it is a terminal, as sys.stderr does in a shell."""

    def isatty(self) -> bool:
        return True


def test_spinner_shows_elapsed_seconds_on_a_terminal_and_clears_itself() -> None:
    out, err = io.StringIO(), Terminal()
    shown = re.compile(r"thinking \d+\.\ds")
    with Console(out=out, err=err).thinking():
        deadline = time.monotonic() + 600  # a busy machine may start the spinner late
        while not shown.search(err.getvalue()) and time.monotonic() < deadline:
            time.sleep(0.01)
    assert shown.search(err.getvalue()), err.getvalue()
    assert err.getvalue().endswith("\r\033[K")
    assert out.getvalue() == ""


def test_no_spinner_when_piped_or_quiet() -> None:
    for console, err in [
        (lambda e: Console(out=io.StringIO(), err=e), io.StringIO()),
        (lambda e: Console(quiet=True, out=io.StringIO(), err=e), Terminal()),
    ]:
        with console(err).thinking():
            time.sleep(0.25)
        assert err.getvalue() == ""


def test_tool_calls_and_results_are_compact() -> None:
    out = io.StringIO()
    console = Console(out=out, err=io.StringIO())
    console.tool_call("bash", {"command": "pytest -q\necho second line", "timeout": 5})
    console.tool_result("\n".join(f"line {n}" for n in range(1, 11)), is_error=False)
    console.tool_result("boom", is_error=True)
    lines = out.getvalue().splitlines()
    assert lines[0] == "→ bash  pytest -q …"
    assert lines[1:6] == [
        "  │ line 1",
        "  │ line 2",
        "  │ line 3",
        "  │ line 4",
        "  │ … (+6 lines)",
    ]
    assert lines[6] == "  ✗ boom"


def test_quiet_console_prints_nothing() -> None:
    out = io.StringIO()
    console = Console(quiet=True, out=out, err=io.StringIO())
    console.say("hello")
    console.tool_call("read_file", {"path": "a.txt"})
    console.tool_result("text", is_error=False)
    console.note("note")
    assert out.getvalue() == ""


def test_a_lone_surrogate_from_a_model_is_shown_escaped_not_a_crash() -> None:
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8")  # strict, like a real terminal's stdout
    Console(out=out, err=io.StringIO()).say("broken \udc80 text")
    out.flush()
    assert raw.getvalue().decode() == "● broken \\udc80 text\n"


@pytest.mark.slow  # end to end: see tests/conftest.py
@pytest.mark.parametrize("encoding", ["ascii", "cp1252"])
@pytest.mark.parametrize(
    "chapter", ["v0_react_text", "v1_tool_loop", "v2_todos", "v3_subagents", "v4_memory"]
)
def test_every_demo_runs_on_a_console_that_is_not_utf8(
    chapter: str, encoding: str, tmp_path: Path
) -> None:
    """Output redirected on Windows is often cp1252: the course's `→ ● │` fall back to
    plain characters instead of ending the run at its first line."""
    environment = {**os.environ, "PYTHONIOENCODING": encoding, "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", chapter, "--demo"],
        cwd=tmp_path, capture_output=True, env=environment, timeout=600,
    )  # fmt: skip
    out, err = done.stdout.decode(encoding), done.stderr.decode(encoding)
    assert done.returncode == 0 and "Traceback" not in err, err[-600:]
    assert "\n-> " in out and "── done" not in out and "-- done" in out


def test_a_name_with_a_line_break_is_shown_on_one_line() -> None:
    out = io.StringIO()
    console = Console(out=out, err=io.StringIO())
    console.tool_call("write_file", {"path": "notes\nDONE: all tests pass.txt", "content": "x"})
    console.tool_call("bash", {"command": "ls\npytest"})
    assert out.getvalue().splitlines() == [
        "→ write_file  notes\\nDONE: all tests pass.txt",
        "→ bash  ls …",
    ]


class Keys(io.StringIO):
    """Keys from a pipe, read by whichever agent pauses; each line waits `delay` first."""

    def __init__(self, text: str, delay: float = 0.0) -> None:
        super().__init__(text)
        self.delay, self.lock = delay, threading.Lock()

    def readline(self, size: int = -1) -> str:
        time.sleep(self.delay)
        with self.lock:
            return super().readline(size)


class AtOnce:
    """A model that answers at once: the spinner's seconds are the pause's, if any."""

    name = "at-once"

    def complete(self, system, messages, tools=None, stop=None, max_tokens=4096) -> str:
        return "reply"


def test_a_step_pause_clears_the_spinner_and_is_not_counted_as_the_models_time() -> None:
    """`--step` pauses inside the call the spinner is timing: the spinner's line is taken
    off before the pause is printed, stays off while the person reads, and its seconds
    leave the pause out."""
    screen = Terminal()  # stdout and stderr are one terminal, as in a shell
    stepping = Stepping(AtOnce(), keys=Keys("\n", delay=1.5), out=screen)  # reads 1.5 s
    with Console(out=screen, err=screen).thinking():
        time.sleep(0.35)  # the spinner shows
        stepping.complete("system", [{"role": "user", "content": "hi"}])
        time.sleep(0.35)
    shown = screen.getvalue()
    before, rest = shown.split("── about to send", 1)
    pause, after = rest.split("(Enter)", 1)
    assert "thinking" in before and before.endswith("\r\033[K"), before
    assert "thinking" not in pause
    seconds = [float(s) for s in re.findall(r"thinking (\d+\.\d)s", shown)]
    assert seconds and max(seconds) < 1.2, seconds  # 0.7 s of spinning, the 1.5 s pause left out


def test_two_children_that_pause_at_once_pause_one_after_the_other_and_c_frees_both() -> None:
    """Chapter 3's children ask from their own threads at the same moment: one pause is on
    the screen at a time, and `c` at it runs the other child on without a pause of its own."""
    screen = Terminal()
    parent = Stepping(AtOnce(), keys=Keys("c\n"), out=screen)
    children = [parent.child(key) for key in ("toolu_1", "toolu_2")]
    threads = [
        threading.Thread(
            target=child.complete, args=("system", [{"role": "user", "content": "go"}])
        )
        for child in children
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads), "a child still waits for a key"
    assert screen.getvalue().count("about to send") == 1, screen.getvalue()
    assert "no more input" not in screen.getvalue()


def test_another_agents_lines_wait_for_the_end_of_a_pause() -> None:
    """What a child prints while the person reads another's pause comes after the answer,
    never between the pause's lines and its prompt."""
    screen = Terminal()
    stepping = Stepping(AtOnce(), keys=Keys("\n", delay=0.5), out=screen)
    pausing = threading.Thread(
        target=stepping.complete, args=("system", [{"role": "user", "content": "go"}])
    )
    pausing.start()
    deadline = time.monotonic() + 60
    while "about to send" not in screen.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    Console(out=screen, err=io.StringIO()).child("toolu_2").say("the other child's line")
    pausing.join(timeout=60)
    shown = screen.getvalue()
    assert shown.index("(Enter)") < shown.index("the other child's line"), shown


def test_a_pause_shows_an_old_message_rewritten_and_the_new_ones() -> None:
    """Chapter 4's stage 1 cuts one old result to a preview at each turn: the pause says
    which message was rewritten and shows it (~) before the added ones (+), instead of
    calling the whole history rewritten; a history shortened by a summary is one."""
    screen = Terminal()
    stepping = Stepping(AtOnce(), keys=Keys("\n" * 3), out=screen)
    first = [{"role": "user", "content": "go"}, {"role": "user", "content": "a long result"}]
    stepping.complete("system", first)
    cut = [first[0], {"role": "user", "content": "a preview"}]
    cut += [{"role": "assistant", "content": "next"}, {"role": "user", "content": "more"}]
    stepping.complete("system", cut)
    pause = screen.getvalue().split("about to send")[2]
    assert "added since the last call: 2; rewritten (~): message 2" in pause
    marks = [line.split()[0] for line in pause.splitlines() if "tokens  " in line]
    assert marks == ["~", "+", "+"], pause
    stepping.complete("system", [{"role": "user", "content": "a summary"}])
    assert "the messages were rewritten since the last call (4 before)" in screen.getvalue()
