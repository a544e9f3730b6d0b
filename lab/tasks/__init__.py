"""The lab's tasks: each a folder a teacher can copy, read and change.

    lab/tasks/<name>/
        task.json      title, prompt, the chapter whose idea it brings out, turn limit, …
        workspace/     the small project the agent works on (or "workspace" in task.json
                       names a chapter's demo workspace, so demo and task share one copy)
        check.py       check(workspace, answer) -> Verdict: solved or not, decided for real;
                       optionally make(workspace, seed): fresh inputs for each live run
        hidden/        the checker's own tests, run in the checker's process
        cassettes/     <chapter>.jsonl: a scripted run of that chapter on this task

`check` runs a task's checker in a child process with a timeout: whatever the agent
left behind (an endless loop, a deleted file, a test rewritten to pass), the result
is a Verdict, never an exception.

The package imports `machine` and nothing else of the course: a checker must not lean on
the chapters it judges.  The comparison, the viewer, the capstone, the notebooks and the
lab's command line import it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from machine import run

from .checks import Verdict

TASKS = Path(__file__).resolve().parent
REPO = TASKS.parent.parent
CHECK_TIMEOUT = 120  # seconds a checker may take, its hidden tests included

FIELDS: dict[str, type | tuple[type, ...]] = {
    "title": str,
    "prompt": str,
    "brings_out": str,
    "max_turns": int,
    "featured": bool,
}
OPTIONAL: dict[str, type | tuple[type, ...]] = {
    "workspace": str,
    "cassettes": dict,
    "check_timeout": (int, float),
}


TASK_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")  # a folder of lab/tasks, by name


class TaskError(ValueError):
    """A task folder that cannot be used; the message names the file and what is wrong."""


@dataclass
class Task:
    """One task, as its folder describes it."""

    name: str
    folder: Path
    title: str
    prompt: str
    brings_out: str  # the chapter whose idea this task brings out, e.g. "v2_todos"
    max_turns: int
    featured: bool
    workspace: Path
    cassettes: dict[str, Path] = field(default_factory=dict)
    check_timeout: float = CHECK_TIMEOUT

    def cassette(self, chapter: str) -> Path | None:
        """The scripted cassette of `chapter` on this task, if the task has one."""
        return self.cassettes.get(chapter)


def task_names() -> list[str]:
    """Every task, the featured ones first, in the order of the chapters they bring out."""
    tasks = [load_task(path.parent.name) for path in TASKS.glob("*/task.json")]
    tasks.sort(key=lambda task: (not task.featured, task.brings_out, task.name))
    return [task.name for task in tasks]


def featured_names() -> list[str]:
    return [name for name in task_names() if load_task(name).featured]


def load_task(name: str) -> Task:
    """Read and check `lab/tasks/<name>/task.json`; a name is a name, never a path."""
    folder = TASKS / name
    path = folder / "task.json"
    if not TASK_NAME.fullmatch(name) or not path.is_file():
        names = sorted(p.parent.name for p in TASKS.glob("*/task.json"))
        name = repr(name[:60])[1:-1]
        raise TaskError(f"no task '{name}'; the tasks are {', '.join(names)}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise TaskError(f"{shown(path)} is not valid JSON: {error}") from None
    problem = _problem(data)
    if problem:
        raise TaskError(f"{shown(path)}: {problem}")
    workspace = REPO / data["workspace"] if "workspace" in data else folder / "workspace"
    cassettes = {p.stem: p for p in sorted((folder / "cassettes").glob("*.jsonl"))}
    cassettes |= {chapter: REPO / where for chapter, where in data.get("cassettes", {}).items()}
    for what, where in [("workspace", workspace), ("check.py", folder / "check.py")]:
        if not where.exists():
            raise TaskError(f"{shown(path)}: its {what} {shown(where)} does not exist")
    return Task(
        name=name,
        folder=folder,
        title=data["title"],
        prompt=data["prompt"],
        brings_out=data["brings_out"],
        max_turns=data["max_turns"],
        featured=data["featured"],
        workspace=workspace,
        cassettes=cassettes,
        check_timeout=data.get("check_timeout", CHECK_TIMEOUT),
    )


def _problem(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "the file must hold one JSON object"
    for name, kind in FIELDS.items():
        if not isinstance(data.get(name), kind):
            return f'"{name}" is missing or not a {_kind(kind)}'
    for name, kind in OPTIONAL.items():
        if name in data and not isinstance(data[name], kind):
            return f'"{name}" must be a {_kind(kind)}'
    unknown = sorted(data.keys() - FIELDS.keys() - OPTIONAL.keys())
    if unknown:
        return f"unknown field(s) {', '.join(unknown)}; the fields are {', '.join(FIELDS)}, " + (
            ", ".join(OPTIONAL)
        )
    if data["max_turns"] < 1:
        return '"max_turns" must be 1 or more'
    return None


def _kind(kind: type | tuple[type, ...]) -> str:
    names = {str: "string", int: "number", float: "number", bool: "true or false", dict: "object"}
    return names[kind[0] if isinstance(kind, tuple) else kind]


def shown(path: Path) -> str:
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


def load_module(path: Path) -> ModuleType:
    """A task's check.py, loaded from its path."""
    spec = importlib.util.spec_from_file_location(f"check_{path.parent.name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def makes_inputs(task: Task) -> bool:
    """Whether the task makes its inputs fresh for each run: its check.py has `make`."""
    return callable(getattr(load_module(task.folder / "check.py"), "make", None))


def make_inputs(task: Task, workspace: Path, seed: int) -> None:
    """Write the inputs of `seed` into a run's copy of the workspace (`make` in check.py)."""
    load_module(task.folder / "check.py").make(workspace, seed)


# How the checker's process starts: without `site` (-S), so no `.pth` file or
# `sitecustomize` the agent could have left among the installed packages runs in it,
# and isolated (-I) from PYTHON* variables and the user's own packages; the course and
# its installed packages are put on the path by hand, as this process found them.
CHECKER_BOOT = (
    "import json, sys; sys.path[:0] = json.loads(sys.argv.pop(1)); "
    "from lab.tasks.__main__ import main; raise SystemExit(main(sys.argv[1:]))"
)


def check(task: Task, workspace: Path, answer: str, seed: int | None = None) -> Verdict:
    """Run the task's checker on what the agent left; a crash or a hang is "not solved".

    `seed` is what the run's inputs were made from, when the task makes them fresh.
    """
    paths = [str(REPO), *dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))]
    command = [sys.executable, "-I", "-S", "-c", CHECKER_BOOT, json.dumps(paths)]
    command += [str(task.folder / "check.py"), str(workspace)]
    if seed is not None:
        command.append("--seed")
        answer = f"{seed}\n{answer}"
    environment = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    try:
        done = run(command, REPO, task.check_timeout, env=environment, input=answer, apart=True)
    except OSError as error:  # no process left to start one, say
        return Verdict(False, f"the checker could not start: {error}")
    if done.timed_out:
        return Verdict(False, f"the checker did not finish in {task.check_timeout:g} s")
    try:
        return Verdict(**json.loads(done.output.strip().splitlines()[-1]))
    except (IndexError, ValueError, TypeError):
        last = (done.errors.strip().splitlines() or ["it printed no verdict"])[-1]
        return Verdict(False, f"the checker failed: {last[:200]}")


def checker_files(task: Task) -> dict[str, str]:
    """A digest of every file the task's checker reads (its folder but the cassettes, the
    modules of `lab/tasks/` and `machine/`), by path: taken before a run and compared
    after it, so that an agent which edited a checker or its hidden tests is caught."""
    folder = task.folder
    paths = [p for p in folder.rglob("*") if "cassettes" not in p.relative_to(folder).parts]
    paths += [*TASKS.glob("*.py"), *(REPO / "machine").glob("*.py"), REPO / "lab" / "__init__.py"]
    digests = {}
    for path in paths:
        if path.is_file() and "__pycache__" not in path.parts:
            digests[shown(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


def changed_files(task: Task, before: dict[str, str]) -> list[str]:
    """The checker's files added, removed or changed since `before` was taken."""
    now = checker_files(task)
    return sorted(name for name in before.keys() | now.keys() if before.get(name) != now.get(name))
