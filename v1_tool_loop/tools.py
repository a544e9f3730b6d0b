"""The coding agent's four tools: bash, read_file, write_file, edit_file.

A tool is two things: a schema the model reads (name, description, JSON schema of
its input) and a handler that does the work.  `TOOLS` holds the schemas, `HANDLERS`
maps names to handlers, and `run_tool` is the single door between the two.  It
never raises for anything a model can send: every problem comes back as a
`ToolResult` with `is_error=True` and a message that says how to fix the call.

Every path is resolved inside the work directory; `..`, `~`, absolute paths
elsewhere and symlinks that lead out are refused.
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm.types import INVALID_JSON

DEFAULT_TIMEOUT = 60  # seconds a bash command may run unless the model asks for more
MAX_TIMEOUT = 600
OUTPUT_LIMIT = 30_000  # bytes of tool output the model sees (~8k tokens)
READ_LINES = 400  # lines read_file returns when the model gives no limit
EXIT_GRACE = 0.5  # seconds to keep reading after bash exits, for output still in flight


@dataclass
class ToolResult:
    """What a tool gives back to the model: text, and whether it is an error."""

    content: str
    is_error: bool = False


class ToolError(Exception):
    """The call could not be done; the message is written for the model to act on."""


TOOLS: list[dict[str, Any]] = [
    {
        "name": "bash",
        "description": (
            "Run a shell command in the work directory and return its output (stdout and "
            "stderr together) and exit code. Use it to list files, run tests and programs. "
            f"Commands are killed after `timeout` seconds (default {DEFAULT_TIMEOUT}, "
            f"at most {MAX_TIMEOUT}); processes left in the background are stopped when "
            "the command returns."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command, run by bash -c."},
                "timeout": {"type": "integer", "description": "Seconds before it is killed."},
            },
            "required": ["command"],
        },
    },
    {
        "name": "read_file",
        "description": (
            f"Read a text file. Returns up to `limit` lines (default {READ_LINES}) "
            "starting at line `offset` (1-based), and says how many lines remain."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path relative to the work directory."},
                "offset": {"type": "integer", "description": "First line to read, from 1."},
                "limit": {"type": "integer", "description": "How many lines to read."},
            },
            "required": ["path"],
        },
    },
    {
        "name": "write_file",
        "description": (
            "Create or overwrite a file with the given content. Missing parent folders are created."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path relative to the work directory."},
                "content": {"type": "string", "description": "The whole new content."},
            },
            "required": ["path", "content"],
        },
    },
    {
        "name": "edit_file",
        "description": (
            "Replace one exact piece of text in a file. `old_text` must match exactly "
            "one place, whitespace included; read the file first."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path relative to the work directory."},
                "old_text": {"type": "string", "description": "The exact text to replace."},
                "new_text": {"type": "string", "description": "The text to put in its place."},
            },
            "required": ["path", "old_text", "new_text"],
        },
    },
]


# --- paths -------------------------------------------------------------------------


def safe_path(workdir: Path, path: str) -> Path:
    """Resolve `path` inside `workdir`, following symlinks, or refuse."""
    if "\0" in path:
        raise ToolError("the path contains a NUL byte; give a plain file path")
    if path.startswith("~"):
        raise ToolError(f"'{path}': '~' is not expanded; give a path inside the work directory")
    root = workdir.resolve()
    target = (root / path).resolve()
    if target != root and root not in target.parents:
        raise ToolError(f"'{path}' is outside the work directory {root}; use a path inside it")
    return target


def read_text(workdir: Path, path: str) -> tuple[Path, str]:
    """The file's path and text, or a ToolError saying why it cannot be read as text."""
    target = safe_path(workdir, path)
    if not target.exists():
        raise ToolError(f"no such file: '{path}'. List the folder with bash `ls` to find it.")
    if target.is_dir():
        raise ToolError(f"'{path}' is a folder; list it with bash `ls {path}`")
    data = target.read_bytes()
    try:
        if b"\0" in data[:8192]:
            raise UnicodeDecodeError("utf-8", data, 0, 1, "NUL byte")
        return target, data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(
            f"'{path}' is a binary file ({len(data)} bytes), not text; inspect it with "
            f"bash (`file {path}`, `xxd {path} | head`)"
        ) from None


def write_atomically(target: Path, text: str) -> None:
    """Write through a temporary file and rename, so a crash never leaves half a file."""
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        if target.exists():
            os.chmod(temporary, target.stat().st_mode)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


