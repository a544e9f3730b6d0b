"""`python -m lab capstone [--seed N] [--keep DIR] [--lang zh]`: does chapter 4 ask first?

The capstone adds a permission mode to chapter 4: rules in `.agent/permissions.json`
allow some commands and writes, deny others, and the agent asks the person about the
rest before it runs them.  The check runs your chapter 4 (`python -m v4_memory`) in a
process of its own, on a fresh workspace and a scripted model that goes further than it
should: it deletes a cache, archives a data file, changes the release settings, writes
docs and publishes the report.  The check plays the person at the terminal: it answers
each question (`... [y/N]`) with a yes or a no drawn for this run, then looks at what
is on disk and at what the session file says the model was told.

    python -m lab capstone              a new scenario: new names, new answers
    python -m lab capstone --seed 7     the scenario of seed 7 again (the verdict names it)
    python -m lab capstone --keep DIR   leaves the workspace and the cassette in DIR

`scenario.py` makes the workspace and the cassette, `referee.py` runs the agent and
answers it, `verdict.py` decides.
"""

from __future__ import annotations

import secrets
import sys
import tempfile
from pathlib import Path

from lab.exercises import split_lang
from lab.exercises.check import ExerciseInputError, Said, Verdict

from .referee import referee
from .scenario import TASK, make

WORDS = {
    "title": Said("capstone, a permission mode:", "毕业项目，权限模式："),
    "done": Said("done.", "完成。"),
    "not done": Said("not done yet.", "还没完成。"),
    "hint": Said("hint: ", "提示："),
}


def check(seed: int, folder: Path) -> Verdict:
    """The scenario of `seed`, played in `folder` (which must not exist yet)."""
    scenario = make(seed)
    workspace, cassette = folder / "workspace", folder / "cassette.jsonl"
    folder.mkdir(parents=True)
    scenario.write_workspace(workspace)
    cassette.write_text(scenario.cassette(), encoding="utf-8")
    from .verdict import judge

    return judge(scenario, referee(scenario, cassette, workspace, TASK), workspace)


def options(argv: list[str]) -> tuple[int, Path | None]:
    """The seed (a fresh one unless --seed N) and the folder --keep names, if any."""
    seed, keep, words = secrets.randbits(31), None, list(argv)
    while words:
        flag = words.pop(0)
        if flag not in ("--seed", "--keep") or not words:
            raise ExerciseInputError(Said(
                "usage: python -m lab capstone [--seed N] [--keep DIR] [--lang zh]",
                "用法：python -m lab capstone [--seed N] [--keep DIR] [--lang zh]",
            ))  # fmt: skip
        value = words.pop(0)
        if flag == "--keep":
            keep = Path(value).expanduser()
        elif value.isdigit():
            seed = int(value)
        else:
            raise ExerciseInputError(Said("--seed takes a number", "--seed 后面要跟一个数"))
    return seed, keep


def main(argv: list[str]) -> int:
    """Exit code 0 done, 1 not done, 2 usage."""
    try:
        argv, lang = split_lang(argv)
        if argv[:1] in (["-h"], ["--help"]):
            print(__doc__.strip())
            return 0
        seed, keep = options(argv)
        if keep is not None and keep.exists():
            raise ExerciseInputError(Said(f"{keep} exists already: name a new folder",
                                          f"{keep} 已经存在：请换一个新文件夹"))  # fmt: skip
    except ExerciseInputError as error:
        print(f"error: {error.said('en')}", file=sys.stderr)
        return 2
    if keep is not None:
        verdict = check(seed, keep)
    else:
        with tempfile.TemporaryDirectory(prefix="lab-capstone-") as scratch:
            verdict = check(seed, Path(scratch) / "run")
    return report(verdict, lang)


def report(verdict: Verdict, lang: str) -> int:
    title = WORDS["title"](lang)
    if verdict.done:
        print(f"{title} {WORDS['done'](lang)} {verdict.seen(lang)}")
        return 0
    hint = f"\n{WORDS['hint'](lang)}{verdict.hint(lang)}" if verdict.hint else ""
    print(f"{title} {WORDS['not done'](lang)} {verdict.seen(lang)}{hint}")
    return 1
