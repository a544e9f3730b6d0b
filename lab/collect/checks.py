"""Running a hand-in's exercise checks in its scratch copy, and marking its quiz.

Each check is the one `python -m lab exercise N.M [FILE]` runs, called by `confined.py`
in a process of its own whose current folder, home and temporary folder are the
scratch copy's, with no key in its environment and a timeout that stops it and all it
started.  The verdict is the one the check's function returned, written to a file and
signed with a nonce given only to that process: not its exit code nor its output, which
the hand-in's code could give as well.  The quiz is marked here, in the teacher's process:
an answers file is read as text, and none of the hand-in's code runs for it.

Imports `lab.quiz`, `lab.exercises.check`, `lab.collect.handins` and `machine` (to run a
process and stop all it started, or all at once at Ctrl-C).
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path

from lab.exercises.check import Said
from lab.quiz.marking import AnswersError, mark, read_answers
from machine import run

from . import sealed
from .confined import signature
from .handins import HANDED_FILES, Handin, printable, quiz_file

OUTPUT_KEPT = 2_000  # characters of a check's output kept for the detail column
VERDICT_BYTES = 1024 * 1024  # read of a verdict file at most: the hand-in may have filled it
NO_VERDICT = Said(
    "no verdict: the check's process ended before the check had said anything",
    "没有结论：检查还没说出结果，进程就结束了",
)
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


def verdict_line(text: str, number: str) -> str:
    """What the check said: its line that starts with the exercise's number (or `error:`),
    and the hint after it; else the start of the output (a check that crashed)."""
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
    words = [number]
    if number in HANDED_FILES:
        handed = handin.files / HANDED_FILES[number]
        if not handed.is_file():
            return Row(handin.student, handin.session, number, "missing", HANDED_FILES[number])
        given = str(handed) if handed.suffix == ".jsonl" else first_word(handed)
        if not given:
            problem = f"{handed.name}: write the one answer the check takes, such as FILE:LINE"
            return Row(handin.student, handin.session, number, "refused", problem)
        words.append(given)
    said = handin.root / f"verdict-{number}.json"
    runner = ["-m", "lab.collect.confined", str(handin.root), str(said), lang, *words]
    if sealed.available():
        command = [*sealed.UNSHARE, sys.executable, runner[0], runner[1], "--sealed", *runner[2:]]
    else:
        command = [sys.executable, *runner]
    nonce = secrets.token_hex(16)
    env = environment(handin, lang)
    ran = run(command, handin.course, timeout, env=env, input=f"{nonce}\n", limit=OUTPUT_KEPT)
    if ran.timed_out:
        return Row(handin.student, handin.session, number, "timed out", f"over {timeout:g} s")
    verdict = read_verdict(said, nonce)
    if verdict is None:
        seen = verdict_line(ran.output, number) or NO_VERDICT(lang)
        return Row(handin.student, handin.session, number, "error", seen)
    result, detail = verdict
    return Row(handin.student, handin.session, number, result, printable(detail))


def read_verdict(path: Path, nonce: str) -> tuple[str, str] | None:
    """The check's result and what it saw, if the file holds a verdict signed with this
    nonce (`confined.signature`): the hand-in's code can read and write the file too, but
    does not know the nonce."""
    try:
        with path.open("rb") as file:  # a verdict is a few kilobytes; the file may be more
            said = json.loads(file.read(VERDICT_BYTES))
        text, given = said["verdict"], said["signature"]
        if not hmac.compare_digest(signature(text, nonce), given):
            return None
        verdict = json.loads(text)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if not isinstance(verdict, dict):
        return None
    if verdict.get("result") not in ("done", "not done", "refused"):
        return None
    return verdict["result"], str(verdict.get("detail", ""))


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
