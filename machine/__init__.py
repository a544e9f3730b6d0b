"""The machine boundary: what the agent's tools need from the operating system, on every system.

As `llm` is the boundary to the model, this package is the boundary to the machine:
regular files opened, read as a stream and replaced safely (`files`), a program's own
files inside the work directory, never reached through a link (`own_files`), commands run
with a timeout and stopped with all they started (`commands`, `processes`), the guard
that refuses plainly destructive commands (`guard`), locks between processes
(`locks`), a wait through Ctrl-C (`interrupts`), JSON-lines files appended durably and
read back after a crash (`jsonl`), a folder of such logs followed as it grows
(`logs`), an inverted index built from them, kept in a file beside them
(`postings`), such a file locked for one process at a time (`journal`), and the
front matter that opens a Markdown file (`frontmatter`).  Each
difference between Linux, macOS and Windows is handled here, by
what the system has, so the chapters hold only their lessons.  It imports nothing of
the course.
"""

from . import jsonl
from .commands import (
    SECRET_VARIABLES,
    CommandOutcome,
    Conversation,
    ConversationEnded,
    cap_output,
    command_environment,
    find_bash,
    run,
    run_command,
    stop_running_commands,
)
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
from .guard import refusal_reason
from .interrupts import wait_through_ctrl_c
from .locks import Lock, LockBusy, hold
from .logs import Logs
from .own_files import (
    AGENT_FILE_LIMIT,
    USER_ID,
    agent_files,
    agent_path,
    make_agent_folder,
    open_agent_file,
    private_folder,
    read_agent_file,
    read_agent_text,
    shown_name,
)
from .postings import PostingsFile
from .processes import adopt_orphans, cores

__all__ = [
    "AGENT_FILE_LIMIT",
    "BINARY",
    "EDIT_LIMIT",
    "OUTPUT_LIMIT",
    "READ_BLOCK",
    "SECRET_VARIABLES",
    "USER_ID",
    "CommandOutcome",
    "Conversation",
    "ConversationEnded",
    "Lock",
    "LockBusy",
    "Logs",
    "PostingsFile",
    "Page",
    "ToolError",
    "adopt_orphans",
    "cores",
    "agent_files",
    "agent_path",
    "cap_output",
    "command_environment",
    "find_bash",
    "hold",
    "jsonl",
    "make_agent_folder",
    "open_agent_file",
    "open_regular",
    "private_folder",
    "read_agent_file",
    "read_agent_text",
    "read_at",
    "read_lines",
    "read_text",
    "refusal_reason",
    "shown_name",
    "run",
    "run_command",
    "stop_running_commands",
    "write_at",
    "wait_through_ctrl_c",
    "write_text",
]
