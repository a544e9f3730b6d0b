"""`python -m lab.tasks CHECK_PY WORKSPACE`: run one checker, print its verdict as JSON.

The lab runs each checker this way, in a child process of its own (see `check` in
`lab/tasks/__init__.py`), with the agent's final answer on stdin.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from lab.tasks.checks import Verdict


def load_checker(path: Path) -> Callable[[Path, str], Verdict]:
    """The `check` function of a task's check.py, loaded from its path."""
    spec = importlib.util.spec_from_file_location(f"check_{path.parent.name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.check


def main(argv: list[str]) -> int:
    checker, workspace = argv
    verdict = load_checker(Path(checker))(Path(workspace), sys.stdin.read())
    if not isinstance(verdict, Verdict):
        raise TypeError(f"check() returned {type(verdict).__name__}, not a Verdict")
    print(json.dumps(asdict(verdict)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
