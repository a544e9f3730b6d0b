"""How chapter 1's tools keep to the work directory and to their limits.

`tools.py` holds the four tools and the door to them; this module holds the care they
need on a real machine, where a repository may be hostile and a model careless.  A
first reading of the chapter can skip it.

* Paths: `safe_path` resolves a path and refuses it unless it ends up inside the work
  directory.
* Reading: `read_lines` streams a page of a file, so two lines of a 1 GB log cost two
  lines; `read_text` reads a whole file for editing, up to `EDIT_LIMIT`.  Both open only
  regular files (a FIFO would block forever, /dev/zero never ends) and only UTF-8 text.
* Writing: `write_text` replaces a file through a fresh temporary file and a rename: a
  link planted in the folder is never written through, the file keeps its mode and
  owner, and a file this user may not write is left alone.
* Commands: `run_command` runs `bash -c` without the agent's API keys, and afterwards
  stops every process the command started, even those that left its process group;
  `refusal_reason` is the guard against plainly destructive commands.

It is a guard rail, not a security boundary: a command can still read and write
whatever the user can.  Chapter 1's section on limits lists what remains possible.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import secrets
import selectors
import shlex
import signal
import stat
import subprocess
import sys
import time
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import BinaryIO

OUTPUT_LIMIT = 30_000  # bytes of tool output the model sees (~8k tokens)
READ_BLOCK = 65_536  # bytes read at a time; the first block decides whether a file is text
COUNT_LIMIT = 50_000_000  # bytes after a page that are scanned to count the lines left
EDIT_LIMIT = 10_000_000  # bytes; larger files are edited with bash (sed, a script)
EXIT_GRACE = 0.5  # seconds to keep reading after bash exits, for output still in flight
STOP_ROUNDS = 20  # scans for marked processes: one may fork while the last is killed
MARKER_VARIABLE = "AGENT_COMMAND_MARKER"


class ToolError(Exception):
    """The call could not be done; the message is written for the model to act on."""


# --- paths ---------------------------------------------------------------------------


def safe_path(workdir: Path, path: str) -> Path:
    """Resolve `path` inside `workdir`, following symlinks, or refuse."""
    if "\0" in path:
        raise ToolError("the path contains a NUL byte; give a plain file path")
    if path.startswith("~"):
        raise ToolError(f"'{path}': '~' is not expanded; give a path inside the work directory")
    root = workdir.resolve()
    try:
        target = (root / path).resolve()
    except RuntimeError:  # Python before 3.13 reports a symlink loop this way
        raise ToolError(f"'{path}' is a symlink loop; give a path to a real file") from None
    if target != root and root not in target.parents:
        raise ToolError(f"'{path}' is outside the work directory {root}; use a path inside it")
    return target


# --- reading -------------------------------------------------------------------------


@dataclass
class Page:
    """Some lines of a file, read from the line asked for, and what follows them."""

    lines: list[str]  # without their line break ("\n", or the "\r\n" of a CRLF file)
    total: int | None  # lines in the whole file; None when too much follows to count
    bytes_after: int  # bytes of the file after the page
    cut: bool  # the page's one line was longer than the byte limit and was cut


def read_lines(
    workdir: Path, path: str, offset: int, limit: int, max_bytes: int = OUTPUT_LIMIT
) -> Page:
    """Up to `limit` lines from line `offset`, at most `max_bytes` of them, read as a stream.

    Lines end at "\\n" only, as for `sed -n Np`, `wc -l` and editors; `splitlines()`
    would also split at \\f, \\v or U+2028 and shift every line number after them.  Only
    the first block, the lines before `offset` and the page itself are read; the lines
    after it are counted when that costs at most COUNT_LIMIT bytes of reading.
    """
    with _open_regular(safe_path(workdir, path), path) as file:
        size = os.fstat(file.fileno()).st_size
        _decode(file.read(READ_BLOCK), path, size, whole=size <= READ_BLOCK)
        file.seek(0)
        skipped = _skip_lines(file, offset - 1)
        lines, cut = _take_lines(file, limit, max_bytes, path, offset)
        bytes_after = max(0, size - file.tell())
        if not lines:
            return Page([], skipped, 0, False)  # an empty file, or an offset past the end
        left = _skip_lines(file, sys.maxsize) if bytes_after <= COUNT_LIMIT else None
        total = None if left is None else offset - 1 + len(lines) + left
        return Page(lines, total, bytes_after, cut)


def read_text(workdir: Path, path: str) -> str:
    """The whole text of a file for editing: a regular UTF-8 file of at most EDIT_LIMIT bytes."""
    with _open_regular(safe_path(workdir, path), path) as file:
        size = os.fstat(file.fileno()).st_size
        if size <= EDIT_LIMIT:
            data = file.read(EDIT_LIMIT + 1)  # one byte more: a file that grew is caught too
            size = len(data)
    if size > EDIT_LIMIT:
        raise ToolError(
            f"'{path}' is {size:,} bytes; edit_file changes files of up to {EDIT_LIMIT:,} "
            "bytes. Change it with bash instead (e.g. `sed -i`)."
        )
    return _decode(data, path, size, whole=True)


def _open_regular(target: Path, path: str) -> BinaryIO:
    """Open a regular file for reading; a folder, FIFO, socket or device is refused.

    The type is checked before opening, since opening a FIFO waits for a writer and a
    device such as /dev/zero never ends; and again on the open file, in case another
    was swapped in between, with O_NONBLOCK so that even then the open cannot hang.
    """
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        message = f"no such file: '{path}'. List the folder with bash `ls` to find it."
        raise ToolError(message) from None
    if stat.S_ISDIR(mode):
        raise ToolError(f"'{path}' is a folder; list it with bash `ls {path}`")
    _refuse_unless_regular(mode, path)
    fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    try:
        _refuse_unless_regular(os.fstat(fd).st_mode, path)
    except ToolError:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


FILE_KINDS = [
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
]


def _refuse_unless_regular(mode: int, path: str) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((kind for test, kind in FILE_KINDS if test(mode)), "not a file of a known kind")
    raise ToolError(f"'{path}' is {kind}, not a regular file; only regular files are used")


BYTE_ORDER_MARKS = {
    b"\xff\xfe\x00\x00": "utf-32",
    b"\x00\x00\xfe\xff": "utf-32",
    b"\xff\xfe": "utf-16",
    b"\xfe\xff": "utf-16",
}


def _decode(data: bytes, path: str, size: int, *, whole: bool) -> str:
    """`data` as UTF-8 text, or a ToolError saying it is binary or in another encoding.

    `whole` is False for the first block of a longer file, which may end in the middle
    of a character.
    """
    for mark, encoding in BYTE_ORDER_MARKS.items():
        if data.startswith(mark):
            raise _not_utf8(path, "by its byte-order mark", encoding)
    if b"\0" in data[:READ_BLOCK]:
        raise ToolError(
            f"'{path}' is a binary file ({size:,} bytes), not text; inspect it with "
            f"bash (`file {path}`, `xxd {path} | head`)"
        )
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(data, final=whole)
    except UnicodeDecodeError as error:
        detail = f"byte 0x{data[error.start]:02x} at offset {error.start:,}"
        raise _not_utf8(path, detail, _guess_encoding(data)) from None


def _guess_encoding(data: bytes) -> str:
    """A cheap guess for the hint: CJK encodings use high bytes in pairs, Latin-1 one at a time."""
    runs = [len(run) for run in re.findall(rb"[\x80-\xff]+", data[:READ_BLOCK])]
    return "gb18030" if sum(n for n in runs if n > 1) > sum(runs) / 2 else "latin1"


ENCODING_NAMES = {
    "latin1": "Latin-1 or Windows-1252",
    "gb18030": "GBK or GB18030",
    "utf-16": "UTF-16",
    "utf-32": "UTF-32",
}


def _not_utf8(path: str, detail: str, encoding: str) -> ToolError:
    return ToolError(
        f"'{path}' is not UTF-8 text ({detail}; it looks like {ENCODING_NAMES[encoding]}); "
        f"look at it with bash, e.g. `iconv -f {encoding} -t utf-8 {path} | head`"
    )


def _skip_lines(file: BinaryIO, count: int) -> int:
    """Move past `count` lines, a block at a time; return how many there were (fewer at the end).

    With `count=sys.maxsize` it counts the lines left.  A last line without "\\n" counts.
    """
    skipped, last = 0, b"\n"
    while skipped < count:
        block = file.read(READ_BLOCK)
        if not block:
            return skipped + (last != b"\n")
        newlines = block.count(b"\n")
        if skipped + newlines >= count:  # the wanted line starts in this block
            end = -1
            for _ in range(count - skipped):
                end = block.index(b"\n", end + 1)
            file.seek(end + 1 - len(block), os.SEEK_CUR)
            return count
        skipped, last = skipped + newlines, block[-1:]
    return skipped


def _take_lines(
    file: BinaryIO, limit: int, max_bytes: int, path: str, first: int
) -> tuple[list[str], bool]:
    """Up to `limit` whole lines that fit in `max_bytes`; a first line too long for it is cut.

    The file is left at the start of the first line not taken.
    """
    lines: list[str] = []
    room = max_bytes
    while len(lines) < limit and room > 0:
        start = file.tell()
        raw = file.readline(room + 2)  # room for the line and its "\r\n", or it is longer
        if not raw:
            break
        body = raw.removesuffix(b"\n").removesuffix(b"\r")
        if len(body) > room and lines:  # no room left for this line: the next page starts here
            file.seek(start)
            break
        if len(body) > room:  # a single line longer than the limit: show its beginning
            lines.append(_decode_line(_cut_at_character(body, room), path, first))
            if not raw.endswith(b"\n"):
                _skip_lines(file, 1)  # to the end of this line
            return lines, True
        lines.append(_decode_line(body, path, first + len(lines)))
        room -= len(body) + 1
    return lines, False


def _decode_line(body: bytes, path: str, number: int) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as error:
        detail = f"line {number}, byte 0x{body[error.start]:02x}"
        raise _not_utf8(path, detail, _guess_encoding(body)) from None


def _cut_at_character(data: bytes, size: int) -> bytes:
    """At most `size` bytes of UTF-8, never ending inside a character."""
    while 0 < size < len(data) and data[size] & 0xC0 == 0x80:  # a continuation byte
        size -= 1
    return data[:size]


# --- writing -------------------------------------------------------------------------


def write_text(workdir: Path, path: str, text: str) -> None:
    """Create or replace a file through a new temporary file and a rename.

    A crash never leaves half a file.  The temporary file gets a random name and is
    created exclusively, so nothing planted in the folder (a symlink at a guessable
    name) can redirect the write.  An existing file keeps its mode and, where this
    process may, its owner; one this user may not write is left as it is, since a
    rename would replace it regardless of its permissions.
    """
    if path.endswith(("/", os.sep)):
        raise ToolError(f"'{path}' ends with '/', so it names a folder; give a file path")
    target = safe_path(workdir, path)
    old = _writable_file(target, path)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ToolError(f"the text is not valid Unicode ({error.reason}); send text") from None
    target.parent.mkdir(parents=True, exist_ok=True)
    folder = target.parent.resolve()
    if folder != target.parent:  # a folder on the way was swapped for a link since safe_path
        raise ToolError(f"a folder on the way to '{path}' changed while writing; try again")
    temporary = folder / f".tmp-{secrets.token_hex(8)}"  # short: a 255-byte name still fits
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    except PermissionError:
        raise ToolError(f"cannot create a file beside '{path}': permission denied") from None
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            if old:
                _keep_owner_and_mode(file.fileno(), old)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


def _writable_file(target: Path, path: str) -> os.stat_result | None:
    """The existing file's status (None if there is none), or a ToolError if it may not change.

    A file with no write permission at all counts as read-only even for root, which
    could write it anyway: someone made it read-only on purpose.
    """
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(f"'{path}' is a folder; give a file path")
    _refuse_unless_regular(info.st_mode, path)
    if not os.access(target, os.W_OK) or not info.st_mode & 0o222:
        raise ToolError(
            f"'{path}' is not writable for this user (mode {stat.S_IMODE(info.st_mode):o}, "
            f"owner uid {info.st_uid}); it is unchanged. If it should change, its owner "
            f"must make it writable first (`chmod u+w {path}`)."
        )
    return info


def _keep_owner_and_mode(fd: int, old: os.stat_result) -> None:
    """Give the new file the old one's owner where allowed (root may; others keep the group)."""
    try:
        os.fchown(fd, old.st_uid, old.st_gid)  # before chmod, since chown clears set-user-ID
    except PermissionError:
        with contextlib.suppress(PermissionError):
            os.fchown(fd, -1, old.st_gid)
    os.fchmod(fd, stat.S_IMODE(old.st_mode))


