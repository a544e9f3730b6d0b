"""`python -m lab clean`: it lists this user's leftovers by the names the course gives them,
removes them only with --yes, and never follows a link or touches anything else."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lab.clean import clean
from llm.demo import fresh_folder
from tests import REPO


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


# --- ~/agent-course, with --home: what the course's commands made there, and nothing else --


def course(*args: str, home: Path) -> None:
    """One of the course's commands as the docs give it, with `home` as the learner's home."""
    environment = {**os.environ, "HOME": str(home), "TMPDIR": str(home)}
    done = subprocess.run(
        [sys.executable, "-m", *args], cwd=home, env=environment, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


@pytest.fixture
def own_work(tmp_path: Path, offline_comparison) -> Path:
    """A learner's ~/agent-course after a few sessions: what the docs' commands made there,
    beside files and folders of the learner's own."""
    home = tmp_path / "home"
    own = home / "agent-course"
    own.mkdir(parents=True)
    course("v1_tool_loop", "--copy-demo", "~/agent-course/ws", home=home)
    stats = own / "ws" / "stats.py"
    stats.write_text(stats.read_text() + "\n# worked on\n")  # a copy the learner changed
    course("v4_memory", "--copy-demo", "~/agent-course/v4-user", home=home)
    course("v1_tool_loop", "--demo", "--quiet", "--record", "~/agent-course/run.jsonl", home=home)
    header = (own / "run.jsonl").read_text().splitlines()[0]
    (own / "run.jsonl.k2x9.partial").write_text(header + "\n")  # a stopped recording
    shutil.copy(offline_comparison.records, own / "records.json")
    shutil.copy(offline_comparison.page, own / "report.html")
    # The learner's own: a note, a project shaped like a demo's (other files), a cassette
    # of some other format, and links to a recording and to a copy.
    (own / "notes.txt").write_text("what I learned\n")
    project = own / "my-project"
    project.mkdir(mode=0o700)
    for name in ("README.md", "stats.py", "test_stats.py"):
        (project / name).write_text(f"my own {name}\n")
    (own / "other.jsonl").write_text('{"format": "another/1"}\n')
    (own / "linked.jsonl").symlink_to(own / "run.jsonl")
    (own / "linked-ws").symlink_to(own / "ws", target_is_directory=True)
    return home


MADE = ["records.json", "report.html", "run.jsonl", "run.jsonl.k2x9.partial", "v4-user", "ws"]
THEIRS = ["linked-ws", "linked.jsonl", "my-project", "notes.txt", "other.jsonl"]


def test_home_lists_what_the_course_made_in_agent_course(
    own_work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "tmp"
    empty.mkdir()
    assert clean([empty], yes=False, home=own_work) == 0
    out = capsys.readouterr().out
    assert "left as it is" in out and "python -m lab clean --home" in out
    assert "run.jsonl" not in out  # without --home, ~/agent-course is only named
    assert clean([empty], yes=False, home=own_work, own_folder=True) == 0
    out = capsys.readouterr().out
    listed = sorted(Path(line.split()[0]).name for line in out.splitlines() if line[:2] == "  ")
    assert listed == MADE, out
    assert "python -m lab clean --home --yes" in out
    assert kept(own_work / "agent-course") == sorted(MADE + THEIRS)


def test_home_with_yes_removes_only_what_the_course_made(
    own_work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "tmp"
    empty.mkdir()
    assert clean([empty], yes=True, home=own_work, own_folder=True) == 0
    assert f"removed {len(MADE)} of {len(MADE)}" in capsys.readouterr().out
    own = own_work / "agent-course"
    assert kept(own) == THEIRS
    assert (own / "my-project" / "stats.py").read_text() == "my own stats.py\n"
    assert (own / "linked.jsonl").is_symlink() and (own / "linked-ws").is_symlink()


def test_an_agent_course_that_is_a_link_is_left_with_what_it_points_to(
    own_work: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A link in its place may point at anyone's folder: nothing under it is touched."""
    elsewhere = tmp_path / "elsewhere"
    (own_work / "agent-course").rename(elsewhere)
    (own_work / "agent-course").symlink_to(elsewhere, target_is_directory=True)
    before = kept(elsewhere)
    empty = tmp_path / "tmp"
    empty.mkdir()
    assert clean([empty], yes=True, home=own_work, own_folder=True) == 0
    assert "is a link: left as it is" in capsys.readouterr().out
    assert kept(elsewhere) == before


@pytest.mark.root
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_what_another_user_made_in_agent_course_is_theirs(own_work: Path, tmp_path: Path) -> None:
    own = own_work / "agent-course"
    os.chown(own / "run.jsonl", 65534, 65534)  # nobody's recording
    for folder, _, files in os.walk(own / "ws"):
        os.chown(folder, 65534, 65534)
        for name in files:
            os.chown(os.path.join(folder, name), 65534, 65534)
    empty = tmp_path / "tmp"
    empty.mkdir()
    assert clean([empty], yes=True, home=own_work, own_folder=True) == 0
    assert {"run.jsonl", "ws"} <= set(kept(own)) and "report.html" not in kept(own)
