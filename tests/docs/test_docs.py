"""The documentation stays true: links resolve, commands name real modules and flags,
chapter numbers agree everywhere, the two languages have the same sections, quoted code
is in the repository, and CI runs README's test command."""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
from pathlib import Path

import pytest

from tests import REPO
from tests.markdown import without_code_blocks

pytestmark = pytest.mark.docs  # pins the docs: see README, "Two commands"

DOCS = sorted(
    [
        REPO / "README.md",
        *(p for p in REPO.glob("*/README*.md") if not p.parent.name.startswith(".")),
        *REPO.glob("docs/**/*.md"),
    ]
)
CHAPTERS = sorted((REPO / "docs/en").glob("v[0-9]_*.md"))
CHAPTER_FLAGS = {
    "--model",
    "--workdir",
    "--max-turns",
    "--record",
    "--quiet",
    "--demo",
    "--strict",
    "--copy-demo",
    "--step",
    "--max-tokens-total",
    "--help",
    "-h",
}


def relative(path: Path) -> str:
    return str(path.relative_to(REPO))


@pytest.mark.parametrize("doc", DOCS, ids=relative)
def test_relative_links_resolve(doc: Path) -> None:
    text = without_code_blocks(doc.read_text(encoding="utf-8"))
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (doc.parent / target.split("#")[0]).resolve()
        assert path.exists(), f"{relative(doc)} links to missing {target}"


def own_flags(module: str) -> set[str]:
    """The flags a chapter adds to the shared ones (chapter 4's `--continue`, …)."""
    chapter = importlib.import_module(f"{module}.__main__").CHAPTER
    parser = argparse.ArgumentParser(add_help=False)
    if chapter.sessions:
        chapter.sessions.add_flags(parser)
    return {flag for action in parser._actions for flag in action.option_strings}


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
                allowed = CHAPTER_FLAGS | own_flags(module)
                assert flag in allowed, f"{relative(doc)}: unknown flag {flag} for {module}"


# --- the same structure in both languages ----------------------------------------------


def headings(path: Path, level: str = "##") -> list[str]:
    """The numbers of a doc's numbered headings of one level: ['0', '1', …] or ['4.1', …]."""
    text = without_code_blocks(path.read_text(encoding="utf-8"))
    return re.findall(rf"^{level} (\d+(?:\.\d+)?)[. ]", text, re.MULTILINE)


def count(pattern: str, path: Path) -> int:
    return len(re.findall(pattern, without_code_blocks(path.read_text(encoding="utf-8")), re.M))


def test_every_doc_exists_in_both_languages_with_the_same_sections() -> None:
    english = sorted(p.name for p in (REPO / "docs/en").glob("*.md"))
    chinese = sorted(p.name for p in (REPO / "docs/zh").glob("*.md"))
    assert english == chinese
    for name in english:
        en, zh = REPO / "docs/en" / name, REPO / "docs/zh" / name
        assert count(r"^## ", en) == count(r"^## ", zh), f"{name}: number of ## sections"
        assert count(r"^### ", en) == count(r"^### ", zh), f"{name}: number of ### sections"
        assert headings(en) == headings(zh), name
        assert headings(en, "###") == headings(zh, "###"), name
        assert count(r"^\| ", en) == count(r"^\| ", zh), f"{name}: number of table rows"


def test_readmes_say_the_same_in_chinese() -> None:
    """README.zh.md, and each package's, renders its README.md: the same sections, tables
    and code blocks, and the same commands in its shell blocks (their comments aside)."""
    translations = sorted([*REPO.glob("README.zh.md"), *REPO.glob("*/README.zh.md")])
    assert len(translations) > 1, "no README.zh.md found"
    for chinese in translations:
        english = chinese.with_name("README.md")
        for pattern in (r"^## ", r"^### ", r"^\| ", r"^```"):
            assert count(pattern, english) == count(pattern, chinese), (
                f"{relative(chinese)} and {relative(english)} differ in the lines that start "
                f"with {pattern[1:]!r}"
            )
        assert shell_commands(english) == shell_commands(chinese), relative(chinese)
        assert f"]({chinese.name})" in english.read_text(encoding="utf-8"), relative(english)


