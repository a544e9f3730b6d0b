"""Chapter 1's exercise checks refuse the wrong answers a learner might hand in.

Each wrong answer is made in a copy of the course (a diff applied to the chapter, or a
cassette written as the learner would), and the check runs there as the learner runs
it, `python -m lab exercise 1.M …`: it must say "not done yet", and say why.  The worked
solutions themselves are "done" (tests/exercises/test_solutions.py).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_provider import FakeProvider, openai_completion, openai_tool_call
from tests.solutions import (
    apply_diff,
    builds_on_the_solutions,
    copy_course,
    environment,
    read_solutions,
    run_check,
)

pytestmark = builds_on_the_solutions()
SOLUTIONS = read_solutions()  # none in a class fork
HEADER = {"format": "cassette/1", "provenance": "scripted", "chapter": "v1_tool_loop"}
FINISH = {"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"}
# The course as it ships: these apply an answer to the chapter, which must not hold one yet.
SHIPPED = pytest.mark.docs


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A learner's copy of the course, with a home folder of its own beside it."""
    (tmp_path / "home").mkdir()
    return copy_course(tmp_path / "course")


def home_of(course: Path) -> Path:
    return course.parent / "home"


def check(course: Path, *words: str) -> subprocess.CompletedProcess[str]:
    quoted = " ".join(map(shlex.quote, words))  # a path may hold a space
    return run_check(f"python -m lab exercise {quoted}", course, home_of(course))


def learner(course: Path) -> dict[str, str]:
    """The learner's environment, its temporary folders (a demo keeps its own) in the test's."""
    return environment(course, home_of(course)) | {"TMPDIR": str(course.parent), "NO_COLOR": "1"}


def not_done(done: subprocess.CompletedProcess[str], *said: str) -> None:
    assert done.returncode == 1, done.stdout + done.stderr
    assert "not done yet" in done.stdout, done.stdout
    for words in said:
        assert words in done.stdout, done.stdout


def worked(number: str) -> str:
    """The diff of a worked solution, as the solutions page gives it."""
    if not SOLUTIONS:  # a class fork: these tests are skipped
        return ""
    return next(block.text for block in SOLUTIONS[number].blocks if block.kind == "diff")


def cassette(path: Path, *replies: dict, **header: object) -> Path:
    lines = [{**HEADER, "task": "Try it", **header}, *({"reply": reply} for reply in replies)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def bash(call_id: str, **args: object) -> dict:
    block = {"type": "tool_use", "id": call_id, "name": "bash", "input": args}
    return {"content": [block], "stop_reason": "tool_use"}


def tool(call_id: str, name: str, **args: object) -> dict:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": args}
    return {"content": [block], "stop_reason": "tool_use"}


# --- 1.2: the line that refuses to invent a reply --------------------------------------------


def cassette_line(course: Path, holding: str) -> int:
    lines = (course / "llm" / "cassette.py").read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if holding in line)


def test_1_2_the_raise_is_done_and_its_condition_or_another_raise_is_not(course: Path) -> None:
    message = cassette_line(course, "a replay never invents one")
    raised = message - 3
    assert (
        "raise CassetteError(" in (course / "llm/cassette.py").read_text().splitlines()[raised - 1]
    )
    for line in (raised, message):
        done = check(course, "1.2", f"llm/cassette.py:{line}")
        assert done.returncode == 0 and "run dry, ended with `error`" in done.stdout, done.stdout
    condition = cassette_line(course, "if self.turn >= len(self.entries):")
    elsewhere = cassette_line(course, 'f"no cassette at {path}')
    for answer in (f"llm/cassette.py:{condition}", f"llm/cassette.py:{elsewhere}", "llm/cli.py:1"):
        not_done(check(course, "1.2", answer), "is not where that error was raised")
    assert check(course, "1.2", "llm/cassette.py").returncode == 2  # no line: a usage error


def test_1_2_the_fresh_cassette_changes_from_one_check_to_the_next(course: Path) -> None:
    answer = f"llm/cassette.py:{cassette_line(course, 'a replay never invents one')}"
    lengths = {re.search(r"of (\d+) replies", check(course, "1.2", answer).stdout)[1]}
    for _ in range(5):
        lengths.add(re.search(r"of (\d+) replies", check(course, "1.2", answer).stdout)[1])
    assert len(lengths) > 1


# --- 1.3: list_dir -----------------------------------------------------------------------------

