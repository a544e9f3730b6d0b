"""`python -m lab collect HANDINS`: every student's exercises checked and quiz marked.

    python -m lab collect HANDINS                    every session each student handed in
    python -m lab collect HANDINS --session 2        session 2 only
    python -m lab collect HANDINS --csv marks.csv    … and the rows as CSV (or --json FILE)
    python -m lab collect HANDINS --lang zh          in Chinese (the default follows LANG)
    python -m lab collect HANDINS --jobs 1           one student at a time (default: a core each)

HANDINS holds one folder per student, each with a folder per session (`handins.py`
gives the layout).  For each hand-in, a scratch copy is made of the course with the
student's chapter folder laid over it; the exercise checks of `lab/exercises/` run there,
each in a process of its own (`checks.py`, `confined.py`), and the quiz is marked from
the answers file.  Nothing of a hand-in runs outside its copy, and the hand-ins folder
is only read.  The command prints a table per student, then a summary table.

    command.py    the command: its arguments, the tables, the CSV and JSON
    handins.py    the layout of a hand-in, and its copy into a scratch folder
    checks.py     one exercise check run in the copy, and the quiz marked
    confined.py   the process a check runs in, with its guard
    sealed.py     the file system read-only but for the copy (Linux)

The package imports `lab.exercises`, `lab.quiz`, `lab.chapters` and `machine`; only the
lab's command line imports it.
"""

from __future__ import annotations


def main(argv: list[str]) -> int:
    """`python -m lab collect …`.

    The command's modules are imported here, when the command runs, and not when the
    package is: a check's process starts as `python -m lab.collect.confined`, which
    imports this package first, and must import nothing that could import a hand-in's
    code before its guard is up.
    """
    from .command import main as collect

    return collect(argv)
