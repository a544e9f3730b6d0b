"""Running a command with a timeout, its output captured, and nothing it started left running.

`run` is the one runner: the bash tool (`run_command`) and the lab's checkers use it.
The command gets its own process group where the system has them, a marker in its
environment, and a deadline; its output is read by threads, which every system can do
on a pipe (`selectors` cannot wait on a pipe on Windows).  When it has exited, or the
deadline passed, everything it started is stopped (`processes.stop_everything`).

`run_command` runs `bash -c` without the agent's API keys.  It needs a real bash:
`find_bash` takes the first on PATH, except Windows' `System32\\bash.exe` (WSL's
launcher, which would run the command in another system's files), and on Windows
looks for Git for Windows' bash beside `git`.  Without one, every call fails with the
same message, which says what to install; the rest of the agent keeps working.
"""

from __future__ import annotations

import functools
import os
import queue
import re
import secrets
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .errors import ToolError
from .files import OUTPUT_LIMIT
from .processes import (
    ADOPTING,
    MARKER_VARIABLE,
    own_group,
    stop_everything,
    stop_orphans,
    stop_tree,
)

EXIT_GRACE = 0.5  # seconds to keep reading after the command exits, for output in flight

# The agent's own credentials and endpoints, and API keys in general: a command needs
# none of them, and an instruction planted in a file could make the model print them.
SECRET_VARIABLES = re.compile(r"(ANTHROPIC|OPENAI|AZURE_OPENAI)_\w*|\w*_API_KEY", re.IGNORECASE)

NO_BASH = (
    "no bash found, so shell commands cannot run here. Install Git for Windows "
    "(https://git-scm.com/download/win, it brings Git Bash) or use WSL2 and run the "
    "course inside it; on Linux and macOS install bash with the package manager. "
    "read_file, write_file and edit_file still work."
)


RUNNING: set[subprocess.Popen] = set()  # the commands `run` is running now, in any thread
KEPT: set[subprocess.Popen] = set()  # processes that outlive a command on purpose (Conversation)
STARTING = threading.Lock()


@dataclass
class CommandOutcome:
    output: str  # stdout, and stderr too unless asked apart; head and tail if capped
    errors: str  # stderr, when asked apart
    exit_code: int | None  # None when it timed out
    timed_out: bool


def run(
    argv: list[str],
    cwd: Path,
    timeout: float,
    *,
    env: dict[str, str] | None = None,
    input: str | None = None,
    apart: bool = False,
    limit: int | None = None,
) -> CommandOutcome:
    """Run `argv` in `cwd` for at most `timeout` seconds; afterwards stop everything it started.

    `input` is written to its stdin (otherwise stdin is empty, so a command waiting for
    input gets end-of-file, not a hang); `apart` keeps stderr out of `output`, in
    `errors`; `limit` keeps the first and last halves of that many bytes of output.
    """
    marker = secrets.token_hex(16)
    with STARTING:  # started and counted at once: no sweep of orphans sees it uncounted
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env={**(os.environ if env is None else env), MARKER_VARIABLE: marker},
            stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if apart else subprocess.STDOUT,
            **own_group(),
        )
        RUNNING.add(process)
    streams = [process.stdout, process.stderr] if apart else [process.stdout]
    captures = [Capture(limit) for _ in streams]
    readers = [
        _start(_drain, stream, capture) for stream, capture in zip(streams, captures, strict=True)
    ]
    if input is not None:
        _start(_feed, process.stdin, input.encode())
    try:
        timed_out = _wait(process, readers, timeout)
    finally:
        stop_everything(process, marker)
        with STARTING:
            RUNNING.discard(process)
            if ADOPTING and not RUNNING:  # what escaped group and marker was adopted here
                stop_orphans(keep={p.pid for p in KEPT})
        for reader in readers:  # the pipe's writers are gone now, so the reads end, unless
            reader.join(EXIT_GRACE)  # one escaped (`env -i`): then its thread is left to it
    output, errors = (capture.text() for capture in [*captures, Capture()][:2])
    return CommandOutcome(output, errors, None if timed_out else process.returncode, timed_out)


