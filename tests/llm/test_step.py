"""`--step`: every chapter pauses before each model call, shows what is about to be sent,
and takes its keys from stdin, here written to a real subprocess's stdin."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import REPO
from tests.fake_provider import FakeProvider, anthropic_message, text, tool_use

CHAPTERS = ["v0_react_text", "v1_tool_loop", "v2_todos", "v3_subagents", "v4_memory"]
PAUSE = "about to send: "


def step(chapter: str, keys: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", chapter, "--demo", "--step", *flags],
        cwd=REPO,
        input=keys,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_enter_sends_one_call_at_a_time_and_shows_what_was_added() -> None:
    done = step("v1_tool_loop", "\n" * 5)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.count(PAUSE) == 5, "one pause before each of the demo's five calls"
    assert "no more input" not in out
    first, second = out.split("── about to send: ")[1:3]
    assert first.startswith("1 message, ≈") and "the first call: everything is new" in first
    assert second.startswith("3 messages, ≈") and "added since the last call: 2" in second
    assert re.search(r"\+ assistant ≈ +\d+ tokens  I'll look at the project", second)
    assert re.search(r"\+ user +≈ +\d+ tokens  README.md stats.py", second)
    # The pause comes after the reply and the tools it asked for, before the next call.
    assert out.index("→ bash  ls") < out.index("3 messages, ≈")


def test_r_shows_the_whole_request_and_c_runs_to_the_end() -> None:
    done = step("v1_tool_loop", "r\nc\n")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.count(PAUSE) == 1, "c: no pause after it"
    request = out.split("── system prompt\n")[1].split("── end of the request")[0]
    assert request.startswith("You are a coding agent")
    assert "── tools: bash, read_file, write_file, edit_file" in request
    assert "── message 1: user\nThe tests of this project fail." in request
    assert "── done: 5 turns" in out


def test_input_that_ends_runs_to_the_end_saying_so() -> None:
    """No terminal, no keys (`< /dev/null`, a closed pipe): the run goes on, not hangs."""
    done = step("v1_tool_loop", "")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(PAUSE) == 1
    assert done.stdout.count("(no more input: running to the end)") == 1


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_steps(chapter: str) -> None:
    done = step(chapter, "\n\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(PAUSE) >= 2 and "running to the end" in done.stdout


def test_a_replay_steps_too_and_quiet_keeps_the_pauses(tmp_path: Path) -> None:
    cassette = REPO / "v1_tool_loop" / "demo" / "cassette.jsonl"
    workdir = tmp_path / "ws"
    workdir.mkdir()
    task = "The tests of this project fail. Find the bug, fix it, and show that the tests pass."
    done = subprocess.run(
        [sys.executable, "-m", "v1_tool_loop", task, "--model", f"replay:{cassette}"]
        + ["--workdir", str(workdir), "--step", "--quiet"],
        cwd=REPO,
        input="\n\n",
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.stdout.count(PAUSE) == 3 and "running to the end" in done.stdout


def test_max_tokens_total_stops_a_chapter_cleanly_saying_so() -> None:
    """The demo's calls read ≈720, ≈1,170 and ≈1,400 tokens: a bound of 3,000 lets two go,
    and the third, which would take the run past it, is not made."""
    done = subprocess.run(
        [sys.executable, "-m", "v1_tool_loop", "--demo", "--max-tokens-total", "3000"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 2
    summary = re.search(
        r"── error: 2 turns, 3 tool calls, ≈([\d,]+) tokens in, ≈([\d,]+) out", done.stdout
    )
    assert summary, done.stdout
    used = sum(int(n.replace(",", "")) for n in summary.groups())
    assert used <= 3_000
    assert f"the run has used {used:,} tokens, the call would read about" in done.stderr
    assert done.stderr.rstrip().endswith("and --max-tokens-total allows 3,000")


def test_a_live_run_steps_too(fake_provider: FakeProvider, tmp_path: Path) -> None:
    """The real SDK against the loopback provider: the second request waits for Enter, and
    the pause shows the reply and the tool result that it is about to send back."""
    call = tool_use("toolu_1", "bash", {"command": "echo hello from the tool"})
    fake_provider.reply(anthropic_message(text("Looking."), call, stop_reason="tool_use"))
    fake_provider.reply(anthropic_message(text("It said hello.")))
    env = {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "ANTHROPIC_BASE_URL": fake_provider.url,
    }
    done = subprocess.run(
        [sys.executable, "-m", "v1_tool_loop", "--model", "anthropic:claude-test", "--step"]
        + ["--workdir", str(tmp_path), "Say hello"],
        cwd=REPO,
        env=env,
        input="\n\n",
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(PAUSE) == 2 and fake_provider.pending == 0
    second = done.stdout.split("── about to send: ")[2]
    assert "added since the last call: 2" in second and "Looking. bash(" in second
    assert re.search(r"\+ user +≈ +\d+ tokens  hello from the tool", second)


def test_chapter_4s_moving_runtime_note_is_not_a_rewrite() -> None:
    """Each request ends with a runtime note on its last message; at the next call that
    message is the same message, and only what was added is listed."""
    done = step("v4_memory", "\n" * 4)
    assert done.returncode == 0, done.stderr
    pauses = done.stdout.split("── about to send: ")[2:5]  # before stage 1 trims anything
    assert len(pauses) == 3 and all("added since the last call: 2" in p for p in pauses)


def test_an_unknown_key_says_which_keys_there_are() -> None:
    done = step("v1_tool_loop", "x\nc\n")
    assert done.returncode == 0, done.stderr
    assert "'x' is not a key here (Enter: send it · r: show the whole request" in done.stdout


def test_r_shows_each_tool_result_apart_headed_by_the_call_it_answers() -> None:
    """Two calls in one reply, two results in one message, each of several lines: the
    calls are numbered, and each result opens with the number and name of its call."""
    from llm.stepping import whole_request

    calls = [
        {"type": "text", "text": "Two at once."},
        {"type": "tool_use", "id": "a", "name": "bash", "input": {"command": "ls"}},
        {"type": "tool_use", "id": "b", "name": "read_file", "input": {"path": "x.py"}},
    ]
    results = [
        {"type": "tool_result", "tool_use_id": "a", "content": "one.py\ntwo.py"},
        {"type": "tool_result", "tool_use_id": "b", "content": "no such file", "is_error": True},
        {"type": "tool_result", "tool_use_id": "z", "content": "stray"},
    ]
    messages = [{"role": "assistant", "content": calls}, {"role": "user", "content": results}]
    shown = whole_request("sys", messages, None)
    assert shown.split("── message 1: assistant\n")[1].split("\n── end")[0] == (
        "Two at once.\n"
        '[call 1] bash({"command": "ls"})\n'
        '[call 2] read_file({"path": "x.py"})\n'
        "── message 2: user\n"
        "[result of call 1: bash]\none.py\ntwo.py\n"
        "[result of call 2: read_file, an error]\nno such file\n"
        "[result of a call not in this request]\nstray"
    )


def test_r_in_the_demo_shows_the_first_two_results_apart() -> None:
    done = step("v1_tool_loop", "\n" * 3 + "r\nc\n")
    assert done.returncode == 0, done.stderr
    request = done.stdout.split("── message 3: user\n")[1]
    assert request.startswith("[result of call 1: bash]\nREADME.md\nstats.py\ntest_stats.py\n")
    assert "\n[result of call 2: bash, an error]\n.F.E." in request