# --- handlers ------------------------------------------------------------------------

DESTRUCTIVE = [
    (r"\brm\s+(-\S+\s+)*(/|/\*|~|~/|~/\*|\$HOME/?\*?)(\s|$|[;&|])", "deletes all of / or ~"),
    (r"--no-preserve-root", "disables rm's protection of /"),
    (r"\bmkfs(\.\w+)?\b", "formats a file system"),
    (r"\bdd\b.*\bof=/dev/", "writes raw data to a device"),
    (r">\s*/dev/(sd|hd|vd|nvme|disk|mmcblk)", "overwrites a disk device"),
    (r":\s*\(\s*\)\s*\{.*:\s*\|\s*:", "is a fork bomb"),
    (r"(^|[;&|(]\s*)(shutdown|reboot|halt|poweroff)\b", "stops the machine"),
    (r"(^|[;&|(]\s*)sudo\b", "asks for root rights"),
    (r"\bchmod\s+-R\s+\S+\s+/(\s|$)", "changes permissions of the whole file system"),
]


def refusal_reason(command: str) -> str | None:
    """Why a command is plainly destructive, or None.  A guard rail, not a sandbox."""
    for pattern, reason in DESTRUCTIVE:
        if re.search(pattern, command):
            return reason
    return None


class _Capture:
    """Keeps the first and last halves of OUTPUT_LIMIT bytes of output of any length."""

    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        self.half = limit // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        del self.tail[: max(0, len(self.tail) - self.half)]

    def text(self) -> str:
        cut = self.total - len(self.head) - len(self.tail)
        if cut <= 0:
            return bytes(self.head + self.tail).decode("utf-8", "replace")
        return (
            self.head.decode("utf-8", "replace")
            + f"\n[… {cut} bytes cut from the middle of the output …]\n"
            + self.tail.decode("utf-8", "replace")
        )


def _read_output(process: subprocess.Popen, timeout: float) -> tuple[_Capture, bool]:
    """Read merged output until the command has exited or the deadline passes (True if so)."""
    capture = _Capture()
    fd = process.stdout.fileno()  # type: ignore[union-attr]
    deadline = time.monotonic() + timeout
    exited_at = None
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            if now >= deadline:
                return capture, True
            if exited_at is None and process.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > EXIT_GRACE:
                return capture, False  # a background process still holds the pipe
            if selector.select(min(0.1, deadline - now)):
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                capture.add(chunk)
    # End of output is not the end of the command: wait for its exit status too.
    try:
        process.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return capture, True
    return capture, False


def _stop_process_group(process: subprocess.Popen) -> None:
    """Kill the command and everything it started, and reap it."""
    with contextlib.suppress(ProcessLookupError):  # the whole group may be gone already
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    process.stdout.close()  # type: ignore[union-attr]


def _command_environment() -> dict[str, str]:
    """This process's environment with its interpreter's folder first on PATH.

    So `python` in a command is the Python running the agent, virtualenv included,
    even when the learner started it as `.venv/bin/python -m …` without activating.
    """
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    return {**os.environ, "PATH": path}


def bash(workdir: Path, command: str, timeout: int = DEFAULT_TIMEOUT) -> str:
    reason = refusal_reason(command)
    if reason:
        raise ToolError(f"refused: this command {reason}. Do the task without it.")
    if timeout < 1:
        raise ToolError("timeout must be at least 1 second")
    timeout = min(timeout, MAX_TIMEOUT)
    process = subprocess.Popen(
        ["bash", "-c", command],
        cwd=workdir,
        env=_command_environment(),
        stdin=subprocess.DEVNULL,  # a command waiting for input gets end-of-file, not a hang
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, so a timeout can kill all of it
    )
    try:
        capture, timed_out = _read_output(process, timeout)
    finally:
        _stop_process_group(process)
    output = capture.text().rstrip("\n")
    if timed_out:
        raise ToolError(
            _with_note(
                output,
                f"[timed out after {timeout}s: the command and all it started were killed; "
                "above is what it printed until then]",
            )
        )
    if process.returncode != 0:
        raise ToolError(_with_note(output, f"[exit code {process.returncode}]"))
    return output or "(no output)"


def _with_note(output: str, note: str) -> str:
    return f"{output}\n{note}" if output else note


