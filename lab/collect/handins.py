"""What a student hands in after each session, and how it is copied into a scratch folder.

    HANDINS/                 the folder the teacher collects into
      alice/                 one folder per student
        session2/            one per session, 1 to 5 (session N is chapter N - 1)
          v1_tool_loop/      the chapter's folder as the student left it: its .py files
          1.2.txt            the answer exercise 1.2 names on the command line (FILE:LINE)
          1.4.jsonl          the file an exercise asks for, named after the exercise
          1.5.jsonl
          quiz1.txt          `python -m lab quiz 1 --save quiz1.txt`
        session5/
          v4_memory/
          llm/repair.py      a file of the course outside the chapter that an exercise
                             changes, at its place in the course (`COURSE_FILES`)

Only these are taken: the `.py` files of the session's chapter folder (not its demo,
which stays the course's), the files of `HANDED_FILES` and `COURSE_FILES`, and the
quiz's answers.  They
are copied byte by byte, each opened without following links, into a fresh scratch
folder; a symbolic link, a special file or a file over `MAX_FILE` is left out and named
in the notes, so a hand-in cannot point the checks at the teacher's files, and a file
missing costs only the checks that need it.

Imports `lab.chapters` and `lab.exercises` (which exercises a chapter checks).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from lab.chapters import REPO, chapters
from lab.exercises import EXERCISES
from lab.exercises.check import Said

SESSIONS = (1, 2, 3, 4, 5)
# The exercises whose check is given something the student wrote, and the file that holds
# it: a cassette (`python -m lab exercise 1.5 FILE`), or the words to give the check (1.2).
HANDED_FILES = {"0.1": "0.1.jsonl", "1.2": "1.2.txt", "1.4": "1.4.jsonl", "1.5": "1.5.jsonl"}
HANDED_FILES |= {"2.2": "2.2.jsonl", "3.4": "3.4.jsonl"}
# The files outside the chapter's folder that a session's exercises change, by the path
# the hand-in holds them at, the same as in the course (exercise 0.2 adds a case to the
# corpus of replies; 4.3 changes llm's repair, 4.5 adds a searcher to the lab's).
COURSE_FILES = {1: ("tests/data/react_replies.jsonl",)}
COURSE_FILES[5] = ("llm/repair.py", "lab/memory_searchers.py")
MAX_FILE = 1024 * 1024  # bytes: a chapter file or a cassette is far smaller
MAX_HANDIN = 16 * 1024 * 1024  # bytes of one session's hand-in in all
MAX_FILES = 500  # files of one session's hand-in: a chapter has a few dozen
MAX_DEPTH = 6  # folders inside the chapter's folder: its skills are two deep
# What of the course each scratch copy holds: the packages the checks import and run,
# and the data the checks read.
COURSE_PARTS = ("llm", "machine", "lab", "tests/data")


@dataclass
class Budget:
    """What is left of what one session's hand-in may hold: bytes, and files."""

    size: int = MAX_HANDIN
    files: int = MAX_FILES


@dataclass
class Handin:
    """One student's hand-in of one session, copied: where it lies, and what was left out."""

    student: str
    session: int
    root: Path  # the scratch folder: course/, handin/, home/, tmp/
    notes: list[Said] = field(default_factory=list)

    @property
    def course(self) -> Path:
        return self.root / "course"

    @property
    def files(self) -> Path:
        return self.root / "handin"


LINK = Said("a symbolic link", "是符号链接")
SPECIAL = Said("not a regular file", "不是普通文件")
TOO_BIG = Said(
    f"over {MAX_FILE // 1024} KiB, or over what the hand-in may hold in all",
    f"超过 {MAX_FILE // 1024} KiB，或超出整份作业的上限",
)
UNREADABLE = Said("cannot be read", "读不了")
TOO_MANY = Said(f"over {MAX_FILES} files in the hand-in", f"整份作业超过 {MAX_FILES} 个文件")
TOO_DEEP = Said(f"over {MAX_DEPTH} folders deep", f"文件夹嵌套超过 {MAX_DEPTH} 层")
NOT_A_FOLDER = Said("not a folder of its own (a link or a file)", "不是文件夹（是链接或文件）")


def left_out(name: str, why: Said) -> Said:
    """A note of the table: a file not taken into the copy, and why."""
    return Said(f"{name}: {why.en}, left out", f"{name}：{why.zh}，未收")


def printable(text: str) -> str:
    """`text` with control characters shown as `?`: a folder's or a file's name, or a
    check's output, cannot move the teacher's cursor or colour the terminal."""
    return "".join("?" if unicodedata.category(c).startswith("C") else c for c in text)


def chapter_of(session: int) -> str:
    """The chapter package a session is about: session 1 is chapter 0's, and so on."""
    return chapters()[session - 1]


def checked_exercises(session: int) -> list[str]:
    """The exercises of the session's chapter that a program checks, in order."""
    prefix = f"{session - 1}."
    return [n for n, e in EXERCISES.items() if n.startswith(prefix) and e.check is not None]


def quiz_file(session: int) -> str:
    return f"quiz{session - 1}.txt"


def students(handins: Path) -> tuple[list[Path], list[Said]]:
    """The students' folders, by name, and a note for each entry that is not one."""
    folders, notes = [], []
    for entry in sorted(os.scandir(handins), key=lambda e: e.name):
        if entry.name.startswith("."):
            continue
        if entry.is_symlink() or not entry.is_dir(follow_symlinks=False):
            why = Said("not a folder of its own (a link or a file)", "不是文件夹（是链接或文件）")
            notes.append(left_out(printable(entry.name), why))
            continue
        folders.append(Path(entry.path))
    return folders, notes


