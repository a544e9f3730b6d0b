"""The worked solutions of `docs/en/solutions.md`, read as a learner would follow them.

Each exercise's part of the page is the prose and code blocks after its bold number
(`**3. A list_dir tool.**`), within its chapter's section (`## 2. Chapter 1`).  Four
kinds of block are followed, the others only read:

    ```diff          applied to the course: `--- a/PATH` names the file, each `@@ TEXT`
                     hunk is found after the first line holding TEXT, by its context
    ```jsonl PATH    written to PATH, a cassette the learner saves (`~` is their home)
    ```sh            run with bash in the course's folder
    ```output        what the `sh` block before it prints: each line of it is a line of
                     that output, in order, but a line holding `…` (a figure that
                     depends on the learner's machine or folder)

and every `python -m lab exercise N.M …` in the prose is the check the solution ends
with.  `python -m tests.solutions DEST` writes a copy of the course with every
solution applied, for running the suite on it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests import REPO

PAGE = REPO / "docs" / "en" / "solutions.md"
# What a copy of the course holds: what the exercises change and what their checks run.
COPIED = ["llm", "machine", "lab", "tests", "v0_react_text", "v1_tool_loop", "v2_todos"]
COPIED += ["v3_subagents", "v4_memory", "docs", "notebooks", "pyproject.toml", "README.md"]
COPIED += ["README.zh.md", "LICENSE", "CITATION.cff", ".env.example", ".ci", ".gitignore"]
COPIED += [".gitattributes"]
FENCE = re.compile(r"^ {0,3}```(.*)$")


class SolutionError(ValueError):
    """A worked solution that cannot be followed as written; says which and why."""


@dataclass
class Block:
    info: str  # the fence's info string: "diff", "jsonl ~/agent-course/door.jsonl", "sh", ""
    text: str
    line: int  # where the block starts on the page

    @property
    def kind(self) -> str:
        return self.info.split(" ", 1)[0] if self.info else ""


@dataclass
class Solution:
    number: str  # "1.3"
    prose: str
    blocks: list[Block] = field(default_factory=list)

    @property
    def checks(self) -> list[str]:
        """The `python -m lab exercise …` commands the solution says to run."""
        return re.findall(r"`(python -m lab exercise [^`]+)`", self.prose)


def fenced_blocks(text: str) -> list[tuple[int, int, Block]]:
    """Every fenced code block of a page: (first line, line after the fence, block)."""
    lines, found, at = text.splitlines(), [], 0
    while at < len(lines):
        opened = FENCE.match(lines[at])
        if not opened:
            at += 1
            continue
        end = at + 1
        while end < len(lines) and not re.match(r"^ {0,3}```\s*$", lines[end]):
            end += 1
        body = "\n".join(lines[at + 1 : end]) + "\n"
        found.append((at, end + 1, Block(opened.group(1).strip(), body, at + 1)))
        at = end + 1
    return found


def handed_out_without_solutions(page: Path = PAGE) -> bool:
    """Whether this copy is a class fork whose solutions page is the one-line placeholder
    of the teachers' guide (section 5): no chapter section at all, a few lines long.  A
    page that has its chapters but lost a solution is not a fork: its tests fail."""
    text = page.read_text(encoding="utf-8")
    return "\n## " not in text and len(text.splitlines()) < 12


def builds_on_the_solutions() -> pytest.MarkDecorator:
    """The mark of a test that reads the worked solutions: in a class fork, where the page
    is the placeholder, it is skipped and says why."""
    return pytest.mark.skipif(
        handed_out_without_solutions(), reason="a class fork: its solutions page is a placeholder"
    )


def read_solutions(page: Path = PAGE) -> dict[str, Solution]:
    """Every exercise's worked solution on the page, by its number."""
    text = page.read_text(encoding="utf-8")
    lines = text.splitlines()
    inside = {n for start, end, _ in fenced_blocks(text) for n in range(start, end)}
    starts = {start: block for start, _, block in fenced_blocks(text)}
    solutions: dict[str, Solution] = {}
    chapter: str | None = None
    current: Solution | None = None
    for number, line in enumerate(lines):
        if number in starts and current is not None:
            current.blocks.append(starts[number])
        if number in inside:
            continue
        heading = re.match(r"^## \d+\. Chapter (\d)", line)
        if heading:
            chapter, current = heading.group(1), None
        numbered = re.match(r"^\*\*(\d+)\. ", line)
        if numbered and chapter is not None:
            current = Solution(f"{chapter}.{numbered.group(1)}", "")
            solutions[current.number] = current
        if current is not None:
            current.prose += line + "\n"
    return solutions


def copy_course(destination: Path) -> Path:
    """A copy of the course's own files at `destination`, as a learner's clone holds them."""
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", ".ipynb_checkpoints")
    destination.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, destination / name, ignore=skip)
        else:
            shutil.copy2(source, destination / name)
    return destination