# --- the agent's own files ---------------------------------------------------------
#
# Chapter 4 keeps its sessions, locks, memory logs and skills in `.agent/` of the work
# directory, a folder that a cloned repository can ship with anything in it.  It opens
# them only through these functions, by the tools' rules: the folder, resolved, must be
# inside the work directory; the file itself is never a link (`O_NOFOLLOW`), only a
# regular file, and read up to a cap.  Each refusal is a ToolError that says why.

AGENT_FILE_LIMIT = 256_000_000  # bytes of one file of the agent's own; more is not its work


def agent_path(workdir: Path, path: Path) -> Path:
    """`path` with its folders resolved, its last part left as it is.

    Paths here are as `open` takes them (absolute, or from the current directory), not
    relative to `workdir`.  Refused when a folder on the way leads out of `workdir`.
    """
    target = Path(os.path.abspath(path))
    return _inside(workdir, target.parent) / target.name


def _inside(workdir: Path, folder: Path) -> Path:
    """`folder` resolved, links and all, or a ToolError when that leaves `workdir`."""
    root = workdir.resolve()
    real = Path(os.path.realpath(folder))  # unlike Path.resolve, never raises on a loop
    if real != root and root not in real.parents:
        raise ToolError(f"'{folder}' leads outside the work directory {root} (a link)")
    return real


