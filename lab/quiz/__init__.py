"""`python -m lab quiz N`: a few questions about what chapter N's code does, marked at once.

    python -m lab quiz 2                        asks each question in the terminal
    python -m lab quiz 2 --save quiz2.txt       … and keeps the answers, to hand in
    python -m lab quiz 2 --answers quiz2.txt    marks an answers file (a teacher's form)
    python -m lab quiz 2 --lang zh              in Chinese (the default follows LANG)

Each question is answered by running something (the command it names); the marking says
which answers were right, the right answer, and why.  The right answers are read from
the chapter's own demo, run here (`demos.py`), never typed in (`questions.py`).  An
answers file is one `NUMBER: ANSWER` a line (`marking.py`).  The exit code is 0 when
every answer is right, 1 when one is not, 2 for a usage error or a file that cannot be
read.

The package imports the chapters and `lab.exercises` (its Said and its way of running a
chapter); nothing else of the lab imports it but the command line and `lab.collect`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lab.exercises import learner_lang
from lab.exercises.check import LANGS, Said

from .marking import AnswersError, Mark, answers_text, mark, read_answers
from .questions import QUIZZES, Question

WORDS = {
    "number": Said("(a whole number)", "（填一个整数）"),
    "choices": Said("(one of: {})", "（从这些里选一个：{}）"),
    "yes/no": Said("(yes or no)", "（yes 或 no，也可以答 是 / 否）"),
    "answer": Said("your answer", "你的答案"),
    "right": Said("right", "对"),
    "wrong": Said("wrong; the answer is {}", "错；答案是 {}"),
    "none": Said("(no answer)", "（未作答）"),
    "why": Said("why", "原因"),
    "score": Said("quiz {}: {} of {} right", "测验 {}：{} 题里答对 {} 题"),
    "saved": Said("answers saved to {}", "答案已保存到 {}"),
}


def hint(question: Question, lang: str) -> str:
    """What kind of answer the question takes, shown after it."""
    if not question.choices:
        return WORDS["number"](lang)
    if question.choices == ("yes", "no"):
        return WORDS["yes/no"](lang)
    return WORDS["choices"](lang).format(", ".join(question.choices))


def ask_all(chapter: int, lang: str) -> dict[int, str]:
    """Each question in turn, the learner's line as its answer; end of input stops asking."""
    answers = {}
    for number, question in enumerate(QUIZZES[chapter], start=1):
        print(f"\n{number}. {question.ask(lang)} {hint(question, lang)}")
        try:
            answers[number] = input("> ").strip()
        except EOFError:
            print()
            break
    return answers


def marked(chapter: int, marks: list[Mark], lang: str) -> str:
    """The marking as printed: each answer right or wrong, why, and the score."""
    lines = []
    for item in marks:
        given = item.given or WORDS["none"](lang)
        verdict = (
            WORDS["right"](lang) if item.correct else WORDS["wrong"](lang).format(item.right.answer)
        )
        mark_sign = "✓" if item.correct else "✗"
        colon = "：" if lang == "zh" else ": "
        lines.append(
            f"{mark_sign} {item.number}. {WORDS['answer'](lang)}{colon}{given} — {verdict}"
        )
        lines.append(f"   {WORDS['why'](lang)}{colon}{item.right.why(lang)}")
    right = sum(item.correct for item in marks)
    if lang == "zh":
        lines.append(WORDS["score"](lang).format(chapter, len(marks), right))
    else:
        lines.append(WORDS["score"](lang).format(chapter, right, len(marks)))
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    usage = argparse.ArgumentParser(prog="python -m lab quiz", description=__doc__.split("\n")[0])
    usage.add_argument("chapter", type=int, choices=sorted(QUIZZES), help="the chapter, 0 to 4")
    usage.add_argument("--answers", type=Path, help="mark this answers file instead of asking")
    usage.add_argument("--save", type=Path, help="write the answers given to this file")
    usage.add_argument("--lang", choices=LANGS, default=None, help="en or zh (default: LANG)")
    return usage


def main(argv: list[str]) -> int:
    """Ask (or read) the answers, mark them, print the marking; 0 when all are right."""
    options = parser().parse_args(argv)
    lang = options.lang or learner_lang()
    try:
        if options.answers is not None:
            answers = read_answers(options.answers, options.chapter)
        else:
            answers = ask_all(options.chapter, lang)
    except AnswersError as error:
        print(f"error: {error.said(lang)}", file=sys.stderr)
        return 2
    if options.save is not None:
        options.save.write_text(answers_text(options.chapter, answers), encoding="utf-8")
        print(WORDS["saved"](lang).format(options.save))
    marks = mark(options.chapter, answers)
    print(marked(options.chapter, marks, lang))
    return 0 if all(item.correct for item in marks) else 1
