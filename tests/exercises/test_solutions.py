"""Every worked solution, followed as written on `docs/en/solutions.md` in a copy of the
course, makes its exercise's check say "done"; on the course as shipped, the same check
says "not done"; and the Chinese page gives the same code."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.exercises import EXERCISES
from tests.solutions import (
    PAGE,
    REPO,
    builds_on_the_solutions,
    copy_course,
    fenced_blocks,
    follow,
    read_solutions,
    run_check,
)

pytestmark = builds_on_the_solutions()
SOLUTIONS = read_solutions()
CHECKED = [number for number, exercise in EXERCISES.items() if exercise.check]
FOLLOWED = ("diff", "jsonl", "sh", "output")


def test_every_exercise_has_a_worked_solution_and_no_other() -> None:
    assert list(SOLUTIONS) == list(EXERCISES)


@pytest.mark.docs  # the solution is applied to the course as it ships: not twice
@pytest.mark.parametrize("number", CHECKED)
def test_a_worked_solution_followed_as_written_is_done(number: str, tmp_path: Path) -> None:
    solution = SOLUTIONS[number]
    mine = [c for c in solution.checks if c.split()[4] == number]
    assert mine, f"solution {number} does not end with `python -m lab exercise {number} …`"
    course, home = copy_course(tmp_path / "course"), tmp_path / "home"
    home.mkdir()
    follow(solution, course, home)
    for command in mine:
        done = run_check(command, course, home)
        said = (command, done.stdout, done.stderr)
        assert done.returncode == 0 and ": done." in done.stdout, said


# The solutions that change code: without the change, their check must say "not done"
# (none in a class fork, whose solutions page is a placeholder).
CODED = [
    number
    for number, solution in SOLUTIONS.items()
    if number in CHECKED and any(block.kind == "diff" for block in solution.blocks)
]


@pytest.mark.docs  # the course as it ships: doing the exercise changes it
@pytest.mark.parametrize("number", CODED)
def test_a_check_on_the_course_as_shipped_is_not_done(number: str, tmp_path: Path) -> None:
    """The same command, on a copy where the solution's code was not applied; the files a
    check is given (cassettes, recordings) are made as the solution says, and when the
    check is given none, the solution's shell blocks, which only show what it does, are
    not run."""
    solution = SOLUTIONS[number]
    commands = [c for c in solution.checks if c.split()[4] == number]
    given = any(len(command.split()) > 5 for command in commands)  # a FILE after N.M
    kept = ("jsonl", "sh") if given else ("jsonl",)
    course, home = copy_course(tmp_path / "course"), tmp_path / "home"
    home.mkdir()
    untouched = [block for block in solution.blocks if block.kind in kept]
    follow(type(solution)(solution.number, solution.prose, untouched), course, home)
    for command in commands:
        done = run_check(command, course, home)
        assert done.returncode == 1 and "not done yet" in done.stdout, (command, done.stdout)


def followed(page: Path) -> list[tuple[str, str]]:
    """The followed blocks of a page, in order, whichever language its prose is in."""
    found = fenced_blocks(page.read_text(encoding="utf-8"))
    return [(block.info, block.text) for _, _, block in found if block.kind in FOLLOWED]


def test_the_chinese_page_gives_the_same_code() -> None:
    assert followed(REPO / "docs" / "zh" / "solutions.md") == followed(PAGE)