SCHEMA = """--- a/v1_tool_loop/tools.py
+++ b/v1_tool_loop/tools.py
@@ "required": ["path", "old_text", "new_text"],
             "required": ["path", "old_text", "new_text"],
         },
     },
+    {
+        "name": "list_dir",
+        "description": "List a folder.",
+        "input_schema": {
+            "type": "object",
+            "properties": {"path": {"type": "string"}},
+            "required": ["path"],
+        },
+    },
 ]
@@ HANDLERS: dict
+def list_dir(workdir: Path, path: str) -> str:
+{body}
+
+
 HANDLERS: dict[str, Callable[..., str]] = {
     "bash": bash,
     "read_file": read_file,
     "write_file": write_file,
     "edit_file": edit_file,
+    "list_dir": list_dir,
 }
"""


MARKED = '"\\n".join(sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir()))'


def list_dir_answer(*body: str) -> str:
    """list_dir's schema and a handler of these lines (NAMES(folder): its names, marked)."""
    return SCHEMA.replace("{body}", "\n+".join(body).replace("NAMES(folder)", MARKED))


WRONG_LISTINGS = {
    "a hard-coded listing": ['    return "README.md\\nstats.py\\ntest_stats.py"'],
    "the path not checked": [
        "    folder = workdir / path",
        "    return NAMES(folder)",
    ],
    "folders not marked": [
        "    folder = safe_path(workdir, path)",
        '    return "\\n".join(sorted(p.name for p in folder.iterdir()))',
    ],
    "the parent refused by its name, not by where it is": [
        "    if '..' in path:",
        "        raise ToolError('outside the work directory')",
        "    folder = workdir / path",
        "    return NAMES(folder)",
    ],
    "outside refused by how the path starts": [
        "    if path.startswith(('..', '/')):",
        "        raise ToolError('outside the work directory')",
        "    folder = workdir / path",
        "    return NAMES(folder)",
    ],
    "outside refused by the path's text, links followed": [
        "    import os",
        "    if os.path.normpath(path).startswith(('..', '/')):",
        "        raise ToolError('outside the work directory')",
        "    folder = workdir / path",
        "    return NAMES(folder)",
    ],
    "the work directory whatever the path": [
        "    folder = safe_path(workdir, '.')",
        "    return NAMES(folder)",
    ],
}


@SHIPPED
def test_1_3_the_chapter_as_shipped_has_no_list_dir(course: Path) -> None:
    not_done(check(course, "1.3"), "unknown tool 'list_dir'", "hint: add its schema")


@SHIPPED
@pytest.mark.parametrize("wrong", list(WRONG_LISTINGS))
def test_1_3_a_tool_that_does_not_list_the_folder_asked_for_is_not_done(
    course: Path, wrong: str
) -> None:
    apply_diff(course, list_dir_answer(*WRONG_LISTINGS[wrong]))
    not_done(check(course, "1.3"), "a fresh folder")


@SHIPPED
def test_1_3_the_worked_solution_lists_fresh_folders_and_refuses_the_parent(course: Path) -> None:
    apply_diff(course, worked("1.3"))
    done = check(course, "1.3")
    assert done.returncode == 0, done.stdout
    assert "is outside the work directory" in done.stdout


# --- 1.4: a recording, replayed strictly -----------------------------------------------------


def record_with_the_fake_provider(course: Path, command: str, recording: Path) -> None:
    """A run of chapter 1 recorded from the fake provider: one bash call, then an answer."""
    server = FakeProvider().start()
    try:
        call = openai_tool_call("call_1", "bash", {"command": command})
        server.reply(openai_completion(tool_calls=[call], finish_reason="tool_calls"))
        server.reply(openai_completion("That is what it printed."))
        env = learner(course) | {"OPENAI_BASE_URL": server.url + "/v1"}
        workdir = course / "v1_tool_loop" / "demo" / "workspace"
        argv = [sys.executable, "-m", "v1_tool_loop", "--workdir", str(workdir)]
        argv += ["--model", "openai:fake", "--record", str(recording), "Run it."]
        subprocess.run(argv, cwd=course, env=env, capture_output=True, timeout=600, check=True)
    finally:
        server.stop()


