"""Chapter 2: the agent writes a plan as a todo list and keeps it up to date."""

from .agent import TOOLS, run

__all__ = ["TOOLS", "run"]