def sessions_of(student: Path, only: int | None) -> list[int]:
    """The sessions the student's folder holds a real folder for (or `only`, if asked)."""
    if only:
        return [only]
    return [session for session in SESSIONS if has_session(student, session)]


def copy_regular(source: Path, target: Path, budget: Budget) -> Said | None:
    """Copy one regular file without following a link; the reason it was not, if not."""
    try:
        fd = os.open(
            source, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except OSError:
        return UNREADABLE
    with os.fdopen(fd, "rb") as file:
        found = os.fstat(file.fileno())
        if not stat.S_ISREG(found.st_mode):
            return SPECIAL
        if budget.files <= 0:
            return TOO_MANY
        if found.st_size > MAX_FILE or found.st_size > budget.size:
            return TOO_BIG
        data = file.read(MAX_FILE + 1)
    if len(data) > MAX_FILE:
        return TOO_BIG
    budget.size -= len(data)
    budget.files -= 1
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return None


def copy_chapter(
    source: Path, target: Path, shown: str, budget: Budget, depth: int = 0
) -> list[Said]:
    """The chapter folder's .py files, down to MAX_DEPTH but not its demo; notes on what was
    left out."""
    notes: list[Said] = []
    for entry in sorted(os.scandir(source), key=lambda e: e.name):
        name = f"{shown}/{printable(entry.name)}"
        if entry.is_symlink():
            notes.append(left_out(name, LINK))
        elif entry.is_dir(follow_symlinks=False):
            if entry.name in ("demo", "__pycache__"):
                continue
            if depth >= MAX_DEPTH:
                notes.append(left_out(name, TOO_DEEP))
                continue
            notes += copy_chapter(Path(entry.path), target / entry.name, name, budget, depth + 1)
        elif entry.name.endswith(".py"):
            problem = copy_regular(Path(entry.path), target / entry.name, budget)
            if problem:
                notes.append(left_out(name, problem))
    return notes


def copy_course(target: Path) -> None:
    """The course as the teacher has it: chapters, packages, data, no caches."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in (*chapters(), *COURSE_PARTS):
        shutil.copytree(REPO / part, target / part, ignore=ignore, symlinks=True)


def copy_course_files(folder: Path, course: Path, session: int, budget: Budget) -> list[Said]:
    """The session's COURSE_FILES that the hand-in holds, each at its place in the course
    copy; a link on the way to one leaves it out."""
    notes = []
    for path in COURSE_FILES.get(session, ()):
        parts = path.split("/")
        steps = ["/".join(parts[: n + 1]) for n in range(len(parts))]
        links = [step for step in steps if (folder / step).is_symlink()]
        if links:
            notes.append(left_out(links[0], LINK))
        elif (folder / path).exists():
            problem = copy_regular(folder / path, course / path, budget)
            if problem:
                notes.append(left_out(path, problem))
    return notes


def take_code(folder: Path, course: Path, session: int, budget: Budget) -> list[Said]:
    """The session's chapter folder and course files, from `folder`, laid over `course`."""
    chapter = chapter_of(session)
    notes = []
    if (folder / chapter).is_symlink():
        notes.append(left_out(chapter, LINK))
    elif (folder / chapter).is_dir():
        notes += copy_chapter(folder / chapter, course / chapter, chapter, budget)
    return notes + copy_course_files(folder, course, session, budget)


def take_in(folder: Path, handin: Handin) -> None:
    """Copy what the session's hand-in may hold from `folder` into the scratch copy."""
    session, budget = handin.session, Budget()
    handin.notes += take_code(folder, handin.course, session, budget)
    code = {chapter_of(session), *(path.split("/")[0] for path in COURSE_FILES.get(session, ()))}
    wanted = {quiz_file(session)}
    wanted |= {HANDED_FILES[n] for n in checked_exercises(session) if n in HANDED_FILES}
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        name = printable(entry.name)
        if entry.name in code:
            continue  # taken above
        if entry.is_symlink():
            handin.notes.append(left_out(name, LINK))
        elif entry.name in wanted:
            problem = copy_regular(Path(entry.path), handin.files / entry.name, budget)
            if problem:
                handin.notes.append(left_out(name, problem))
        else:
            handin.notes.append(
                Said(
                    f"{name}: not part of a session {session} hand-in",
                    f"{name}：不属于第 {session} 次课的作业",
                )  # fmt: skip
            )


def handed_in(student: Path, session: int) -> Path:
    return student / f"session{session}"


def has_session(student: Path, session: int) -> bool:
    """Whether the student handed session `session` in: a real folder, not a link."""
    folder = handed_in(student, session)
    return folder.is_dir() and not folder.is_symlink()


@contextlib.contextmanager
def scratch_copy(student: Path, session: int) -> Iterator[Handin]:
    """A fresh scratch folder holding the course, the student's code of the sessions before
    (a later chapter imports an earlier one's tools), and this hand-in; removed afterwards.
    What was left out of an earlier session is noted in that session's own rows."""
    root = Path(tempfile.mkdtemp(prefix="lab-collect-"))  # mode 0700: the teacher's alone
    try:
        handin = Handin(printable(student.name), session, root)
        for name in ("handin", "home", "tmp"):
            (root / name).mkdir()
        copy_course(handin.course)
        for earlier in range(1, session):  # the course as the student had it by then
            if has_session(student, earlier):
                take_code(handed_in(student, earlier), handin.course, earlier, Budget())
        take_in(handed_in(student, session), handin)
        yield handin
    finally:
        shutil.rmtree(root, ignore_errors=True)