def make_agent_folder(workdir: Path, path: Path) -> Path:
    """Create the folder `path` inside `workdir`, never through a link that leads out."""
    folder = _inside(workdir, path)
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise ToolError(f"'{folder}' is not a folder; move it away to let the agent use it")
    folder.mkdir(parents=True, exist_ok=True)
    if _inside(workdir, path) != folder:  # a folder on the way was swapped for a link
        raise ToolError(f"'{folder}' changed while it was created; try again")
    return folder


def open_agent_file(
    workdir: Path, path: Path, *, create: bool = False, append: bool = False
) -> int:
    """A file descriptor of a regular file inside `workdir`, opened without following a link.

    `create` creates the file (and its folders) when missing; `append` opens it for
    appending, otherwise it is opened for reading and writing in place (a lock file)
    or, with neither, for reading only.  FileNotFoundError when it is missing and not
    to be created.
    """
    if create:
        make_agent_folder(workdir, path.parent)
    target = agent_path(workdir, path)
    flags = os.O_NOFOLLOW | os.O_NONBLOCK  # NONBLOCK: a FIFO planted here cannot hang
    if create or append:
        flags |= os.O_RDWR | (os.O_APPEND if append else 0) | (os.O_CREAT if create else 0)
    else:
        flags |= os.O_RDONLY
    try:
        fd = os.open(target, flags, 0o644)
    except OSError as error:
        if isinstance(error, FileNotFoundError):
            raise
        if os.path.islink(target):
            raise ToolError(f"'{target}' is a symbolic link, which is never followed") from None
        raise ToolError(f"cannot open '{target}': {error.strerror or error}") from None
    try:
        _refuse_unless_regular(os.fstat(fd).st_mode, str(target))
    except ToolError:
        os.close(fd)
        raise
    return fd


