"""The offline demo every chapter has: its task, a fresh copy of its workspace, its later steps.

`python -m vN --demo` replays the chapter's bundled cassette (or, with `--model`, runs
the same task live) in a new temporary copy of the demo workspace, so the bundled one
keeps its bug; `--copy-demo DIR` makes a lasting copy to work in.  Both copies are
private (`copy_private`), and a fresh folder is never one someone else planted in a
shared temporary folder (`fresh_folder`); the lab's runs and the docs' figures make
theirs the same way.  A chapter whose demo goes on in new processes (chapter 4: the
session resumed, then a new one) lists those steps, and they run here once the first
is done, each replaying its own cassette.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .cassette import ReplayModel, read_cassette
from .chapter import DEFAULT_TURNS, Chapter
from .console import Console, shown_path
from .errors import CassetteError, UsageError
from .recording import RecordingModel
from .spec import load_model
from .types import Model

CACHES = {"__pycache__", ".pytest_cache"}  # left behind when a workspace is copied


def demo_task_and_model(
    chapter: Chapter, args: argparse.Namespace, console: Console
) -> tuple[str, Model]:
    """The demo task, from the demo cassette's header, and the model that runs it."""
    header, _ = read_cassette(chapter.demo_cassette)
    if not header.get("task"):
        raise CassetteError(f"the demo cassette {chapter.demo_cassette} has no task in its header")
    if args.model:
        model = load_model(args.model, strict=args.strict)
        console.note(f"running the demo task with {model.name}")
    else:
        model = ReplayModel(chapter.demo_cassette, strict=args.strict)
        console.note(
            f"offline: replaying the {header.get('provenance', 'scripted')} demo cassette "
            f"{shown_path(chapter.demo_cassette)} — add --model to run it live"
        )
    console.note(f"task: {header['task']}")
    return header["task"], model


def check_demo_replay(chapter: Chapter, task: str, model: Model) -> None:
    """A cassette given to --demo must be a recording of this demo: one made for another
    task would answer questions this run never asks."""
    replay = model.inner if isinstance(model, RecordingModel) else model
    if not isinstance(replay, ReplayModel):
        return
    recorded, made_by = replay.header.get("task"), replay.header.get("chapter")
    if recorded != task or made_by not in (None, chapter.name):
        what = f"{made_by or 'a chapter'}'s task {str(recorded)[:40]!r}"
        raise CassetteError(
            f"{replay.path} was recorded for {what}, not for this demo: replay it with its own "
            f"task and no --demo, or record the demo with --demo --model M --record FILE"
        )


def step_file(chapter: Chapter, path: str | Path, cassette: str) -> Path:
    """Where a later step of the demo is recorded, or replayed from: beside the first
    step's cassette (`run.jsonl` → `run.resume.jsonl`), or, beside the bundled demo
    cassette, the bundled step (`resume.jsonl`)."""
    path = Path(path)
    if path.resolve() == chapter.demo_cassette.resolve():
        return chapter.demo_cassette.parent / cassette
    return path.with_name(f"{path.stem}.{Path(cassette).stem}{path.suffix}")


def check_demo_steps(chapter: Chapter, args: argparse.Namespace) -> bool:
    """Whether the demo's later steps are to run: refused, before the demo starts, in a
    replay where some are missing or were recorded for other tasks (each step replays its
    own cassette, never another's); none there is a recording of a demo whose first step
    stopped early, and it replays that step alone."""
    steps = chapter.sessions.demo_steps if chapter.sessions else []
    if not (args.model or "").startswith("replay:") or not steps:
        return True
    first = args.model.removeprefix("replay:")
    paths = [step_file(chapter, first, cassette) for cassette, _ in steps]
    if not any(path.exists() for path in paths):
        return False
    for (cassette, _), path in zip(steps, paths, strict=True):
        task = read_cassette(chapter.demo_cassette.parent / cassette)[0]["task"]
        try:
            recorded = read_cassette(path)[0].get("task")
        except CassetteError as error:
            raise UsageError(
                f"the demo's later steps replay {path.name} and the like beside the first "
                f"step's cassette ({error}): record them all with --demo --model M --record FILE"
            ) from None
        if recorded != task:
            raise UsageError(
                f"{path} was recorded for another task ({str(recorded)[:40]!r}), not for this "
                "step of the demo: record the demo again with --demo --model M --record FILE"
            )
    return True


