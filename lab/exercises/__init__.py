"""`python -m lab exercise N.M [FILE]`: is exercise M of chapter N done?

    python -m lab exercise              every exercise, and whether a program can check it
    python -m lab exercise 2.3          checks exercise 3 of chapter 2
    python -m lab exercise 1.5 FILE     checks the cassette FILE that exercise asked you to write
    python -m lab exercise 2.3 --lang zh    in Chinese (the default follows LANG)

The answer comes from what the chapter does, never from reading your code: the check
runs the chapter (on a fresh copy of its demo workspace, with a cassette written here
or the one you name) or calls the function the exercise changes, on cases made fresh
each time, and looks at the result.  When the exercise is not done yet, it says what it
saw and gives a hint.  Exercises that need a live model, or ask for a measurement or an
explanation, have no check here; docs/en/rubrics.md gives a rubric for each.

One module per chapter (`chapter0.py` … `chapter4.py`) holds that chapter's checks and
lists its exercises; `check.py` holds what they share.  A check that needs a page of its
own has a module beside its chapter's (`chapter1_calls.py`, `chapter2_reminder.py`,
`chapter4_fts5.py`, `chapter4_layers.py`), and so do the cases a chapter's checks make
(`chapter0_replies.py`, `chapter2_plans.py`) and the way chapter 0's judge a reply
(`chapter0_corpus.py`).

The package imports `llm`, `machine`, and the chapters it checks, each only inside the
check that runs it, so that a learner's broken chapter breaks that check alone; exercise
4.5's child process imports the learner's `Fts5Store` from `lab.memory_searchers`.  The
lab's command line and `lab.collect` (a class's hand-ins, marked) import it.
"""

from __future__ import annotations

import os
import sys

from llm.cassette import CassetteError

from . import chapter0, chapter1, chapter2, chapter3, chapter4
from .check import LANGS, Exercise, ExerciseInputError, Said

EXERCISES: dict[str, Exercise] = {
    **chapter0.EXERCISES,
    **chapter1.EXERCISES,
    **chapter2.EXERCISES,
    **chapter3.EXERCISES,
    **chapter4.EXERCISES,
}

WORDS = {
    "done": Said("done.", "完成。"),
    "not done": Said("not done yet.", "还没完成。"),
    "hint": Said("hint: ", "提示："),
    "unchecked": Said("no program can check this one; ", "这一道没有程序能检查："),
    "checked": Said("checked", "可自检"),
    "no check": Said("no check: ", "不能自检："),
    "failed": Said("not done yet: the check failed with", "还没完成：检查出错了："),
    "no exercise": Said("no exercise {}; they are {}", "没有练习 {}；练习有 {}"),
}


def learner_lang(environ: dict[str, str] | None = None) -> str:
    """zh when the learner's locale is Chinese (LC_ALL, LC_MESSAGES or LANG), else en."""
    environ = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def listing(lang: str) -> str:
    rows = []
    for number, exercise in EXERCISES.items():
        if exercise.check:
            how = WORDS["checked"](lang)
        else:
            reason = exercise.unchecked(lang) if exercise.unchecked else ""
            how = WORDS["no check"](lang) + reason.split("：" if lang == "zh" else ":")[0]
        rows.append(f"{number}  {exercise.title(lang):<40} {how}")
    return "\n".join(rows)


def split_lang(argv: list[str]) -> tuple[list[str], str]:
    """The words without `--lang X`, and the language they ask for (else the locale's)."""
    if "--lang" not in argv:
        return argv, learner_lang()
    at = argv.index("--lang")
    lang = argv[at + 1] if at + 1 < len(argv) else ""
    if lang not in LANGS:
        raise ExerciseInputError(
            Said(f"--lang takes one of {', '.join(LANGS)}", f"--lang 的取值是 {'、'.join(LANGS)}")
        )
    return argv[:at] + argv[at + 2 :], lang


def main(argv: list[str]) -> int:
    """What the command prints, and its exit code: 0 done (or no check), 1 not done, 2 usage."""
    try:
        argv, lang = split_lang(argv)
    except ExerciseInputError as error:
        print(f"error: {error.said('en')}", file=sys.stderr)
        return 2
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip() + "\n\n" + listing(lang))
        return 0
    number, words = argv[0], argv[1:]
    exercise = EXERCISES.get(number)
    if exercise is None:
        known = ", ".join(EXERCISES)
        print(f"error: {WORDS['no exercise'](lang).format(number, known)}", file=sys.stderr)
        return 2
    title = f"{number} {exercise.title(lang)}:"
    if exercise.check is None:
        reason = exercise.unchecked(lang) if exercise.unchecked else ""
        print(f"{title} {WORDS['unchecked'](lang)}{reason}")
        return 0
    try:
        verdict = exercise.check(words)
    except ExerciseInputError as error:
        print(f"error: {error.said(lang)}", file=sys.stderr)
        return 2
    except (CassetteError, ImportError, AttributeError, KeyError, TypeError) as error:
        print(f"{title} {WORDS['failed'](lang)} {error!r}")
        return 1
    if verdict.done:
        print(f"{title} {WORDS['done'](lang)} {verdict.seen(lang)}")
        return 0
    hint = f"\n{WORDS['hint'](lang)}{verdict.hint(lang)}" if verdict.hint else ""
    print(f"{title} {WORDS['not done'](lang)} {verdict.seen(lang)}{hint}")
    return 1
