"""Solved when the checker's own tests pass against the agent's `invoicing` package.

Beyond the workspace's tests, the hidden ones check the discount at its other tier,
that a line's total is the discounted one (as `Line.total` says), and that a loaded
invoice keeps its number through a second save: both bugs, fixed where they are.
"""

from pathlib import Path

from lab.tasks.checks import Verdict, run_hidden_tests

HIDDEN = Path(__file__).parent / "hidden"
# Every module of the package, by name: a test module the agent adds to the package
# stays in the workspace.
MODULES = [
    "__init__", "catalog", "cli", "currency", "customers", "discounts", "invoice", "lines",
    "money", "numbering", "render", "storage", "tax", "validate",
]  # fmt: skip


def check(workspace: Path, answer: str) -> Verdict:
    sources = [f"invoicing/{module}.py" for module in MODULES]
    return run_hidden_tests(workspace, HIDDEN, sources=sources)