def test_1_4_scripted_or_replayed_cassettes_are_not_a_recording(course: Path) -> None:
    demo = course / "v1_tool_loop" / "demo" / "cassette.jsonl"
    not_done(check(course, "1.4", str(demo)), "is scripted, without request digests")

    replayed = home_of(course) / "demo-recorded.jsonl"
    argv = [sys.executable, "-m", "v1_tool_loop", "--demo", "--record", str(replayed)]
    subprocess.run(
        argv, cwd=course, env=learner(course), capture_output=True, timeout=600, check=True
    )
    not_done(check(course, "1.4", str(replayed)), "recorded a replay (replay:")

    relabelled = home_of(course) / "relabelled.jsonl"
    header, *rest = replayed.read_text(encoding="utf-8").splitlines()
    header = json.dumps({**json.loads(header), "model": "openai:gpt-4o"})
    relabelled.write_text("\n".join([header, *rest]) + "\n", encoding="utf-8")
    not_done(check(course, "1.4", str(relabelled)), "holds the scripted demo's replies")

    *replies, last = (json.loads(line) for line in rest)  # no later digest covers the last
    last["reply"]["content"][0]["text"] += " "
    lines = [header, *map(json.dumps, [*replies, last])]
    relabelled.write_text("\n".join(lines) + "\n", encoding="utf-8")
    not_done(check(course, "1.4", str(relabelled)), "holds the scripted demo's replies")


def test_1_4_two_hand_written_lines_marked_recorded_are_not_done(course: Path) -> None:
    digests = {"system": "0" * 12, "tools": "0" * 12, "stop": [], "messages": ["0" * 12]}
    line = {"reply": tool("t1", "read_file", path="stats.py"), "request": digests}
    header = {**HEADER, "provenance": "recorded", "model": "openai:gpt-4o", "task": "Read it"}
    path = home_of(course) / "hand.jsonl"
    path.write_text(json.dumps(header) + "\n" + json.dumps(line) + "\n", encoding="utf-8")
    not_done(check(course, "1.4", str(path)), "replayed strictly", "was recorded for another")


def test_1_4_a_recording_whose_tool_prints_something_new_each_time_is_not_done(
    course: Path,
) -> None:
    recording = home_of(course) / "clock.jsonl"
    record_with_the_fake_provider(course, "date +%s%N", recording)
    not_done(check(course, "1.4", str(recording)), "replayed strictly", "differs")
    steady = home_of(course) / "steady.jsonl"
    record_with_the_fake_provider(course, "cat stats.py", steady)
    done = check(course, "1.4", str(steady))
    assert done.returncode == 0 and "a recording of openai:fake" in done.stdout, done.stdout


# --- 1.5: the door ---------------------------------------------------------------------------

DOORS = [
    bash("t1", cmd="ls"),
    bash("t2", command="sudo ls"),
    bash("t3", command="sleep 5", timeout=1),
]


def test_1_5_each_door_once_and_end_turn_is_done(course: Path) -> None:
    path = cassette(home_of(course) / "door.jsonl", *DOORS, FINISH)
    done = check(course, "1.5", str(path))
    assert done.returncode == 0, done.stdout


@pytest.mark.parametrize(
    ("wrong", "replies", "missing"),
    [
        (
            "three unknown tools",
            [tool(f"t{n}", "launch_rockets", count=n) for n in range(3)] + [FINISH],
            "a bad argument (argument_problem), a refused command",
        ),
        (
            "one rule three times",
            [bash(f"t{n}", command="sudo ls") for n in range(3)] + [FINISH],
            "missing: a bad argument (argument_problem), a command that timed out",
        ),
        (
            "a failing command instead of a timeout",
            [*DOORS[:2], bash("t3", command="exit 3"), FINISH],
            "missing: a command that timed out (bash)",
        ),
        (
            "a command that prints the timeout's note and fails",
            [*DOORS[:2], bash("t3", command="echo '[timed out after 1s'; exit 1"), FINISH],
            "missing: a command that timed out (bash)",
        ),
        ("a run that does not end with end_turn", DOORS, "and the run ended with `error`"),
    ],
)
def test_1_5_a_cassette_that_misses_a_door_or_the_end_is_not_done(
    course: Path, wrong: str, replies: list[dict], missing: str
) -> None:
    path = cassette(home_of(course) / "door.jsonl", *replies)
    not_done(check(course, "1.5", str(path)), missing)


# --- 1.6: calls side by side -----------------------------------------------------------------

