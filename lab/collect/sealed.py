"""The file system made read-only, but for one folder, for a check and all it starts (Linux).

    python -m lab.collect.sealed FOLDER      exit 0 when a write outside FOLDER is refused

The audit hook of `confined.py` sees what Python does; a command that a hand-in's
cassette has the chapter's `bash` tool run is another process, which it does not see.
Where Linux lets a user make a mount namespace of their own (`unshare --user`), the
check runs in one in which every mount is read-only but the scratch copy: then no
process of the check, Python or not, can write outside it.  `available` tries it once;
where it is not offered (macOS, Windows, a kernel before 5.12, user namespaces turned
off), the checks run without it and `lab.collect` says so.

Imports the standard library only.
"""

from __future__ import annotations

import ctypes
import functools
import os
import subprocess
import sys
import tempfile
from pathlib import Path

UNSHARE = ["unshare", "--user", "--map-current-user", "--mount"]
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000
AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = -100, 0x8000, 0x1
SYS_MOUNT_SETATTR = 442  # the same number on every Linux architecture


class MountAttributes(ctypes.Structure):
    """`struct mount_attr` of mount_setattr(2)."""

    _fields_ = [(name, ctypes.c_uint64) for name in ("set", "clear", "propagation", "userns")]


def _call(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def seal(folder: Path) -> None:
    """In a fresh mount namespace: every mount read-only, `folder` (bound onto itself) not.

    Mounts made private first, so that nothing done here reaches the namespace outside.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    here = os.fsencode(folder)
    _call(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "making mounts private")
    _call(libc.mount(here, here, None, MS_BIND | MS_REC, None), f"binding {folder}")
    for path, change in ((b"/", MountAttributes(MOUNT_ATTR_RDONLY, 0, 0, 0)),
                         (here, MountAttributes(0, MOUNT_ATTR_RDONLY, 0, 0))):  # fmt: skip
        size = ctypes.sizeof(change)
        result = libc.syscall(
            SYS_MOUNT_SETATTR, AT_FDCWD, path, AT_RECURSIVE, ctypes.byref(change), size
        )
        _call(result, f"mount_setattr {path.decode(errors='replace')}")


@functools.cache
def available() -> bool:
    """Whether a check can run sealed here: tried once, on a folder made for it."""
    if not sys.platform.startswith("linux"):
        return False
    with tempfile.TemporaryDirectory(prefix="lab-collect-seal-") as folder:
        inside = Path(folder) / "inside"
        inside.mkdir()
        try:
            done = subprocess.run(
                [*UNSHARE, sys.executable, "-m", "lab.collect.sealed", str(inside)],
                capture_output=True, timeout=60, cwd=folder,
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0 and not (Path(folder) / "outside").exists()


def main(argv: list[str]) -> int:
    """Seal FOLDER, then write inside it (which must work) and beside it (which must not):
    0 when both happen as they must, 1 when sealing or the write inside failed, 2 when
    the write outside went through."""
    folder = Path(argv[0]).resolve()
    try:
        seal(folder)
        (folder / "inside").write_text("")
    except OSError:
        return 1
    try:
        (folder.parent / "outside").write_text("")
    except OSError:
        return 0
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
