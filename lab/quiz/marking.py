"""Reading a learner's answers (typed, or a file handed in) and marking them.

An answers file is plain text, one answer a line, `NUMBER: ANSWER`, with `#` comments:

    # python -m lab quiz 2
    1: 4
    2: 4

A file that cannot be read as such (a line without a number, a question answered twice,
one the quiz does not have, bytes that are not UTF-8, a file far too big for a few
answers) is refused with one line that names the line at fault; it is never half read.

Imports `lab.quiz.questions` and `lab.exercises.check.Said`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from lab.exercises.check import ExerciseInputError, Said

from .questions import QUIZZES, Question, Right

MAX_BYTES = 16_000  # a few short answers take a few hundred bytes
LINE = re.compile(r"(\d+)\s*[:.)]\s*(.*)")
# Yes and no as a Chinese learner may write them.
ALIASES = {"y": "yes", "n": "no", "是": "yes", "能": "yes", "可以": "yes", "否": "no"}
ALIASES |= {"不": "no", "不能": "no", "不可以": "no"}


class AnswersError(ExerciseInputError):
    """An answers file that cannot be marked; the message (`said`, in both languages) names
    what is wrong with it, as an exercise's input error does."""


@dataclass(frozen=True)
class Mark:
    """One question marked: what was given (empty: no answer), the right answer, and why."""

    number: int
    given: str
    right: Right
    correct: bool


def normal(answer: str) -> str:
    """The answer without what does not change it: width, case, quotes, a final stop."""
    text = unicodedata.normalize("NFKC", answer).strip().casefold()
    text = text.strip("`'\"“”‘’「」").rstrip(".。").strip()
    return ALIASES.get(text, text)


def is_right(question: Question, given: str, right: str) -> bool:
    """A whole number equal to the right one, or exactly the right one of the choices.

    One answer only: `4 or 5`, `4,5` or every choice at once is wrong, not half right.
    """
    answer = normal(given)
    if not question.choices:
        return re.fullmatch(r"[0-9]+", answer) is not None and int(answer) == int(right)
    return answer == right


def mark(chapter: int, answers: dict[int, str]) -> list[Mark]:
    """Every question of the chapter's quiz, marked; a question not answered is wrong."""
    marks = []
    for number, question in enumerate(QUIZZES[chapter], start=1):
        right = question.right()
        given = answers.get(number, "")
        marks.append(Mark(number, given, right, is_right(question, given, right.answer)))
    return marks


def parse_answers(text: str, chapter: int, where: str) -> dict[int, str]:
    """The answers in `text`, by question number; `where` names the file in an error."""
    count = len(QUIZZES[chapter])
    answers: dict[int, str] = {}
    for line_number, line in enumerate(text.splitlines(), start=1):
        line = unicodedata.normalize("NFKC", line).strip()
        if not line or line.startswith("#"):
            continue
        match = LINE.fullmatch(line)
        at = f"{where}, line {line_number}"
        at_zh = f"{where} 第 {line_number} 行"
        if match is None:
            raise AnswersError(
                Said(
                    f"{at}: write NUMBER: ANSWER, as in `2: 4`",
                    f"{at_zh}：请写成“题号: 答案”，例如 `2: 4`",
                )  # fmt: skip
            )
        number = int(match.group(1))
        if not 1 <= number <= count:
            raise AnswersError(
                Said(
                    f"{at}: quiz {chapter} has questions 1 to {count}, not {number}",
                    f"{at_zh}：测验 {chapter} 只有第 1 到 {count} 题，没有第 {number} 题",
                )  # fmt: skip
            )
        if number in answers:
            raise AnswersError(
                Said(
                    f"{at}: question {number} is answered twice; keep one answer",
                    f"{at_zh}：第 {number} 题答了两次；只留一个答案",
                )  # fmt: skip
            )
        answers[number] = match.group(2).strip()
    return answers


def read_answers(path: Path, chapter: int) -> dict[int, str]:
    """The answers in the file at `path`, or AnswersError saying why it cannot be marked."""
    if path.is_symlink() or not path.is_file():
        raise AnswersError(
            Said(
                f"no answers file {path}: write one line NUMBER: ANSWER per question",
                f"没有答案文件 {path}：每题写一行“题号: 答案”",
            )  # fmt: skip
        )
    if path.stat().st_size > MAX_BYTES:
        raise AnswersError(
            Said(
                f"{path} is over {MAX_BYTES:,} bytes: an answers file holds a few short lines",
                f"{path} 超过 {MAX_BYTES:,} 字节：答案文件只需要几行短答案",
            )  # fmt: skip
        )
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise AnswersError(
            Said(
                f"{path} is not UTF-8 text: save it as UTF-8",
                f"{path} 不是 UTF-8 文本：请以 UTF-8 保存",
            )  # fmt: skip
        ) from None
    return parse_answers(text, chapter, str(path))


def answers_text(chapter: int, answers: dict[int, str]) -> str:
    """An answers file for these answers, as `--save` writes it and `--answers` reads it."""
    lines = [f"# python -m lab quiz {chapter}"]
    lines += [f"{number}: {answer}" for number, answer in sorted(answers.items())]
    return "\n".join(lines) + "\n"