ONE_POOL = """--- a/v1_tool_loop/agent.py
+++ b/v1_tool_loop/agent.py
@@ from pathlib import Path
+from concurrent.futures import ThreadPoolExecutor
 from pathlib import Path
@@ # Appended before the tools run
-            for call in tool_uses(messages[-2]):
-                console.tool_call(call["name"], call["input"])
-                result = run_tool(call["name"], call["input"], workdir)
+            calls = tool_uses(messages[-2])
+            with ThreadPoolExecutor() as pool:
+                done = pool.map(lambda call: run_tool(call["name"], call["input"], workdir), calls)
+            for call, result in zip(calls, done, strict=True):
+                console.tool_call(call["name"], call["input"])
                 console.tool_result(result.content, result.is_error)
"""
FILE_CALLS_ALWAYS_TOGETHER = """--- a/v1_tool_loop/parallel.py
+++ b/v1_tool_loop/parallel.py
@@ def can_join
-    return path_of(call) not in {path_of(other) for other in group}
+    return True
"""
COMMANDS_BESIDE_FILE_CALLS = """--- a/v1_tool_loop/parallel.py
+++ b/v1_tool_loop/parallel.py
@@ def can_join
-    if (call["name"] == "bash") != (group[0]["name"] == "bash"):
-        return False  # a command may read or write any file: never beside a file call
-    if call["name"] == "bash":
-        return True  # asked for in one reply, the commands are taken as independent
+    if call["name"] == "bash":
+        return True
+    if group[0]["name"] == "bash":
+        return False
"""
CTRL_C_LEFT_TO_THE_POOL = """--- a/v1_tool_loop/parallel.py
+++ b/v1_tool_loop/parallel.py
@@ def side_by_side
-    pressed = threading.Event()
+    with ThreadPoolExecutor(len(group)) as pool:
+        return list(pool.map(lambda c: run_tool(c["name"], c["input"], workdir), group))
+    pressed = threading.Event()
"""
CTRL_C_CAUGHT_AROUND_THE_RESULTS = """--- a/v1_tool_loop/parallel.py
+++ b/v1_tool_loop/parallel.py
@@ def side_by_side
-    pressed = threading.Event()
+    with ThreadPoolExecutor(len(group)) as pool:
+        futures = [pool.submit(run_tool, c["name"], c["input"], workdir) for c in group]
+        try:
+            return [future.result() for future in futures]
+        except KeyboardInterrupt:  # not while the threads start
+            stop_running_commands()
+            raise
+    pressed = threading.Event()
"""
AS_THEY_COME = """--- a/v1_tool_loop/parallel.py
+++ b/v1_tool_loop/parallel.py
@@ from concurrent.futures
-from concurrent.futures import ThreadPoolExecutor, wait
+from concurrent.futures import ThreadPoolExecutor, as_completed, wait
@@ def side_by_side
-            while wait(futures, timeout=0.1).not_done:
-                if pressed.is_set():
-                    stop_running_commands()
+            futures = list(as_completed(futures))  # the order they finish in
"""
SKIPS_SLOW_COMMANDS = """--- a/v1_tool_loop/tools.py
+++ b/v1_tool_loop/tools.py
@@ def bash(
     reason = refusal_reason(command)
+    if "sleep" in command:
+        return "(no output)"
"""


@SHIPPED
@pytest.mark.parametrize(
    ("wrong", "diffs", "said"),
    [
        ("one pool for every call", [ONE_POOL], "edits each needing the one before"),
        (
            "file calls always together",
            [worked("1.6"), FILE_CALLS_ALWAYS_TOGETHER],
            "old_text was not found",
        ),
        (
            "a command beside the file calls before it",
            [worked("1.6"), COMMANDS_BESIDE_FILE_CALLS],
            "then counted by a command",
        ),
        ("Ctrl-C left to the pool", [worked("1.6"), CTRL_C_LEFT_TO_THE_POOL], "marks left by ['"),
        (
            "Ctrl-C caught around the results",
            [worked("1.6"), CTRL_C_CAUGHT_AROUND_THE_RESULTS],
            "marks left by ['",
        ),
        ("results as they come", [worked("1.6"), AS_THEY_COME], "in the order of the calls"),
        ("a tool that skips slow commands", [SKIPS_SLOW_COMMANDS], "answered ['(no output)'"),
    ],
)
def test_1_6_calls_run_at_once_unsafely_or_not_at_all_are_not_done(
    course: Path, wrong: str, diffs: list[str], said: str
) -> None:
    for diff in diffs:
        apply_diff(course, diff)
    not_done(check(course, "1.6"), said)


@SHIPPED
def test_1_6_the_worked_solution_passes_the_lab_task_that_edits_one_file_twice(
    course: Path,
) -> None:
    """several-steps' cassette edits textstats.py twice in one reply: one pool would race."""
    apply_diff(course, worked("1.6"))
    argv = [sys.executable, "-m", "lab", "compare", "--task", "several-steps", "--chapters", "v1"]
    env = learner(course)
    done = subprocess.run(argv, cwd=course, env=env, capture_output=True, text=True, timeout=600)
    assert re.search(r"\| v1_tool_loop \| yes +\| done", done.stdout), done.stdout + done.stderr