def read_file(workdir: Path, path: str, offset: int = 1, limit: int = READ_LINES) -> str:
    _, text = read_text(workdir, path)
    lines = text.splitlines()
    if offset < 1 or limit < 1:
        raise ToolError("offset and limit must be 1 or more (offset counts lines from 1)")
    if not lines:
        return "(empty file)"
    if offset > len(lines):
        raise ToolError(f"offset {offset} is past the end: '{path}' has {len(lines)} lines")
    shown = lines[offset - 1 : offset - 1 + limit]
    body = "\n".join(shown)
    if len(body) > OUTPUT_LIMIT:
        body = body[:OUTPUT_LIMIT] + "\n[… cut: read fewer lines at a time with `limit`]"
    last = offset + len(shown) - 1
    if last < len(lines):
        body += (
            f"\n[lines {offset}-{last} of {len(lines)}; {len(lines) - last} more: "
            f"read_file with offset={last + 1}]"
        )
    return body


def write_file(workdir: Path, path: str, content: str) -> str:
    target = safe_path(workdir, path)
    if target.is_dir():
        raise ToolError(f"'{path}' is a folder; give a file path")
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(target, content)
    return f"wrote {len(content.splitlines())} lines to {path}"


def edit_file(workdir: Path, path: str, old_text: str, new_text: str) -> str:
    target, text = read_text(workdir, path)
    if not old_text:
        raise ToolError("old_text is empty; copy the exact lines to replace from the file")
    matches = text.count(old_text)
    if matches == 0:
        raise ToolError(
            f"old_text was not found in '{path}'; the file is unchanged. Read the file and "
            "copy the lines exactly, whitespace included."
        )
    if matches > 1:
        raise ToolError(
            f"old_text matches {matches} places in '{path}'; the file is unchanged. "
            "Include more surrounding lines so it matches exactly one."
        )
    write_atomically(target, text.replace(old_text, new_text, 1))
    old_lines, new_lines = len(old_text.splitlines()), len(new_text.splitlines())
    return f"edited {path}: {old_lines} line(s) replaced by {new_lines}"


HANDLERS: dict[str, Callable[..., str]] = {
    "bash": bash,
    "read_file": read_file,
    "write_file": write_file,
    "edit_file": edit_file,
}


# --- the one door ------------------------------------------------------------------

JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "object": dict,
    "array": list,
}


def describe_arguments(schema: dict[str, Any]) -> str:
    """`command (string, required), timeout (integer)`: what a call should look like."""
    required = schema["input_schema"].get("required", [])
    return ", ".join(
        f"{name} ({spec['type']}{', required' if name in required else ''})"
        for name, spec in schema["input_schema"]["properties"].items()
    )


def argument_problem(schema: dict[str, Any], args: Any) -> str | None:
    """What is wrong with the arguments for this schema, or None if they fit."""
    if not isinstance(args, dict):
        return "arguments must be a JSON object"
    if INVALID_JSON in args:
        return f"the arguments were not valid JSON: {str(args[INVALID_JSON])[:200]!r}"
    properties = schema["input_schema"]["properties"]
    missing = [name for name in schema["input_schema"].get("required", []) if name not in args]
    if missing:
        return f"missing argument(s): {', '.join(missing)}"
    unexpected = [name for name in args if name not in properties]
    if unexpected:
        return f"unexpected argument(s): {', '.join(unexpected)}"
    for name, value in args.items():
        kind = properties[name].get("type")
        expected = JSON_TYPES.get(kind, object)  # a type we do not know is not checked
        if not isinstance(value, expected) or (kind != "boolean" and isinstance(value, bool)):
            return f"argument '{name}' must be of type {kind}, got {value!r:.60}"
    return None


SCHEMAS = {tool["name"]: tool for tool in TOOLS}


def run_tool(name: str, args: Any, workdir: str | Path) -> ToolResult:
    """Check the call against its schema, run the handler, and turn any failure into text."""
    schema = SCHEMAS.get(name)
    if schema is None:
        return ToolResult(f"unknown tool '{name}'. Available tools: {', '.join(SCHEMAS)}", True)
    problem = argument_problem(schema, args)
    if problem:
        return ToolResult(f"{name}: {problem}. Expected: {describe_arguments(schema)}", True)
    try:
        return ToolResult(HANDLERS[name](Path(workdir), **args))
    except ToolError as error:
        return ToolResult(str(error), True)
    except OSError as error:
        return ToolResult(f"{name} failed: {error.strerror or error} ({error.filename})", True)
    except Exception as error:  # a bug in a handler must not end the run
        return ToolResult(f"{name} failed unexpectedly: {type(error).__name__}: {error}", True)
