"""`python -m lab collect HANDINS`: each student's checks run in a scratch copy and the
quiz is marked; the table says what was done, and a hostile hand-in reaches nothing of
the teacher's (links left out, writes outside its copy refused, the hand-ins unchanged)."""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from lab.collect import sealed
from lab.collect.checks import read_verdict
from lab.collect.confined import signature
from lab.collect.handins import (
    COURSE_FILES,
    HANDED_FILES,
    MAX_FILES,
    chapter_of,
    checked_exercises,
    scratch_copy,
)
from lab.exercises import EXERCISES
from lab.exercises.check import ExerciseInputError
from tests import REPO
from tests.lab.test_quiz import EXPECTED
from tests.solutions import (
    apply_diff,
    builds_on_the_solutions,
    handed_out_without_solutions,
    read_solutions,
)

# Code a hostile student adds to chapter 1's tools: it tries, says on one line what became
# of each try, and stops the check.
HOSTILE = """
import os as _os, pathlib as _pathlib, subprocess as _subprocess
_VICTIM = {victim!r}
_SAID = []
for _name, _try in [
    ("write", lambda: _pathlib.Path(_VICTIM, "pwned.txt").write_text("x")),
    ("remove", lambda: _os.remove(_os.path.join(_VICTIM, "precious.txt"))),
    ("rename", lambda: _os.rename(_os.path.join(_VICTIM, "precious.txt"), "stolen.txt")),
    ("command", lambda: _subprocess.run(["touch", "pwned-by-command"], cwd=_VICTIM)),
    ("relative", lambda: open("../../../../../../.." + _VICTIM + "/up.txt", "w")),
    ("network", lambda: __import__("socket").create_connection(("192.0.2.1", 80), timeout=1)),
]:
    try:
        _try()
        _SAID.append(f"HOSTILE {{_name}} got through")
    except PermissionError:
        _SAID.append(f"HOSTILE {{_name}} refused")
print(" ".join(_SAID))
raise SystemExit(3)
"""

TRIES = ["write", "remove", "rename", "command", "relative", "network"]


def tree(folder: Path) -> dict[str, str]:
    """Every entry under `folder`: a file's digest, a link's target, a folder's mark."""
    found = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.is_symlink():
            found[name] = "-> " + os.readlink(path)
        elif path.is_file():
            found[name] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[name] = "dir" if path.is_dir() else "special"
    return found


def solved_chapter_1(folder: Path) -> Path:
    """Chapter 1's folder with the worked solutions of exercises 1.3 and 1.6 applied."""
    shutil.copytree(REPO / "v1_tool_loop", folder / "v1_tool_loop")
    solutions = read_solutions()
    for number in ("1.3", "1.6"):
        for block in solutions[number].blocks:
            if block.kind == "diff":
                apply_diff(folder, block.text, f"solution {number}")
    return folder / "v1_tool_loop"


