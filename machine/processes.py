"""Starting a command so that everything it starts can be stopped, and stopping it.

A command the agent runs may leave processes behind: a server started with `&`, a
daemon that forked twice and called `setsid` to leave the process group.  Each is
found and stopped after the command returns, by two means, each used where the
system has it:

* the process group: where `os.setsid` and `os.killpg` exist, the command starts a
  session of its own and the whole group is killed at once;
* a marker: a random value in the environment of the command, which every process it
  starts inherits, even one that left the group.  Processes carrying it are found in
  `/proc/PID/environ` where there is a `/proc` (Linux), and through `psutil`
  everywhere else (macOS, Windows), which also stops a process tree where there are
  no process groups.

A process that drops its environment (`env -i`) or is started by another service
(`systemd-run`, `docker`, a `tmux` already running) escapes both.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

MARKER_VARIABLE = "AGENT_COMMAND_MARKER"
STOP_ROUNDS = 20  # scans for marked processes: one may fork while the last is killed
PROC = Path("/proc")  # where Linux shows every process; elsewhere psutil asks the system


def own_group() -> dict[str, Any]:
    """The `subprocess.Popen` arguments that start a command in a process group of its own."""
    if hasattr(os, "setsid") and hasattr(os, "killpg"):
        return {"start_new_session": True}
    if hasattr(subprocess, "CREATE_NEW_PROCESS_GROUP"):  # Windows: Ctrl-C stays with us
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {}


def stop_everything(process: subprocess.Popen, marker: str) -> None:
    """Kill the command and all it started: its group or tree, then whatever carries `marker`."""
    stop_tree(process)
    entry = f"{MARKER_VARIABLE}={marker}"
    for _ in range(STOP_ROUNDS):
        found = marked_processes(entry)
        if not found:
            break
        for pid in found:
            kill(pid)
        time.sleep(0.01)  # let them die, so the next scan sees only new ones
    process.wait()


def stop_tree(process: subprocess.Popen) -> None:
    """Kill the command's process group where there is one, else the command and its children."""
    if own_group().get("start_new_session"):
        with contextlib.suppress(ProcessLookupError, PermissionError):  # it may be gone
            os.killpg(process.pid, signal.SIGKILL)
        return
    import psutil  # imported only where needed: it takes longer to import than a chapter

    try:
        root = psutil.Process(process.pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return
    for member in tree:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            member.kill()


def kill(pid: int) -> None:
    """Kill one process, if it is still there and ours to kill.

    The PID was found a moment ago; its reuse within that moment would need the
    system to hand out every other PID first.
    """
    if hasattr(signal, "SIGKILL"):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
        return
    import psutil

    with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
        psutil.Process(pid).kill()  # os.kill on Windows would kill with any signal anyway


def marked_processes(entry: str) -> list[int]:
    """The PIDs whose starting environment holds `entry` (`NAME=value`)."""
    if PROC.is_dir():
        return _marked_in_proc(PROC, entry.encode())
    import psutil

    name, _, value = entry.partition("=")
    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get(name) == value:
                found.append(process.pid)
        except (psutil.Error, OSError):  # gone already, a zombie, or another user's
            continue
    return found


def _marked_in_proc(proc: Path, entry: bytes) -> list[int]:
    """The PIDs whose /proc/PID/environ holds `entry`: one read per process, no library."""
    found = []
    with contextlib.suppress(FileNotFoundError):
        for name in os.listdir(proc):
            if not name.isdigit():
                continue
            try:
                with open(proc / name / "environ", "rb") as environ:
                    if entry in environ.read():  # a zombie's reads as empty
                        found.append(int(name))
            except OSError:  # gone already, or another user's
                continue
    return found


# --- what leaves both the group and the marker ---------------------------------------------
#
# `setsid env -i sleep 600 &` starts a session of its own and drops the environment, so
# neither means above finds it.  On Linux a process can ask to become the parent of every
# orphan among its descendants (PR_SET_CHILD_SUBREAPER): nothing a command starts can
# then leave its lineage, and whatever is left as its child once no command is running
# was left behind by one.  Elsewhere there is no such call, and such a process lives on.

PR_SET_CHILD_SUBREAPER = 36
ADOPTING: list[bool] = []  # [True] once this process adopts the orphans of its commands


def adopt_orphans() -> bool:
    """Become the parent of every process this process's commands leave behind, where the
    system allows it (Linux); True if it does.  A program's entry point asks for it: a
    library that ran commands in someone else's process must not take its children."""
    if ADOPTING:
        return True
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        adopted = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):  # no libc with prctl: not Linux
        adopted = False
    if adopted:
        ADOPTING.append(True)
    return adopted


def stop_orphans(keep: set[int]) -> None:
    """Kill and reap every child of this process but `keep`: with `adopt_orphans`, what a
    command left behind, however it detached.  Their own children come next, adopted in
    turn, until none is left."""
    for _ in range(STOP_ROUNDS):
        orphans = [pid for pid in children_of(os.getpid()) if pid not in keep]
        if not orphans:
            return
        for pid in orphans:
            kill(pid)
        for pid in orphans:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def children_of(parent: int) -> list[int]:
    """The PIDs whose parent is `parent`, from /proc (where orphans can be adopted at all)."""
    found = []
    with contextlib.suppress(FileNotFoundError):
        for name in os.listdir(PROC):
            if not name.isdigit():
                continue
            try:
                stat = (PROC / name / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[-1].split()  # after "pid (command name)"
            if len(fields) > 1 and fields[1] == str(parent):
                found.append(int(name))
    return found


def cores() -> int:
    """The cores this process may use: a container or `taskset` may give it fewer than the
    machine has (Linux says so; elsewhere, the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
