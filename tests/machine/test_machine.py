"""The machine boundary on systems other than this one, as far as this machine can show it.

The suite runs on Linux.  These tests take away, in a child process, what other
systems lack (`tests/posixless.py`: no `fcntl`, no process groups, no `O_NOFOLLOW`,
`O_NONBLOCK`, `pread`, `pwrite`, no owner calls, no user ids, and with `--no-proc` no
/proc), and check that the course still runs the same; that a machine without bash
gets one clear error; that a symlinked temporary folder (macOS' /tmp) changes
nothing; and that a checkout with Windows' line endings reads back byte for byte.
What they cannot show (the real msvcrt lock, Git for Windows' bash, psutil's macOS
and Windows backends) is listed in the course's README.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from llm.cassette import ReplayModel
from machine import ToolError
from machine.commands import NO_BASH, find_bash
from machine.files import read_text, write_text
from tests import REPO
from tests.v1_tool_loop.test_tools import is_running
from v1_tool_loop.agent import run
from v1_tool_loop.sandbox import safe_path

POSIXLESS = [sys.executable, str(REPO / "tests" / "posixless.py")]
CHAPTERS = ["v0_react_text", "v1_tool_loop", "v2_todos", "v3_subagents", "v4_memory"]
BROKEN = re.compile(r"AttributeError|ImportError|has no attribute|Traceback|failed unexpectedly")


def shown(done: subprocess.CompletedProcess[str]) -> str:
    return f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


# --- without POSIX's extras ---------------------------------------------------------------


@pytest.mark.slow  # end to end: see tests/conftest.py
def test_without_posix_the_comparison_solves_every_featured_task() -> None:
    done = subprocess.run(
        [*POSIXLESS, "--no-proc", "-m", "lab", "compare"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, shown(done)
    rows = [line for line in done.stdout.splitlines() if re.match(r"\| v\d_", line)]
    assert len(rows) == 4 * len(CHAPTERS), done.stdout
    assert all(row.split("|")[2].strip() == "yes" for row in rows), done.stdout
    assert not BROKEN.search(done.stdout + done.stderr), shown(done)


def normalised(output: str) -> Counter[str]:
    """The lines of a demo run, without what changes from run to run, in any order.

    Chapter 3's children run side by side, so their lines interleave differently.
    """
    output = re.sub(r"demo-\d+", "demo-N", output)
    output = re.sub(r"(Ran \d+ tests? in )\d+\.\d+s", r"\1Ts", output)
    output = re.sub(r"\d{8}-\d{6}-[0-9a-f]{6}", "SESSION", output)
    return Counter(output.splitlines())


@pytest.mark.slow  # end to end: see tests/conftest.py
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_without_posix_every_demo_prints_the_same_turns(chapter: str, tmp_path: Path) -> None:
    """Both runs work in the same folder (tool output holds its path, and so do the tokens)."""
    runs = {}
    temporary = tmp_path / "t"
    for name, prefix in [("here", [sys.executable]), ("posixless", [*POSIXLESS, "--no-proc"])]:
        shutil.rmtree(temporary, ignore_errors=True)
        temporary.mkdir()
        done = subprocess.run(
            [*prefix, "-m", chapter, "--demo"],
            cwd=REPO, capture_output=True, text=True, timeout=600,
            env={**os.environ, "TMPDIR": str(temporary)},
        )  # fmt: skip
        assert done.returncode == 0, shown(done)
        runs[name] = done.stdout
    assert "── done" in runs["here"]
    assert not BROKEN.search(runs["posixless"]), runs["posixless"]
    assert normalised(runs["posixless"]) == normalised(runs["here"])


DAEMON = """\
import os, sys, time
if os.fork():
    sys.exit(0)
os.setsid()  # out of the command's process group and session
if os.fork():
    sys.exit(0)
with open("daemon.pid", "w") as file:
    file.write(str(os.getpid()))
