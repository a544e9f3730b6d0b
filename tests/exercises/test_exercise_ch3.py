"""Chapter 3's exercise checks refuse the wrong answers a learner could hand in, and take
the right one.

3.3: each wrong answer is the worked solution of `docs/en/solutions.md` with one thing
wrong, applied to a copy of the course; the check, run there as the learner runs it,
says "not done".  These diffs are made for the course as it ships, so they are marked
`docs`, as the tests that pin the shipped course are.

3.4: each wrong answer is a file a learner could hand in as "a run you recorded": the
scripted demo, lines written by hand, recordings of something else, and a real recording
of the demo spoilt one way or another.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.solutions import (
    REPO,
    apply_diff,
    builds_on_the_solutions,
    copy_course,
    read_solutions,
    run_check,
)

SOLUTIONS = read_solutions()  # the 3.3 tests are the worked solution with one thing wrong


def output(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout + done.stderr + f"(exit code {done.returncode})"


def code_of(number: str) -> str:
    """The solution's change to the course's code: its first diff."""
    return next(block.text for block in SOLUTIONS[number].blocks if block.kind == "diff")


def changed(number: str, *edits: tuple[str, str]) -> str:
    code = code_of(number)
    for old, new in edits:
        assert old in code, f"the worked solution {number} no longer has {old!r}"
        code = code.replace(old, new)
    return code


def check_with(diff: str, tmp_path: Path, *words: str) -> str:
    """The 3.3 check's output on a copy of the course with `diff` applied."""
    course, home = copy_course(tmp_path / "course"), tmp_path / "home"
    home.mkdir()
    apply_diff(course, diff)
    command = " ".join(["python -m lab exercise 3.3", *map(shlex.quote, words)])
    return output(run_check(command, course, home))


# --- 3.3 A `test` agent type ---------------------------------------------------------------

TOOLS = '+        tools=("run_tests", *READ_ONLY),'
HANDLER = "+    return bash(workdir, TEST_COMMAND)"
SCHEMA = '+    "run_tests": RUN_TESTS_TOOL,\n'
LAST = '+ALL_HANDLERS = {**HANDLERS, **SEARCH_HANDLERS, "run_tests": run_tests}'
NOT_OFFERED = """@@ "agent_type": {"type": "string", "enum": list(AGENT_TYPES)},
-            "agent_type": {"type": "string", "enum": list(AGENT_TYPES)},
+            "agent_type": {"type": "string", "enum": ["explore", "plan", "code"]},"""
WRONG_TESTERS = {
    "the first version: bash and the read-only tools": (
        (TOOLS, '+        tools=("bash", *READ_ONLY),'),
    ),
    "the row without the tool it exists for": ((SCHEMA, ""),),
    "a run_tests that returns a text of its own": (
        (HANDLER, '+    return "FAIL: test_invoice (3 tests fail)"'),
    ),
    "a run_tests that shows the tests instead of running them": (
        (HANDLER, '+    return bash(workdir, "cat tests/*.py")'),
    ),
    "a run_tests that runs one fixed module": (
        (HANDLER, '+    return bash(workdir, "python -m unittest tests.test_invoice")'),
    ),
    "a run_tests that hides a failing run": (
        (
            HANDLER,
            "+    try:\n+        return bash(workdir, TEST_COMMAND)\n"
            '+    except ToolError:\n+        return "the tests ran"',
        ),
    ),
    "a run_tests that runs any command it is given": (
        ('"properties": {}', '"properties": {"command": {"type": "string"}}'),
        ("def run_tests(workdir: Path) -> str:", "def run_tests(workdir, command=TEST_COMMAND):"),
        (HANDLER, "+    return bash(workdir, command)"),
    ),
    "a run_tests that runs any command that starts as a test run does": (
        ('"properties": {}', '"properties": {"command": {"type": "string"}}'),
        ("def run_tests(workdir: Path) -> str:", "def run_tests(workdir, command=TEST_COMMAND):"),
        (
            HANDLER,
            '+    if not command.startswith("python -m unittest"):\n'
            '+        raise ToolError("run_tests runs tests only")\n'
            "+    return bash(workdir, command)",
        ),
    ),
    "every tool, refusing the words an earlier check wrote": (
        (TOOLS, '+        tools=("run_tests", "bash", "write_file", "edit_file", *READ_ONLY),'),
        (
            LAST,
            LAST + "\n+def refusing(handler):\n"
            "+    def guarded(workdir, **args):\n"
            '+        if "changed" in str(args):\n'
            '+            raise ToolError("refused")\n'
            "+        return handler(workdir, **args)\n"
            "+    return guarded\n"
            "+ALL_HANDLERS = {name: refusing(h) for name, h in ALL_HANDLERS.items()}",
        ),
    ),
    "bash besides run_tests": ((TOOLS, '+        tools=("run_tests", "bash", *READ_ONLY),'),),
    "write_file besides run_tests": (
        (TOOLS, '+        tools=("run_tests", "write_file", *READ_ONLY),'),
    ),
    "edit_file besides run_tests": (
        (TOOLS, '+        tools=("run_tests", "edit_file", *READ_ONLY),'),
    ),
    "run_tests and nothing to read with": ((TOOLS, '+        tools=("run_tests",),'),),
    "run_tests and read_file, not list_files or grep": (
        (TOOLS, '+        tools=("run_tests", "read_file"),'),
    ),
    "a run_tests of the new test's file alone": (
        (HANDLER, "+    return bash(workdir, TEST_COMMAND + ' -p test_*_[0-9][0-9].py')"),
    ),
    "a type the model is never offered (task's enum without it)": (
        (LAST, LAST + "\n" + NOT_OFFERED),
    ),
}


