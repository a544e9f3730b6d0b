"""The command line, run as a learner runs it: in a subprocess (or in-process through `main`
where the process does not matter), with no API key set."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from llm.cassette import read_cassette
from llm.cli import Chapter, main
from tests import REPO
from tests.fake_provider import FakeProvider, openai_completion
from tests.llm.test_cassette import unwritable_folder
from v1_tool_loop.__main__ import CHAPTER

DEMO_CASSETTE = REPO / "v1_tool_loop" / "demo" / "cassette.jsonl"
KEYS = {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_MODEL"}


def agent(*args: str, cwd: Path, stdin: str = "", **env: str) -> subprocess.CompletedProcess:
    # TMPDIR keeps the demo's workspace copies inside the test's own folder.
    environment = {k: v for k, v in os.environ.items() if k not in KEYS}
    environment |= {"TMPDIR": str(cwd), **env}
    return subprocess.run(
        [sys.executable, "-m", "v1_tool_loop", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
    )


def demo_workdir(stdout: str) -> Path:
    return Path(re.search(r"^workdir: (.+)$", stdout, re.MULTILINE).group(1))


def test_demo_runs_offline_and_fixes_the_bug(tmp_path: Path) -> None:
    done = agent("--demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    first_line = done.stdout.splitlines()[0]
    assert first_line.startswith("offline: replaying the scripted demo cassette")
    assert "add --model to run it live" in first_line
    assert "── done: 5 turns, 5 tool calls" in done.stdout
    assert "Traceback" not in done.stderr

    workdir = demo_workdir(done.stdout)
    assert str(workdir) in done.stdout.splitlines()[-1]  # ends by saying where to look
    tests = subprocess.run(
        [sys.executable, "-m", "unittest", "-q"], cwd=workdir, capture_output=True, text=True
    )
    assert tests.returncode == 0, tests.stderr
    # The bundled workspace itself still holds the bug for the next learner.
    original = (REPO / "v1_tool_loop/demo/workspace/stats.py").read_text()
    assert "ordered[middle + 1]" in original


def test_demo_quiet_prints_only_the_answer(tmp_path: Path) -> None:
    done = agent("--demo", "--quiet", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout.startswith("Fixed. `median` in stats.py")
    assert len(done.stdout.strip().splitlines()) == 1


def test_a_task_without_any_model_gets_one_clear_message(tmp_path: Path) -> None:
    done = agent("fix the tests", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    message = done.stderr.strip()
    assert "\n" not in message and "Traceback" not in message
    for hint in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "--demo"):
        assert hint in message


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("replay:nowhere.jsonl", "no cassette at nowhere.jsonl"),
        ("bogus:model", "unknown provider 'bogus'"),
        ("anthropic", "has no name"),
        ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY is not set"),
    ],
)
def test_bad_model_specs_are_one_line_errors(tmp_path: Path, spec: str, expected: str) -> None:
    done = agent("--model", spec, "hello", cwd=tmp_path)
    assert done.returncode == 2
    assert expected in done.stderr and "Traceback" not in done.stderr


def test_max_turns_stops_the_demo_and_says_so(tmp_path: Path) -> None:
    done = agent("--demo", "--max-turns", "2", cwd=tmp_path)
    assert done.returncode == 1
    assert "stopped: the model used all 2 turns (--max-turns)" in done.stderr


def test_record_then_replay_gives_the_same_run(tmp_path: Path) -> None:
    # --strict: unittest prints its own timing, and tracebacks the demo's temporary folder,
    # both left out of the comparison (VARYING_OUTPUT); the rest of what it prints is not.
    recorded = agent("--demo", "--record", str(tmp_path / "run.jsonl"), cwd=tmp_path)
    assert recorded.returncode == 0
    lines = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert lines[0]["provenance"] == "recorded" and lines[0]["chapter"] == "v1_tool_loop"
    assert len(lines) == 6 and all("request" in line for line in lines[1:])

    # A copy that keeps its files' times, as the demo's does (llm/demo.py, copy_private): one
    # stamped "now" and edited within the same second, to the same size, keeps running the
    # bytecode Python cached at the first test run, and the tests still fail after the fix.
    workspace = tmp_path / "again"
    subprocess.run(["cp", "-rp", str(REPO / "v1_tool_loop/demo/workspace"), str(workspace)])
    task = lines[0]["task"]
    replayed = agent(
        task,
        "--model",
        f"replay:{tmp_path / 'run.jsonl'}",
        "--workdir",
        str(workspace),
        "--strict",
        cwd=tmp_path,
    )
    assert replayed.returncode == 0, replayed.stderr
    assert "── done: 5 turns, 5 tool calls" in replayed.stdout
    assert "ordered[middle - 1] + ordered[middle]" in (workspace / "stats.py").read_text()


def test_interactive_prompt_keeps_history_and_leaves_on_exit(tmp_path: Path) -> None:
    cassette = tmp_path / "chat.jsonl"
    replies = [
        {"reply": {"content": [{"type": "text", "text": answer}], "stop_reason": "end_turn"}}
        for answer in ("Hello!", "You said hello before.")
    ]
    cassette.write_text(
        "\n".join(
            json.dumps(x) for x in [{"format": "cassette/1", "provenance": "scripted"}, *replies]
        )
    )
    record = tmp_path / "seen.jsonl"
    done = agent(
        "--model",
        f"replay:{cassette}",
        "--record",
        str(record),
        cwd=tmp_path,
        stdin="hello\n\nwhat did I say?\n/exit\nnever sent\n",
    )
    assert done.returncode == 0, done.stderr
    assert "Hello!" in done.stdout and "You said hello before." in done.stdout
    second_request = json.loads(record.read_text().splitlines()[2])["request"]
    assert len(second_request["messages"]) == 3  # task, answer, next task

    at_eof = agent("--model", f"replay:{cassette}", cwd=tmp_path, stdin="")
    assert at_eof.returncode == 0


def test_help_is_instant_and_imports_no_provider_sdk(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "v1_tool_loop", "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and "--max-turns" in done.stdout
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()}
    assert "anthropic" not in imported and "openai" not in imported


def test_ctrl_c_in_the_interactive_prompt_stops_the_turn_not_the_session(tmp_path: Path) -> None:
    cassette = tmp_path / "slow.jsonl"
    rows = [
        {"format": "cassette/1", "provenance": "scripted"},
        {
            "reply": {
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "bash",
                        "input": {"command": "sleep 60"},
                    }
                ],
                "stop_reason": "tool_use",
            }
        },
        {
            "reply": {
                "content": [{"type": "text", "text": "Still here."}],
                "stop_reason": "end_turn",
            }
        },
    ]
    cassette.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    environment = {k: v for k, v in os.environ.items() if k not in KEYS}
    process = subprocess.Popen(
        [sys.executable, "-m", "v1_tool_loop", "--model", f"replay:{cassette}"],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    try:
        process.stdin.write("wait a minute\n")
        process.stdin.flush()
        seen = ""
        while "→ bash  sleep 60" not in seen:  # the tool is running now
            line = process.stdout.readline()
            assert line, "the agent ended before running the tool"
            seen += line
        process.send_signal(signal.SIGINT)
        process.stdin.write("are you there?\n/exit\n")
        process.stdin.flush()
        out, err = process.communicate(timeout=600)
    finally:
        process.kill()
    assert process.returncode == 0
    assert "interrupted: the turn was stopped; the conversation is kept" in err
    assert "Still here." in out  # the next task ran on the kept conversation


# Recording never loses a cassette.


def write_rows(path: Path, *rows: dict) -> Path:
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    return path


def say(text: str) -> dict:
    return {"reply": {"content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}}


def call_bash(command: str) -> dict:
    block = {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": command}}
    return {"reply": {"content": [block], "stop_reason": "tool_use"}}


SCRIPTED = {"format": "cassette/1", "provenance": "scripted"}
RECORDED = {"format": "cassette/1", "provenance": "recorded", "model": "openai:gpt-test"}


def test_recording_onto_the_replayed_cassette_is_refused(tmp_path: Path) -> None:
    played = write_rows(tmp_path / "run.jsonl", RECORDED, say("Hello."))
    before = played.read_bytes()
    (tmp_path / "sub").mkdir()
    done = agent(
        "--model", "replay:run.jsonl", "--record", "sub/../run.jsonl", "hello", cwd=tmp_path
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr
    assert "the cassette being replayed" in done.stderr
    assert played.read_bytes() == before


def chapter_with_demo_cassette(cassette: Path) -> Chapter:
    return dataclasses.replace(CHAPTER, demo_cassette=cassette)


def test_demo_recording_onto_its_own_cassette_is_refused(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = here / "demo.jsonl"
    shutil.copy(DEMO_CASSETTE, cassette)
    chapter = chapter_with_demo_cassette(cassette)

    assert main(chapter, ["--demo", "--record", str(cassette)]) == 2
    assert "the cassette being replayed" in capsys.readouterr().err
    assert cassette.read_bytes() == DEMO_CASSETTE.read_bytes()
    # Live, the demo cassette is not being replayed, but it is scripted: it stays too.
    other = write_rows(here / "other.jsonl", RECORDED, say("Done."))
    assert main(chapter, ["--demo", "--model", f"replay:{other}", "--record", str(cassette)]) == 2
    assert "scripted cassette" in capsys.readouterr().err
    assert cassette.read_bytes() == DEMO_CASSETTE.read_bytes()


@pytest.mark.parametrize(
    "target",
    [
        lambda tmp: tmp,
        lambda tmp: tmp / "notes.txt" / "run.jsonl",
        lambda tmp: unwritable_folder(tmp) / "run.jsonl",
    ],
    ids=["a folder", "under a file", "unwritable"],
)
def test_a_bad_record_target_is_one_line_before_any_model_call(
    tmp_path: Path, fake_provider: FakeProvider, target: Callable[[Path], Path]
) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    fake_provider.reply(openai_completion("Hello."))
    done = agent(
        "--model",
        "openai:gpt-test",
        "--record",
        str(target(tmp_path)),
        "hello",
        cwd=tmp_path,
        OPENAI_BASE_URL=fake_provider.url + "/v1",
        OPENAI_API_KEY="sk-test",
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: cannot record to ")
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr
    assert fake_provider.requests == []
    assert (tmp_path / "notes.txt").read_text() == "mine\n"


def test_a_run_that_fails_keeps_its_recording(tmp_path: Path) -> None:
    short = write_rows(tmp_path / "short.jsonl", SCRIPTED, call_bash("echo hi"))
    done = agent("--model", f"replay:{short}", "--record", "run.jsonl", "go", cwd=tmp_path)
    assert done.returncode == 2 and "has 1 reply and" in done.stderr
    header, entries = read_cassette(tmp_path / "run.jsonl")
    assert header["provenance"] == "recorded" and len(entries) == 1
    assert list(tmp_path.glob("*.partial")) == []


def start_slow_recording(tmp_path: Path) -> tuple[subprocess.Popen, str]:
    """A one-shot run, recorded, stopped while its tool sleeps; returns it and what it said."""
    slow = write_rows(tmp_path / "slow.jsonl", SCRIPTED, call_bash("sleep 60"), say("Done."))
    environment = {k: v for k, v in os.environ.items() if k not in KEYS}
    process = subprocess.Popen(
        [sys.executable, "-m", "v1_tool_loop", "--model", f"replay:{slow}"]
        + ["--record", "run.jsonl", "wait"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    seen = ""
    while "→ bash  sleep 60" not in seen:
        line = process.stdout.readline()
        assert line, "the agent ended before running the tool"
        seen += line
    return process, seen


def test_an_interrupted_run_keeps_its_recording(tmp_path: Path) -> None:
    process, _ = start_slow_recording(tmp_path)
    try:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=600)
    finally:
        process.kill()
    assert process.returncode == 1
    _, entries = read_cassette(tmp_path / "run.jsonl")
    assert len(entries) == 1
    assert list(tmp_path.glob("*.partial")) == []


def test_a_run_killed_hard_leaves_the_partial_file_it_named(tmp_path: Path) -> None:
    process, seen = start_slow_recording(tmp_path)
    process.kill()
    process.communicate(timeout=600)
    partial = tmp_path / re.search(r"written to (\S+\.partial) until the run ends", seen).group(1)
    assert partial.parent.resolve() == tmp_path.resolve()
    assert not (tmp_path / "run.jsonl").exists()
    _, entries = read_cassette(partial)
    assert len(entries) == 1  # the reply that asked for the tool was already on disk


# --strict and --demo say when they cannot do what is asked.


def test_demo_strict_is_refused_because_nothing_could_be_checked(tmp_path: Path) -> None:
    done = agent("--demo", "--strict", cwd=tmp_path)
    assert done.returncode == 2
    assert "holds no request digests, so --strict has nothing to check" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_strict_with_a_live_model_is_refused(tmp_path: Path) -> None:
    done = agent("--model", "openai:gpt-test", "--strict", "hello", cwd=tmp_path)
    assert done.returncode == 2
    assert "--strict" in done.stderr and "replay" in done.stderr


def test_demo_with_a_workdir_is_refused(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(CHAPTER, ["--demo", "--workdir", str(here)]) == 2
    err = capsys.readouterr().err
    assert "fresh temporary copy" in err and err.count("\n") == 1
    assert list(here.iterdir()) == []  # no demo copy was made


def test_a_malformed_cassette_is_one_line_naming_file_and_line(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "bad.jsonl").write_text('["not", "a", "header"]\n')
    assert main(CHAPTER, ["--model", "replay:bad.jsonl", "hello"]) == 2
    assert capsys.readouterr().err.startswith("error: bad.jsonl:1: the header must be an object")


# The task and the interactive prompt.


@pytest.mark.parametrize("task", ["", "   "])
def test_an_empty_task_is_an_error_not_the_prompt(
    here: Path, capsys: pytest.CaptureFixture[str], task: str
) -> None:
    assert main(CHAPTER, ["--model", f"replay:{DEMO_CASSETTE}", task]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("error: the task is empty") and err.count("\n") == 1
    assert out == ""


def test_a_task_that_is_not_utf8_is_one_line(
    tmp_path: Path, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "v1_tool_loop", "--model", f"replay:{DEMO_CASSETTE}", b"fix \xff"],
        cwd=tmp_path,
        capture_output=True,
        env={k: v for k, v in os.environ.items() if k not in KEYS},
        timeout=600,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(b"error: the task holds bytes that are not UTF-8")
    assert done.stderr.count(b"\n") == 1
    # In-process, the same bytes arrive as Python decodes arguments: surrogate escapes.
    assert main(CHAPTER, ["--model", f"replay:{DEMO_CASSETTE}", os.fsdecode(b"fix \xff")]) == 2
    assert "not UTF-8" in capsys.readouterr().err


@pytest.mark.parametrize("stdin_errors", ["strict", "surrogateescape"])
def test_an_interactive_line_that_is_not_utf8_is_refused_and_the_prompt_goes_on(
    tmp_path: Path, stdin_errors: str
) -> None:
    chat = write_rows(tmp_path / "chat.jsonl", SCRIPTED, say("Hello!"))
    done = subprocess.run(
        [sys.executable, "-m", "v1_tool_loop", "--model", f"replay:{chat}"]
        + ["--record", "seen.jsonl"],
        cwd=tmp_path,
        input=b"caf\xe9\nhello\n/exit\n",
        capture_output=True,
        env={k: v for k, v in os.environ.items() if k not in KEYS}
        | {"PYTHONIOENCODING": f"utf-8:{stdin_errors}"},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert b"that line holds bytes that are not UTF-8" in done.stderr
    assert b"Traceback" not in done.stderr
    assert b"Hello!" in done.stdout
    first = json.loads((tmp_path / "seen.jsonl").read_text().splitlines()[1])
    assert len(first["request"]["messages"]) == 1  # only "hello" reached the model


def test_an_interactive_line_that_is_not_utf8_in_process(
    here: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = write_rows(here / "chat.jsonl", SCRIPTED, say("Hello!"))
    typed = io.TextIOWrapper(io.BytesIO(b"caf\xe9\nhello\n/exit\n"), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", typed)
    assert main(CHAPTER, ["--model", f"replay:{chat}"]) == 0
    out, err = capsys.readouterr()
    assert "that line holds bytes that are not UTF-8" in err and "Hello!" in out


# .env: only this folder's, never over the environment, and a warning for a redirected key.






# One machine, many learners: what a run leaves is its user's alone.


def modes(folder: Path) -> set[tuple[str, int]]:
    """(kind, permission bits) of `folder` and of everything in it."""
    paths = [folder, *folder.rglob("*")]
    return {("folder" if p.is_dir() else "file", stat.S_IMODE(p.stat().st_mode)) for p in paths}


@pytest.fixture
def open_demo(tmp_path: Path) -> Chapter:
    """Chapter 1 with a copy of its demo workspace that anyone may read, as an installed
    package's files are, and a file only its owner may run."""
    workspace = tmp_path / "installed workspace"
    shutil.copytree(CHAPTER.demo_workspace, workspace)
    for path in [workspace, *workspace.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    (workspace / "run.sh").write_text("echo hi\n")
    (workspace / "run.sh").chmod(0o755)
    return dataclasses.replace(CHAPTER, demo_workspace=workspace)


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX's")
def test_the_demo_copy_is_private_whatever_the_modes_of_the_workspace(
    here: Path, open_demo: Chapter, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(open_demo, ["--demo"]) == 0
    workdir = demo_workdir(capsys.readouterr().out)
    assert workdir.parent == here
    # What the agent's own tools made there (a bytecode cache, say) follows the umask.
    copied = [workdir / p.relative_to(open_demo.demo_workspace) for p in
              [open_demo.demo_workspace, *open_demo.demo_workspace.rglob("*")]]  # fmt: skip
    assert {(p.is_dir(), stat.S_IMODE(p.stat().st_mode)) for p in copied} == {
        (True, 0o700),
        (False, 0o600),
    }


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX's")
def test_copy_demo_makes_a_private_copy_expands_the_home_folder_and_prints_its_path(
    here: Path,
    open_demo: Chapter,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HOME", str(here / "home"))  # what `~` means, in PowerShell too
    assert main(open_demo, ["--copy-demo", "~/agent-course/ws"]) == 0
    copy = here / "home/agent-course/ws"
    assert capsys.readouterr().out == f"{copy}\n"
    assert sorted(p.name for p in copy.iterdir()) == sorted(
        p.name for p in open_demo.demo_workspace.iterdir()
    )
    assert modes(copy) == {("folder", 0o700), ("file", 0o600)}
    assert stat.S_IMODE((here / "home/agent-course").stat().st_mode) == 0o700
    # An edit in the copy's first second must still reach Python: its bytecode cache
    # tells an edited module by the time, so the copy keeps the originals' times.
    original = open_demo.demo_workspace / "stats.py"
    assert (copy / "stats.py").stat().st_mtime_ns == original.stat().st_mtime_ns

    assert main(open_demo, ["--copy-demo", "~/agent-course/ws"]) == 2  # never over one's work
    assert capsys.readouterr().err == (
        f"error: --copy-demo {copy} is not empty: name a new or empty folder\n"
    )
    assert main(open_demo, ["--copy-demo", str(copy / "stats.py")]) == 2
    assert "is a file" in capsys.readouterr().err
    assert main(open_demo, ["--copy-demo", str(here / "other"), "--demo"]) == 2
    assert "--copy-demo only copies the demo workspace" in capsys.readouterr().err

    # The copy is the work copy of the chapter's documented commands.
    replay = f"replay:{DEMO_CASSETTE}"
    run = ["--workdir", "~/agent-course/ws", "--model", replay, "--quiet", "fix it"]
    assert main(CHAPTER, [*run, "--record", "~/agent-course/runs/run.jsonl"]) == 0
    assert "ordered[middle - 1]" in (copy / "stats.py").read_text()
    assert modes(here / "home/agent-course/runs") == {("folder", 0o700), ("file", 0o600)}


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_copy_demo_refuses_a_link_whose_folder_it_would_make_private(tmp_path: Path) -> None:
    """A link to a shared folder (a 1777 /tmp, say) would turn that folder into 0700."""
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o1777)
    (tmp_path / "link").symlink_to(shared, target_is_directory=True)
    done = agent("--copy-demo", str(tmp_path / "link"), cwd=tmp_path)
    assert done.returncode == 2 and "is a link" in done.stderr and done.stderr.count("\n") == 1
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777 and not any(shared.iterdir())
