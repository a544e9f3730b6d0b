"""The comparison: every chapter on the same tasks, checked for real, in one table.

    python -m lab compare [--task NAME] [--model SPEC --runs N] …

    command.py      the command: its flags, the checks before any run, the tables printed
    comparison.py   the plan (jobs from tasks, chapters, runs) and the jobs run into records
    runs.py         one run: a fresh workspace, the chapter's agent, the task's checker
    sources.py      where a run's model comes from: scripted, replayed or live
    record.py       a job, its limits, and the record kept of its run
    report.py       the tables and the JSON records that notebooks and the viewer read
    progress.py     one line per run while the comparison runs

The package imports `llm`, `machine` (the cores to run on), the chapters (through
`lab.chapters`), `lab.tasks`, `lab.words` and `lab.plots`' colours; `command.py` alone
imports the viewer, for `--html`.  The viewer, the figures, the notebooks' plots and the
benchmarks import its records and tables; none of its modules imports them.
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """`python -m lab compare …`: the command's module is imported when it runs, so that
    the viewer, which reads `record.py`, does not import the command and itself with it."""
    from .command import main as compare

    return compare(argv)
