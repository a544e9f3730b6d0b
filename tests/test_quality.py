"""Repository-wide checks: lint, the layering of DESIGN.md, and the benchmark script."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


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


OPERATING_SYSTEM_CALLS = re.compile(
    r"\bimport (fcntl|msvcrt|gc|psutil|selectors)\b|os\.(killpg|setsid|pread|pwrite|O_NOFOLLOW"
    r"|O_NONBLOCK|fchown|getuid)\b|/proc\b|start_new_session|signal\.SIGKILL"
)


def test_the_differences_between_systems_stay_in_machine() -> None:
    """Chapters and the lab ask `machine` for what differs between Linux, macOS and Windows."""
    found = []
    for path in sorted(REPO.glob("[lv]*/**/*.py")):
        if "demo" in path.parts or path.parts[len(REPO.parts)] in ("llm", "machine"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if OPERATING_SYSTEM_CALLS.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)


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


def test_benchmark_prints_its_figures() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "lab.bench",
            "--startup-runs",
            "1",
            "--turns",
            "5",
            "--loop-runs",
            "1",
            "--estimate-runs",
            "1",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "start-up" in done.stdout and "loop overhead per turn: median" in done.stdout
    assert "token estimate: " in done.stdout and "1,000-message request" in done.stdout
    assert "read_file limit=2 on a 200 MB file: median" in done.stdout


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Which of the project's modules each of its modules imports, read with `ast`.

    Every import counts, wherever it stands: at the top, inside a function, or under
    `if TYPE_CHECKING:`. An import put off into a function still makes one module need the
    other, and a type-only import still says the two know each other; leaving either out would
    let a cycle hide behind the trick that dodges it at run time. A relative import is resolved
    against its package; `from package import name` points at `package.name` when that is a
    module of ours, and at the package itself otherwise. The demo workspaces are the learner's
    files, not the course's modules, and are left out.
    """
    paths = {}
    for top in ("llm", "machine", "lab", *(p.name for p in REPO.glob("v[0-9]_*") if p.is_dir())):
        for path in (REPO / top).rglob("*.py"):
            if "demo" not in path.relative_to(REPO).parts:
                paths[module_name(path)] = path
    graph: dict[str, set[str]] = {name: set() for name in paths}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in paths else base
                    for alias in node.names
                ]
            else:
                continue
            graph[name] |= {target for target in targets if target in paths and target != name}
    return graph


def a_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of the graph as the modules along it, first one repeated; empty when none."""
    done: set[str] = set()
    path: list[str] = []

    def visit(name: str) -> list[str]:
        if name in path:
            return [*path[path.index(name) :], name]
        if name in done:
            return []
        path.append(name)
        for target in sorted(graph[name]):
            if found := visit(target):
                return found
        path.pop()
        done.add(name)
        return []

    for name in sorted(graph):
        if found := visit(name):
            return found
    return []


def test_no_module_imports_itself_round_a_cycle() -> None:
    graph = import_graph()
    assert {"lab.compare", "llm.cassette", "machine.files", "v4_memory.agent"} <= graph.keys()
    assert "lab.runs" in graph["lab.compare"], "relative imports are resolved"
    assert not (cycle := a_cycle(graph)), "import cycle: " + " -> ".join(cycle)


def test_a_cycle_is_named() -> None:
    assert a_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert a_cycle({"a": {"b"}, "b": set()}) == []
