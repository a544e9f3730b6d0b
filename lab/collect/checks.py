"""Running a hand-in's exercise checks in its scratch copy, and marking its quiz.

Each check is `python -m lab exercise N.M [FILE]` as the chapters' pages give it, run by
`confined.py` in a process of its own whose current folder, home and temporary folder
are the scratch copy's, with no key in its environment and a timeout that stops it and
all it started.  Its exit code is the verdict (0 done, 1 not done); its first line of
output is kept as what it saw.  The quiz is marked here, in the teacher's process: an
answers file is read as text, and none of the hand-in's code runs for it.

Imports `lab.quiz`, `lab.collect.handins` and `machine` (to stop a process group).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from lab.quiz.marking import AnswersError, mark, read_answers
from machine.processes import own_group, stop_tree

from . import sealed
from .handins import HANDED_FILES, Handin, printable, quiz_file

OUTPUT_KEPT = 2_000  # characters of a check's output kept for the detail column
PASSED_ON = ("PATH", "SYSTEMROOT", "COMSPEC", "PATHEXT")  # what a command needs to be found


@dataclass(frozen=True)
class Row:
    """One line of a student's table: an exercise check or the quiz, and what came of it.

    `result` is one of done, not done, missing, error, timed out, refused (a file that
    cannot be marked) or, for the quiz, `right/asked`.
    """

    student: str
    session: int
    item: str
    result: str
    detail: str = ""


def environment(handin: Handin, lang: str) -> dict[str, str]:
    """The check's environment: the scratch copy's folders, the course's code, no keys."""
    kept = {name: os.environ[name] for name in PASSED_ON if name in os.environ}
    return kept | {
        "HOME": str(handin.root / "home"),
        "TMPDIR": str(handin.root / "tmp"),
        "TEMP": str(handin.root / "tmp"),
        "TMP": str(handin.root / "tmp"),
        "PYTHONPATH": str(handin.course),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "LANG": "zh_CN.UTF-8" if lang == "zh" else "C.UTF-8",
        "NO_COLOR": "1",
    }


def verdict_line(path: Path, number: str) -> str:
    """What the check said: its line that starts with the exercise's number (or `error:`),
    and the hint after it; else the start of the output (a check that crashed)."""
    with path.open("rb") as file:
        text = file.read(OUTPUT_KEPT).decode("utf-8", errors="replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    starts = [i for i, line in enumerate(lines) if line.startswith((f"{number} ", "error:"))]
    at = starts[-1] if starts else 0
    return printable(" ".join(lines[at : at + 2]))


def first_word(path: Path) -> str:
    """The answer a text hand-in gives its check: its first word, unless that is an option
    (which would change what the check is asked, not answer it)."""
    words = path.read_bytes()[:OUTPUT_KEPT].decode("utf-8", errors="replace").split()
    word = words[0] if words else ""
    return "" if word.startswith("-") else word


def run_check(handin: Handin, number: str, lang: str, timeout: float) -> Row:
    """One exercise check in the scratch copy; missing when it needs a file not handed in."""
    words = ["exercise", number, "--lang", lang]
    if number in HANDED_FILES:
        handed = handin.files / HANDED_FILES[number]
        if not handed.is_file():
            return Row(handin.student, handin.session, number, "missing", HANDED_FILES[number])
        given = str(handed) if handed.suffix == ".jsonl" else first_word(handed)
        if not given:
            problem = f"{handed.name}: write the one answer the check takes, such as FILE:LINE"
            return Row(handin.student, handin.session, number, "refused", problem)
        words.insert(2, given)
    command = [sys.executable, "-m", "lab.collect.confined", str(handin.root), "--", *words]
    if sealed.available():
        command = [*sealed.UNSHARE, *command[:3], "--sealed", *command[3:]]
    out = handin.root / f"check-{number}.out"
    with out.open("wb") as sink:
        process = subprocess.Popen(
            command, cwd=handin.course, env=environment(handin, lang), stdin=subprocess.DEVNULL,
            stdout=sink, stderr=subprocess.STDOUT, **own_group(),
        )  # fmt: skip
        try:
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_tree(process)
            process.wait()
            return Row(handin.student, handin.session, number, "timed out", f"over {timeout:g} s")
        finally:
            stop_tree(process)  # what the check started and left running
    result = {0: "done", 1: "not done"}.get(code, "error")
    return Row(handin.student, handin.session, number, result, verdict_line(out, number))


def mark_quiz(handin: Handin, lang: str) -> Row:
    """The session's quiz marked from the answers file handed in, or why it could not be."""
    chapter = handin.session - 1
    item = f"quiz {chapter}"
    path = handin.files / quiz_file(handin.session)
    if not path.is_file():
        return Row(handin.student, handin.session, item, "missing", quiz_file(handin.session))
    try:
        marks = mark(chapter, read_answers(path, chapter))
    except AnswersError as error:
        shown = error.said(lang).replace(str(path), quiz_file(handin.session))
        return Row(handin.student, handin.session, item, "refused", shown)
    wrong = ", ".join(str(m.number) for m in marks if not m.correct)
    right = sum(m.correct for m in marks)
    return Row(
        handin.student, handin.session, item, f"{right}/{len(marks)}", wrong and f"✗ {wrong}"
    )