@builds_on_the_solutions()
@pytest.mark.docs  # the course as it ships: doing the exercise changes it
@pytest.mark.parametrize("wrong", WRONG_TESTERS)
def test_a_test_agent_without_its_tool_or_with_more_is_not_done(wrong: str, tmp_path: Path) -> None:
    said = check_with(changed("3.3", *WRONG_TESTERS[wrong]), tmp_path)
    assert "3.3 A test agent type: not done yet." in said, said
    assert "(exit code 1)" in said and "failing with '" in said, said  # names the case it tried


@builds_on_the_solutions()
@pytest.mark.docs  # the course as it ships: doing the exercise changes it
def test_the_worked_test_agent_is_done_on_a_test_made_fresh_each_time(tmp_path: Path) -> None:
    course, home = copy_course(tmp_path / "course"), tmp_path / "home"
    home.mkdir()
    apply_diff(course, code_of("3.3"))
    tried = set()
    for _ in range(3):
        said = output(run_check("python -m lab exercise 3.3", course, home))
        assert "3.3 A test agent type: done." in said and "(exit code 0)" in said, said
        tried.add(said.split(", failing with ")[0])
    assert len(tried) > 1, tried  # a fresh test each time: no answer can know its name


# --- 3.4 Record the children, replay them --------------------------------------------------


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo of chapter 3, recorded as the exercise asks."""
    path = tmp_path_factory.mktemp("recorded") / "v3.jsonl"
    record = [sys.executable, "-m", "v3_subagents", "--demo", "--record", str(path), "--quiet"]
    subprocess.run(record, cwd=REPO, capture_output=True, timeout=600, check=True)
    return path


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def written(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def check_file(path: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "lab", "exercise", "3.4", str(path), "--lang", "en"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return output(done)


def test_the_recorded_demo_is_done(recording: Path) -> None:
    said = check_file(recording)
    assert "3.4 Record the children, replay them: done." in said, said
    assert "lines by section: parent 6, toolu_03 4, toolu_04 3, toolu_06 3" in said, said
    assert "16 requests compared with their digests" in said, said


def spoilt(recording: Path, tmp_path: Path, how: str) -> Path:
    """The recording, spoilt one way a learner could hand it in."""
    header, *entries = lines_of(recording)
    if how == "its child tags lost":
        entries = [{key: v for key, v in entry.items() if key != "child"} for entry in entries]
    elif how == "one child's tags lost":
        entries = [{key: v for key, v in entry.items() if v != "toolu_04"} for entry in entries]
    elif how == "the explorers' tags swapped":
        swap = {"toolu_03": "toolu_04", "toolu_04": "toolu_03"}
        entries = [
            entry | {"child": swap.get(entry.get("child"), entry.get("child"))} for entry in entries
        ]
        entries = [{k: v for k, v in e.items() if v is not None} for e in entries]
    elif how == "a child's tool call edited":
        first = next(e for e in entries if e.get("child") == "toolu_03")
        first["reply"]["content"][-1]["input"] = {"pattern": "invoicing/*"}
    elif how == "an explorer's report edited":
        last = [e for e in entries if e.get("child") == "toolu_04"][-1]
        last["reply"]["content"][0]["text"] = "storage.py is fine."
    elif how == "the parent's last reply edited":  # no later request's digest covers it
        last = [e for e in entries if "child" not in e][-1]
        last["reply"]["content"][0]["text"] = "All tests pass; I fixed everything myself."
    elif how == "its last replies cut off":
        entries = entries[:-4]
    elif how == "its digests taken out":
        entries = [{k: v for k, v in e.items() if k != "request"} for e in entries]
    elif how == "its header made scripted":
        header = header | {"provenance": "scripted"}
    return written(tmp_path / "spoilt.jsonl", [header, *entries])


SPOILT = [
    "its child tags lost",
    "one child's tags lost",
    "the explorers' tags swapped",
    "a child's tool call edited",
    "an explorer's report edited",
    "the parent's last reply edited",
    "its last replies cut off",
    "its digests taken out",
    "its header made scripted",
]


@pytest.mark.parametrize("how", SPOILT)
def test_a_recording_spoilt_is_not_done(how: str, recording: Path, tmp_path: Path) -> None:
    said = check_file(spoilt(recording, tmp_path, how))
    assert "3.4 Record the children, replay them: not done yet." in said, said
    assert "(exit code 1)" in said, said


def test_the_scripted_demo_is_not_done() -> None:
    said = check_file(REPO / "v3_subagents/demo/cassette.jsonl")
    assert "not done yet." in said and "'provenance': 'scripted'" in said, said


def test_lines_written_by_hand_are_not_done(tmp_path: Path) -> None:
    """Two lines, as a recording's would look, but written by hand: no digests, and with
    digests made up, they are not the demo's replies."""
    header = {"format": "cassette/1", "provenance": "recorded", "model": "anthropic:claude"}
    header |= {"recorded_at": "2025-01-01T00:00:00Z", "chapter": "v3_subagents", "task": "Look."}
    ask = {"description": "look", "agent_type": "explore", "prompt": "List the files."}
    parent = {
        "reply": {
            "content": [{"type": "tool_use", "id": "t1", "name": "task", "input": ask}],
            "stop_reason": "tool_use",
        }
    }
    child = {
        "child": "t1",
        "reply": {"content": [{"type": "text", "text": "Two files."}], "stop_reason": "end_turn"},
    }
    finish = {"reply": {"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"}}
    bare = check_file(written(tmp_path / "bare.jsonl", [header, parent, child, finish]))
    assert "not done yet." in bare and "have no request digests" in bare, bare
    made_up = {"system": "0" * 12, "tools": "0" * 12, "stop": [], "messages": ["0" * 12]}
    lines = [header, *({**line, "request": made_up} for line in (parent, child, finish))]
    digests = check_file(written(tmp_path / "digests.jsonl", lines))
    assert "not done yet." in digests and "the parent's reply 1 is not the demo's" in digests


def test_recordings_of_another_chapter_or_without_children_are_not_done(tmp_path: Path) -> None:
    v1 = tmp_path / "v1.jsonl"
    record = [sys.executable, "-m", "v1_tool_loop", "--demo", "--record", str(v1), "--quiet"]
    subprocess.run(record, cwd=REPO, capture_output=True, timeout=600, check=True)
    said = check_file(v1)
    assert "not done yet." in said and "it records v1_tool_loop" in said, said
    alone = tmp_path / "alone.jsonl"
    workdir = tmp_path / "ws"
    subprocess.run(
        [sys.executable, "-m", "v3_subagents", "--copy-demo", str(workdir)],
        check=True,
        cwd=REPO,
        capture_output=True,
    )
    cassette = REPO / "v1_tool_loop/demo/cassette.jsonl"
    task = lines_of(cassette)[0]["task"]
    run = [
        sys.executable,
        "-m",
        "v3_subagents",
        "--model",
        f"replay:{cassette}",
        "--workdir",
        str(workdir),
        "--record",
        str(alone),
        "--quiet",
        task,
    ]
    subprocess.run(run, cwd=REPO, capture_output=True, timeout=600)
    said = check_file(alone)
    assert "not done yet." in said and "no line belongs to a child" in said, said
