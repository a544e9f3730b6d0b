"""The command `python -m lab collect`: each hand-in taken in, checked, marked, tabled.

It runs `handins.py` (the copy), `checks.py` (the checks and the quiz) for each student
and session, several students at a time (`--jobs`), and prints the tables in the order of
the students' names; `--csv` and `--json` write the same rows.

Imports `lab.exercises`, `lab.quiz` and the package's other modules.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import asdict
from pathlib import Path

from lab.exercises import EXERCISES, learner_lang
from lab.exercises.check import LANGS, Said
from lab.quiz.questions import QUIZZES
from machine import cores, stop_running_commands

from . import sealed
from .checks import Row, mark_quiz, run_check
from .handins import (
    SESSIONS,
    checked_exercises,
    has_session,
    printable,
    scratch_copy,
    sessions_of,
    students,
)

TIMEOUT = 300.0  # seconds one check may take: the slowest run a chapter for a minute
# Students checked at a time: the cores this process may use, at most this many.  A check
# times its commands (exercise 1.6 waits two seconds for three to meet), so never more than
# the cores, and on a server others share, `--jobs 1`.
JOBS = 4

WORDS = {
    "student": Said("student", "学生"),
    "session": Said("session", "课次"),
    "item": Said("check", "检查项"),
    "result": Said("result", "结果"),
    "detail": Said("what it saw", "看到了什么"),
    "exercises": Said("exercises done", "完成的练习"),
    "quiz": Said("quiz answers right", "答对的测验题"),
    "problems": Said("missing, refused, errors", "缺失、拒收、出错"),
    "note": Said("note", "说明"),
    "sealed": Said(
        "each check runs with the file system read-only outside its copy",
        "每项检查运行时，副本之外的文件系统都是只读的",
    ),
    "not sealed": Said(
        "this system cannot make the file system read-only for a check (Linux user "
        "namespaces): the audit hook alone refuses what Python writes outside the copy",
        "这个系统无法在检查时把文件系统设为只读（需要 Linux 用户命名空间）："
        "只有审计钩子拒绝 Python 在副本之外的写入",
    ),
    "checking": Said("checking {}, session {} …", "正在检查 {} 的第 {} 次课……"),
    "interrupted": Said("interrupted: the checks running were stopped, no marks were written",
                        "已中断：正在运行的检查都已停下，没有写出任何分数"),
    "no students": Said("no student folders in {}", "{} 里没有学生文件夹"),
    "not a folder": Said("no folder {}: name the folder that holds the hand-ins",
                         "没有文件夹 {}：请给出存放作业的文件夹"),
}  # fmt: skip
RESULTS = {
    "done": Said("done", "完成"),
    "not done": Said("not done", "未完成"),
    "missing": Said("missing", "缺失"),
    "error": Said("error", "出错"),
    "timed out": Said("timed out", "超时"),
    "refused": Said("refused", "拒收"),
    "note": Said("note", "说明"),
}
PROBLEMS = ("missing", "error", "timed out", "refused")


def collect_handin(
    student: Path, session: int, lang: str, timeout: float, stopping: threading.Event
) -> list[Row]:
    """The rows of one hand-in: its notes, each exercise check, then the quiz; once
    `stopping` is set (Ctrl-C), no other check starts.  Its start is said on stderr, for
    a teacher who waits on a class: the tables come in the order of the names."""
    name = printable(student.name)
    if not has_session(student, session):
        return [Row(name, session, f"session{session}/", "missing", f"session{session}/")]
    said = WORDS["checking"](lang).format(name, session) + "\n"
    sys.stderr.write(said)  # one write: print's two would mix the lines of students side by side
    sys.stderr.flush()
    with scratch_copy(student, session) as handin:
        rows = [Row(name, session, "note", "note", note(lang)) for note in handin.notes]
        for number in checked_exercises(session):
            if stopping.is_set():
                return rows
            rows.append(run_check(handin, number, lang, timeout))
        rows.append(mark_quiz(handin, lang))
    return rows


def collect_all(
    folders: list[Path], options: argparse.Namespace, lang: str,
    show: Callable[[Path, list[Row]], None],
) -> list[Row]:  # fmt: skip
    """Every student's rows, `options.jobs` students at a time, each shown as soon as the
    students before it are.  At Ctrl-C the checks running are stopped, none other starts,
    and the scratch copies are removed before KeyboardInterrupt goes on."""
    stopping = threading.Event()

    def rows_of(student: Path) -> list[Row]:
        own: list[Row] = []
        for session in sessions_of(student, options.session):
            if stopping.is_set():  # no copy made, nor said, for a session that will not run
                break
            own += collect_handin(student, session, lang, options.timeout, stopping)
        return own

    rows: list[Row] = []
    with ThreadPoolExecutor(max_workers=options.jobs) as pool:
        futures = [pool.submit(rows_of, student) for student in folders]
        try:
            for student, future in zip(folders, futures, strict=True):
                own = future.result()
                show(student, own)
                rows += own
        except KeyboardInterrupt:
            stopping.set()
            for future in futures:
                future.cancel()  # the students not started yet
            while wait(futures, timeout=0.2).not_done:  # a check may start as we stop
                stop_running_commands()
            raise
    return rows


def shown(row: Row, lang: str) -> str:
    return RESULTS[row.result](lang) if row.result in RESULTS else row.result


def table(headers: list[str], rows: list[list[str]]) -> str:
    """Columns padded to their widest cell; a Chinese character counts as two."""

    def width(text: str) -> int:
        return sum(2 if ord(char) > 0x2E7F else 1 for char in text)

    widths = [max(width(cell) for cell in column) for column in zip(headers, *rows, strict=False)]
    lines = []
    for cells in (headers, *rows):
        padded = [cell + " " * (w - width(cell)) for cell, w in zip(cells, widths, strict=True)]
        lines.append("  ".join(padded).rstrip())
    return "\n".join(lines)


def student_table(rows: list[Row], lang: str) -> str:
    headers = [WORDS[h](lang) for h in ("session", "item", "result", "detail")]
    cells = [[str(r.session), r.item, shown(r, lang), r.detail[:100]] for r in rows]
    return table(headers, cells)


def summary(rows: list[Row], names: list[str], lang: str) -> str:
    """One line per student: exercises done of checked, quiz answers right of asked."""
    headers = [WORDS[h](lang) for h in ("student", "exercises", "quiz", "problems")]
    cells = []
    for name in names:
        own = [r for r in rows if r.student == name and r.item != "note"]
        exercises = [r for r in own if r.item in EXERCISES]
        done = sum(r.result == "done" for r in exercises)
        right = asked = 0
        for r in own:
            if r.item.startswith("quiz"):
                asked += len(QUIZZES[r.session - 1])
                right += int(r.result.split("/")[0]) if "/" in r.result else 0
        problems = sum(r.result in PROBLEMS for r in own)
        cells.append([name, f"{done}/{len(exercises)}", f"{right}/{asked}", str(problems)])
    return table(headers, cells)


def inert(value: object) -> object:
    """A cell a spreadsheet shows as text: one that starts like a formula (`=`, `+`, `-`,
    `@`), from a folder's name or a check's output, is given a leading `'`."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value