def read_agent_file(workdir: Path, path: Path, limit: int = AGENT_FILE_LIMIT) -> bytes:
    """The bytes of a regular file inside `workdir`, refused when larger than `limit`."""
    fd = open_agent_file(workdir, path)
    with os.fdopen(fd, "rb") as file:
        data = file.read(limit + 1)  # one byte more: a file that grew is caught too
    if len(data) > limit:
        raise ToolError(f"'{path.name}' is larger than {limit:,} bytes; it is left alone")
    return data


def agent_files(workdir: Path, folder: Path, pattern: str) -> tuple[list[Path], list[str]]:
    """The regular files in `folder` matching `pattern`, sorted, and a note for each skipped."""
    try:
        found = sorted(_inside(workdir, folder).glob(pattern))
    except ToolError as error:
        return [], [str(error)]
    files, skipped = [], []
    for path in found:
        if path.is_symlink() or not path.is_file():
            skipped.append(f"{path}: skipped, it is a link or not a regular file")
        else:
            files.append(path)
    return files, skipped


RUNNING: set[subprocess.Popen] = set()  # the commands run_command is running, in any thread


def stop_running_commands() -> None:
    """Kill the process group of every command running now (a second Ctrl-C).

    Commands of chapter 3's children run in threads that Ctrl-C does not reach; without
    this, the program could end only when their commands do.  Each run_command then
    finds its command ended and stops what is left, as after any command.
    """
    for process in list(RUNNING):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