def apply_diff(course: Path, text: str, where: str = "the diff") -> list[Path]:
    """Apply a diff of the solutions page to the course; returns the files it changed."""
    changed: list[Path] = []
    target: Path | None = None
    hunks: list[tuple[str, list[str]]] = []

    def finish() -> None:
        if target is not None:
            _apply_hunks(target, hunks, where)
            changed.append(target)

    lines = text.splitlines()
    at = 0
    while at < len(lines):
        line = lines[at]
        if line.startswith("--- ") and at + 1 < len(lines) and lines[at + 1].startswith("+++ "):
            finish()
            name = lines[at + 1][4:].strip()
            target = course / (name[2:] if name.startswith("b/") else name)
            hunks = []
            at += 2
            continue
        if target is None:
            raise SolutionError(f"{where}: a diff starts with '--- a/PATH' and '+++ b/PATH'")
        if line.startswith("@@"):
            anchor = re.sub(r"^@@( -\d+(,\d+)? \+\d+(,\d+)? @@)?", "", line).strip()
            hunks.append((anchor, []))
        elif not hunks:
            raise SolutionError(f"{where}: a change before the first '@@' line: {line!r}")
        else:
            hunks[-1][1].append(line)
        at += 1
    finish()
    return changed


def _apply_hunks(path: Path, hunks: list[tuple[str, list[str]]], where: str) -> None:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    for anchor, body in hunks:
        old, new = [], []
        for line in body:
            mark, rest = (line[:1], line[1:]) if line else (" ", "")
            if mark not in " +-":
                problem = f"a hunk line must start with ' ', '+' or '-': {line!r}"
                raise SolutionError(f"{where}: {problem}")
            if mark != "+":
                old.append(rest)
            if mark != "-":
                new.append(rest)
        start = 0
        if anchor:
            start = text.find(anchor)
            if start < 0:
                raise SolutionError(f"{where}: {path.name} has no line with '{anchor}'")
            start = text.rfind("\n", 0, start) + 1
        before = "\n".join(old) + "\n" if old else ""
        found = text.find(before, start) if before else start
        if found < 0:
            problem = f"the lines of the hunk '@@ {anchor}' are not in {path.name}"
            raise SolutionError(f"{where}: {problem}")
        text = text[:found] + ("\n".join(new) + "\n" if new else "") + text[found + len(before) :]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def follow(solution: Solution, course: Path, home: Path) -> None:
    """Do what the solution says in the course copy: apply its diffs, write its cassettes,
    run its shell blocks (with `home` as the learner's home folder)."""
    printed = ""  # what the last shell block printed
    for block in solution.blocks:
        where = f"solution {solution.number}, the block at line {block.line}"
        if block.kind == "diff":
            apply_diff(course, block.text, where)
        elif block.kind == "jsonl":
            name = block.info.split(" ", 1)[1:]
            if not name:
                raise SolutionError(f"{where}: a jsonl block names its file: ```jsonl PATH")
            path = Path(name[0].replace("~", str(home), 1))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(block.text, encoding="utf-8")
        elif block.kind == "sh":
            done = shell(block.text, course, home)
            if done.returncode != 0:
                raise SolutionError(f"{where} failed: {done.stdout[-400:]}{done.stderr[-400:]}")
            printed = done.stdout
        elif block.kind == "output":
            missing = first_line_not_printed(block.text, printed)
            if missing is not None:
                raise SolutionError(f"{where}: the shell block before printed no line {missing!r}")


def first_line_not_printed(shown: str, printed: str) -> str | None:
    """The first line of `shown` (one holding `…` aside) that is not a line of `printed`
    after the one before it, or None: the page shows what the command really prints (an
    interactive prompt's `> ` and the spaces at a line's ends aside)."""
    lines = [line.strip().removeprefix("> ") for line in printed.splitlines()]
    at = 0
    for line in (line.strip() for line in shown.splitlines()):
        if "…" in line:
            continue
        try:
            at = lines.index(line, at) + 1
        except ValueError:
            return line
    return None


def environment(course: Path, home: Path) -> dict[str, str]:
    """The learner's environment in the copy: their own home, the copy first on the path."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "COV_", "LC_"))}
    folder = str(Path(sys.executable).parent)
    path = folder + os.pathsep + keep.get("PATH", "")
    # A test run a solution asks for goes in one process: its few tests would wait longer for
    # pytest-xdist's workers to start than for themselves, and the suite around it already
    # keeps every core busy.  It checks the same tests.
    return keep | {"HOME": str(home), "PATH": path, "LANG": "C.UTF-8", "PYTEST_ADDOPTS": "-n 0"}


def shell(script: str, course: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", script],
        cwd=course,
        env=environment(course, home),
        capture_output=True,
        text=True,
        timeout=600,
    )


def run_check(command: str, course: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """One `python -m lab exercise …` of a solution, run in the course copy."""
    return shell(command.replace("python ", f'"{sys.executable}" ', 1), course, home)


def main(argv: list[str]) -> int:
    """`python -m tests.solutions DEST`: a copy of the course with every solution applied."""
    if len(argv) != 1:
        print("usage: python -m tests.solutions DEST", file=sys.stderr)
        return 2
    course = copy_course(Path(argv[0]))
    home = course.parent / (course.name + "-home")
    home.mkdir(exist_ok=True)
    for solution in read_solutions().values():
        follow(solution, course, home)
        print(f"applied {solution.number}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