def write_rows(rows: list[Row], csv_path: Path | None, json_path: Path | None) -> None:
    """The rows, one per check, as CSV and as JSON, for a spreadsheet or a script."""
    if csv_path is not None:
        with csv_path.open("w", newline="", encoding="utf-8") as file:
            writer = csv.DictWriter(file, fieldnames=list(Row.__dataclass_fields__))
            writer.writeheader()
            writer.writerows(
                {key: inert(value) for key, value in asdict(row).items()} for row in rows
            )
    if json_path is not None:
        text = json.dumps([asdict(row) for row in rows], ensure_ascii=False, indent=1)
        json_path.write_text(text + "\n", encoding="utf-8")


def parser() -> argparse.ArgumentParser:
    usage = argparse.ArgumentParser(
        prog="python -m lab collect", description=__doc__.split("\n")[0]
    )
    usage.add_argument("handins", type=Path, help="the folder of the students' folders")
    usage.add_argument("--session", type=int, choices=SESSIONS, help="one session only")
    usage.add_argument("--csv", type=Path, help="write every row to this CSV file")
    usage.add_argument("--json", type=Path, help="write every row to this JSON file")
    usage.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds per check")
    usage.add_argument(
        "--jobs", type=int, metavar="N",
        help=f"students checked at a time (default: the machine's cores, at most {JOBS})",
    )  # fmt: skip
    usage.add_argument("--lang", choices=LANGS, default=None, help="en or zh (default: LANG)")
    return usage


def main(argv: list[str]) -> int:
    """Check and mark every hand-in; 0 once the tables are printed, 2 for a usage error,
    130 after Ctrl-C (the tables printed so far stay; no file is written)."""
    usage = parser()
    options = usage.parse_args(argv)
    lang = options.lang or learner_lang()
    options.jobs = min(JOBS, cores()) if options.jobs is None else options.jobs
    if options.jobs < 1:
        usage.error("--jobs must be 1 or more")
    if options.handins.is_symlink() or not options.handins.is_dir():
        print(f"error: {WORDS['not a folder'](lang).format(options.handins)}", file=sys.stderr)
        return 2
    folders, notes = students(options.handins)
    for note in notes:
        colon = "：" if lang == "zh" else ": "
        print(f"{WORDS['note'](lang)}{colon}{note(lang)}")
    if not folders:
        print(f"error: {WORDS['no students'](lang).format(options.handins)}", file=sys.stderr)
        return 2
    print(WORDS["sealed" if sealed.available() else "not sealed"](lang), flush=True)

    def show(student: Path, own: list[Row]) -> None:
        print(f"\n## {printable(student.name)}\n{student_table(own, lang)}", flush=True)

    try:
        rows = collect_all(folders, options, lang, show)
    except KeyboardInterrupt:
        print(f"\n{WORDS['interrupted'](lang)}", file=sys.stderr)
        return 130
    names = [printable(folder.name) for folder in folders]
    print(f"\n## {WORDS['student'](lang)}\n{summary(rows, names, lang)}")
    write_rows(rows, options.csv, options.json)
    return 0
