"""Run code as a system without POSIX's extras would: `python tests/posixless.py -m MOD ARGS`.

Before anything of the course is imported, it takes away what Windows lacks: the
`fcntl` module, process groups and sessions (`os.setsid`, `os.killpg`),
`O_NOFOLLOW` and `O_NONBLOCK`, `pread` and `pwrite`, the owner and mode calls on open
files, and user ids.  With `--no-proc`, it also hides /proc from the machine package,
as on macOS.  Whatever still runs uses the fallbacks in `machine/`; a call that was
taken away fails with AttributeError or ImportError, loudly.
"""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path

TAKEN_FROM_OS = [
    "setsid", "killpg", "O_NOFOLLOW", "O_NONBLOCK", "pread", "pwrite",
    "chown", "fchown", "lchown", "fchmod", "getuid", "geteuid",
]  # fmt: skip


def take_away(*, no_proc: bool) -> None:
    sys.modules["fcntl"] = None  # type: ignore[assignment]  # `import fcntl` now fails
    for name in TAKEN_FROM_OS:
        if hasattr(os, name):
            delattr(os, name)
    if no_proc:
        import machine.processes

        machine.processes.PROC = Path("/no-proc-on-this-system")


def main() -> None:
    args = sys.argv[1:]
    no_proc = "--no-proc" in args[:1]
    args = args[1:] if no_proc else args
    if args[:1] not in (["-m"], ["-c"]) or len(args) < 2:
        sys.exit("usage: python tests/posixless.py [--no-proc] -m MODULE [ARGS…] | -c CODE")
    sys.path[0] = str(Path(__file__).resolve().parent.parent)  # the course, not tests/
    take_away(no_proc=no_proc)
    sys.argv = [args[1], *args[2:]]
    if args[0] == "-c":
        exec(compile(args[1], "<-c>", "exec"), {"__name__": "__main__"})
    else:
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
