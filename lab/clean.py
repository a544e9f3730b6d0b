"""`python -m lab clean [--home] [--yes]`: what the course's commands left in the temporary
folder, and with `--home` what they made in `~/agent-course`.

A demo works on a fresh copy of its workspace (`/tmp/v1_tool_loop-demo-1`, the next
number the next time) and leaves it there to be looked at; the figures keep a scratch
folder of their own; a comparison stopped hard leaves its scratch folder, and records
that could not be written where asked are kept in a temporary file.  On a server that
thirty learners share, these add up.  This lists the current user's own leftovers and,
with `--yes`, removes them.

Nothing else is touched: not a name the course does not make, not another user's
folder, and never what a link points to (a link planted under such a name is removed
as a link).

`~/agent-course` is where the docs' commands keep a learner's own work, so it is left
alone unless `--home` asks: then what the course's commands made directly in it is listed
too, known by what it holds, not by its name (a learner names it): a recording
(`--record`, and the `.partial` a stopped one leaves), the lab's records (`--json`) and
pages (`--html`), and a copy of a chapter's demo workspace (`--copy-demo`: private, with
every entry of that workspace, and at least one of its files unchanged).  Anything else
there stays: the learner's own files, a link, another user's file, and the whole folder
when it is itself a link.
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

from lab.chapters import chapter, chapters
from llm.cassette import FORMAT as CASSETTE
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
HEAD = 4096  # bytes read of a file in ~/agent-course to tell whether the course wrote it

# How the files the course writes begin: a cassette's header line, the lab's records.
MADE_FILE = re.compile(rf'\{{\s*"format": "({re.escape(CASSETTE)}|lab-records/\d+)"')


def mine(info: os.stat_result) -> bool:
    return not hasattr(os, "getuid") or info.st_uid == USER_ID


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
            if not mine(info):
                continue  # another learner's: theirs to remove
            found.append(path)
    return found


def course_page(head: str) -> bool:
    """A page of the run viewer (`lab view`, `lab compare --html`), in either language."""
    from lab.view import TEXTS
    from lab.words import word

    titles = {word(TEXTS["title"], lang) for lang in ("en", "zh")}
    return head.startswith("<!DOCTYPE html>") and any(f"<title>{t}" in head for t in titles)


def same_file(here: Path, original: Path) -> bool:
    """`here` is a file, not a link, with the bytes of `original`."""
    try:
        if not stat.S_ISREG(here.lstat().st_mode):
            return False
        return here.read_bytes() == original.read_bytes()
    except OSError:
        return False


def holds(folder: Path, entry: Path) -> bool:
    """`folder` has an entry of `entry`'s name and kind, not a link."""
    here = folder / entry.name
    return not here.is_symlink() and here.exists() and here.is_dir() == entry.is_dir()


def demo_copy(folder: Path) -> bool:
    """A copy `--copy-demo` made: private, holding every entry of one chapter's demo
    workspace, and one of that workspace's files still unchanged."""
    if stat.S_IMODE(folder.lstat().st_mode) != 0o700:
        return False
    for name in chapters():
        workspace = chapter(name).demo_workspace
        entries = list(workspace.iterdir()) if workspace.is_dir() else []
        if entries and all(holds(folder, entry) for entry in entries):
            files = [path for path in workspace.rglob("*") if path.is_file()]
            if any(same_file(folder / path.relative_to(workspace), path) for path in files):
                return True
    return False


def made_here(path: Path) -> bool:
    """Whether the course's commands made `path`, an entry of ~/agent-course (see above)."""
    try:
        info = path.lstat()
    except OSError:
        return False
    if not mine(info):
        return False
    if stat.S_ISDIR(info.st_mode):  # lstat: a link is neither a folder nor a file here
        return demo_copy(path)
    if not stat.S_ISREG(info.st_mode):
        return False
    try:
        with open(path, "rb") as file:
            head = file.read(HEAD).decode("utf-8", errors="replace")
    except OSError:
        return False
    return bool(MADE_FILE.match(head)) or course_page(head)


def home_leftovers(own: Path) -> list[Path]:
    """What the course's commands made directly in `own` (~/agent-course), in order; none
    when `own` is a link, whatever it points to."""
    if own.is_symlink() or not own.is_dir():
        return []
    try:
        names = sorted(os.listdir(own))
    except OSError:
        return []
    return [own / name for name in names if made_here(own / name)]


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


def clean(folders: list[Path], *, yes: bool, home: Path, own_folder: bool = False) -> int:
    """List the leftovers in `folders`, and with `own_folder` what the course made in
    ~/agent-course; remove them if `yes`; what `main` prints."""
    found = leftovers(folders)
    own = home / "agent-course"
    if not found:
        print(f"nothing left by the course in {', '.join(map(str, dict.fromkeys(folders)))}")
    if own_folder:
        made = home_leftovers(own)
        if own.is_symlink():
            print(f"{own} is a link: left as it is, and what it points to too")
        elif not made:
            print(f"nothing made by the course's commands in {own}")
        found += made
    for path in found[:SHOWN]:
        print(f"  {path}  {shown_size(size_of(path))}")
    if len(found) > SHOWN:
        print(f"  … and {len(found) - SHOWN} more")
    if own.is_dir() and not own_folder:
        print(f"{own} holds your own work (recordings, copies of tasks): left as it is")
        print("  `python -m lab clean --home` lists what the course's commands made there")
    if not found:
        return 0
    total = sum(map(size_of, found))
    if not yes:
        again = "python -m lab clean --home --yes" if own_folder else "python -m lab clean --yes"
        print(f"{len(found)} left, {shown_size(total)}: `{again}` removes them")
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
    parser.add_argument(
        "--home",
        action="store_true",
        help="also what the course's commands made in ~/agent-course: recordings, the lab's "
        "records and pages, copies of demo workspaces (never the rest of your files)",
    )
    parser.add_argument("--yes", action="store_true", help="remove what is listed")
    args = parser.parse_args(argv)
    folders = [Path(tempfile.gettempdir()), MEASURING.parent]
    return clean(folders, yes=args.yes, home=Path.home(), own_folder=args.home)
