"""Chapter 0's loop, on small cassettes: tools really run, only the model is scripted.

Most tests replay a cassette written here with `llm.cassette.ReplayModel`.  Where a
test must see what the agent sent to the model (stop sequences, no tools, the
messages after an invented observation), a tiny recording model stands in for the
provider: the model is the one thing outside the project.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from llm import Console, Message, Reply, Usage
from llm.cassette import ReplayModel, read_cassette
from llm.result import INTERRUPTED
from tests import REPO
from v0_react_text.agent import INVENTED_NOTE, STOP, ReactRunResult, run
from v0_react_text.prompt import FORMAT, SYSTEM
from v1_tool_loop.tools import TOOLS

LIST_FILES = 'Thought: First, the files.\nAction: bash\nAction Input: {"command": "ls"}\n'
READ_NOTES = 'Thought: Read the notes.\nAction: read_file\nAction Input: {"path": "notes.txt"}\n'
FINISH = "Thought: I have what I need.\nFinal Answer: The notes say: buy milk."
PROSE = "I think I should look at the files first."


def write_cassette(path: Path, replies: list[str]) -> Path:
    """A scripted cassette of raw text replies, in the format of the demo cassettes."""
    header = {
        "format": "cassette/1",
        "provenance": "scripted",
        "chapter": "v0_react_text",
        "task": "test",
    }
    lines = [json.dumps(header)]
    for text in replies:
        stop = "end_turn" if "Final Answer" in text else "stop_sequence"
        reply = {
            "content": [{"type": "text", "text": text}],
            "stop_reason": stop,
            "usage": {"input_tokens": 100, "output_tokens": 20},
        }
        lines.append(json.dumps({"reply": reply}, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class RecordingModel:
    """Answers with scripted text and keeps a copy of every request it was sent."""

    name = "recording"

    def __init__(self, replies: list[str | BaseException]) -> None:
        self.replies = list(replies)
        self.calls: list[dict[str, Any]] = []

    def complete(
        self,
        system: str,
        messages: list[Message],
        tools: list[dict[str, Any]] | None = None,
        stop: list[str] | None = None,
        max_tokens: int = 4096,
    ) -> Reply:
        self.calls.append(
            {"system": system, "messages": copy.deepcopy(messages), "tools": tools, "stop": stop}
        )
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return Reply([{"type": "text", "text": reply}], "stop_sequence", Usage(50, 10))


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.txt").write_text("buy milk\n", encoding="utf-8")
    return folder


def replay(tmp_path: Path, replies: list[str]) -> ReplayModel:
    return ReplayModel(write_cassette(tmp_path / "run.jsonl", replies))


def test_a_tool_runs_and_the_final_answer_ends_the_run(tmp_path: Path, workdir: Path) -> None:
    result = run(
        "What do the notes say?", model=replay(tmp_path, [READ_NOTES, FINISH]), workdir=workdir
    )
    assert isinstance(result, ReactRunResult)
    assert result.stop == "done"
    assert result.answer == "The notes say: buy milk."
    assert (result.turns, result.tool_calls, result.format_errors) == (2, 1, 0)
    roles = [message["role"] for message in result.messages]
    assert roles == ["user", "assistant", "user", "assistant"]
    assert result.messages[1]["content"] == READ_NOTES.strip()  # the text the model wrote
    assert result.messages[2]["content"] == "Observation: buy milk"


def test_tools_change_the_real_work_directory(tmp_path: Path, workdir: Path) -> None:
    write = (
        'Action: write_file\nAction Input: {"path": "out/hello.txt", "content": "hello\\nworld\\n"}'
    )
    result = run("Write it.", model=replay(tmp_path, [write, FINISH]), workdir=workdir)
    assert result.stop == "done"
    assert (workdir / "out" / "hello.txt").read_text() == "hello\nworld\n"


def test_a_format_error_is_answered_and_the_model_can_recover(
    tmp_path: Path, workdir: Path
) -> None:
    broken = 'Action: read_file\nAction Input: {"path": notes.txt}'
    result = run(
        "Read the notes.", model=replay(tmp_path, [broken, READ_NOTES, FINISH]), workdir=workdir
    )
    assert result.stop == "done"
    assert result.format_errors == 1
    answer = result.messages[2]["content"]
    assert answer.startswith("Observation: Format error: the Action Input is not valid JSON")
    assert "Nothing was run" in answer and FORMAT in answer
    assert result.messages[4]["content"] == "Observation: buy milk"


def test_three_format_errors_in_a_row_stop_the_run(tmp_path: Path, workdir: Path) -> None:
    model = replay(tmp_path, [PROSE, PROSE, PROSE, FINISH])
    result = run("Read the notes.", model=model, workdir=workdir)
    assert result.stop == "format_errors"
    assert (result.format_errors, result.turns, model.turn) == (3, 3, 3)
    assert result.answer == ""
    observations = [m["content"] for m in result.messages[2::2] if m["role"] == "user"]
    assert len(observations) == 3
    assert all(text.startswith("Observation: Format error:") for text in observations)
    assert result.messages[-1] == {
        "role": "assistant",
        "content": "[stopped after 3 format errors]",
    }


def test_only_errors_in_a_row_count_towards_the_limit(tmp_path: Path, workdir: Path) -> None:
    replies = [PROSE, PROSE, LIST_FILES, PROSE, PROSE, FINISH]
    result = run("Look around.", model=replay(tmp_path, replies), workdir=workdir)
    assert result.stop == "done"
    assert result.format_errors == 4


def test_an_invented_observation_is_discarded_counted_and_never_sent_back(
    workdir: Path,
) -> None:
    invented = (
        READ_NOTES + "Observation: the notes say INVENTED\nThought: done\nFinal Answer: INVENTED"
    )
    model = RecordingModel([invented, FINISH])
    result = run("What do the notes say?", model=model, workdir=workdir)
    assert result.stop == "done"
    assert result.hallucinated_observations == 1
    assert result.format_errors == 0
    sent = json.dumps(model.calls[1]["messages"])
    assert "INVENTED" not in sent
    assert result.messages[1]["content"] == READ_NOTES.rstrip()
    real = result.messages[2]["content"]
    assert real.startswith("Observation: buy milk") and INVENTED_NOTE in real
    assert result.answer == "The notes say: buy milk."


def test_an_unknown_tool_is_answered_by_the_tool_layer(tmp_path: Path, workdir: Path) -> None:
    grep = 'Thought: Search.\nAction: grep\nAction Input: {"pattern": "milk"}'
    result = run("Find milk.", model=replay(tmp_path, [grep, FINISH]), workdir=workdir)
    assert result.stop == "done"
    assert result.format_errors == 0
    observation = result.messages[2]["content"]
    assert observation.startswith("Observation: Error: unknown tool 'grep'")
    assert "bash, read_file, write_file, edit_file" in observation


def test_the_model_gets_stop_sequences_and_no_tools(workdir: Path) -> None:
    model = RecordingModel([READ_NOTES, FINISH])
    run("What do the notes say?", model=model, workdir=workdir)
    for call in model.calls:
        assert call["tools"] is None
        assert call["stop"] == STOP
        assert call["system"] == SYSTEM
    assert "Observation:" in STOP and "\nObservation:" in STOP
    for tool in TOOLS:
        assert f"- {tool['name']}: " in SYSTEM
    assert all(isinstance(m["content"], str) for m in model.calls[1]["messages"])


def test_an_empty_reply_is_a_format_error_and_keeps_the_conversation_valid(
    workdir: Path,
) -> None:
    result = run("Go.", model=RecordingModel(["", FINISH]), workdir=workdir)
    assert result.stop == "done"
    assert result.format_errors == 1
    assert result.messages[1] == {"role": "assistant", "content": "(empty reply)"}


def test_max_turns_ends_on_an_assistant_note(tmp_path: Path, workdir: Path) -> None:
    result = run("Look.", model=replay(tmp_path, [LIST_FILES] * 3), workdir=workdir, max_turns=2)
    assert result.stop == "max_turns"
    assert result.tool_calls == 2
    assert result.messages[-1] == {"role": "assistant", "content": "[stopped after 2 turns]"}


def test_a_cassette_that_runs_out_is_an_error(tmp_path: Path, workdir: Path) -> None:
    result = run("Look.", model=replay(tmp_path, [LIST_FILES]), workdir=workdir)
    assert result.stop == "error"
    assert "never invents" in result.error
    assert result.messages[-1]["role"] == "assistant"


def test_ctrl_c_keeps_the_conversation(workdir: Path) -> None:
    result = run("Look.", model=RecordingModel([LIST_FILES, KeyboardInterrupt()]), workdir=workdir)
    assert result.stop == "interrupted"
    assert result.messages[-1] == {"role": "assistant", "content": f"[{INTERRUPTED}]"}
    assert result.tool_calls == 1


def test_history_is_continued(tmp_path: Path, workdir: Path) -> None:
    first = run("Read the notes.", model=replay(tmp_path, [READ_NOTES, FINISH]), workdir=workdir)
    again = run("And now?", model=RecordingModel([FINISH]), workdir=workdir, history=first.messages)
    assert again.messages[: len(first.messages)] == first.messages
    assert again.messages[len(first.messages)] == {"role": "user", "content": "And now?"}
    assert again.answer == "The notes say: buy milk."


def test_the_console_shows_the_failure_and_the_repair(
    tmp_path: Path, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    invented = LIST_FILES + "Observation: nothing here"
    replies = [invented, PROSE, READ_NOTES, FINISH]
    run("Read.", model=replay(tmp_path, replies), workdir=workdir, console=Console())
    out = capsys.readouterr().out
    assert "! the model invented an Observation; discarded 'Observation: nothing here'" in out
    assert "! format error (1 in a row): found neither 'Action:' nor 'Final Answer:'" in out
    assert "recovered after 1 format error(s)" in out
    assert "→ read_file  notes.txt" in out
    assert "● The notes say: buy milk." in out


# --- the demo, as a learner runs it -----------------------------------------------------

DEMO_CASSETTE = REPO / "v0_react_text" / "demo" / "cassette.jsonl"


def test_the_demo_cassette_holds_chapter_1s_task_as_raw_text() -> None:
    header, entries = read_cassette(DEMO_CASSETTE)
    v1_header, _ = read_cassette(REPO / "v1_tool_loop" / "demo" / "cassette.jsonl")
    assert header["task"] == v1_header["task"]
    assert (header["provenance"], header["chapter"]) == ("scripted", "v0_react_text")
    blocks = [block for entry in entries for block in entry["reply"]["content"]]
    assert all(block["type"] == "text" for block in blocks)


def demo_environment() -> dict[str, str]:
    """The caller's environment without anything that could reach a real model."""
    hidden = ("API_KEY", "AUTH_TOKEN", "BASE_URL", "AGENT_MODEL")
    return {k: v for k, v in os.environ.items() if not any(h in k for h in hidden)}


