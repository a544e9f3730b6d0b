"""Just enough Markdown for the docs tests: where code blocks are, what is prose."""

from __future__ import annotations

import re


def code_line_numbers(text: str) -> set[int]:
    """Line numbers (from 1) inside fenced code blocks, the fences included.

    A fence is a line that starts, after any indentation, with three backticks;
    backticks inside a line of prose, such as ```` ``` ````, open nothing.
    """
    inside, numbers = False, set()
    for number, line in enumerate(text.splitlines(), start=1):
        fence = line.lstrip().startswith("```")
        if fence or inside:
            numbers.add(number)
        if fence:
            inside = not inside
    return numbers


def without_code_blocks(text: str) -> str:
    """The text with fenced code blocks blanked out, line numbers kept."""
    code = code_line_numbers(text)
    lines = text.splitlines()
    return "\n".join("" if n in code else line for n, line in enumerate(lines, start=1))


def without_code_spans(line: str) -> str:
    """A line of prose with its `code spans` (of any number of backticks) removed."""
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", " ", line)
