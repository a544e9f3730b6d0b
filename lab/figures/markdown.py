"""What every figure is printed with: Markdown tables, numbers as the docs write them, the
stamp of the Python version a figure depends on, and where the docs are."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
BLOCK = re.compile(r"(<!-- figure: (.+?) -->\n)(.*?)(<!-- /figure -->)", re.DOTALL)
STAMP = re.compile(r"<!-- printed with Python (\d+\.\d+) -->")


def stamp() -> str:
    return f"<!-- printed with Python {sys.version_info.major}.{sys.version_info.minor} -->"


def table(headers: list[str], rows: list[list[str]]) -> str:
    lines = [headers, ["---"] * len(headers), *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def listed(items: list[str], lang: str) -> str:
    """Items of a table cell, separated as each language does it."""
    return ("、" if lang == "zh" else ", ").join(items)


def number(value: int) -> str:
    return f"{value:,}"


def about(value: int) -> str:
    """A figure rounded to hundreds, for a measure that moves a little whenever its input does."""
    return f"≈{round(value, -2):,}"


def calls_in(calls: list[str], lang: str) -> str:
    """Tool calls by name, counted: `read_file` ×4, `task` ×2."""
    counts = Counter(calls)
    shown = [f"`{name}`" + (f" ×{n}" if n > 1 else "") for name, n in counts.items()]
    return listed(shown, lang) or "—"