def stop_running_commands() -> None:
    """Kill every command running now and what it started (a second Ctrl-C).

    Commands of chapter 3's children run in threads that Ctrl-C does not reach; without
    this, the program could end only when their commands do.  Each `run` then finds its
    command ended and stops what is left, as after any command.
    """
    for process in list(RUNNING):
        stop_tree(process)


def _wait(process: subprocess.Popen, readers: list[threading.Thread], timeout: float) -> bool:
    """Wait for the exit and the end of output; True if the deadline came first.

    A background process may still hold the pipe after the command exits: its output
    is read for EXIT_GRACE seconds more, then the command counts as finished.
    """
    deadline = time.monotonic() + timeout
    # Waited for in a thread, joined with the deadline: `Popen.wait(timeout)` polls,
    # sleeping up to 50 ms at a time, which a run of short commands pays at each one.
    waiter = _start(process.wait)
    while waiter.is_alive() and (left := deadline - time.monotonic()) > 0:
        waiter.join(min(left, 0.1))  # back as the command ends; in slices, so Ctrl-C is seen
    if waiter.is_alive():
        return True
    for reader in readers:
        reader.join(max(0.0, min(EXIT_GRACE, deadline - time.monotonic())))
    return False


def _start(target, *args) -> threading.Thread:  # noqa: ANN001
    thread = threading.Thread(target=target, args=args, daemon=True)
    thread.start()
    return thread


def _drain(stream: IO[bytes], capture: Capture) -> None:
    with stream:
        while chunk := stream.read1(65_536):  # type: ignore[attr-defined]
            capture.add(chunk)


def _feed(stream: IO[bytes], data: bytes) -> None:
    try:
        with stream:
            stream.write(data)
    except (BrokenPipeError, OSError):  # it exited without reading all of it
        pass


class Capture:
    """Keeps the first and last halves of `limit` bytes of output of any length (all if None)."""

    def __init__(self, limit: int | None = None) -> None:
        self.half = sys.maxsize if limit is None else limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.lock = threading.Lock()  # a reader adds while the command's caller may read

    def add(self, chunk: bytes) -> None:
        with self.lock:
            self.total += len(chunk)
            room = self.half - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            self.tail += chunk
            del self.tail[: max(0, len(self.tail) - self.half)]

    def text(self) -> str:
        with self.lock:
            cut = self.total - len(self.head) - len(self.tail)
            if cut <= 0:
                return bytes(self.head + self.tail).decode("utf-8", "replace")
            return (
                self.head.decode("utf-8", "replace")
                + f"\n[… {cut} bytes cut from the middle of the output …]\n"
                + self.tail.decode("utf-8", "replace")
            )


