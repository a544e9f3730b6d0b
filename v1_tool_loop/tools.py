"""The coding agent's four tools: bash, read_file, write_file, edit_file.

A tool is two things: a schema the model reads (name, description, JSON schema of
its input) and a handler that does the work.  `TOOLS` holds the schemas, `HANDLERS`
maps names to handlers, and `run_tool` is the single door between the two.  It
never raises for anything a model can send: every problem comes back as a
`ToolResult` with `is_error=True` and a message that says how to fix the call.

Every path is resolved inside the work directory; `..`, `~`, absolute paths
elsewhere and symlinks that lead out are refused (`safe_path`, in `sandbox.py`, with
the guard against destructive commands).  The care a real machine needs (safe writes,
streaming reads, stopping what a command leaves behind, every operating system's
differences) is in the `machine` package, which these handlers call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm.console import counted
from llm.types import INVALID_JSON
from machine import (
    EDIT_LIMIT,
    OUTPUT_LIMIT,
    ToolError,
    read_lines,
    read_text,
    refusal_reason,
    run_command,
    write_text,
)

from .sandbox import safe_path

DEFAULT_TIMEOUT = 60  # seconds a bash command may run unless the model asks for more
MAX_TIMEOUT = 600
READ_LINES = 400  # lines read_file returns when the model gives no limit


@dataclass
class ToolResult:
    """What a tool gives back to the model: text, and whether it is an error."""

    content: str
    is_error: bool = False

    def to_block(self, call: dict[str, Any]) -> dict[str, Any]:
        """The tool_result block that answers `call`, for the next user message."""
        return {
            "type": "tool_result",
            "tool_use_id": call["id"],
            "content": self.content,
            "is_error": self.is_error,
        }


TOOLS: list[dict[str, Any]] = [
    {
        "name": "bash",
        "description": (
            "Run a shell command in the work directory and return its output (stdout and "
            "stderr together) and exit code. Use it to list files, run tests and programs. "
            f"Commands are killed after `timeout` seconds (default {DEFAULT_TIMEOUT}, "
            f"at most {MAX_TIMEOUT}); processes left in the background, detached ones "
            "included, are stopped when the command returns. The agent's API keys are "
            "not in its environment."
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
            f"Read a UTF-8 text file. Returns up to `limit` lines (default {READ_LINES}, "
            f"at most {OUTPUT_LIMIT} bytes) starting at line `offset` (1-based), and says "
            "where to go on."
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
            "one place, whitespace included; read the file first. Files of up to "
            f"{EDIT_LIMIT:,} bytes."
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


# --- handlers ------------------------------------------------------------------------


def bash(workdir: Path, command: str, timeout: int = DEFAULT_TIMEOUT) -> str:
    reason = refusal_reason(command)
    if reason:
        raise ToolError(f"refused: this command {reason}. Do the task without it.")
    if timeout < 1:
        raise ToolError("timeout must be at least 1 second")
    timeout = min(timeout, MAX_TIMEOUT)
    outcome = run_command(command, workdir, timeout)
    if outcome.timed_out:
        raise ToolError(
            _with_note(
                outcome.output,
                f"[timed out after {timeout}s: the command and all it started were killed; "
                "above is what it printed until then]",
            )
        )
    if outcome.exit_code != 0:
        raise ToolError(_with_note(outcome.output, f"[exit code {outcome.exit_code}]"))
    return outcome.output or "(no output)"


def _with_note(output: str, note: str) -> str:
    return f"{output}\n{note}" if output else note


def read_file(workdir: Path, path: str, offset: int = 1, limit: int = READ_LINES) -> str:
    if offset < 1 or limit < 1:
        raise ToolError("offset and limit must be 1 or more (offset counts lines from 1)")
    page = read_lines(safe_path(workdir, path), path, offset, limit)
    if not page.lines:
        if page.total == 0:
            return "(empty file)"
        raise ToolError(
            f"offset {offset} is past the end: '{path}' has {counted(page.total, 'line')}"
        )
    body = "\n".join(page.lines)
    last = offset + len(page.lines) - 1
    if page.cut:
        body += (
            f"\n[line {last} is longer than {OUTPUT_LIMIT} bytes and was cut; see the rest "
            f"with bash, e.g. `sed -n {last}p {path} | cut -c {OUTPUT_LIMIT + 1}-`]"
        )
    if page.total is not None and last >= page.total:
        return body
    shown = f"lines {offset}-{last}" + ("" if page.total is None else f" of {page.total}")
    if len(page.lines) < limit and not page.cut:
        shown += f", as many as fit in {OUTPUT_LIMIT} bytes"
    left = (
        f"{page.bytes_after:,} more bytes, too many to count the lines"
        if page.total is None
        else f"{page.total - last} more"
    )
    return f"{body}\n[{shown}; {left}: read_file with offset={last + 1}]"


def write_file(workdir: Path, path: str, content: str) -> str:
    write_text(safe_path(workdir, path), path, content)
    return f"wrote {counted(_count_lines(content), 'line')} to {path}"


def edit_file(workdir: Path, path: str, old_text: str, new_text: str) -> str:
    if not old_text:
        raise ToolError("old_text is empty; copy the exact lines to replace from the file")
    target = safe_path(workdir, path)
    text = read_text(target, path)
    if _uses_crlf(text):  # read_file showed its lines without "\r"; write them back with it
        old_text, new_text = _with_crlf(old_text), _with_crlf(new_text)
    matches = _count_places(text, old_text)
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
    write_text(target, path, text.replace(old_text, new_text, 1))
    return f"edited {path}: {_count_lines(old_text)} line(s) replaced by {_count_lines(new_text)}"


def _count_places(text: str, part: str) -> int:
    """In how many places `part` starts in `text`, overlaps included: "aa" is twice in "aaa"."""
    places, start = 0, text.find(part)
    while start != -1:
        places, start = places + 1, text.find(part, start + 1)
    return places


def _uses_crlf(text: str) -> bool:
    r"""Whether most of the file's line breaks are Windows' "\r\n"."""
    return text.count("\r\n") * 2 > text.count("\n")


def _with_crlf(text: str) -> str:
    return re.sub(r"\r?\n", "\r\n", text)


def _count_lines(text: str) -> int:
    r"""Lines as read_file counts them: each "\n" ends one, and so does the end of the text."""
    return text.count("\n") + (not text.endswith("\n")) if text else 0


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
    unexpected = [str(name) for name in args if name not in properties]
    if unexpected:
        return f"unexpected argument(s): {', '.join(unexpected)}"
    for name, value in args.items():
        kind = properties[name].get("type")
        expected = JSON_TYPES.get(kind, object)  # a type we do not know is not checked
        if not isinstance(value, expected) or (kind != "boolean" and isinstance(value, bool)):
            return f"argument '{name}' must be of type {kind}, got {value!r:.60}"
    return None


SCHEMAS = {tool["name"]: tool for tool in TOOLS}


def run_tool(
    name: Any,
    args: Any,
    workdir: str | Path,
    *,
    schemas: Mapping[str, dict[str, Any]] = SCHEMAS,
    handlers: Mapping[str, Callable[..., str]] = HANDLERS,
) -> ToolResult:
    """Check the call against its schema, run the handler, and turn any failure into text.

    `schemas` and `handlers` are the tools on offer, chapter 1's four by default; a
    later chapter passes its own (more tools, or fewer) and keeps this one door.
    """
    schema = schemas.get(name) if isinstance(name, str) else None
    if schema is None:
        return ToolResult(f"unknown tool {name!r:.80}. Available tools: {', '.join(schemas)}", True)
    problem = argument_problem(schema, args)
    if problem:
        return ToolResult(f"{name}: {problem}. Expected: {describe_arguments(schema)}", True)
    try:
        return ToolResult(handlers[name](Path(workdir), **args))
    except (ToolError, ValueError) as error:  # the call was refused: the message says why
        return ToolResult(str(error), True)
    except OSError as error:
        return ToolResult(f"{name} failed: {error.strerror or error} ({error.filename})", True)
    except Exception as error:  # a bug in a handler must not end the run
        return ToolResult(f"{name} failed unexpectedly: {type(error).__name__}: {error}", True)
