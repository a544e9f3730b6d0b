"""`python -m lab clean`: it lists this user's leftovers by the names the course gives them,
removes them only with --yes, and never follows a link or touches anything else."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lab.clean import clean
from llm.demo import fresh_folder

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def temporary(tmp_path: Path) -> Path:
    """A temporary folder as a few days of demos and a stopped comparison leave it."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    demo = fresh_folder("v1_tool_loop-demo-", folder)  # made the way a demo makes it
    (demo / "stats.py").write_text("x = 1\n" * 1000)
    fresh_folder("v4_memory-demo-", folder)
    (fresh_folder("lab-compare-", folder) / "run.txt").write_text("half a run\n")
    (folder / "lab-records-k2_x9.json").write_text("[]\n")
    (folder / "agent-course-figures-0000001000").mkdir()
    for other in ("notes.txt", "v1_tool_loop-demo-x", "lab-compare-1.bak", "someone-elses"):
        (folder / other).write_text("not the course's\n")
    return folder


def kept(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


def test_without_yes_it_lists_and_keeps_everything(
    temporary: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = kept(temporary)
    assert clean([temporary], yes=False, home=tmp_path) == 0
    out = capsys.readouterr().out
    for name in ("v1_tool_loop-demo-1", "v4_memory-demo-1", "lab-compare-1", "lab-records-k2_x9"):
        assert name in out
    assert "notes.txt" not in out and "v1_tool_loop-demo-x" not in out
    assert "5 left" in out and "python -m lab clean --yes" in out
    assert kept(temporary) == before


def test_with_yes_it_removes_only_the_courses_leftovers(
    temporary: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "agent-course").mkdir()
    (tmp_path / "agent-course" / "mine.jsonl").write_text("{}\n")
    assert clean([temporary], yes=True, home=tmp_path) == 0
    out = capsys.readouterr().out
    assert "removed 5 of 5" in out and "holds your own work" in out
    assert kept(temporary) == [
        "lab-compare-1.bak",
        "notes.txt",
        "someone-elses",
        "v1_tool_loop-demo-x",
    ]
    assert (tmp_path / "agent-course" / "mine.jsonl").exists()
    assert clean([temporary], yes=True, home=tmp_path) == 0
    assert "nothing left by the course" in capsys.readouterr().out


def test_a_link_under_a_leftovers_name_is_removed_as_a_link(tmp_path: Path) -> None:
    """Planted in a shared temporary folder, it points at someone's work: that stays."""
    folder, precious = tmp_path / "tmp", tmp_path / "precious"
    folder.mkdir()
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work\n")
    (folder / "v2_todos-demo-7").symlink_to(precious, target_is_directory=True)
    inside = fresh_folder("v3_subagents-demo-", folder)
    (inside / "link").symlink_to(precious, target_is_directory=True)
    assert clean([folder], yes=True, home=tmp_path) == 0
    assert kept(folder) == []
    assert (precious / "thesis.tex").read_text() == "years of work\n"


def test_the_command_line_lists_and_says_how_to_remove(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "lab", "clean"],
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "nothing left by the course in" in done.stdout or "--yes" in done.stdout


@pytest.mark.root
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_another_users_leftovers_are_theirs(tmp_path: Path) -> None:
    folder = tmp_path / "tmp"
    folder.mkdir()
    theirs = fresh_folder("v1_tool_loop-demo-", folder)
    os.chown(theirs, 65534, 65534)  # nobody's demo
    mine = fresh_folder("v1_tool_loop-demo-", folder)
    assert clean([folder], yes=True, home=tmp_path) == 0
    assert theirs.is_dir() and not mine.exists()