def cap_output(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """`text` within `limit` bytes as bash output is kept: its head and tail, and a note of the cut.

    For what the agent's own tools send back (a child's report, memories found, a
    list of errors), so that no tool result costs more than a command's output.
    """
    if len(text) <= limit // 4:  # at most 4 bytes a character: it fits, no need to encode
        return text
    capture = Capture(limit)
    capture.add(text.encode("utf-8", "replace"))
    return capture.text()


# --- the bash tool's command ---------------------------------------------------------------


def run_command(command: str, workdir: Path, timeout: float) -> CommandOutcome:
    """Run `bash -c command` in `workdir`, without the agent's keys; stop all it started."""
    if "\0" in command:
        raise ToolError("the command contains a NUL byte; send plain text")
    bash = find_bash()
    if bash is None:
        raise ToolError(NO_BASH)
    outcome = run(
        [bash, "-c", command], workdir, timeout, env=command_environment(), limit=OUTPUT_LIMIT
    )
    outcome.output = outcome.output.rstrip("\n")
    return outcome


# The variables a .env file added, as whoever loaded it lists them (llm's FROM_ENV_FILE).
FROM_ENV_FILE = "AGENT_FROM_ENV_FILE"


def command_environment() -> dict[str, str]:
    """The environment the learner started with, without SECRET_VARIABLES, its Python
    first on PATH.

    What a .env file added never reaches a command: the file may come with a cloned
    repository, and a variable such as BASH_ENV would run its script before every one.
    With the agent's interpreter first, `python` in a command is the Python running
    the agent, virtualenv included, even when it was not activated.
    """
    added = {FROM_ENV_FILE, *os.environ.get(FROM_ENV_FILE, "").split(",")}
    kept = {
        name: value
        for name, value in os.environ.items()
        if not SECRET_VARIABLES.fullmatch(name) and name not in added
    }
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    return {**kept, "PATH": path}


@functools.cache
def find_bash() -> str | None:
    """A real bash: the first on PATH that is not WSL's launcher, or Git for Windows' bash."""
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        found = shutil.which("bash", path=folder) if folder else None
        if found and not _is_wsl_launcher(found):
            return found
    git = shutil.which("git")
    beside_git = [Path(git).resolve().parent.parent / "bin" / "bash.exe"] if git else []
    program_files = [os.environ.get(name) for name in ("ProgramFiles", "ProgramW6432")]
    usual = [Path(folder, "Git", "bin", "bash.exe") for folder in program_files if folder]
    return next((str(path) for path in [*beside_git, *usual] if path.is_file()), None)


def _is_wsl_launcher(path: str) -> bool:
    r"""`C:\Windows\System32\bash.exe` and the Store's alias start WSL, not a bash here."""
    parts = re.split(r"[\\/]", path.lower())
    return "system32" in parts or "windowsapps" in parts


# --- a process that answers line by line ----------------------------------------------------

ANSWER_LIMIT = 1_000_000  # bytes of one answer line; a longer one is refused, not read


class ConversationEnded(Exception):
    """The process gave no answer: it exited, or sent a line too long to read; says which."""


class Conversation:
    """A process that answers each line written to its stdin with one line on its stdout.

    It runs in a process group of its own with a marker, as `run`'s commands do, so
    `close` stops it and all it started.  Each answer has a deadline; stderr is kept
    (its head and tail) to say why a process ended.  Used by the lab's checkers, which
    ask code they do not trust for values without running it in their own process.
    """

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.marker = secrets.token_hex(16)
        with STARTING:
            self.process = subprocess.Popen(
                argv,
                cwd=cwd,
                env={**env, MARKER_VARIABLE: self.marker},
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                **own_group(),
            )
            KEPT.add(self.process)
        self.errors = Capture(4_000)
        self.answers: queue.Queue[bytes | ConversationEnded] = queue.Queue()
        _start(_drain, self.process.stderr, self.errors)
        _start(_read_answers, self.process.stdout, self.answers)

    def ask(self, line: str, timeout: float) -> str:
        """Send one line, return the answer line; TimeoutError past `timeout` seconds."""
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(line.encode("utf-8") + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # it has ended: the reader says how
        try:
            answer = self.answers.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no answer in {timeout:g} s") from None
        if isinstance(answer, ConversationEnded):
            self.answers.put(answer)  # every later question gets the same answer
            raise answer
        return answer.decode("utf-8", "replace")

    def said_on_stderr(self) -> str:
        """The last line the process wrote to stderr, for saying why it ended."""
        self.process.poll()
        lines = self.errors.text().strip().splitlines()
        return lines[-1][:200] if lines else "it wrote nothing to stderr"

    def close(self) -> None:
        stop_everything(self.process, self.marker)
        KEPT.discard(self.process)


def _read_answers(stream: IO[bytes], answers: queue.Queue) -> None:
    with stream:
        while True:
            line = stream.readline(ANSWER_LIMIT + 1)
            if not line:
                answers.put(ConversationEnded("the process ended"))
                return
            if not line.endswith(b"\n"):
                answers.put(ConversationEnded(f"an answer was longer than {ANSWER_LIMIT:,} bytes"))
                return
            answers.put(line.rstrip(b"\n"))