time.sleep(300)
"""

RUN_BASH = """\
import sys
from v1_tool_loop.tools import run_tool
result = run_tool("bash", {"command": "python daemon.py; echo started"}, sys.argv[1])
print(result.is_error, result.content)
"""


HIDE_PROC = """\
from pathlib import Path
import machine.processes
machine.processes.PROC = Path("/no-proc-on-this-system")
"""


@pytest.mark.parametrize(
    "command",
    [[sys.executable, "-c", HIDE_PROC + RUN_BASH], [*POSIXLESS, "--no-proc", "-c", RUN_BASH]],
    ids=["without-proc", "without-proc-and-process-groups"],
)
def test_a_daemon_the_command_left_behind_is_stopped_without_proc(
    tmp_path: Path, command: list[str]
) -> None:
    """Without /proc, psutil finds the processes that carry the command's marker.

    The daemon forks twice and calls setsid, so it leaves the command's process group:
    only the marker can find it.  (On Linux psutil reads /proc itself; what this shows
    is that the course's fallback finds and stops it, as psutil would on macOS.)
    """
    (tmp_path / "daemon.py").write_text(DAEMON)
    done = subprocess.run(
        [*command, str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert done.stdout.strip() == "False started", shown(done)
    pid = int((tmp_path / "daemon.pid").read_text())
    assert not is_running(pid), "the daemon outlived the command"


LOCKS = """\
import os, subprocess, sys
from pathlib import Path
from machine import LockBusy, hold
path = Path(sys.argv[1])
with hold(path):
    try:
        hold(path)
    except LockBusy as busy:
        print("busy, held by", "me" if busy.holder == str(os.getpid()) else busy.holder)
    else:
        print("taken twice")
print("released:", not path.exists())
dead = subprocess.Popen([sys.executable, "-c", "pass"])
dead.wait()
path.write_text(f"{dead.pid}\\n")  # what a holder killed with -9 leaves
with hold(path, wait=False) as lock:
    print("taken over:", path.read_text().strip() == str(os.getpid()), lock.held)
"""


def test_without_fcntl_a_lock_file_is_exclusive_and_outlives_no_holder(tmp_path: Path) -> None:
    done = subprocess.run(
        [*POSIXLESS, "-c", LOCKS, str(tmp_path / "s.lock")],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.stdout.splitlines() == [
        "busy, held by me",
        "released: True",
        "taken over: True True",
    ], shown(done)


# --- without bash -------------------------------------------------------------------------


def test_without_bash_every_shell_call_says_what_to_install_and_the_demo_still_runs(
    tmp_path: Path,
) -> None:
    environment = {k: v for k, v in os.environ.items() if k not in ("ProgramFiles", "ProgramW6432")}
    environment["PATH"] = str(tmp_path)  # an empty folder: no bash, no git
    done = subprocess.run(
        [sys.executable, "-m", "v1_tool_loop", "--demo"],
        cwd=REPO, env=environment, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, shown(done)
    assert "no bash found" in done.stdout and "── done" in done.stdout, shown(done)
    assert "edited stats.py" in done.stdout, "the file tools go on working"
    assert not BROKEN.search(done.stdout + done.stderr)


def test_the_bash_of_wsl_is_passed_over_for_a_real_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    launcher = tmp_path / "System32"
    launcher.mkdir()
    (launcher / "bash").write_text("#!/bin/sh\necho wsl\n")
    (launcher / "bash").chmod(0o755)
    real = shutil.which("bash")
    assert real
    monkeypatch.setenv("PATH", os.pathsep.join([str(launcher), str(Path(real).parent)]))
    assert find_bash.__wrapped__() == real
    monkeypatch.setenv("PATH", str(launcher))
    monkeypatch.delenv("ProgramFiles", raising=False)
    monkeypatch.delenv("ProgramW6432", raising=False)
    assert find_bash.__wrapped__() is None
    assert "Git for Windows" in NO_BASH


# --- a temporary folder reached through a symlink (macOS: /tmp is /private/tmp) ----------


def test_a_symlinked_folder_changes_no_run_and_no_path(tmp_path: Path) -> None:
    real = tmp_path / "private" / "tmp"
    real.mkdir(parents=True)
    alias = tmp_path / "tmp"
    alias.symlink_to(real)
    runs = []
    for workdir in (real / "ws", alias / "ws"):
        shutil.rmtree(real / "ws", ignore_errors=True)
        shutil.copytree(REPO / "v1_tool_loop" / "demo" / "workspace", real / "ws")
        model = ReplayModel(REPO / "v1_tool_loop" / "demo" / "cassette.jsonl")
        result = run(model.header["task"], model=model, workdir=workdir)
        transcript = json.dumps(result.messages, ensure_ascii=False)
        transcript = re.sub(r"(Ran \d+ tests? in )\d+\.\d+s", r"\1Ts", transcript)  # the clock
        runs.append((result.stop, transcript, result.turn_usage))
    assert runs[0][0] == "done"
    assert runs[1] == runs[0], "the figures are measured from these messages and their usage"
    assert safe_path(alias / "ws", "stats.py") == real / "ws" / "stats.py"
    with pytest.raises(ToolError, match="outside the work directory"):
        safe_path(alias / "ws", "../outside.txt")
    write_text(safe_path(alias / "ws", "notes/new.txt"), "notes/new.txt", "one\n")
    assert read_text(real / "ws" / "notes" / "new.txt", "notes/new.txt") == "one\n"


# --- a checkout with Windows' line endings -------------------------------------------------


def _clone(target: Path, autocrlf: str) -> Path:
    subprocess.run(
        ["git", "-c", f"core.autocrlf={autocrlf}", "clone", "-q", str(REPO), str(target)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    return target


@pytest.mark.slow  # end to end: see tests/conftest.py
@pytest.mark.skipif(
    shutil.which("git") is None or not (REPO / ".git").exists(), reason="needs a git checkout"
)
def test_a_checkout_with_crlf_conversion_reads_back_byte_for_byte(tmp_path: Path) -> None:
    plain = _clone(tmp_path / "plain", "false")
    converted = _clone(tmp_path / "crlf", "true")
    assert (converted / ".ci" / "run").read_bytes().startswith(b"#!/usr/bin/env bash\n")
    files = [path.relative_to(plain) for path in plain.rglob("*") if path.is_file()]
    files = [name for name in files if name.parts[0] != ".git"]
    assert any(name.suffix == ".jsonl" for name in files) and any(
        name.parts[0] == "docs" for name in files
    )
    changed = [str(f) for f in files if (converted / f).read_bytes() != (plain / f).read_bytes()]
    assert not changed, f"CRLF crept into {changed[:5]}"
    done = subprocess.run(
        [sys.executable, "-m", "v1_tool_loop", "--demo"],
        cwd=converted, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0 and "── done" in done.stdout, shown(done)
    tests = ["tests/llm/test_cassette.py", "tests/docs/test_docs.py", "tests/machine/test_jsonl.py"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n0", "-p", "no:cacheprovider", *tests],
        cwd=converted, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, shown(done)