def refusal_line() -> str:
    text = (REPO / "llm" / "cassette.py").read_text(encoding="utf-8").splitlines()
    line = next(n for n, t in enumerate(text, 1) if "a replay never invents one" in t)
    return f"llm/cassette.py:{line}\n"


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One collect over three students' session 2 (chapter 1), and a fourth that is a link."""
    root = tmp_path_factory.mktemp("collect")
    handins, victim = root / "handins", root / "teacher"
    victim.mkdir()
    (victim / "precious.txt").write_text("the teacher's", encoding="utf-8")

    ada = handins / "ada" / "session2"  # the exercises done as the solutions do them
    if not handed_out_without_solutions():  # a class fork has no solutions to follow
        ada.mkdir(parents=True)
        shutil.move(solved_chapter_1(root / "ada-work"), ada / "v1_tool_loop")
        door = next(b for b in read_solutions()["1.5"].blocks if b.kind == "jsonl")
        (ada / "1.5.jsonl").write_text(door.text, encoding="utf-8")
        (ada / "1.2.txt").write_text(refusal_line(), encoding="utf-8")
        (ada / "quiz1.txt").write_text(
            "".join(f"{n}: {a}\n" for n, a in enumerate(EXPECTED[1], 1)), encoding="utf-8"
        )
        (ada / "notes.md").write_text("what I learned", encoding="utf-8")

    bob = handins / "bob" / "session2"  # the course as it is, a quiz half wrong, a bad line
    bob.mkdir(parents=True)
    shutil.copytree(REPO / "v1_tool_loop", bob / "v1_tool_loop")
    (bob / "quiz1.txt").write_text("1: 5\n2: 4 or 5\n3: 4\n", encoding="utf-8")
    (bob / "1.2.txt").write_text("--lang zh\n", encoding="utf-8")

    mallory = handins / "mallory" / "session2"  # hostile in every way the layout allows
    mallory.mkdir(parents=True)
    shutil.copytree(REPO / "v1_tool_loop", mallory / "v1_tool_loop")
    tools = mallory / "v1_tool_loop" / "tools.py"
    tools.write_text(tools.read_text() + HOSTILE.format(victim=str(victim)), encoding="utf-8")
    (mallory / "v1_tool_loop" / "secrets.py").symlink_to(victim / "precious.txt")
    (mallory / "v1_tool_loop" / "teacher").symlink_to(victim)
    (mallory / "1.5.jsonl").symlink_to(victim / "precious.txt")
    (mallory / "1.2.txt").write_bytes(b"llm/cassette.py:1\n" + b"#" * 2_000_000)
    os.mkfifo(mallory / "1.4.jsonl")  # a read that never ends, were it opened blocking
    (mallory / "quiz1.txt").write_text("1: 5\n1: 4\n", encoding="utf-8")
    (handins / "eve").symlink_to(handins / "bob")  # someone else's work, by a link

    before = tree(handins)
    out_csv, out_json = root / "marks.csv", root / "marks.json"
    done = subprocess.run(
        [sys.executable, "-m", "lab", "collect", str(handins), "--csv", str(out_csv),
         "--json", str(out_json), "--lang", "en"],
        cwd=REPO, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    return {
        "done": done, "before": before, "after": tree(handins), "victim": victim,
        "csv": out_csv, "json": out_json,
    }  # fmt: skip


def rows_of(collected: dict, student: str) -> dict[str, dict]:
    rows = json.loads(collected["json"].read_text(encoding="utf-8"))
    return {r["item"]: r for r in rows if r["student"] == student and r["item"] != "note"}


def notes_of(collected: dict, student: str) -> list[str]:
    rows = json.loads(collected["json"].read_text(encoding="utf-8"))
    return [r["detail"] for r in rows if r["student"] == student and r["item"] == "note"]


def test_the_handed_files_are_those_the_checks_ask_for() -> None:
    for number in HANDED_FILES:
        assert EXERCISES[number].check is not None
        with pytest.raises(ExerciseInputError):
            EXERCISES[number].check([])  # no file named: the check says it needs one
    assert checked_exercises(2) == ["1.2", "1.3", "1.4", "1.5", "1.6"]


@builds_on_the_solutions()
@pytest.mark.docs  # the course as it ships beside a hand-in of the worked solutions
def test_work_done_as_the_solutions_do_it_is_marked_done(collected: dict) -> None:
    assert collected["done"].returncode == 0, collected["done"].stderr
    ada = rows_of(collected, "ada")
    assert {n: ada[n]["result"] for n in ("1.2", "1.3", "1.5", "1.6")} == dict.fromkeys(
        ("1.2", "1.3", "1.5", "1.6"), "done"
    )
    assert ada["1.4"]["result"] == "missing" and ada["1.4"]["detail"] == "1.4.jsonl"
    assert ada["quiz 1"]["result"] == "5/5"
    assert notes_of(collected, "ada") == ["notes.md: not part of a session 2 hand-in"]


@pytest.mark.docs  # the course as it ships beside a hand-in of the worked solutions
def test_the_course_as_it_is_is_not_done_and_a_half_wrong_quiz_is_marked(collected: dict) -> None:
    bob = rows_of(collected, "bob")
    assert bob["1.3"]["result"] == "not done" and "list_dir" in bob["1.3"]["detail"]
    assert bob["1.6"]["result"] == "not done"
    assert bob["1.5"]["result"] == "missing"
    assert bob["1.2"]["result"] == "refused"  # an option, not an answer, is not passed on
    assert bob["quiz 1"]["result"] == "2/5" and bob["quiz 1"]["detail"] == "✗ 2, 4, 5"


@pytest.mark.docs  # the course as it ships beside a hand-in of the worked solutions
def test_a_hostile_handin_reaches_nothing_of_the_teachers(collected: dict) -> None:
    victim = collected["victim"]
    assert sorted(p.name for p in victim.iterdir()) == ["precious.txt"]
    assert (victim / "precious.txt").read_text(encoding="utf-8") == "the teacher's"
    assert collected["after"] == collected["before"], "the hand-ins folder was changed"
    mallory = rows_of(collected, "mallory")
    for number in ("1.3", "1.6"):  # the checks that ran: the code stopped each, and said
        assert mallory[number]["result"] == "error"
        tries = re.findall(r"HOSTILE (\w+) (refused|got through)", mallory[number]["detail"])
        assert tries == [(name, "refused") for name in TRIES], mallory[number]["detail"]
    for number in ("1.2", "1.4", "1.5"):
        assert mallory[number]["result"] == "missing", number
    assert mallory["quiz 1"]["result"] == "refused"
    assert "question 1 is answered twice" in mallory["quiz 1"]["detail"]
    notes = " | ".join(notes_of(collected, "mallory"))
    for left_out in (
        "v1_tool_loop/secrets.py: a symbolic link",
        "v1_tool_loop/teacher: a symbolic link",
        "1.5.jsonl: a symbolic link",
        "1.2.txt: over 1024 KiB",
        "1.4.jsonl: not a regular file",
    ):
        assert left_out in notes


def test_every_write_the_hostile_code_tried_was_refused(tmp_path: Path) -> None:
    """The same code, run by the confined runner directly, says what became of each try."""
    victim = tmp_path / "teacher"
    victim.mkdir()
    (victim / "precious.txt").write_text("x", encoding="utf-8")
    scratch = tmp_path / "scratch"
    (scratch / "course").mkdir(parents=True)
    (scratch / "course" / "hostile.py").write_text(HOSTILE.format(victim=str(victim)))
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from lab.collect.confined import guard; "
         f"sys.addaudithook(guard(__import__('pathlib').Path({str(scratch)!r}).resolve())); "
         "import hostile"],
        cwd=scratch / "course", env=os.environ | {"PYTHONPATH": f"{REPO}{os.pathsep}."},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    tries = re.findall(r"HOSTILE (\w+) (refused|got through)", done.stdout)
    assert tries == [(name, "refused") for name in TRIES], done.stdout + done.stderr
    assert sorted(p.name for p in victim.iterdir()) == ["precious.txt"]


