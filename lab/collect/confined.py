"""The process that runs a hand-in's exercise check, inside its scratch copy.

    python -m lab.collect.confined SCRATCH VERDICT LANG 1.5 FILE    the nonce on stdin
    python -m lab.collect.confined --sealed SCRATCH …   in a mount namespace of its own

`lab.collect` starts it with the scratch copy as its current folder, home and temporary
folder, and nothing of the teacher's environment but PATH (no keys).  Before the
hand-in's code is imported, it sets limits (the size of a file, memory) and an audit
hook that refuses, in this process, to write, remove, rename or link anything outside
SCRATCH, to start a command anywhere else, and to connect to another machine.  Then it
calls the exercise's check, as `python -m lab exercise` does, and writes its verdict to
the file VERDICT, signed with the nonce it was given on stdin (`signature`): a verdict the
hand-in's code writes, or changes after reading the check's, does not carry the right
signature, since the code cannot know the nonce without searching the process for it.
With `--sealed`
(started by `unshare`, see `sealed.py`) it first makes every mount read-only but SCRATCH,
which holds the commands it starts as well.

The hook sees what Python code does through Python (open, os, shutil, sqlite3,
subprocess, socket): a guard against a hand-in that writes outside its copy, not a
sandbox.  Without `--sealed`, the commands the chapters' `bash` tool runs, and code that
reaches the system another way, are held by the limits and the scratch folders only.

Imports the standard library and `sealed.py` only until the hook is in place, then
`lab.exercises`, whose check it runs.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
from pathlib import Path
from typing import Any

from lab.collect.sealed import seal

FILE_LIMIT = 64 * 1024 * 1024  # bytes of any one file the check writes
MEMORY_LIMIT = 4 * 1024 * 1024 * 1024
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
DEVICES = {os.devnull, "/dev/tty", "/dev/stdout", "/dev/stderr"}
# Audit events that change the file system, and which of their arguments are paths.
PATH_EVENTS: dict[str, tuple[int, ...]] = {
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.mkdir": (0,),
    "os.rename": (0, 1),
    "os.link": (0, 1),
    "os.symlink": (1,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.truncate": (0,),
    "os.utime": (0,),
    "shutil.rmtree": (0,),
    "shutil.copyfile": (1,),
    "shutil.copytree": (1,),
    "shutil.move": (0, 1),
    "sqlite3.connect": (0,),
}


def inside(root: Path, path: Any) -> bool:
    """Whether `path` (str, bytes, PathLike or a file descriptor) ends up inside `root`."""
    if isinstance(path, int) or path is None:
        return True  # an open descriptor: what it names was judged when it was opened
    try:
        text = os.fsdecode(path)
    except TypeError:
        return False
    if text in DEVICES or text in (":memory:", ""):
        return True
    resolved = Path(os.path.realpath(text))
    return resolved == root or root in resolved.parents


def loopback(address: Any) -> bool:
    """Whether a socket address stays on this machine: the fake provider of a check is on
    127.0.0.1; nothing a check does needs the network, so nothing can be sent out by it."""
    if not isinstance(address, tuple):
        return True  # a Unix socket: a file, which the write rules already hold
    host = str(address[0]) if address else ""
    return host in ("localhost", "::1") or host.startswith("127.")


def writes(mode: Any, flags: Any) -> bool:
    """Whether an `open` audit event opens its file for writing."""
    if isinstance(mode, str) and any(letter in mode for letter in "wax+"):
        return True
    return isinstance(flags, int) and flags & WRITE_FLAGS != 0


def guard(root: Path):  # noqa: ANN201 - an audit hook
    """The audit hook: refuse what would change the file system outside `root`."""

    def refuse(event: str, path: Any) -> None:
        raise PermissionError(f"{event} {path!r}: outside the hand-in's scratch copy, refused")

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = args
            if writes(mode, flags) and not inside(root, path):
                refuse(event, path)
        elif event in PATH_EVENTS:
            for at in PATH_EVENTS[event]:
                if at < len(args) and not inside(root, args[at]):
                    refuse(event, args[at])
        elif event in ("socket.connect", "socket.sendto") and not loopback(args[1]):
            raise PermissionError(f"{event} {args[1]!r}: the checks run offline, refused")
        elif event == "subprocess.Popen":
            cwd = args[2]
            if cwd is not None and not inside(root, cwd):
                refuse(event, cwd)
        elif event in ("os.system", "os.exec", "os.posix_spawn", "os.spawn") and not inside(
            root, os.getcwd()
        ):
            refuse(event, os.getcwd())

    return hook


def limit() -> None:
    """Caps that hold the check's commands too: what one file may grow to, and memory."""
    try:
        import resource
    except ImportError:  # Windows: the timeout of lab.collect is the only bound
        return
    for which, value in ((resource.RLIMIT_FSIZE, FILE_LIMIT), (resource.RLIMIT_AS, MEMORY_LIMIT)):
        soft, hard = resource.getrlimit(which)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (cap, hard))


def judge(number: str, words: list[str], lang: str) -> tuple[str, str]:
    """The check's verdict, read from the Verdict its function returns, and what it saw.

    Not from an exit code nor a printed line, which the hand-in's code could give as
    well: a hand-in that exits (or stops the process) before the check has said anything
    leaves no verdict, and `checks.py` calls that an error.
    """
    from lab.exercises import EXERCISES, WORDS
    from lab.exercises.check import ExerciseInputError

    try:
        verdict = EXERCISES[number].check(words)
    except ExerciseInputError as error:  # the file handed in is not one the check takes
        return "refused", error.said(lang)
    except Exception as error:  # the hand-in's code failed inside the check  # noqa: BLE001
        return "not done", f"{WORDS['failed'](lang)} {error!r}"
    hint = f" {WORDS['hint'](lang)}{verdict.hint(lang)}" if verdict.hint else ""
    return ("done" if verdict.done else "not done"), verdict.seen(lang) + hint


def signature(text: str, nonce: str) -> str:
    """The HMAC of a verdict's text keyed by the nonce: the hand-in's code can read the
    verdict file, but without the nonce no change to the text keeps its signature."""
    return hmac.new(nonce.encode(), text.encode(), hashlib.sha256).hexdigest()


def main(argv: list[str]) -> int:
    """Read the nonce, seal and guard, run the check, write its verdict signed with the nonce."""
    nonce = sys.stdin.readline().strip()  # before any code of the hand-in runs
    sealed = argv[:1] == ["--sealed"]
    argv = argv[1:] if sealed else argv
    if len(argv) < 4:
        print(
            "usage: python -m lab.collect.confined [--sealed] SCRATCH VERDICT LANG N.M [WORD]",
            file=sys.stderr,
        )
        return 2
    root, verdict_file = Path(os.path.realpath(argv[0])), Path(argv[1])
    lang, number, words = argv[2], argv[3], argv[4:]
    if sealed:
        try:
            seal(root)
        except OSError as error:
            print(f"error: the file system could not be sealed: {error}", file=sys.stderr)
            return 3
    limit()
    sys.addaudithook(guard(root))
    result, detail = judge(number, words, lang)
    text = json.dumps({"result": result, "detail": detail}, ensure_ascii=False)
    said = {"verdict": text, "signature": signature(text, nonce)}
    verdict_file.write_text(json.dumps(said, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
