"""The class install of the teachers' guide, section 2: one environment for the whole class,
holding the course's dependencies only and writable by no learner, and each learner's own
clone on top of it, run with the line the guide gives.

The test as root makes two learners, a stand-in for the teacher's environment (a venv
without pip whose site-packages names this environment's with a .pth: the same packages,
without the minutes of an install) and a copy of this clone in each learner's home. Then,
as each learner, it runs the guide's line and a demo, offline; shows that one learner's
change reaches that learner alone, that the shared environment refuses a learner's write
and holds no copy of the course; and runs a few of the tests from a learner's clone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import REPO

SHARED = "/opt/agent-course"  # where the guide puts the class's environment
# A learner's line in the guide, once the clone is made: the shared environment, and this
# clone first on PYTHONPATH, so that every program the course starts runs the learner's code.
SESSION = f'cd ~/course && . {SHARED}/bin/activate && export PYTHONPATH="$PWD"'
LEARNERS = ("course-learner-a", "course-learner-b")
LEFT_OUT = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache"}


def test_a_program_the_tests_start_runs_this_clone(tmp_path: Path) -> None:
    """Started outside the clone, as many tests start the chapters, it still imports this
    clone's code: not nothing (a class environment holds no course) nor another clone's."""
    done = subprocess.run(
        [sys.executable, "-c", "import llm, lab; print(llm.__file__); print(lab.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for line in done.stdout.splitlines():
        assert Path(line).resolve().is_relative_to(REPO), f"{line} is not this clone's"


def test_the_guide_gives_the_line_this_test_runs() -> None:
    for lang in ("en", "zh"):
        guide = (REPO / "docs" / lang / "teaching.md").read_text(encoding="utf-8")
        assert SESSION in guide, f"docs/{lang}/teaching.md no longer gives `{SESSION}`"


# --- as root: two learners on one server --------------------------------------------------


def as_learner(
    name: str, home: Path, command: str, *, offline: bool = False
) -> subprocess.CompletedProcess[str]:
    """`command` in bash as the learner `name`, with a learner's bare environment (no key,
    no PYTHONPATH); `offline` runs it where only the loopback exists, when this machine
    lets root make such a place (a container may not: then no key is what keeps it off)."""
    argv = ["runuser", "-u", name, "--", "env", "-i", f"HOME={home}", "PATH=/usr/bin:/bin"]
    argv += ["LANG=C.UTF-8", "bash", "-c", command]
    if offline and without_network():
        argv = ["unshare", "--net", *argv]
    return subprocess.run(argv, capture_output=True, text=True, timeout=900)


def without_network() -> bool:
    """Whether root may run a command with no network but the loopback, here."""
    try:
        return subprocess.run(["unshare", "--net", "true"], capture_output=True).returncode == 0
    except OSError:
        return False


def learners_python() -> str | None:
    """An interpreter of this version that any user may run (this one may live in a folder
    of root's alone, as pyenv's does), for the stand-in environment."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (sys._base_executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        path = Path(candidate).resolve()
        if path.is_file() and all(os.access(p, os.X_OK) and p.stat().st_mode & 0o001
                                  for p in [path, *path.parents]):  # fmt: skip
            return str(path)
    return None


def readable_by_all(path: Path) -> bool:
    return all(p.stat().st_mode & 0o001 for p in [path, *path.parents] if p.is_dir())


def make_learner(name: str, home: Path) -> None:
    if subprocess.run(["id", name], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/bash", name], check=True)
    home.mkdir(mode=0o700)
    shutil.copytree(REPO, home / "course", ignore=lambda _, names: LEFT_OUT & set(names))
    subprocess.run(["chown", "-R", f"{name}:", str(home)], check=True)


@pytest.fixture
def classroom() -> Iterator[tuple[Path, dict[str, Path]]]:
    """The shared environment, made read-only, and each learner's home with a clone in it:
    in a folder every user may enter (pytest's own folder is root's alone)."""
    python = learners_python()
    dependencies = Path(sysconfig.get_paths()["purelib"])
    if python is None:
        pytest.skip(f"no python{sys.version_info[0]}.{sys.version_info[1]} other users may run")
    if not readable_by_all(dependencies):
        pytest.skip(f"{dependencies} cannot be read by other users")
    base = Path(tempfile.mkdtemp(prefix="course-classroom-"))
    try:
        base.chmod(0o755)
        shared = base / "opt" / "agent-course"
        subprocess.run([python, "-m", "venv", "--without-pip", str(shared)], check=True)
        where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
        asked = [str(shared / "bin" / "python"), "-c", where]
        site = Path(subprocess.run(asked, capture_output=True, text=True, check=True).stdout[:-1])
        (site / "course-dependencies.pth").write_text(f"{dependencies}\n", encoding="utf-8")
        subprocess.run(["chmod", "-R", "a-w", str(shared)], check=True)
        (base / "home").mkdir(mode=0o755)
        homes = {name: base / "home" / name for name in LEARNERS}
        for name, home in homes.items():
            make_learner(name, home)
        yield shared, homes
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(base)], check=False)
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.root
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_learners_share_one_environment_and_keep_their_own_code(
    classroom: tuple[Path, dict[str, Path]],
) -> None:
    shared, homes = classroom
    session = SESSION.replace(SHARED, str(shared))
    first, second = LEARNERS

    # The guide's line, then a demo, as each learner, with no network and no key.
    for name, home in homes.items():
        done = as_learner(name, home, f"{session} && python -m v1_tool_loop --demo", offline=True)
        assert done.returncode == 0, f"{name}: {done.stdout}\n{done.stderr}"
        assert "offline: replaying" in done.stdout + done.stderr
        assert "\ndone:" in done.stdout or "done:" in done.stdout

    # One learner's change is that learner's alone: the first edits chapter 1's agent.
    agent = homes[first] / "course" / "v1_tool_loop" / "agent.py"
    edit = f"echo 'print(\"edited by {first}\")' >> {agent}"
    assert as_learner(first, homes[first], edit).returncode == 0
    seen = {}
    for name, home in homes.items():
        done = as_learner(name, home, f"{session} && python -m v1_tool_loop --demo --quiet")
        assert done.returncode == 0, f"{name}: {done.stderr}"
        seen[name] = f"edited by {first}" in done.stdout
    assert seen == {first: True, second: False}
    peek = as_learner(second, homes[second], f"cat {agent}")
    assert peek.returncode != 0, "the second learner can read the first one's clone"

    # The shared environment refuses a learner's write, and holds no copy of the course:
    # without the clone on PYTHONPATH and away from it, there is no course to run.
    site = next(shared.glob("lib/python*/site-packages"))
    for target in (site / "planted.pth", shared / "bin" / "planted"):
        done = as_learner(second, homes[second], f"echo x > {target}")
        assert done.returncode != 0 and "Permission denied" in done.stderr, target
        assert not target.exists()
    bare = as_learner(second, homes[second], f"cd ~ && {shared}/bin/python -m lab --help")
    assert bare.returncode != 0 and "No module named lab" in bare.stderr, bare.stderr

    # A few of the tests, from the second learner's clone, the programs they start included.
    tests = "tests/docs/test_class_install.py tests/lab/test_lab_clean.py tests/llm/test_cli.py"
    done = as_learner(
        second,
        homes[second],
        f"{session} && python -m pytest -q -n 0 -p no:cacheprovider -m 'not root' {tests}",
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