@pytest.mark.docs  # the course as it ships beside a hand-in of the worked solutions
def test_the_tables_and_files_say_the_same(collected: dict) -> None:
    out = collected["done"].stdout
    assert "note: eve: not a folder of its own (a link or a file), left out" in out
    assert "## eve" not in out
    for student in ("bob", "mallory"):
        assert f"## {student}" in out
    summary = out.split("## student\n", 1)[1].splitlines()
    by_name = {line.split()[0]: line.split() for line in summary[1:]}
    assert summary[0].split() == [
        "student",
        "exercises",
        "done",
        "quiz",
        "answers",
        "right",
        "missing,",
        "refused,",
        "errors",
    ]
    assert by_name["bob"] == ["bob", "0/5", "2/5", "3"]
    assert by_name["mallory"] == ["mallory", "0/5", "0/5", "6"]
    with collected["csv"].open(encoding="utf-8", newline="") as file:
        from_csv = list(csv.DictReader(file))
    from_json = json.loads(collected["json"].read_text(encoding="utf-8"))
    assert from_csv == [row | {"session": str(row["session"])} for row in from_json]
    assert {r["student"] for r in from_csv} == set(by_name)


def test_a_folder_that_is_not_there_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "lab", "collect", str(tmp_path / "absent"), "--lang", "en"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert (
        done.stderr.strip()
        == f"error: no folder {tmp_path / 'absent'}: name the folder that holds the hand-ins"
    )


