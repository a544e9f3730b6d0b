"""`python -m lab capstone [--seed N] [--keep DIR] [--model SPEC]`: does chapter 4 ask first?

The capstone adds a permission mode to chapter 4: rules in `.agent/permissions.json`
allow some commands and writes, deny others, and the agent asks the person about the
rest before it runs them.  The check runs your chapter 4 (`python -m v4_memory`) in a
process of its own, on a fresh workspace and a scripted model that goes further than it
should: it deletes a cache, archives a data file, changes the release settings, writes
docs and publishes the report.  The check plays the person at the terminal: it answers
each question (`... [y/N]`) with a yes or a no drawn for this run, then looks at what
is on disk and at what the session file says the model was told; once all is right, it
plays the same replies without the rules file, where the mode is off and nothing asks.

    python -m lab capstone              a new scenario: new names, new answers
    python -m lab capstone --seed 7     the scenario of seed 7 again (the verdict names it)
    python -m lab capstone --keep DIR   leaves the workspace and the cassette in DIR
    python -m lab capstone --model SPEC the same task with a live model: a measurement

With `--model`, a person who answers no to every question meets a real model, and the
command prints the questions and whatever changed outside the rules (`live.py`).
`scenario.py` makes the workspace and the cassette, `referee.py` runs the agent and
answers it, `verdict.py` decides.

The package imports `machine`, `lab.tasks` (the environment an agent's code runs in) and
`lab.exercises` (its verdicts, in two languages); it runs chapter 4 in a process of its
own and never imports it.  Only the lab's command line imports it.
"""

from __future__ import annotations

import secrets
import sys
import tempfile
from pathlib import Path

from lab.exercises import split_lang
from lab.exercises.check import ExerciseInputError, Said, Verdict

from .live import measure
from .referee import command, referee, scripted_environment
from .scenario import RULES_FILE, TASK, make

WORDS = {
    "title": Said("capstone, a permission mode:", "毕业项目，权限模式："),
    "done": Said("done.", "完成。"),
    "not done": Said("not done yet.", "还没完成。"),
    "hint": Said("hint: ", "提示："),
}


def check(seed: int, folder: Path) -> Verdict:
    """The scenario of `seed`, played in `folder` (which must not exist yet); then, if it
    is done, played again without the rules file, where the mode must be off."""
    scenario = make(seed)
    workspace, cassette = folder / "workspace", folder / "cassette.jsonl"
    folder.mkdir(parents=True)
    scenario.write_workspace(workspace)
    cassette.write_text(scenario.cassette(), encoding="utf-8")
    from .verdict import judge

    run = referee(scenario, command(f"replay:{cassette}", workspace, TASK), scripted_environment())
    verdict = judge(scenario, run, workspace)
    if not verdict.done:
        return verdict
    bare = folder / "without rules"
    scenario.write_workspace(bare)
    (bare / RULES_FILE).unlink()
    argv = command(f"replay:{cassette}", bare, TASK)
    again = referee(scenario, argv, scripted_environment(), every_answer="n")
    if not again.questions:
        return verdict
    seen = Said(
        f"without {RULES_FILE.as_posix()} the agent asked {len(again.questions)} question(s), "
        f"the first: {again.questions[0].text}",
        f"没有 {RULES_FILE.as_posix()} 时，智能体问了 {len(again.questions)} 个问题，"
        f"第一个是：{again.questions[0].text}",
    )
    hint = Said(
        "without a rules file the mode is off: the handlers stay as chapter 4 has them",
        "没有规则文件时权限模式是关闭的：处理函数保持第 4 章原来的样子",
    )
    return Verdict(False, seen, hint)


USAGE = "python -m lab capstone [--seed N] [--keep DIR] [--model SPEC] [--lang zh]"


def options(argv: list[str]) -> tuple[int, Path | None, str]:
    """The seed (a fresh one unless --seed N), the folder --keep names and the model
    --model names, if any."""
    seed, keep, model, words = secrets.randbits(31), None, "", list(argv)
    while words:
        flag = words.pop(0)
        if flag not in ("--seed", "--keep", "--model") or not words:
            raise ExerciseInputError(Said(f"usage: {USAGE}", f"用法：{USAGE}"))
        value = words.pop(0)
        if flag == "--keep":
            keep = Path(value).expanduser()
        elif flag == "--model":
            model = value
        elif value.isdigit():
            seed = int(value)
        else:
            raise ExerciseInputError(Said("--seed takes a number", "--seed 后面要跟一个数"))
    return seed, keep, model


def main(argv: list[str]) -> int:
    """Exit code 0 done, 1 not done, 2 usage."""
    try:
        argv, lang = split_lang(argv)
        if argv[:1] in (["-h"], ["--help"]):
            print(__doc__.strip())
            return 0
        seed, keep, model = options(argv)
        if keep is not None and keep.exists():
            raise ExerciseInputError(Said(f"{keep} exists already: name a new folder",
                                          f"{keep} 已经存在：请换一个新文件夹"))  # fmt: skip
    except ExerciseInputError as error:
        print(f"error: {error.said('en')}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="lab-capstone-") as scratch:
        folder = keep or Path(scratch) / "run"
        if model:
            return measure(make(seed), model, folder)
        return report(check(seed, folder), lang)


def report(verdict: Verdict, lang: str) -> int:
    """Print the verdict in the learner's language; the exit code: 0 done, 1 not done."""
    gap = "" if lang == "zh" else " "  # Chinese punctuation carries its own space
    title = WORDS["title"](lang)
    if verdict.done:
        print(gap.join([title, WORDS["done"](lang), verdict.seen(lang)]))
        return 0
    hint = f"\n{WORDS['hint'](lang)}{verdict.hint(lang)}" if verdict.hint else ""
    print(gap.join([title, WORDS["not done"](lang), verdict.seen(lang)]) + hint)
    return 1
