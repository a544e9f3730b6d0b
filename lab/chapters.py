"""The chapters of the course, in order, and what each tells the shared command line.

The lab runs them (`lab.compare`) and the docs' figures show them (`lab.figures`);
both read the list here, so the figures can import the lab without the lab importing them.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from llm.cli import Chapter

REPO = Path(__file__).resolve().parent.parent


def chapters() -> list[str]:
    """The chapter packages that have a command line, in order: v0_react_text, v1_tool_loop, …"""
    return sorted(p.parent.name for p in REPO.glob("v[0-9]_*/__main__.py"))


def chapter(name: str) -> Chapter:
    """What the chapter's `__main__.py` tells the shared command line about it."""
    if name not in chapters():
        raise SystemExit(f"no chapter '{name}'; the chapters are {', '.join(chapters())}")
    return importlib.import_module(f"{name}.__main__").CHAPTER
