"""The teachers' guide's fork without the solutions, followed as written from a clone:
its history holds no solution and nothing the course's commands wrote, and the tests
that read the solutions page pass in it (those that follow a solution skip, and say so)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.solutions import REPO, copy_course, fenced_blocks

# The test files that read the solutions page or its code, and those that read every
# page of the docs; the rest of the suite never opens it.
READERS = sorted(
    path.relative_to(REPO).as_posix()
    for path in (REPO / "tests").rglob("test_*.py")
    if path.name != "test_fork.py" and "solutions" in path.read_text(encoding="utf-8")
)
READERS += ["tests/docs/test_docs.py", "tests/docs/test_docs_zh.py"]


def fork_steps(lang: str) -> str:
    """The shell block of the guide's section 5 that makes the fork."""
    page = (REPO / "docs" / lang / "teaching.md").read_text(encoding="utf-8")
    found = [block.text for _, _, block in fenced_blocks(page) if "--orphan" in block.text]
    assert len(found) == 1, f"docs/{lang}/teaching.md should give the fork's steps once"
    return found[0]


def git(*words: str, cwd: Path) -> str:
    who = {"GIT_AUTHOR_NAME": "Teacher", "GIT_AUTHOR_EMAIL": "teacher@example.org"}
    who |= {"GIT_COMMITTER_NAME": "Teacher", "GIT_COMMITTER_EMAIL": "teacher@example.org"}
    done = subprocess.run(
        ["git", *words], cwd=cwd, env=os.environ | who, capture_output=True, text=True
    )
    assert done.returncode == 0, (words, done.stdout, done.stderr)
    return done.stdout


@pytest.mark.slow  # end to end: see tests/conftest.py
@pytest.mark.docs  # it runs the docs' tests in the fork: the course as it ships
def test_the_fork_without_solutions_holds_none_and_passes_its_tests(tmp_path: Path) -> None:
    assert fork_steps("zh") == fork_steps("en"), "both guides give the same steps"
    course = copy_course(tmp_path / "course")
    # What the docs' commands leave in the folder a teacher works in.
    (course / "report.html").write_text("<html></html>\n", encoding="utf-8")
    (course / "runs.json").write_text("[]\n", encoding="utf-8")
    git("init", "-q", "-b", "main", cwd=course)
    git("add", "-A", cwd=course)
    git("commit", "-qm", "The course", cwd=course)
    (course / "stray.html").write_text("left in the working folder\n", encoding="utf-8")

    steps = re.sub(r"https://\S+\.git", str(course), fork_steps("en"))
    script = "set -e\n" + steps
    who = {"GIT_AUTHOR_NAME": "Teacher", "GIT_AUTHOR_EMAIL": "teacher@example.org"}
    who |= {"GIT_COMMITTER_NAME": "Teacher", "GIT_COMMITTER_EMAIL": "teacher@example.org"}
    done = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=os.environ | who, capture_output=True, text=True
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    fork = tmp_path / "class-course"

    assert git("rev-list", "--count", "HEAD", cwd=fork).strip() == "1", "a history of its own"
    committed = git("ls-files", cwd=fork).split()
    for left in ("report.html", "runs.json", "stray.html"):
        assert left not in committed
    for lang in ("en", "zh"):
        page = (fork / "docs" / lang / "solutions.md").read_text(encoding="utf-8")
        assert "**1. " not in page and len(page.splitlines()) < 12

    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", *READERS],
        cwd=fork,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST")},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert tests.returncode == 0, tests.stdout[:3000]
    assert "a class fork: its solutions page is a placeholder" in tests.stdout
