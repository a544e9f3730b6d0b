"""Repository-wide checks: lint, the layering of DESIGN.md, and what README's `pytest` runs."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lab import shape
from lab.shape import a_cycle, import_graph
from tests import REPO


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is in the dev extra")
def test_ruff_is_clean() -> None:
    done = subprocess.run(["ruff", "check", "."], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


def imported_packages(package: str) -> set[str]:
    found = set()
    for path in (REPO / package).rglob("*.py"):
        if "demo" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
    return found


def test_layers_point_one_way() -> None:
    chapters = sorted(p.name for p in REPO.glob("v[0-9]_*") if p.is_dir())
    ours = {"lab", "llm", "machine", *chapters}
    assert not imported_packages("llm") & ours - {"llm"}, "llm imports nothing of ours"
    assert not imported_packages("machine") & ours - {"machine"}, "machine imports nothing of ours"
    for index, chapter in enumerate(chapters):
        imported = imported_packages(chapter)
        assert "lab" not in imported, f"{chapter} imports lab"
        later = set(chapters[index + 1 :])
        if chapter == "v0_react_text":
            later -= {"v1_tool_loop"}  # chapter 0 borrows chapter 1's tools, on purpose
        assert not imported & later, f"{chapter} imports a later chapter"


def test_agent_loops_stay_short() -> None:
    budgets = {
        "v0_react_text": 250,
        "v1_tool_loop": 120,
        "v2_todos": 160,
        "v3_subagents": 200,
        "v4_memory": 260,
    }
    for chapter, budget in budgets.items():
        path = REPO / chapter / "agent.py"
        if path.exists():
            lines = [line for line in path.read_text().splitlines() if line.strip()]
            assert len(lines) <= budget, f"{chapter}/agent.py has {len(lines)} non-blank lines"


def test_no_module_imports_itself_round_a_cycle() -> None:
    graph = import_graph()
    assert {
        "lab.compare.command",
        "llm.cassette",
        "machine.files",
        "v4_memory.agent",
    } <= graph.keys()
    assert "lab.compare.runs" in graph["lab.compare.comparison"], "relative imports are resolved"
    assert not (cycle := a_cycle(graph)), "import cycle: " + " -> ".join(cycle)


def test_a_cycle_is_named() -> None:
    assert a_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert a_cycle({"a": {"b"}, "b": set()}) == []


@pytest.mark.docs  # the course as it ships: an exercise's answer adds lines to a chapter
def test_the_tree_keeps_the_shape_that_keeps_each_chapter_readable() -> None:
    """`python -m lab shape`: chapter sizes, chapter diffs, boundaries, the shared modules."""
    missed = [figure for figure in shape.measure() if not figure.ok]
    assert not missed, "\n".join(
        f"{figure.name}: {figure.value} (target {figure.target}) {list(figure.problems)}"
        for figure in missed
    )


def test_the_shape_check_sees_what_would_break_a_chapter(tmp_path: Path) -> None:
    """The measures themselves: a long function, a diff and machinery are all found."""
    long = tmp_path / "long.py"
    long.write_text("def f():\n" + "    x = 1\n" * 70 + "\n\n    return x\n", encoding="utf-8")
    assert shape.functions(long) == [("f", 72)]
    before, after = tmp_path / "a.py", tmp_path / "b.py"
    before.write_text("one\ntwo\nthree\n", encoding="utf-8")
    after.write_text("one\n2\nthree\nfour\n", encoding="utf-8")
    assert shape.changed_lines(before, after) == 3
    for line in ("import fcntl", "os.killpg(pid, 9)", "os.pread(fd, 10, 0)", "gc.disable()",
                 "open('/proc/1/environ')", "import msvcrt"):  # fmt: skip
        assert shape.MACHINERY.search(line), line
    assert shape.ID_KEYED.search("cache[id(message)] = 1")
    assert not shape.ID_KEYED.search("session.id, message_id(x), store.id()")


def collected(*arguments: str) -> tuple[dict[str, int], str]:
    """How many tests `pytest --collect-only` finds in each file, and what it printed."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-qq", "-n", "0",
         "-p", "no:cacheprovider", *arguments],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    counts = (line.rpartition(": ") for line in done.stdout.splitlines() if ".py: " in line)
    return {name: int(count) for name, _, count in counts}, done.stdout


def test_the_slow_cases_are_left_out_said_and_run_when_asked_for() -> None:
    """README's `pytest` leaves the cases marked `slow` out and says how many; a file named
    on the command line runs whole; `--slow` runs them all (as CI does, with `-m slow`)."""
    console, bench = "tests/llm/test_console.py", "tests/lab/test_bench.py"
    plain, said = collected("tests/llm", bench)
    everything, said_too = collected("--slow", "tests/llm", bench)
    assert plain[console] == everything[console] - 10  # every demo on a console not UTF-8
    assert plain[bench] == everything[bench] == 4  # named, the benchmarks' file runs whole
    assert "10 slow end-to-end tests left out: `pytest --slow` runs them too" in said
    assert "left out" not in said_too
