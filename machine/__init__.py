"""The machine boundary: what the agent's tools need from the operating system, on every system.

As `llm` is the boundary to the model, this package is the boundary to the machine:
regular files opened, read as a stream and replaced safely (`files`), commands run
with a timeout and stopped with all they started (`commands`, `processes`), locks
between processes (`locks`).  Each difference between Linux, macOS and Windows is
handled here, by what the system has, so the chapters hold only their lessons.  It
imports nothing of the course.
"""

from .commands import SECRET_VARIABLES, CommandOutcome, find_bash, run, run_command
from .errors import ToolError
from .files import (
    BINARY,
    EDIT_LIMIT,
    OUTPUT_LIMIT,
    READ_BLOCK,
    Page,
    open_regular,
    read_at,
    read_lines,
    read_text,
    write_at,
    write_text,
)
from .locks import Lock, LockBusy, hold

__all__ = [
    "BINARY",
    "EDIT_LIMIT",
    "OUTPUT_LIMIT",
    "READ_BLOCK",
    "SECRET_VARIABLES",
    "CommandOutcome",
    "Lock",
    "LockBusy",
    "Page",
    "ToolError",
    "find_bash",
    "hold",
    "open_regular",
    "read_at",
    "read_lines",
    "read_text",
    "run",
    "run_command",
    "write_at",
    "write_text",
]