def cap_output(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """`text` within `limit` bytes as bash output is kept: its head and tail, and a note of the cut.

    For what the agent's own tools send back (a child's report, memories found, a
    list of errors), so that no tool result costs more than a command's output.
    """
    if len(text) <= limit // 4:  # at most 4 bytes a character: it fits, no need to encode
        return text
    capture = _Capture(limit)
    capture.add(text.encode("utf-8", "replace"))
    return capture.text()


# --- running a command ---------------------------------------------------------------

# The agent's own credentials and endpoints, and API keys in general: a command needs
# none of them, and an instruction planted in a file could make the model print them.
SECRET_VARIABLES = re.compile(r"(ANTHROPIC|OPENAI|AZURE_OPENAI)_\w*|\w*_API_KEY", re.IGNORECASE)


@dataclass
class CommandOutcome:
    output: str  # stdout and stderr together, capped at OUTPUT_LIMIT bytes
    exit_code: int
    timed_out: bool


def run_command(command: str, workdir: Path, timeout: float) -> CommandOutcome:
    """Run `bash -c command` in `workdir`; afterwards stop everything it started."""
    if "\0" in command:
        raise ToolError("the command contains a NUL byte; send plain text")
    marker = secrets.token_hex(16)
    process = subprocess.Popen(
        ["bash", "-c", command],
        cwd=workdir,
        env=command_environment(marker),
        stdin=subprocess.DEVNULL,  # a command waiting for input gets end-of-file, not a hang
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, so it can be killed as one
    )
    RUNNING.add(process)
    try:
        capture, timed_out = _read_output(process, timeout)
    finally:
        RUNNING.discard(process)
        _stop_everything(process, marker)
    return CommandOutcome(capture.text().rstrip("\n"), process.returncode, timed_out)


def command_environment(marker: str) -> dict[str, str]:
    """The agent's environment without SECRET_VARIABLES, its Python first, and a marker.

    With the agent's interpreter first on PATH, `python` in a command is the Python
    running the agent, virtualenv included, even when it was not activated.  The marker
    is inherited by every process the command starts, so they can be found afterwards.
    """
    kept = {
        name: value for name, value in os.environ.items() if not SECRET_VARIABLES.fullmatch(name)
    }
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    return {**kept, "PATH": path, MARKER_VARIABLE: marker}


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


def _stop_everything(process: subprocess.Popen, marker: str) -> None:
    """Kill the command's process group, then any process still carrying its marker.

    `setsid` or a daemon's double fork leaves the group, but not the environment it
    inherited.  Where there is no /proc (macOS), only the group is stopped.
    """
    with contextlib.suppress(ProcessLookupError):  # the whole group may be gone already
        os.killpg(process.pid, signal.SIGKILL)
    for _ in range(STOP_ROUNDS):
        found = _marked_processes(f"{MARKER_VARIABLE}={marker}".encode())
        if not found:
            break
        for pid in found:
            # The PID was read from /proc a moment ago; its reuse within that moment would
            # need the kernel to hand out every other PID first.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)  # let them die, so the next scan sees only new ones
    process.wait()
    process.stdout.close()  # type: ignore[union-attr]


def _marked_processes(entry: bytes) -> list[int]:
    """The PIDs whose starting environment holds `entry`, as /proc/PID/environ shows it."""
    found = []
    with contextlib.suppress(FileNotFoundError):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/environ", "rb") as environ:
                    if entry in environ.read():  # a zombie's reads as empty
                        found.append(int(name))
            except OSError:  # gone already, or another user's
                continue
    return found


# --- the command guard ---------------------------------------------------------------
#
# A guard rail, not a sandbox: it reads the command as words, the way the shell will,
# and refuses a few plainly destructive commands, whatever their quoting.

SUBSTITUTION = re.compile(r"\$\(([^()]*)\)|`([^`]*)`|[<>]\(([^()]*)\)")  # $(…), `…`, <(…)
OPERATOR_CHARACTERS = set("();|&\n")
PREFIXES = {"env", "command", "builtin", "exec", "nohup", "nice", "time", "xargs"}
KEYWORDS = {"if", "then", "else", "elif", "while", "until", "do", "!", "{", "}"}
ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=.*")
SHELLS = {"sh", "bash", "dash", "zsh", "ksh"}
DISK = re.compile(r"/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-|mapper/)")
NESTING = 5  # levels of `bash -c '…'` or `$(…)` looked into


def refusal_reason(command: str) -> str | None:
    """Why a command is plainly destructive, or None.  A guard rail, not a sandbox."""
    if _is_fork_bomb(command):
        return "is a fork bomb"
    for words in simple_commands(command):
        reason = _refusal_for(words)
        if reason:
            return reason
    return None


def simple_commands(command: str, depth: int = 0) -> list[list[str]]:
    """The simple commands in `command`, each as its unquoted words from the command name on.

    `a; b && c | d`, newlines, `$(…)`, backticks and `bash -c '…'` are taken apart,
    as far as a guard can without being a shell: `"$HOME"` becomes `$HOME`, and
    `${HOME}` stays as written.
    """
    found: list[list[str]] = []
    for _ in range(NESTING if depth < NESTING else 0):  # `$(a $(b))` takes two rounds
        command, inner = _take_substitutions(command)
        for script in inner:
            found += simple_commands(script, depth + 1)
        if not inner:
            break
    current: list[str] = []
    for word in [*_shell_words(command), ";"]:
        if word and set(word) <= OPERATOR_CHARACTERS:
            words = _from_command_name(current)
            if words:
                found.append(words)
                for script in _nested_scripts(words) if depth < NESTING else []:
                    found += simple_commands(script, depth + 1)
            current = []
        else:
            current.append(word)
    return found


def _take_substitutions(command: str) -> tuple[str, list[str]]:
    """`command` with each innermost `$(…)`, `…` or `<(…)` replaced by `;`, and what they held."""
    inner: list[str] = []

    def take(match: re.Match[str]) -> str:
        inner.append("".join(filter(None, match.groups())))
        return " ; "

    return SUBSTITUTION.sub(take, command), inner


def _is_fork_bomb(command: str) -> bool:
    """A function that pipes into itself, such as `:(){ :|:& };:`, under any name."""
    words = _shell_words(command)
    defined = {name for name, parentheses in pairwise(words) if parentheses == "()"}
    piped = {words[i] for i in range(len(words) - 2) if words[i + 1 : i + 3] == ["|", words[i]]}
    return bool(defined & piped)


def _shell_words(command: str) -> list[str]:
    """The command's words and operators (`;`, `&&`, `|` …), quotes removed, as shlex reads them."""
    lexer = shlex.shlex(command.replace("\\\n", ""), posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"  # a newline separates commands, as `;` does
    lexer.whitespace_split = True
    lexer.commenters = ""  # bash starts a comment only at a word's start; keep every word
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: judge the words without them
        return _shell_words(re.sub(r"[\"'\\]", " ", command))


def _from_command_name(words: list[str]) -> list[str]:
    """Skip what precedes the command name: `VAR=value`, `if`, `env -i`, `nohup`, `time -p` …"""
    while words and (words[0] in KEYWORDS or ASSIGNMENT.fullmatch(words[0])):
        words = words[1:]
    if words and os.path.basename(words[0]) in PREFIXES:
        options = 1
        while options < len(words) and words[options].startswith("-"):
            options += 1
        return _from_command_name(words[options:])
    return words


def _nested_scripts(words: list[str]) -> list[str]:
    """The script a command runs as shell code: `bash -c SCRIPT`, `eval WORDS`."""
    name = os.path.basename(words[0])
    if name == "eval":
        return [" ".join(words[1:])]
    if name in SHELLS:
        for option, script in pairwise(words[1:]):
            if _is_option(option, "c"):
                return [script]
    return []


def _refusal_for(words: list[str]) -> str | None:
    """Why one simple command is plainly destructive, or None."""
    name, args = os.path.basename(words[0]), words[1:]
    everything = any(_names_everything(arg) for arg in args)
    if name == "rm" and (everything or "--no-preserve-root" in args):
        return "deletes all of / or of your home folder"
    if name == "find" and everything and ("-delete" in args or "rm" in args):
        return "deletes all of / or of your home folder"
    recursive = "--recursive" in args or any(_is_option(arg, "R") for arg in args)
    if name in {"chmod", "chown", "chgrp"} and everything and recursive:
        return "changes the permissions of the whole file system or your home folder"
    if name == "kill" and "-1" in args[1:]:
        return "signals every process you may signal"
    if name.startswith("mkfs") or name in {"mke2fs", "mkswap", "wipefs"}:
        return "formats a file system"
    if name == "dd" and any(arg.startswith("of=") and DISK.match(arg[3:]) for arg in args):
        return "writes raw data to a disk device"
    if any(">" in word and DISK.match(target) for word, target in pairwise(words)):
        return "overwrites a disk device"
    if name in {"shutdown", "reboot", "halt", "poweroff"} or (
        name == "systemctl" and {"poweroff", "reboot", "halt"} & set(args)
    ):
        return "stops the machine"
    if name in {"sudo", "su", "doas"}:
        return "asks for root rights"
    return None


def _names_everything(word: str) -> bool:
    """True for `/`, `~` or `$HOME` in any spelling: `/*`, `//`, `~/`, `${HOME}/.` …"""
    word = word.replace("${HOME}", "$HOME")
    tail = word[len(word.rstrip("/*.")) :]  # the '/', '*' and '.' it ends with
    stem = word[: len(word) - len(tail) + tail.find("/")] if "/" in tail else word
    return bool(word) and stem in {"", "~", "$HOME"}


def _is_option(word: str, letter: str) -> bool:
    """`-c`, or `-c` among other one-letter options, as in `-ec`."""
    return word.startswith("-") and not word.startswith("--") and letter in word
