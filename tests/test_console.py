"""What a person sees: a spinner only on a terminal, compact tool calls, silence when quiet."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llm import Console


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
