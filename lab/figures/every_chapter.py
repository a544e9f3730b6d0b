"""The figures every chapter shows alike: its demo turn by turn and as printed, all the demos
side by side, what each chapter sends on every call, its code's size, the lab's table, and
what an exercise's script prints."""

from __future__ import annotations

import functools
import re
import subprocess
import textwrap

from lab.chapters import chapters
from lab.compare.report import task_table
from lab.words import word
from machine import command_environment, find_bash

from .demos import demo_stdout, lab_records, run_demo, scratch_folder
from .markdown import DOCS, REPO, about, listed, number, stamp, table


def demo_turns(name: str, lang: str = "en") -> str:
    """Turn by turn: why the reply ended, what the loop ran, and how the context grew."""
    run = run_demo(name)
    warned = any(turn.warnings for turn in run.turns)
    headers = ["turn", "`stop_reason`", "tool calls", "context (tokens in)", "tokens out"]
    headers += ["warnings"] if warned else []
    rows = []
    for index, turn in enumerate(run.turns, start=1):
        calls = listed([f"`{tool}`" for tool in turn.tools], lang) or "—"
        usage = turn.reply.usage
        row = [str(index), f"`{turn.reply.stop_reason}`", calls]
        row += [number(usage.input_tokens), number(usage.output_tokens)]
        row += [listed([f"`{w}`" for w in turn.warnings], lang) or "—"] if warned else []
        rows.append(row)
    total = run.result.usage
    calls = sum(len(turn.tools) for turn in run.turns)
    last = [word("all turns", lang), "", str(calls), number(total.input_tokens)]
    rows.append([*last, number(total.output_tokens), *([""] if warned else [])])
    return stamp() + "\n" + table([word(h, lang) for h in headers], rows)


def demo_summary(lang: str = "en") -> str:
    """Every chapter's demo side by side: the same task, what each design spent on it."""
    headers = ["chapter", "stop", "turns", "tool calls", "tokens in", "tokens out"]
    rows = []
    for name in chapters():
        result = run_demo(name).result
        usage = result.usage
        rows.append(
            [
                f"{name[1]} · `{name}`",
                f"`{result.stop}`",
                str(result.turns),
                str(result.tool_calls),
                number(usage.input_tokens),
                number(usage.output_tokens),
            ]
        )
    return stamp() + "\n" + table([word(h, lang) for h in headers], rows)


def request_sizes(lang: str = "en") -> str:
    """What each chapter sends before the task itself, on every call, in characters."""
    headers = [
        "chapter",
        "system prompt (characters)",
        "tool schemas (characters)",
        "sent on every call (characters)",
    ]
    rows = []
    for name in chapters():
        first = run_demo(name).turns[0].request
        fixed = first["system prompt"] + first["tool schemas"]
        schemas = number(first["tool schemas"]) if first["tool schemas"] else word("none", lang)
        rows.append(
            [f"{name[1]} · `{name}`", number(first["system prompt"]), schemas, number(fixed)]
        )
    return table([word(h, lang) for h in headers], rows)


def code_size(lang: str = "en") -> str:
    """Non-blank lines of each chapter's code: the loop, and the files beside it."""
    headers = ["chapter", "`agent.py`, non-blank lines", "other files"]
    rows = []
    for name in chapters():
        sizes = {
            path.name: sum(
                1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
            )
            for path in sorted((REPO / name).glob("*.py"))
        }
        others = [f"`{file}` {n}" for file, n in sizes.items() if file != "agent.py" and n]
        rows.append([f"{name[1]} · `{name}`", str(sizes.get("agent.py", 0)), listed(others, lang)])
    return table([word(h, lang) for h in headers], rows)


@functools.cache
def demo_output(name: str, lang: str = "en") -> str:
    """What `python -m NAME --demo` prints, run from the repository root."""
    return stamp() + "\n```\n" + demo_stdout(name) + "\n```"


def compare_table(task: str, window: str = "", lang: str = "en") -> str:
    """The table `python -m lab compare --task TASK [--window TOKENS]` prints offline, without
    its wall times, which differ on every run, and with its notes on a line each: the
    terminal wraps them at 100 columns, a Markdown page wraps them itself."""

    records = lab_records(task, int(window) if window else None)
    return stamp() + "\n" + task_table(records, wall=False, lang=lang, columns=None)


def class_live(task: str, runs: str, learners: str, bound: str, lang: str = "en") -> str:
    """What `python -m lab compare --model SPEC --task TASK --runs RUNS --max-tokens-total
    BOUND` asks of a class's model: its runs, calls and tokens for one learner and for the
    class, from the offline comparison's runs of the task (their tokens estimated from what
    each chapter really sent), and at most what the bound lets every run spend."""
    records = lab_records(task, None)
    per_run = {
        "chapters' runs": len(records),
        "model calls": sum(record.turns for record in records),
        "tokens, in and out": sum(r.input_tokens + r.output_tokens for r in records),
        "tokens at most": len(records) * int(bound),
    }
    scale = [1, int(runs), int(runs) * int(learners)]
    rows = []
    for name, value in per_run.items():
        shown = about if name == "tokens, in and out" else number
        rows.append([word(name, lang), *(shown(value * times) for times in scale)])
    headers = ["", "each chapter once", f"one learner, {runs} runs", f"{learners} learners"]
    if lang == "zh":
        headers = ["", "每章一次", f"一个学员，{runs} 次", f"{learners} 个学员"]
    return stamp() + "\n" + table(headers, rows)


def exercise_output(name: str, exercise: str, lang: str = "en") -> str:
    """What the script of exercise `exercise` in chapter `name`'s page prints: the first code
    block of the exercise, run with bash in the course's folder, as the learner runs it.
    For scripts that only read and measure: one that changes the course is not run here."""
    page = (DOCS / "en" / f"{name}.md").read_text(encoding="utf-8")
    exercises = page[page.index("\n## 8. ") :]
    start = re.search(rf"^{exercise}\. \*\*", exercises, re.M)
    if start is None:
        raise SystemExit(f"{name}'s page has no exercise {exercise}")
    fenced = re.search(r"^( *)```[^\n]*\n(.*?)^ *```", exercises[start.start() :], re.M | re.S)
    if fenced is None:
        raise SystemExit(f"exercise {exercise} of {name}'s page has no script")
    script = textwrap.dedent(fenced.group(2))
    with scratch_folder() as folder:  # a temporary folder's path is in what tools print
        environment = command_environment()  # no key; this Python first, as the learner's
        environment |= {"PYTHONPATH": str(REPO), "NO_COLOR": "1", "TMPDIR": str(folder)}
        done = subprocess.run(
            [find_bash() or "bash", "-c", script], cwd=REPO, env=environment,
            capture_output=True, text=True,
            timeout=600,  # a guard against a hang: seconds, even on a busy machine
        )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"exercise {exercise} of {name}'s page failed: {done.stderr.strip()}")
    return f"```\n{done.stdout.rstrip()}\n```"
