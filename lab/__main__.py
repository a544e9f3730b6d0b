"""`python -m lab`: run the chapters side by side, list the tasks, benchmark, print figures.

    python -m lab compare [--task NAME] [--model SPEC --runs N] …   every chapter, one table
    python -m lab view RECORDS.json… [-o report.html] [--lang zh]   saved runs as one HTML page
    python -m lab tasks                                             the tasks and their checkers
    python -m lab exercise 2.3 [FILE]                               is this exercise done?
    python -m lab quiz 2 [--answers FILE]                           what chapter 2 does, asked
    python -m lab collect HANDINS [--csv FILE]                      a class's hand-ins, marked
    python -m lab capstone [--seed N]                               does chapter 4 ask first?
    python -m lab bench [--quick]                                   the benchmarks
    python -m lab shape                                             the chapters' sizes, measured
    python -m lab figures …                                         the docs' figures
    python -m lab clean [--home] [--yes]                            what the demos left in /tmp

`python -m lab compare --help` lists the comparison's flags.
"""

from __future__ import annotations

import importlib
import os
import sys

from llm.console import fit_streams
from machine import adopt_orphans

from .tasks import load_task, task_names

# Each subcommand's module, imported only when it is the one asked for: a learner's
# `python -m lab exercise 2.3` does not wait for the figures' or the viewer's imports.
SUBCOMMANDS = {
    "compare": "lab.compare",
    "view": "lab.view",
    "shape": "lab.shape",
    "figures": "lab.figures",
    "exercise": "lab.exercises",
    "quiz": "lab.quiz",
    "collect": "lab.collect",
    "capstone": "lab.capstone",
    "clean": "lab.clean",
}

# What `bench --quick` asks of lab.bench.basics: every measure, each only once or twice.
QUICK_BENCH = ["--startup-runs", "1", "--turns", "5", "--loop-runs", "1", "--estimate-runs", "1"]
QUICK_BENCH += ["--read-mb", "20", "--read-runs", "2"]
# Then chapter 4's and the viewer's, each with a --quick of its own.
CHAPTER_BENCHES = ["lab.bench.memory", "lab.bench.sessions", "lab.bench.context", "lab.bench.view"]


def tasks() -> int:
    """Print every task: featured or not, the chapter it brings out, its checker's promise."""
    for name in task_names():
        task = load_task(name)
        checker = (task.folder / "check.py").read_text(encoding="utf-8")
        promise = checker.split('"""')[1].strip().splitlines()[0] if '"""' in checker else ""
        mark = "*" if task.featured else " "
        print(f"{mark} {name:<18} {task.brings_out:<14} {task.title}")
        print(f"  {'':<18} {'':<14} checker: {promise}")
    print("\n* featured: run by `python -m lab compare` when no --task is given")
    return 0


def run_benchmarks(argv: list[str]) -> int:
    """lab.bench.basics, then the others; --quick makes each short."""
    from .bench import basics  # it imports what it measures: only when asked to

    quick = "--quick" in argv
    status = basics.main(QUICK_BENCH if quick else [])
    for module in CHAPTER_BENCHES:
        print(f"\n# {module}")
        status = importlib.import_module(module).main(["--quick"] if quick else []) or status
    return status


def main(argv: list[str]) -> int:
    fit_streams()
    adopt_orphans()  # what the agents' commands leave behind, however detached
    try:
        status = dispatch(argv)
        sys.stdout.flush()  # here, so that a reader gone away is caught below
        return status
    except BrokenPipeError:  # `python -m lab tasks | head`: the rest is not wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def dispatch(argv: list[str]) -> int:
    """The subcommand's own `main`, given the rest of the command line."""
    command, rest = (argv[0], argv[1:]) if argv else ("", [])
    if command in SUBCOMMANDS:
        return importlib.import_module(SUBCOMMANDS[command]).main(rest)
    if command == "tasks":
        return tasks()
    if command == "bench":
        return run_benchmarks(rest)
    print(__doc__.strip(), file=sys.stderr if command not in ("-h", "--help") else sys.stdout)
    return 0 if command in ("-h", "--help") else 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
