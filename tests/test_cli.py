"""The command line, run as a learner runs it: in a subprocess, with no API key set."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DEMO_CASSETTE = REPO / "v1_tool_loop" / "demo" / "cassette.jsonl"
KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_MODEL")


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
        timeout=120,
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


def test_env_file_chooses_the_model(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(f"AGENT_MODEL=replay:{DEMO_CASSETTE}\n")
    done = agent("anything", "--quiet", "--workdir", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Fixed.")  # the demo cassette's answer: it was replayed


def test_record_then_replay_gives_the_same_run(tmp_path: Path) -> None:
    # Not --strict: unittest prints its own timing, so tool results differ from run to run.
    recorded = agent("--demo", "--record", str(tmp_path / "run.jsonl"), cwd=tmp_path)
    assert recorded.returncode == 0
    lines = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert lines[0]["provenance"] == "recorded" and lines[0]["chapter"] == "v1_tool_loop"
    assert len(lines) == 6 and all("request" in line for line in lines[1:])

    workspace = tmp_path / "again"
    subprocess.run(["cp", "-r", str(REPO / "v1_tool_loop/demo/workspace"), str(workspace)])
    task = lines[0]["task"]
    replayed = agent(
        task,
        "--model",
        f"replay:{tmp_path / 'run.jsonl'}",
        "--workdir",
        str(workspace),
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
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 0
    assert "interrupted: the turn was stopped; the conversation is kept" in err
    assert "Still here." in out  # the next task ran on the kept conversation