def test_a_session_not_handed_in_is_one_missing_row_in_chinese_too(tmp_path: Path) -> None:
    handins = tmp_path / "handins"
    (handins / "li").mkdir(parents=True)
    (handins / "\x1b[2Jeve").mkdir()  # a name that would clear the teacher's screen
    (handins / "wang").symlink_to(handins / "li")
    done = subprocess.run(
        [sys.executable, "-m", "lab", "collect", str(handins), "--session", "3", "--lang", "zh",
         "--json", str(tmp_path / "marks.json")],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "说明：wang：不是文件夹（是链接或文件），未收" in done.stdout
    assert "\x1b" not in done.stdout and "## ?[2Jeve" in done.stdout
    assert "session3/  缺失" in done.stdout
    rows = json.loads((tmp_path / "marks.json").read_text(encoding="utf-8"))
    assert [(r["student"], r["item"], r["result"]) for r in rows] == [
        ("?[2Jeve", "session3/", "missing"),
        ("li", "session3/", "missing"),
    ]
    summary = done.stdout.split("## 学生\n", 1)[1].splitlines()
    assert summary[2].split() == ["li", "0/0", "0/0", "1"]


def test_the_files_a_solution_changes_are_the_ones_a_handin_may_hold() -> None:
    """Every file a worked solution's diff changes is taken from a hand-in: in the chapter's
    folder, or in COURSE_FILES; the course's tests a learner updates are not run by checks."""
    for number, solution in read_solutions().items():
        if EXERCISES[number].check is None:
            continue
        session = int(number.split(".")[0]) + 1
        for block in solution.blocks:
            for path in re.findall(r"^--- a/(\S+)", block.text, re.M):
                taken = path.startswith(chapter_of(session) + "/") or path in COURSE_FILES.get(
                    session, ()
                )
                assert taken or re.fullmatch(r"tests/(\w+/)?test_\w+\.py", path), (number, path)


def test_a_session_runs_on_the_students_code_of_the_sessions_before(tmp_path: Path) -> None:
    student = tmp_path / "ada"
    for session, chapter in ((1, "v0_react_text"), (2, "v1_tool_loop"), (5, "v4_memory")):
        shutil.copytree(REPO / chapter, student / f"session{session}" / chapter)
    marked = "# ada's own\n"
    for path in ("session1/v0_react_text/parser.py", "session2/v1_tool_loop/tools.py"):
        (student / path).write_text(marked + (student / path).read_text(), encoding="utf-8")
    (student / "session5" / "llm").mkdir()
    (student / "session5" / "llm" / "repair.py").write_text(marked, encoding="utf-8")
    (student / "session5" / "llm" / "cli.py").write_text(marked, encoding="utf-8")
    (student / "session5" / "lab").symlink_to(REPO / "lab")
    (student / "session1" / "v0_react_text" / "demo" / "evil.py").write_text(marked)
    with scratch_copy(student, 5) as handin:
        course = handin.course
        assert (course / "v0_react_text/parser.py").read_text().startswith(marked)
        assert (course / "v1_tool_loop/tools.py").read_text().startswith(marked)
        assert (course / "llm/repair.py").read_text() == marked
        assert (course / "llm/cli.py").read_text() == (REPO / "llm/cli.py").read_text()
        assert not (course / "v0_react_text/demo/evil.py").exists()
        assert [note.en for note in handin.notes] == ["lab: a symbolic link, left out"]
    assert not handin.root.exists()


def test_a_handin_too_deep_or_of_too_many_files_is_cut_short(tmp_path: Path) -> None:
    chapter = tmp_path / "ada" / "session2" / "v1_tool_loop"
    deep = chapter.joinpath(*["d"] * 50)
    deep.mkdir(parents=True)
    (deep / "bottom.py").write_text("", encoding="utf-8")
    for number in range(MAX_FILES + 20):
        (chapter / f"m{number:04}.py").write_text("", encoding="utf-8")
    with scratch_copy(tmp_path / "ada", 2) as handin:
        notes = [note.en for note in handin.notes]
        copied = list((handin.course / "v1_tool_loop").glob("m*.py"))
    assert len(copied) == MAX_FILES
    assert (
        notes.count(
            f"v1_tool_loop/m{MAX_FILES:04}.py: over {MAX_FILES} files in the hand-in, left out"
        )
        == 1
    )
    assert len([n for n in notes if "files in the hand-in" in n]) == 20
    assert f"v1_tool_loop/{'/'.join(['d'] * 7)}: over 6 folders deep, left out" in notes


def test_a_checks_process_imports_nothing_of_a_handin_before_its_guard() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import sys, lab.collect.confined; print(' '.join(sorted("
         "m for m in sys.modules if m.split('.')[0] in ('v0_react_text', 'v1_tool_loop', "
         "'v2_todos', 'v3_subagents', 'v4_memory', 'llm', 'machine') "
         "or m.startswith(('lab.exercises', 'lab.quiz')))))"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


@pytest.mark.skipif(not sealed.available(), reason="no user namespaces here to seal a check")
def test_a_command_of_a_handed_in_cassette_cannot_write_outside_either(tmp_path: Path) -> None:
    """The chapter's bash tool runs the cassette's command in a process the audit hook does
    not see; the sealed file system holds it."""
    victim = tmp_path / "teacher"
    victim.mkdir()
    handin = tmp_path / "handins" / "trudy" / "session2"
    handin.mkdir(parents=True)
    command = f"echo pwned > {victim}/by-bash.txt; echo written"
    replies = [
        {"content": [{"type": "tool_use", "id": "t1", "name": "bash",
                      "input": {"command": command}}], "stop_reason": "tool_use"},
        {"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"},
    ]  # fmt: skip
    header = {"format": "cassette/1", "provenance": "scripted", "chapter": "v1_tool_loop"}
    lines = [header | {"task": "Try the door"}, *({"reply": r} for r in replies)]
    (handin / "1.5.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    done = subprocess.run(
        [sys.executable, "-m", "lab", "collect", str(tmp_path / "handins"), "--lang", "en"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "1.5     not done" in done.stdout  # the check ran the cassette
    assert list(victim.iterdir()) == []


# What a student may add to chapter 1's tools to be marked done without doing the work:
# leave at once with success, or say `done` the way the check says it, or write a
# verdict where the checks' verdicts go, with a nonce guessed.
GAMED = {
    "quits": "import os as _os\n_os._exit(0)\n",
    "exits": "raise SystemExit(0)\n",
    "forges": (
        "import json as _json, os as _os, pathlib as _pathlib\n"
        "print('1.3 Add a list_dir tool: done. list_dir listed everything')\n"
        "for _number in ('1.3', '1.6'):\n"
        "    _pathlib.Path(_os.environ['HOME']).parent.joinpath(f'verdict-{_number}.json')"
        ".write_text(_json.dumps({'nonce': '0' * 32, 'result': 'done', 'detail': 'done'}))\n"
        "_os._exit(0)\n"
    ),
    "rewrites": (  # once the check has written its verdict, the hand-in reads it and says done
        "import atexit as _atexit, json as _json, sys as _sys\n"
        "def _done():\n"
        "    _path = [_w for _w in _sys.argv[1:] if _w != '--sealed'][1]\n"
        "    _said = _json.loads(open(_path, encoding='utf-8').read())\n"
        "    if 'verdict' in _said:\n"
        "        _body = _json.loads(_said['verdict'])\n"
        "        _body['result'] = 'done'\n"
        "        _said['verdict'] = _json.dumps(_body, ensure_ascii=False, sort_keys=True)\n"
        "    _said['result'] = 'done'\n"
        "    open(_path, 'w', encoding='utf-8').write(_json.dumps(_said))\n"
        "_atexit.register(_done)\n"
    ),
}


def hand_in_tools(handins: Path, name: str, code: str) -> None:
    """A student's session 2: chapter 1 as it ships, with `code` added to its tools."""
    chapter = handins / name / "session2" / "v1_tool_loop"
    shutil.copytree(REPO / "v1_tool_loop", chapter)
    (chapter / "tools.py").write_text((chapter / "tools.py").read_text() + code)


def test_a_handin_that_games_the_verdict_is_not_marked_done(tmp_path: Path) -> None:
    handins = tmp_path / "handins"
    for name, code in GAMED.items():
        hand_in_tools(handins, name, code)
    done = subprocess.run(
        [sys.executable, "-m", "lab", "collect", str(handins), "--lang", "en",
         "--json", str(tmp_path / "marks.json")],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "marks.json").read_text(encoding="utf-8"))
    results = {(r["student"], r["item"]): r["result"] for r in rows if r["item"] in ("1.3", "1.6")}
    assert results == {(name, n): "error" for name in GAMED for n in ("1.3", "1.6")}


def test_a_verdict_is_read_whole_and_only_as_the_check_signed_it(tmp_path: Path) -> None:
    """A long verdict (a check that quotes the replies it tried) is read whole; the same
    file with its result changed, or signed with another nonce, is no verdict."""
    nonce, path = "5" * 32, tmp_path / "verdict.json"
    detail = "回复 " * 5_000  # 20,000 bytes of UTF-8
    text = json.dumps({"result": "not done", "detail": detail}, ensure_ascii=False)
    path.write_text(json.dumps({"verdict": text, "signature": signature(text, nonce)}))
    assert read_verdict(path, nonce) == ("not done", detail)
    assert read_verdict(path, "6" * 32) is None
    changed = text.replace('"not done"', '"done"')
    path.write_text(json.dumps({"verdict": changed, "signature": signature(text, nonce)}))
    assert read_verdict(path, nonce) is None


def test_a_name_that_looks_like_a_formula_is_text_in_the_csv(tmp_path: Path) -> None:
    handins = tmp_path / "handins"
    (handins / "=HYPERLINK(1)").mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-m", "lab", "collect", str(handins), "--session", "1", "--lang", "en",
         "--csv", str(tmp_path / "marks.csv"), "--json", str(tmp_path / "marks.json")],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with (tmp_path / "marks.csv").open(encoding="utf-8", newline="") as file:
        assert [row["student"] for row in csv.DictReader(file)] == ["'=HYPERLINK(1)"]
    rows = json.loads((tmp_path / "marks.json").read_text(encoding="utf-8"))
    assert [row["student"] for row in rows] == ["=HYPERLINK(1)"]  # JSON is read as data


# Code that makes every check of a hand-in wait as long as a test may run.
HANGS = "import time as _time\n_time.sleep(600)\n"


def test_the_students_checked_side_by_side_are_shown_in_the_order_of_their_names(
    tmp_path: Path,
) -> None:
    """Three students at two at a time: the one checked first (it ends at once) is not the
    first shown, and the rows keep the order of the names."""
    handins = tmp_path / "handins"
    for name, code in [("ann", HANGS.replace("600", "3")), ("bea", GAMED["quits"])]:
        hand_in_tools(handins, name, code)
    (handins / "cid" / "session2").mkdir(parents=True)  # nothing handed in: no check runs
    done = subprocess.run(
        [sys.executable, "-m", "lab", "collect", str(handins), "--jobs", "2", "--lang", "en",
         "--timeout", "2", "--json", str(tmp_path / "marks.json")],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = re.findall(r"^## (\w+)$", done.stdout, re.MULTILINE)
    assert shown == ["ann", "bea", "cid", "student"]
    started = re.findall(r"^checking (\w+), session 2 …$", done.stderr, re.MULTILINE)
    assert sorted(started) == ["ann", "bea", "cid"]  # said as each starts, for the waiting
    rows = json.loads((tmp_path / "marks.json").read_text(encoding="utf-8"))
    assert list(dict.fromkeys(row["student"] for row in rows)) == ["ann", "bea", "cid"]
    assert {row["result"] for row in rows if row["student"] == "ann" and row["item"] == "1.3"} == {
        "timed out"
    }


def running_checks(scratch: Path) -> list[psutil.Process]:
    """The checks' processes whose scratch copy is under `scratch`."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if any(str(scratch) in part for part in process.info["cmdline"] or []):
            found.append(process)
    return found


@pytest.mark.skipif(os.name == "nt", reason="Ctrl-C is sent here as SIGINT, which Windows lacks")
def test_ctrl_c_stops_the_checks_running_and_leaves_no_copy_behind(tmp_path: Path) -> None:
    handins, scratch = tmp_path / "handins", tmp_path / "tmp"
    scratch.mkdir()
    for name in ("ann", "bea"):
        hand_in_tools(handins, name, HANGS)
    collect = subprocess.Popen(
        [sys.executable, "-m", "lab", "collect", str(handins), "--jobs", "2", "--lang", "en",
         "--json", str(tmp_path / "marks.json")],
        cwd=REPO, env={**os.environ, "TMPDIR": str(scratch)}, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while len(running_checks(scratch)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)  # both students' first check started (and hangs)
        assert running_checks(scratch), "no check started"
        time.sleep(0.5)
        stopped = time.monotonic()
        collect.send_signal(signal.SIGINT)
        out, err = collect.communicate(timeout=60)
    finally:
        collect.kill()
        for process in running_checks(scratch):  # a check left running fails the test below,
            with contextlib.suppress(psutil.NoSuchProcess):  # not the tests after it
                process.kill()
    took = time.monotonic() - stopped
    assert collect.returncode == 130, err
    assert "interrupted: the checks running were stopped, no marks were written" in err
    assert took < 20, f"Ctrl-C took {took:.1f} s to stop the checks"
    assert "## ann" not in out and not (tmp_path / "marks.json").exists()
    assert running_checks(scratch) == [] and list(scratch.iterdir()) == []
