"""Solved when report.py does what it did before, and the three summaries share one helper.

Behaviour: the hidden test runs the agent's summaries and the original ones (its own
copy, `hidden/original_report.py`) on the same thousand random inputs and compares
every output.  Structure: read with `ast`, each `*_summary` must call one and the
same module-level function, and be short, since the shared code has left it.
"""

import ast
from pathlib import Path

from lab.tasks.checks import Verdict, read_answer_file, run_hidden_tests

HIDDEN = Path(__file__).parent / "hidden"
SUMMARIES = ("sales_summary", "refund_summary", "stock_summary")
MAX_STATEMENTS = 4  # in each summary's body, nested ones included, once the helper exists


def check(workspace: Path, answer: str) -> Verdict:
    verdict = run_hidden_tests(workspace, HIDDEN, sources=["report.py"])
    if not verdict.solved:
        return verdict
    problem = structure_problem(read_answer_file(workspace, "report.py"))
    return Verdict(False, problem) if problem else verdict


def structure_problem(source: str) -> str | None:
    """What keeps the three summaries from sharing one helper, or None."""
    functions = {
        node.name: node for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)
    }
    called = []
    for name in SUMMARIES:
        if name not in functions:
            return f"report.py no longer defines {name}"
        body = functions[name]
        statements = sum(isinstance(node, ast.stmt) for node in ast.walk(body)) - 1
        if statements > MAX_STATEMENTS:
            return f"{name} still has {statements} statements of its own"
        calls = {
            node.func.id
            for node in ast.walk(body)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        }
        called.append(calls & (functions.keys() - set(SUMMARIES)))
    if not set.intersection(*called):
        return "the three summaries do not call one shared helper"
    return None
