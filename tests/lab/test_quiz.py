"""`python -m lab quiz N`: the right answers are what the chapters' demos do, a right
answer is marked right, and wrong, gamed or malformed answers are not."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lab.quiz.marking import AnswersError, is_right, mark, parse_answers, read_answers
from lab.quiz.questions import QUIZZES, STOP_REASONS, YES_NO
from tests import REPO

# What each chapter's demo does today, as a teacher reading its output sees it.  A change
# to a chapter that changes one of these fails here: read the question again, and the
# docs that tell the demo's story, then change the number.
EXPECTED = {
    0: ["6", "4", "1", "end_turn", "5"],
    1: ["5", "5", "4", "edit_file", "end_turn"],
    2: ["4", "4", "5", "3", "4"],
    3: ["3", "2", "10", "no", "no"],
    4: ["15", "5", "12", "21", "6"],
}


def lab(*words: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`python -m lab …` as an English-speaking learner runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LC_")} | {"LANG": "C"}
    return subprocess.run(
        [sys.executable, "-m", "lab", *words],
        cwd=REPO, env=env, input=stdin, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@functools.cache
def demo_output(chapter: str) -> str:
    """What `python -m CHAPTER --demo` prints, run once for every test that reads it."""
    done = subprocess.run(
        [sys.executable, "-m", chapter, "--demo"],
        cwd=REPO, env=os.environ | {"NO_COLOR": "1"}, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def right_answers(chapter: int) -> list[str]:
    return [question.right().answer for question in QUIZZES[chapter]]


def answers_file(tmp_path: Path, answers: list[str], name: str = "answers.txt") -> Path:
    path = tmp_path / name
    path.write_text("".join(f"{n}: {a}\n" for n, a in enumerate(answers, 1)), encoding="utf-8")
    return path


@pytest.mark.docs  # the answers of the course as it ships: an exercise may change them
@pytest.mark.parametrize("chapter", sorted(QUIZZES))
def test_the_right_answers_are_what_the_demo_does(chapter: int) -> None:
    assert 5 <= len(QUIZZES[chapter]) <= 8
    assert right_answers(chapter) == EXPECTED[chapter]
    for question, answer in zip(QUIZZES[chapter], EXPECTED[chapter], strict=True):
        assert answer in question.choices if question.choices else answer.isdigit()
        why = question.right().why
        assert why.en and why.zh and why.en != why.zh


@pytest.mark.parametrize(
    ("chapter", "question", "printed"),
    [
        ("v0_react_text", 1, r"done: (\d+) turns"),
        ("v0_react_text", 2, r"done: \d+ turns, (\d+) tool calls"),
        ("v0_react_text", 3, r"(\d+) format error\(s\) answered"),
        ("v1_tool_loop", 1, r"done: (\d+) turns"),
        ("v2_todos", 4, r"reminder sent: no todo_write for (\d+) turns"),
        ("v4_memory", 2, r"context: stage 1 before turn (\d+)"),
        ("v4_memory", 3, r"context: stage 2 before turn (\d+)"),
        ("v4_memory", 4, r"\((\d+) messages summarised\)"),
    ],
)
def test_the_command_a_question_names_prints_its_answer(
    chapter: str, question: int, printed: str
) -> None:
    number = int(chapter[1])
    asked = QUIZZES[number][question - 1]
    assert f"python -m {chapter} --demo" in asked.ask.en
    found = re.search(printed, demo_output(chapter))
    assert found, f"`python -m {chapter} --demo` no longer prints {printed!r}"
    assert found.group(1) == asked.right().answer


def test_chapter_3_children_are_the_lines_the_demo_prints() -> None:
    output = demo_output("v3_subagents")
    started = re.findall(r"▶ (\w+) agent:", output)
    assert right_answers(3)[:2] == [str(len(started)), str(started.count("explore"))]


def test_every_answer_right_is_marked_right(tmp_path: Path) -> None:
    done = lab("quiz", "2", "--answers", str(answers_file(tmp_path, EXPECTED[2])))
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("✓") == 5 and "✗" not in done.stdout
    assert "quiz 2: 5 of 5 right" in done.stdout


def test_wrong_answers_are_marked_wrong_with_the_right_one_and_why(tmp_path: Path) -> None:
    given = ["5", "4", "4", "3", "4"]  # the first is off by one, the third too
    done = lab("quiz", "2", "--answers", str(answers_file(tmp_path, given)))
    assert done.returncode == 1
    assert "✗ 1. your answer: 5 — wrong; the answer is 4" in done.stdout
    assert "✗ 3. your answer: 4 — wrong; the answer is 5" in done.stdout
    assert "quiz 2: 3 of 5 right" in done.stdout
    assert done.stdout.count("   why: ") == 5


@pytest.mark.parametrize(
    "gamed",
    [
        "4 or 5",  # two numbers, hoping one counts
        "4, 5",
        "4 5",
        "3-5",
        "*",
        ".*",
        "four",  # a number must be written as one
        "",
        "-4",
        "4.0",
    ],
)
def test_gamed_number_answers_are_wrong(gamed: str) -> None:
    question = QUIZZES[2][0]
    assert not is_right(question, gamed, "4")


@pytest.mark.parametrize(
    "gamed",
    [
        ", ".join(STOP_REASONS),  # every choice at once
        "end_turn tool_use",
        "end_turn|tool_use",
        "end",  # a prefix of the right one
        "end_turn?",
        "*",
        "1",  # the choice's position
    ],
)
def test_gamed_choices_are_wrong(gamed: str) -> None:
    question = QUIZZES[1][4]
    assert question.choices == STOP_REASONS
    assert not is_right(question, gamed, "end_turn")


@pytest.mark.parametrize("answer", [" 4 ", "４", "`4`", "4."])
def test_a_number_written_plainly_otherwise_is_right(answer: str) -> None:
    assert is_right(QUIZZES[2][0], answer, "4")


@pytest.mark.parametrize("answer", ["no", "No", "NO.", "n", "否", "不能", "`no`"])
def test_no_in_either_language_is_right(answer: str) -> None:
    question = QUIZZES[3][4]
    assert question.choices == YES_NO
    assert is_right(question, answer, "no")
    assert not is_right(question, answer, "yes")


def test_yes_and_no_at_once_is_wrong() -> None:
    assert not is_right(QUIZZES[3][4], "yes/no", "no")
    assert not is_right(QUIZZES[3][4], "yes no", "no")


def test_unanswered_questions_are_wrong() -> None:
    marks = mark(1, {1: EXPECTED[1][0]})
    assert [m.correct for m in marks] == [True, False, False, False, False]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("1: 4\nfour\n", "line 2: write NUMBER: ANSWER"),
        ("1: 4\n1: 5\n", "line 2: question 1 is answered twice"),
        ("1: 4\n9: 5\n", "line 2: quiz 2 has questions 1 to 5, not 9"),
        ("0: 4\n", "line 1: quiz 2 has questions 1 to 5, not 0"),
    ],
)
def test_a_malformed_answers_file_is_refused_in_one_line(
    tmp_path: Path, text: str, says: str
) -> None:
    path = tmp_path / "quiz2.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AnswersError, match=re.escape(says)):
        read_answers(path, 2)
    done = lab("quiz", "2", "--answers", str(path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().count("\n") == 0 and says in done.stderr


def test_comments_and_blank_lines_are_read_past() -> None:
    text = "# python -m lab quiz 2\n\n 2 : 4 \n1) 4\n# done\n"
    assert parse_answers(text, 2, "f") == {2: "4", 1: "4"}


def test_files_that_are_not_answers_are_refused(tmp_path: Path) -> None:
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"1: \xff\xfe\n")
    huge = tmp_path / "huge.txt"
    huge.write_text("1: 4\n" + "#" * 100_000, encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to(answers_file(tmp_path, EXPECTED[2]))
    for path, says in [
        (binary, "not UTF-8"),
        (huge, "bytes"),
        (link, "no answers file"),
        (tmp_path / "absent.txt", "no answers file"),
        (tmp_path, "no answers file"),
    ]:
        with pytest.raises(AnswersError, match=says):
            read_answers(path, 2)


def test_the_terminal_asks_then_saves_what_the_teacher_marks(tmp_path: Path) -> None:
    saved = tmp_path / "quiz0.txt"
    typed = "\n".join(EXPECTED[0][:4] + ["7"]) + "\n"
    done = lab("quiz", "0", "--save", str(saved), stdin=typed)
    assert done.returncode == 1
    assert "1. Run `python -m v0_react_text --demo`: how many turns" in done.stdout
    assert "(one of: end_turn, tool_use, max_tokens, stop_sequence)" in done.stdout
    assert "quiz 0: 4 of 5 right" in done.stdout
    assert read_answers(saved, 0) == dict(enumerate(EXPECTED[0][:4] + ["7"], start=1))
    again = lab("quiz", "0", "--answers", str(saved))
    assert again.returncode == 1 and "quiz 0: 4 of 5 right" in again.stdout


def test_input_that_ends_early_leaves_the_rest_unanswered() -> None:
    done = lab("quiz", "3", stdin="3\n")
    assert done.returncode == 1
    assert "✓ 1." in done.stdout and "✗ 2. your answer: (no answer)" in done.stdout


def test_the_quiz_speaks_chinese(tmp_path: Path) -> None:
    done = lab("quiz", "3", "--lang", "zh", "--answers", str(answers_file(tmp_path, EXPECTED[3])))
    assert done.returncode == 0
    assert "测验 3：5 题里答对 5 题" in done.stdout and "原因：" in done.stdout
    bad = tmp_path / "bad.txt"
    bad.write_text("one\n", encoding="utf-8")
    refused = lab("quiz", "3", "--lang", "zh", "--answers", str(bad))
    assert refused.returncode == 2 and "请写成" in refused.stderr


def test_a_chapter_without_a_quiz_is_a_usage_error() -> None:
    done = lab("quiz", "7", "--answers", "x")
    assert done.returncode == 2 and "invalid choice" in done.stderr