def shell_commands(path: Path) -> list[list[str]]:
    """The commands of each ```bash block, its comments (which are translated) left out and
    the Chinese pages it opens (`notebooks/zh`, `--lang zh`) read as the English ones."""
    text = path.read_text("utf-8").replace("notebooks/zh", "notebooks/en").replace(" --lang zh", "")
    blocks = re.findall(r"^```bash\n(.*?)^```", text, re.DOTALL | re.M)
    commands = [[re.sub(r"(^|\s)#.*", "", line).strip() for line in b.splitlines()] for b in blocks]
    return [[line for line in block if line] for block in commands]


def test_chapters_follow_the_template() -> None:
    """Sections 0 (before you start) to 10 (further reading), in the template's order."""
    assert CHAPTERS, "no chapter docs found"
    for chapter in CHAPTERS:
        assert headings(chapter) == [str(n) for n in range(11)], chapter.name


def section(path: Path, number: int) -> str:
    """The text of one numbered `##` section of a chapter."""
    text = without_code_blocks(path.read_text(encoding="utf-8"))
    match = re.search(rf"^## {number}\. .*?(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match, f"{relative(path)} has no section {number}"
    return match.group(0)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_chapters_open_with_objectives_and_close_with_takeaways(lang: str) -> None:
    for english in CHAPTERS:
        chapter = REPO / "docs" / lang / english.name
        objectives = re.findall(r"^- ", section(chapter, 0), re.MULTILINE)
        assert 3 <= len(objectives) <= 5, f"{relative(chapter)}: section 0 lists 3 to 5 objectives"
        takeaways = re.findall(r"^\d\. ", section(chapter, 9), re.MULTILINE)
        assert len(takeaways) == 3, f"{relative(chapter)}: section 9 has three takeaways"


EXERCISE_MARKS = {
    "en": (r"(easy|medium|hard|open-ended)", r"(no key|needs a key|key optional)"),
    "zh": (r"(简单|中等|较难|开放)", r"(无需密钥|需要密钥|密钥可选)"),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_exercise_says_its_difficulty_and_whether_it_needs_a_key(lang: str) -> None:
    difficulty, key = EXERCISE_MARKS[lang]
    for english in CHAPTERS:
        chapter = REPO / "docs" / lang / english.name
        exercises = re.findall(r"^\d+\. \*\*.*$", section(chapter, 8), re.MULTILINE)
        assert len(exercises) >= 3, f"{relative(chapter)}: at least three exercises"
        for line in exercises:
            assert re.search(difficulty, line) and re.search(key, line), (
                f"{relative(chapter)}: exercise '{line[:60]}' must say its difficulty "
                "and whether it needs a key"
            )


def test_chapters_link_to_the_glossary() -> None:
    for lang in ("en", "zh"):
        for english in CHAPTERS:
            chapter = REPO / "docs" / lang / english.name
            assert "(glossary.md" in chapter.read_text(encoding="utf-8"), relative(chapter)


# --- chapter N is folder vN everywhere -------------------------------------------------

CHAPTER_LINK = re.compile(r"\[([^\]]*)\]\(((?:[\w./]*/)?(v(\d)_\w+)\.md)(?:#[^)]*)?\)")
NAMED_NUMBER = re.compile(r"(?:[Cc]hapter (\d)|第 (\d) 章)")


def test_chapter_titles_carry_the_folder_number() -> None:
    for english in CHAPTERS:
        number = english.name[1]
        chinese = REPO / "docs/zh" / english.name
        assert english.read_text().startswith(f"# Chapter {number}: "), english.name
        assert chinese.read_text().startswith(f"# 第 {number} 章："), chinese.name
        assert (REPO / english.stem).is_dir(), f"no folder {english.stem} for {english.name}"


@pytest.mark.parametrize("doc", DOCS, ids=relative)
def test_links_to_chapters_name_the_right_number(doc: Path) -> None:
    """A link whose text says "chapter N" leads to vN; a table row about vN says N."""
    for number, line in enumerate(without_code_blocks(doc.read_text()).splitlines(), 1):
        for text, _, _, target in CHAPTER_LINK.findall(line):
            named = {a or b for a, b in NAMED_NUMBER.findall(text)}
            assert named <= {target}, f"{relative(doc)}:{number}: '{text}' links to v{target}"
            if line.startswith("|"):
                cells = [cell.strip() for cell in line.strip("|").split("|")]
                folders = set(re.findall(r"`v(\d)_\w+/?`", line))
                numbers = {cell for cell in cells if cell.isdigit()}
                assert folders | numbers <= {target}, f"{relative(doc)}:{number}: {line}"


def test_readme_and_introduction_list_the_same_chapters() -> None:
    readme = re.findall(r"^\| `(v\d_\w+)/` \| (.*?) \|", (REPO / "README.md").read_text(), re.M)
    for folder, cell in readme:
        doc = REPO / "docs/en" / f"{folder}.md"
        if doc.exists():
            assert f"docs/en/{folder}.md" in cell and f"Chapter {folder[1]}:" in cell, folder
    for lang in ("en", "zh"):
        intro = (REPO / "docs" / lang / "README.md").read_text()
        for doc in CHAPTERS:
            assert f"]({doc.name})" in intro, f"docs/{lang}/README.md does not link {doc.name}"
    folders = [folder for folder, _ in readme]
    assert [int(folder[1]) for folder in folders] == list(range(len(folders))), folders
    assert {p.name for p in REPO.glob("v[0-9]_*") if p.is_dir()} <= set(folders)


def test_code_paths_named_in_docs_exist() -> None:
    for doc in DOCS:
        for name in re.findall(
            r"`((?:llm|machine|lab|v\d_\w+|tests)/[\w/.-]+\.(?:py|jsonl|md))`",
            doc.read_text(encoding="utf-8"),
        ):
            assert (REPO / name).exists(), f"{relative(doc)} names missing {name}"


def readme_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", (REPO / "README.md").read_text(), re.DOTALL)
    return [line.strip() for block in blocks[:2] for line in block.splitlines() if line.strip()]


def test_readme_gives_two_commands_and_ci_runs_the_test_one() -> None:
    run_demo, run_tests = readme_commands()
    assert run_demo.endswith("python -m lab compare")
    assert run_tests.endswith("pytest")
    script = [line.strip() for line in (REPO / ".ci/run").read_text().splitlines()]
    assert f"TEST='{run_tests}'" in script, ".ci/run runs README's test command verbatim"
    assert 'bash -c "$TEST"' in script, "for a learner who runs .ci/run themselves"
    assert any('runuser -u "$learner"' in line for line in script), "and as a user, from root"


# --- quoted code -------------------------------------------------------------------------

SOURCE_LABEL = re.compile(r"# ((?:llm|machine|lab|tests|v\d_\w+)/[\w/]+\.py)\b")


def source_lines(path: Path | None = None) -> set[str]:
    """Stripped lines of one Python file, or of every Python file in the repository."""
    paths = [path] if path else REPO.rglob("*.py")
    lines = set()
    for file in paths:
        if not any(part.startswith(".") for part in file.relative_to(REPO).parts):
            lines |= {line.strip() for line in file.read_text(encoding="utf-8").splitlines()}
    return lines


def quoted_python(doc: Path) -> list[tuple[int, str | None, str]]:
    """(line in the doc, source file it names or None, quoted line) for each line of code.

    A block whose first line is a comment naming a file (`# llm/openai_model.py, …`)
    quotes that file only; other blocks may quote any Python file of the repository.
    """
    quoted = []
    lines = doc.read_text(encoding="utf-8").splitlines()
    inside, source, first = False, None, False
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not inside and stripped == "```python":
            inside, source, first = True, None, True
            continue
        if inside and stripped == "```":
            inside = False
            continue
        if not inside or not stripped or stripped in {"...", "…"}:
            continue
        if stripped.startswith(("# …", "# ...")):
            continue
        label = SOURCE_LABEL.match(stripped) if first else None
        first = False
        if label:
            source = label.group(1)
            continue
        quoted.append((number, source, stripped))
    return quoted


def test_code_quoted_in_docs_is_in_the_repository() -> None:
    everywhere = source_lines()
    missing = []
    for doc in DOCS:
        for number, source, line in quoted_python(doc):
            known = source_lines(REPO / source) if source else everywhere
            if line not in known:
                where = source or "any Python file of the repository"
                missing.append(f"  {relative(doc)}:{number} quotes a line not in {where}: {line}")
    assert not missing, (
        "the docs quote code that is not in the repository:\n"
        + "\n".join(missing)
        + "\nIf you changed this code in an exercise, this is expected: the doc still shows "
        'the original line (`pytest -m "not docs"` runs the other tests alone). A fork that '
        "changes the code for good updates the doc too."
    )
