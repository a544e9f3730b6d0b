"""The figures the docs show, printed by the code that produces them: never typed in.

    python -m lab.figures demo-turns v1_tool_loop        print one figure (Markdown)
    python -m lab.figures demo-summary --lang zh         the same with Chinese headers
    python -m lab.figures --update                       rewrite every marked block in docs/
    python -m lab.figures --check                        list the blocks that are out of date

A doc marks a generated block with two HTML comments, which Markdown does not show:

    <!-- figure: demo-turns v1_tool_loop -->
    …whatever the figure printed last time…
    <!-- /figure -->

Blocks in `docs/zh` get Chinese headers, all others English.  When the code changes
(a new cassette, a new token estimate, one more chapter), `--update` brings every
doc up to date in one go, and the docs tests fail until someone runs it.  `FIGURES`
names every figure and the function that prints it, in the module of its chapter.

Figures that run a demo depend on what the tools print, and that depends a little
on the Python version (a traceback's layout, unittest's test names).  They carry a
stamp, `<!-- printed with Python 3.11 -->`, so that a check on another version can
say it cannot compare instead of calling the block stale.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import (
    chapter1,
    chapter2,
    chapter3,
    chapter4,
    chapter4_memory,
    chapter4_prompt,
    every_chapter,
    local_models,
)
from .markdown import BLOCK, DOCS, REPO, STAMP

FIGURES: dict[str, Callable[..., str]] = {
    "demo-turns": every_chapter.demo_turns,
    "demo-summary": every_chapter.demo_summary,
    "demo-output": every_chapter.demo_output,
    "code-size": every_chapter.code_size,
    "request-sizes": every_chapter.request_sizes,
    "wire-shapes": chapter1.wire_shapes,
    "output-limit": chapter1.output_limit,
    "plan-distance": chapter2.plan_distance,
    "plan-history": chapter2.plan_history,
    "reminder-tuning": chapter2.reminder_tuning,
    "context-growth": chapter3.context_growth,
    "delegation": chapter3.delegation,
    "children": chapter3.children_table,
    "demo-output-by-agent": chapter3.demo_output_by_agent,
    "compare-table": every_chapter.compare_table,
    "exercise-output": every_chapter.exercise_output,
    "class-live": every_chapter.class_live,
    "context-stages": chapter4.context_stages,
    "prompt-layers": chapter4_prompt.prompt_layers,
    "prefix-cache": chapter4_prompt.prefix_cache,
    "skill-costs": chapter4_prompt.skill_costs,
    "bm25-example": chapter4_prompt.bm25_example,
    "memory-search": chapter4_memory.memory_search,
    "memory-costs": chapter4_memory.memory_costs,
    "memory-setup": chapter4_memory.memory_setup,
    "demo-output-masked": chapter4.demo_output_masked,
    "session-file": chapter4.session_file,
    "server-check": local_models.server_check,
    "recorded-table": local_models.recorded_table,
}


def render(spec: str, lang: str = "en") -> str:
    """The Markdown a figure spec such as `demo-turns v1_tool_loop` prints now."""
    name, *args = spec.split()
    if name not in FIGURES:
        raise SystemExit(f"no figure '{name}'; the figures are {', '.join(FIGURES)}")
    return _render(name, tuple(args), lang)


@functools.cache
def _render(name: str, args: tuple[str, ...], lang: str) -> str:
    return FIGURES[name](*args, lang=lang)


# --- the marked blocks in docs/ ---------------------------------------------------------


@dataclass
class Block:
    """One marked block of one doc: where it is, which figure, what it holds now."""

    doc: Path
    line: int
    spec: str
    current: str

    @property
    def lang(self) -> str:
        return language_of(self.doc)

    def expected(self) -> str:
        return "\n" + render(self.spec, self.lang) + "\n\n"

    def comparable(self) -> bool:
        """False when the block was printed by another Python version than this one."""
        found = STAMP.search(self.current)
        return not found or found.group(1) == "{}.{}".format(*sys.version_info[:2])


def language_of(doc: Path) -> str:
    return "zh" if "zh" in doc.resolve().relative_to(REPO).parts else "en"


def blocks(doc: Path) -> list[Block]:
    text = doc.read_text(encoding="utf-8")
    return [
        Block(doc, text.count("\n", 0, match.start()) + 1, match.group(2).strip(), match.group(3))
        for match in BLOCK.finditer(text)
    ]


def all_blocks(root: Path = DOCS) -> list[Block]:
    return [block for doc in sorted(root.rglob("*.md")) for block in blocks(doc)]


def updated(text: str, lang: str) -> str:
    """The doc's text with every marked block replaced by what its figure prints now."""

    def replace(match: re.Match[str]) -> str:
        body = "\n" + render(match.group(2).strip(), lang) + "\n\n"
        return match.group(1) + body + match.group(4)

    return BLOCK.sub(replace, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lab.figures", description=__doc__.split("\n")[0]
    )
    parser.add_argument("figure", nargs="*", help=f"one of {', '.join(FIGURES)}, and its arguments")
    parser.add_argument("--lang", choices=["en", "zh"], default="en", help="language of headers")
    parser.add_argument("--update", action="store_true", help="rewrite every marked block in docs/")
    parser.add_argument("--check", action="store_true", help="report blocks that are out of date")
    args = parser.parse_args(argv)
    if args.update:
        for doc in sorted(DOCS.rglob("*.md")):
            text = doc.read_text(encoding="utf-8")
            new = updated(text, language_of(doc))
            if new != text:
                doc.write_text(new, encoding="utf-8", newline="\n")  # LF, as .gitattributes says
                print(f"updated {doc.relative_to(REPO)}")
        return 0
    if args.check:
        stale = 0
        for block in all_blocks():
            where = f"{block.doc.relative_to(REPO)}:{block.line} ({block.spec})"
            if not block.comparable():
                print(f"not checked: {where} was printed with another Python version")
            elif block.current != block.expected():
                stale += 1
                print(f"stale: {where}")
        if stale:
            print(f"{stale} stale figure(s): run python -m lab.figures --update")
        return 1 if stale else 0
    if not args.figure:
        parser.error("name a figure, or give --update or --check")
    print(render(" ".join(args.figure), args.lang))
    return 0
