"""The documentation stays true: links resolve, commands name real modules and flags,
the two languages have the same chapters and sections, and CI runs README's test command."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = sorted(
    [
        REPO / "README.md",
        *(p for p in REPO.glob("*/README.md") if not p.parent.name.startswith(".")),
        *REPO.glob("docs/**/*.md"),
    ]
)
CHAPTER_FLAGS = {
    "--model",
    "--workdir",
    "--max-turns",
    "--record",
    "--quiet",
    "--demo",
    "--strict",
    "--help",
    "-h",
}


def relative(path: Path) -> str:
    return str(path.relative_to(REPO))


@pytest.mark.parametrize("doc", DOCS, ids=relative)
def test_relative_links_resolve(doc: Path) -> None:
    text = re.sub(r"```.*?```", "", doc.read_text(encoding="utf-8"), flags=re.DOTALL)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (doc.parent / target.split("#")[0]).resolve()
        assert path.exists(), f"{relative(doc)} links to missing {target}"


@pytest.mark.parametrize("doc", DOCS, ids=relative)
def test_commands_name_real_modules_and_flags(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    for command in re.findall(r"python3? -m ([\w.]+)([^\n`|]*)", text):
        module, rest = command
        if module in {"venv", "pip", "pytest", "unittest", "ruff"}:
            continue
        assert importlib.util.find_spec(module), f"{relative(doc)}: no module {module}"
        if module.startswith("v") and "_" in module:
            try:
                words = shlex.split(rest.split("#")[0])
            except ValueError:
                words = rest.split()
            for flag in (w.split("=")[0] for w in words if w.startswith("-")):
                assert flag in CHAPTER_FLAGS, f"{relative(doc)}: unknown flag {flag}"


def headings(path: Path) -> list[str]:
    return re.findall(r"^## (\d+)", path.read_text(encoding="utf-8"), re.MULTILINE)


def test_every_chapter_exists_in_both_languages_with_the_same_sections() -> None:
    english = sorted(p.name for p in (REPO / "docs/en").glob("*.md"))
    chinese = sorted(p.name for p in (REPO / "docs/zh").glob("*.md"))
    assert english == chinese
    for name in english:
        en, zh = REPO / "docs/en" / name, REPO / "docs/zh" / name
        assert len(re.findall(r"^## ", en.read_text(), re.MULTILINE)) == len(
            re.findall(r"^## ", zh.read_text(), re.MULTILINE)
        ), name
        assert headings(en) == headings(zh), name


def test_chapters_follow_the_template() -> None:
    for chapter in (REPO / "docs/en").glob("v[0-9]_*.md"):
        assert headings(chapter) == [str(n) for n in range(1, 10)], chapter.name


def test_code_paths_named_in_docs_exist() -> None:
    for doc in DOCS:
        for name in re.findall(
            r"`((?:llm|lab|v\d_\w+|tests)/[\w/.-]+\.(?:py|jsonl|md))`",
            doc.read_text(encoding="utf-8"),
        ):
            assert (REPO / name).exists(), f"{relative(doc)} names missing {name}"


def readme_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", (REPO / "README.md").read_text(), re.DOTALL)
    return [line.strip() for block in blocks[:2] for line in block.splitlines() if line.strip()]


def test_readme_gives_two_commands_and_ci_runs_the_test_one() -> None:
    run_demo, run_tests = readme_commands()
    assert run_demo.endswith("python -m v1_tool_loop --demo")
    assert run_tests.endswith("pytest")
    assert run_tests in (REPO / ".ci/run").read_text().splitlines()


def source_lines() -> set[str]:
    lines = set()
    for path in REPO.rglob("*.py"):
        if not any(part.startswith(".") for part in path.relative_to(REPO).parts):
            lines |= {line.strip() for line in path.read_text(encoding="utf-8").splitlines()}
    return lines


def test_code_quoted_in_docs_is_in_the_repository() -> None:
    known = source_lines()
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for block in re.findall(r"```python\n(.*?)```", text, re.DOTALL):
            for line in block.splitlines():
                line = line.strip()
                if line and line not in {"...", "…"} and not line.startswith(("# …", "# ...")):
                    assert line in known, f"{relative(doc)} quotes a line not in the code: {line}"
