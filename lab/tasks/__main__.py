"""`python -m lab.tasks CHECK_PY WORKSPACE [--seed]`: run one checker, print its verdict as JSON.

The lab runs each checker this way, in a child process of its own (see `check` in
`lab/tasks/__init__.py`), with the agent's final answer on stdin.  With `--seed`, the
first line of stdin is the seed the run's inputs were made from (a task whose
check.py has `make`), passed on to `check`: on stdin, no other process can read it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from lab.tasks import load_module
from lab.tasks.checks import Verdict


def load_checker(path: Path) -> Callable[..., Verdict]:
    """The `check` function of a task's check.py, loaded from its path."""
    return load_module(path).check


def main(argv: list[str]) -> int:
    seeded = "--seed" in argv
    checker, workspace = [word for word in argv if word != "--seed"]
    check = load_checker(Path(checker))
    if seeded:
        seed = int(sys.stdin.readline())
        verdict = check(Path(workspace), sys.stdin.read(), seed)
    else:
        verdict = check(Path(workspace), sys.stdin.read())
    if not isinstance(verdict, Verdict):
        raise TypeError(f"check() returned {type(verdict).__name__}, not a Verdict")
    print(json.dumps(asdict(verdict)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