def run_demo_steps(
    chapter: Chapter, args: argparse.Namespace, workdir: Path, console: Console
) -> None:
    """The demo's later steps, each in a new process, printed as a person would type them.

    In the same work directory; each replays its own cassette (the bundled one, or with
    `--model replay:FILE` the one beside FILE), and `--record FILE` records each beside
    FILE.  `--max-turns` and `--max-tokens-total` bound each step as they bound the
    first.  A step that fails stops the demo.
    """
    if chapter.sessions is None:
        return
    for cassette, flags in chapter.sessions.demo_steps:
        bundled = chapter.demo_cassette.parent / cassette
        task = read_cassette(bundled)[0]["task"]
        model = args.model or f"replay:{shown_path(bundled)}"
        if model.startswith("replay:") and args.model:  # the step's own, beside the first
            model = f"replay:{step_file(chapter, model.removeprefix('replay:'), cassette)}"
        extra = [*flags]
        if args.max_turns != DEFAULT_TURNS:  # the learner's bounds hold for every step
            extra += ["--max-turns", str(args.max_turns)]
        for flag in ["--max-tokens-total", *chapter.sessions.demo_passes_on]:  # --x-y → args.x_y
            value = getattr(args, flag.removeprefix("--").replace("-", "_"))
            extra += [flag, str(value)] if value is not None else []
        extra += ["--record", str(step_file(chapter, args.record, cassette))] if args.record else []
        extra += ["--strict"] if args.strict else []
        command = ["--workdir", str(workdir), *extra, "--model", model, task]
        shown = " ".join(arg if " " not in arg else f'"{arg}"' for arg in command[:-1])
        console.note(f'\n$ python -m {chapter.name} {shown} "{task[:60]}…"')
        step = subprocess.run([sys.executable, "-m", chapter.name, *command], check=False)
        if step.returncode != 0:
            console.warn("this step did not finish, so the demo stops here")
            return


def copy_demo_workspace(chapter: Chapter, console: Console) -> Path:
    """A fresh temporary copy of the demo workspace, so the bundled one keeps its bug."""
    workdir = fresh_folder(f"{chapter.name}-demo-")
    copy_private(chapter.demo_workspace, workdir)
    console.note(f"workdir: {workdir}")
    return workdir


def copy_demo(chapter: Chapter, target: Path) -> Path:
    """`--copy-demo DIR`: the demo workspace copied into DIR, a new or empty folder, to work in.

    A folder of the learner's own choosing, so two learners on one server never share
    one, and private, so neither can read the other's work.
    """
    if target.is_symlink():  # its folder may be shared: it must not become ours
        raise UsageError(f"--copy-demo {target} is a link: name a new or empty folder of yours")
    if target.exists() and not target.is_dir():
        raise UsageError(f"--copy-demo {target} is a file: name a new or empty folder")
    if target.is_dir() and any(target.iterdir()):
        raise UsageError(f"--copy-demo {target} is not empty: name a new or empty folder")
    try:
        for folder in reversed([target, *target.parents]):
            if not folder.exists():
                folder.mkdir(mode=0o700)
        target.chmod(0o700)
        copy_private(chapter.demo_workspace, target)
    except OSError as exc:
        raise UsageError(f"cannot copy the demo workspace to {target}: {exc.strerror}") from None
    return target.resolve()


# --- folders of one's own: a fresh one, and a private copy ----------------------------


def copy_private(source: Path, target: Path) -> None:
    """Copy the folder `source` into the existing folder `target`, readable by its owner alone.

    Folders become 0700 and files 0600, whatever the source's modes (an installed
    package's files are 0644): on a shared machine the copy holds one's own work.
    Files keep their modification times: Python's bytecode cache tells an edited
    module by its time, and a copy stamped "now" could be edited within the same
    second and keep running the old code.  Caches are left behind.  A missing `source`
    raises, as `shutil.copytree` does.
    """
    if not source.is_dir():
        raise FileNotFoundError(2, "no such folder", str(source))
    for folder, subfolders, files in os.walk(source):
        subfolders[:] = [name for name in subfolders if name not in CACHES]
        here = target / Path(folder).relative_to(source)
        here.mkdir(mode=0o700, exist_ok=True)
        for name in files:
            original = Path(folder) / name
            shutil.copyfile(original, here / name)
            os.chmod(here / name, 0o600)
            times = original.stat()
            os.utime(here / name, ns=(times.st_atime_ns, times.st_mtime_ns))


def fresh_folder(prefix: str, parent: Path | None = None) -> Path:
    """A new empty folder `PARENT/PREFIX1`, or the next free number (default parent: /tmp).

    Numbered rather than random, so the path a learner reads is short, and the same on
    a first run anywhere: the figures the docs show are measured from demo runs whose
    tool output holds this path.  `mkdir` fails on any name that exists and never
    follows a symlink, so a name someone planted in a shared /tmp is skipped, not used.
    """
    parent = Path(parent or tempfile.gettempdir())
    number = 1
    while True:
        folder = parent / f"{prefix}{number}"
        try:
            folder.mkdir(mode=0o700)
            return folder
        except FileExistsError:
            number += 1
