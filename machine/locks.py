"""Exclusive locks between processes: one holder at a time, and never left behind by a crash.

`hold(path)` takes the lock named by a file and returns a `Lock`; `release()` (or
leaving its `with`) lets the next process have it.  With `wait=False` a lock held
elsewhere raises `LockBusy` at once, naming the holder's pid, which the holder writes
into the file.  Each system's own lock is used, chosen by what it has:

* `fcntl.flock` (Linux, macOS): a lock the kernel keeps on the open file and drops
  when its process ends, even by `kill -9`, so a dead holder never blocks anyone;
* `msvcrt.locking` (Windows): the same, on one byte of the file;
* elsewhere, the lock file is created exclusively and deleted on release; one left by
  a process that died is taken over once no process has the pid written in it.

The file is never deleted by the first two: a process that opened it just before the
deletion would lock a file no longer in the folder while a third locks a new one.
And it is not passed on to child processes (Python opens files non-inheritable), so a
server a command left running cannot hold it.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from .files import BINARY, NOFOLLOW, read_at, write_at
from .own_files import agent_path, make_agent_folder, not_a_link, open_agent_file

try:
    import fcntl
except ImportError:
    fcntl = None  # type: ignore[assignment]
try:
    import msvcrt
except ImportError:
    msvcrt = None  # type: ignore[assignment]

POLL = 0.05  # seconds between tries while waiting, where the system cannot wait for us
LOCKED_BYTE = 1 << 30  # msvcrt locks bytes: one far past the pid, which stays readable


class LockBusy(Exception):
    """Another process holds the lock; `holder` is its pid as written in the file."""

    def __init__(self, holder: str) -> None:
        super().__init__(f"held by process {holder}")
        self.holder = holder


class Lock:
    """A lock this process holds until `release()`."""

    def __init__(self, path: Path, fd: int, created: bool) -> None:
        self.path = path
        self._fd: int | None = fd
        self._created = created  # the exclusively created kind: delete the file on release

    def __enter__(self) -> Lock:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Let the next process have it.  Closing the file releases a kernel lock."""
        if self._fd is None:
            return
        if self._created:
            self.path.unlink(missing_ok=True)
        os.close(self._fd)
        self._fd = None


def hold(path: str | Path, *, wait: bool = False, inside: Path | None = None) -> Lock:
    """Take the lock at `path`; if another process has it, wait, or raise LockBusy.

    With `inside`, the lock file is one of a program's own files in that folder
    (`files.open_agent_file`'s rules): its folder is created there, never through a
    link that leads out, and a lock file that is a link is refused (ToolError), so a
    lock planted as a link to ~/.bashrc never truncates it.
    """
    path = Path(path)
    if inside is not None and (fcntl is None and msvcrt is None):
        make_agent_folder(inside, path.parent)
        path = agent_path(inside, path)
        not_a_link(path)
    if fcntl is None and msvcrt is None:
        return _hold_by_creating(path, wait)
    if inside is not None:  # walked from `inside`, folder by folder, never through a link
        fd = open_agent_file(inside, path, create=True)
    else:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | BINARY | NOFOLLOW, 0o600)
    try:
        while not _try_kernel_lock(fd):
            if not wait:
                raise LockBusy(_holder(fd))
            time.sleep(POLL)
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    write_at(fd, f"{os.getpid()}\n".encode(), 0)
    return Lock(path, fd, created=False)


def _try_kernel_lock(fd: int) -> bool:
    """Lock the open file without waiting; False if another process has it."""
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # NB: refuse at once, never wait
        except BlockingIOError:
            return False
        return True
    os.lseek(fd, LOCKED_BYTE, os.SEEK_SET)
    try:
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except OSError:
        return False
    return True


def _hold_by_creating(path: Path, wait: bool) -> Lock:
    """The lock as a file that exists only while held, for systems without a kernel lock."""
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | BINARY, 0o600)
        except FileExistsError:
            holder = _holder_of(path)
            if holder == "gone":
                continue
            if holder.isdigit() and not _alive(int(holder)):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()  # left by a process that died
                continue
            if not wait:
                raise LockBusy(holder) from None
            time.sleep(POLL)
            continue
        write_at(fd, f"{os.getpid()}\n".encode(), 0)
        return Lock(path, fd, created=True)


def _holder(fd: int) -> str:
    return read_at(fd, 20, 0).decode(errors="replace").strip() or "unknown"


def _holder_of(path: Path) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | BINARY)
    except FileNotFoundError:
        return "gone"  # released meanwhile: not a number, so the next round tries again
    try:
        return _holder(fd)
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    """Whether a process with this pid exists (psutil asks each system its own way)."""
    import psutil  # only here: the other locks never need it

    return psutil.pid_exists(pid)