def run_demo(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    # TMPDIR keeps the demo's workspace copy inside the test's own folder.
    return subprocess.run(
        [sys.executable, "-m", "v0_react_text", "--demo", *flags],
        cwd=REPO,
        env=demo_environment() | {"TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_demo_runs_offline_recovers_and_fixes_the_bug(tmp_path: Path) -> None:
    process = run_demo(tmp_path)
    out = process.stdout
    assert process.returncode == 0, process.stderr
    assert "offline: replaying the scripted demo cassette" in out
    assert "! the model invented an Observation; discarded" in out
    assert "! format error (1 in a row): the Action Input is not valid JSON" in out
    assert "recovered after 1 format error(s)" in out
    assert "text protocol: 1 format error(s) answered, 1 invented observation(s) discarded" in out
    assert "── done: 6 turns, 4 tool calls" in out
    kept = out.split("the demo workspace is kept at ")[1].split(":")[0]
    try:
        tests = subprocess.run(
            [sys.executable, "-m", "unittest"],
            cwd=kept,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert tests.returncode == 0, tests.stderr
        assert "Ran 5 tests" in tests.stderr
    finally:
        shutil.rmtree(kept)


def test_demo_quiet_prints_only_the_final_answer(tmp_path: Path) -> None:
    process = run_demo(tmp_path, "--quiet")
    assert process.returncode == 0, process.stderr
    assert process.stdout.startswith("Fixed. `median` in stats.py averaged the wrong pair")
    assert "Thought" not in process.stdout


def test_cli_says_why_a_run_stopped_on_format_errors(tmp_path: Path) -> None:
    cassette = tmp_path / "rambling.jsonl"
    reply = {
        "content": [{"type": "text", "text": "I think I should look around."}],
        "stop_reason": "end_turn",
    }
    rows = [{"format": "cassette/1", "provenance": "scripted"}] + [{"reply": reply}] * 3
    cassette.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    process = subprocess.run(
        [
            sys.executable,
            "-m",
            "v0_react_text",
            "--model",
            f"replay:{cassette}",
            "--quiet",
            "--workdir",
            str(tmp_path),
            "look around",
        ],
        cwd=tmp_path,
        env=demo_environment(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert process.returncode == 1
    assert "stopped after 3 format errors" in process.stderr
    assert "Traceback" not in process.stderr
