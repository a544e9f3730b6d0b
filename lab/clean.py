"""`python -m lab clean [--yes]`: what the course's commands left in the temporary folder.

A demo works on a fresh copy of its workspace (`/tmp/v1_tool_loop-demo-1`, the next
number the next time) and leaves it there to be looked at; the figures keep a scratch
folder of their own; a comparison stopped hard leaves its scratch folder, and records
that could not be written where asked are kept in a temporary file.  On a server that
thirty learners share, these add up.  This lists the current user's own leftovers and,
with `--yes`, removes them.

Nothing else is touched: not a name the course does not make, not another user's
folder, and never what a link points to (a link planted under such a name is removed
as a link).  `~/agent-course`, where the docs' commands keep a learner's own work, is
named but left alone.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

from llm.console import shown_size
from machine import USER_ID

from .figures.demos import MEASURING

# The names the course's commands give what they leave behind.
LEFTOVER = re.compile(
    r"v\d_[a-z_]+-demo-\d+"  # a demo's copy of its workspace (llm/demo.py)
    r"|lab-compare-\d+"  # a comparison's scratch folder, if it was stopped hard
    r"|lab-records-\w+\.json"  # records kept when the path asked for could not be written
    r"|agent-course-figures-\d+"  # the figures' scratch folder (lab/figures/demos.py)
)


SHOWN = 12  # leftovers listed one by one; a long list is counted after them


def leftovers(folders: list[Path]) -> list[Path]:
    """This user's leftovers in `folders`, by name, in order."""
    found = []
    for folder in dict.fromkeys(folders):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            path = folder / name
            if not LEFTOVER.fullmatch(name):
                continue
            try:
                info = path.lstat()
            except OSError:
                continue
            if hasattr(os, "getuid") and info.st_uid != USER_ID:
                continue  # another learner's: theirs to remove
            found.append(path)
    return found


def size_of(path: Path) -> int:
    """Bytes under `path`, links counted as links and never followed."""
    if path.is_symlink() or not path.is_dir():
        return path.lstat().st_size
    total = 0
    for folder, _, files in os.walk(path):  # os.walk does not follow links to folders
        for name in files:
            with contextlib.suppress(OSError):  # removed meanwhile
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


def remove(path: Path) -> None:
    """Remove one leftover: a link or a file as itself, a folder with what it holds."""
    if stat.S_ISDIR(path.lstat().st_mode):
        shutil.rmtree(path)  # does not follow the links it meets inside
    else:
        path.unlink()


def clean(folders: list[Path], *, yes: bool, home: Path) -> int:
    """List the leftovers in `folders`, and remove them if `yes`; what `main` prints."""
    found = leftovers(folders)
    own = home / "agent-course"
    if not found:
        print(f"nothing left by the course in {', '.join(map(str, dict.fromkeys(folders)))}")
    for path in found[:SHOWN]:
        print(f"  {path}  {shown_size(size_of(path))}")
    if len(found) > SHOWN:
        print(f"  … and {len(found) - SHOWN} more")
    if own.is_dir():
        print(f"{own} holds your own work (recordings, copies of tasks): left as it is")
    if not found:
        return 0
    total = sum(map(size_of, found))
    if not yes:
        print(f"{len(found)} left, {shown_size(total)}: `python -m lab clean --yes` removes them")
        return 0
    failed = []
    for path in found:
        try:
            remove(path)
        except OSError as error:
            failed.append(f"{path}: {error.strerror or error}")
    print(f"removed {len(found) - len(failed)} of {len(found)}, {shown_size(total)}")
    for line in failed:
        print(f"could not remove {line}")
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lab clean",
        description="List what the demos and the lab left in the temporary folder, and "
        "remove it with --yes. Only this user's leftovers, by the names the course gives them.",
    )
    parser.add_argument("--yes", action="store_true", help="remove what is listed")
    args = parser.parse_args(argv)
    folders = [Path(tempfile.gettempdir()), MEASURING.parent]
    return clean(folders, yes=args.yes, home=Path.home())
