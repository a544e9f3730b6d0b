"""Tool calls a server leaves in the text: chapter 1's loop says so instead of calling it done.

The fake provider plays a local server that does not parse its model's calls: the
reply's text holds the call, `tool_calls` is empty.  The real OpenAI SDK and the
real chapter 1 command line run against it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm.cli import main
from llm.text_calls import calls_in_text
from tests.fake_provider import FakeProvider, openai_completion, openai_tool_call
from v1_tool_loop.__main__ import CHAPTER

FENCED = 'I will list the files.\n```json\n{"name": "bash", "arguments": {"command": "ls"}}\n```'
NAMES = {"bash", "read_file"}


@pytest.mark.parametrize(
    "text",
    [
        FENCED,
        '{"name": "bash", "arguments": {"command": "ls"}}',
        '<tool_call>\n{"name": "bash", "arguments": "{\\"command\\": \\"ls\\"}"}\n</tool_call>',
        'Calling: {"name": "bash", "parameters": {"command": "ls"}} now.',
        '{"type": "function", "function": {"name": "bash", "arguments": {"command": "ls"}}}',
        'functions.bash:\n{"command": "ls"}',  # llama-cpp-python's chatml-function-calling
    ],
)
def test_the_shapes_local_models_write_are_found(text: str) -> None:
    assert calls_in_text(text, NAMES) == [("bash", {"command": "ls"})]


@pytest.mark.parametrize(
    "text",
    [
        "All done: the tests pass.",
        '{"name": "Ada", "arguments": {"age": 3}}',  # not an offered tool
        'The config is {"name": "bash"} and nothing else.',  # no arguments: not a call
        '{"name": "bash", "arguments": "ls -l"}',  # arguments that are not an object
        "A brace { that opens nothing.",
        '{"a": ' * 100_000 + "1" + "}" * 100_000,  # nested past Python's stack
        '{"name": "bash", "arguments": "' + "[" * 100_000 + "]" * 100_000 + '"}',
    ],
)
def test_text_that_is_not_a_call_is_left_alone(text: str) -> None:
    assert calls_in_text(text, NAMES) == []


def run_chapter_1(
    fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch, workdir: Path, *flags: str
) -> int:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_provider.url + "/v1")
    return main(
        CHAPTER, ["--model", "openai:local", "--workdir", str(workdir), *flags, "List the files"]
    )


def test_a_call_left_in_the_text_stops_the_run_and_says_what_to_change(
    tmp_path: Path,
    fake_provider: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_provider.reply(openai_completion(FENCED))

    code = run_chapter_1(fake_provider, monkeypatch, tmp_path)

    out, err = capsys.readouterr()
    assert code == 1  # not done: nothing was listed
    assert "── tool_call_in_text:" in out and "0 tool calls" in out
    (line,) = [line for line in err.splitlines() if line.startswith("stopped:")]
    assert "call to bash" in line and "--jinja" in line and "--tool-call-parser" in line
    assert "let the agent parse such calls from the text" in line
    # llama-cpp-python's chatml-function-calling format drops every tool result: never advised
    assert "leave out --chat_format (chatml-function-calling drops every tool result)" in line


NAME_ONLY = "with nothing after it"
CUT_OFF = "no whole call after it (cut off or empty)"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        *[(name, NAME_ONLY) for name in ("functions.bash:", "functions.read_file:\n")],
        *[(name, NAME_ONLY) for name in (" bash: ", "functions.list_files:")],
        ('<tool_call>\n{"name": "bash", "arguments": {"command": "l', CUT_OFF),
        ("<tool_call>\n</tool_call>", CUT_OFF),
        ('functions.bash:\n{"command": "l', CUT_OFF),
        ('functions.list_files:\n{"path": ', CUT_OFF),
        ('```json\n{"name": "read_file", "arguments": {"pa', CUT_OFF),
    ],
)
def test_a_calls_name_alone_or_a_call_cut_off_is_a_server_setting_not_an_answer(
    text: str,
    said: str,
    tmp_path: Path,
    fake_provider: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_provider.reply(openai_completion(text))

    code = run_chapter_1(fake_provider, monkeypatch, tmp_path)

    out, err = capsys.readouterr()
    assert code == 1 and "── tool_call_in_text:" in out  # not "done" with nothing done
    (line,) = [line for line in err.splitlines() if line.startswith("stopped:")]
    assert said in line
    if said == NAME_ONLY:
        assert repr(text.strip()) in line
    else:
        assert "--jinja" in line
    # Parsing the text cannot mend a cut call: the variable is named only as the setting of
    # llama-cpp-python's server, whose chatml-function-calling format sends such calls.
    assert "parse such calls from the text" not in line
    assert "leave out --chat_format" in line


@pytest.mark.parametrize(
    "text",
    [
        "Done:",
        "bash: the tests pass.",
        "functions.py holds the helpers.",
        "functions.py: the helpers live there.",
        'The file holds {"name": "bash", "arguments": {"comm',  # prose first: not a reply
    ],
)
def test_a_short_answer_that_is_not_an_offered_call_is_an_answer(
    text: str, tmp_path: Path, fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_provider.reply(openai_completion(text))
    assert run_chapter_1(fake_provider, monkeypatch, tmp_path) == 0


def test_the_recording_of_such_a_run_replays_to_the_same_stop(
    tmp_path: Path,
    fake_provider: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_provider.reply(openai_completion(FENCED))
    monkeypatch.setenv("AGENT_RECORD_SETUP", "tiny.gguf Q4_1, llama-cpp-python, default template")
    cassette = tmp_path / "run.jsonl"
    assert run_chapter_1(fake_provider, monkeypatch, tmp_path, "--record", str(cassette)) == 1
    lines = cassette.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[1])["reply"]["content"][0]["text"] == FENCED
    header = json.loads(lines[0])  # the header says which server, set up how
    assert header["server"] == fake_provider.url + "/v1"
    assert header["setup"] == "tiny.gguf Q4_1, llama-cpp-python, default template"
    capsys.readouterr()

    code = main(CHAPTER, ["--model", f"replay:{cassette}", "--workdir", str(tmp_path), "--strict",
                          "List the files"])  # fmt: skip

    out, err = capsys.readouterr()
    assert code == 1 and "── tool_call_in_text" in out and "--jinja" in err


def test_with_parsing_switched_on_the_agent_runs_the_call_from_the_text(
    tmp_path: Path,
    fake_provider: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "notes.txt").write_text("buy milk\n")
    monkeypatch.setenv("AGENT_TEXT_TOOL_CALLS", "1")
    fake_provider.reply(openai_completion(FENCED))
    fake_provider.reply(openai_completion("There is one file, notes.txt."))

    code = run_chapter_1(fake_provider, monkeypatch, tmp_path)

    out, _ = capsys.readouterr()
    assert code == 0 and "── done: 2 turns, 1 tool call," in out
    # The call ran for real, and went back to the server as a call with its result.
    second = fake_provider.requests[1].body["messages"]
    assert second[2]["tool_calls"][0]["function"]["name"] == "bash"
    assert second[3]["role"] == "tool" and "notes.txt" in second[3]["content"]


def test_calls_from_the_text_of_two_replies_keep_distinct_ids_live_and_replayed(
    tmp_path: Path,
    fake_provider: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each reply numbers the calls in its text from 0; an id taken earlier in the
    conversation is given a free one, live as in the replay, so a result (or a child's
    replies, keyed by its call's id) answers one call only."""
    workdir = tmp_path / "ws"  # the cassette outside it: `ls` prints the same in the replay
    workdir.mkdir()
    (workdir / "notes.txt").write_text("buy milk\n")
    monkeypatch.setenv("AGENT_TEXT_TOOL_CALLS", "1")
    for reply in (FENCED, FENCED, "There is one file, notes.txt."):
        fake_provider.reply(openai_completion(reply))
    cassette = tmp_path / "run.jsonl"

    assert run_chapter_1(fake_provider, monkeypatch, workdir, "--record", str(cassette)) == 0

    last = fake_provider.requests[2].body["messages"]
    ids = [call["id"] for message in last for call in message.get("tool_calls") or []]
    answered = [message["tool_call_id"] for message in last if message["role"] == "tool"]
    assert len(ids) == 2 and len(set(ids)) == 2 and answered == ids
    capsys.readouterr()
    code = main(CHAPTER, ["--model", f"replay:{cassette}", "--workdir", str(workdir), "--strict",
                          "List the files"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0 and "── done: 3 turns, 2 tool calls," in out, err


def test_the_check_that_tools_reach_the_model_succeeds_on_a_first_call(
    tmp_path: Path,
    fake_provider: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    call = openai_tool_call("call_1", "bash", {"command": "ls"})
    fake_provider.reply(openai_completion(None, [call], finish_reason="tool_calls"))

    code = run_chapter_1(fake_provider, monkeypatch, tmp_path, "--max-turns", "1")

    out, err = capsys.readouterr()
    assert code == 0, err
    assert "── max_turns: 1 turn, 1 tool call," in out
    assert "the tools reached the model: its one turn called bash" in out
    assert "stopped" not in err
    assert fake_provider.requests[0].body["tool_choice"] == "auto"


def test_the_one_turn_check_fails_on_a_calls_name_alone_and_counts_its_turn(
    tmp_path: Path,
    fake_provider: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """What llama-cpp-python's server sent with one setting: the turn and its tokens were
    spent, and the check must not pass, nor read as a run that did nothing at all."""
    fake_provider.reply(openai_completion("functions.bash:", usage=(757, 141)))

    code = run_chapter_1(fake_provider, monkeypatch, tmp_path, "--max-turns", "1")

    out, err = capsys.readouterr()
    assert code == 1 and "reached" not in out
    assert "── tool_call_in_text: 1 turn, 0 tool calls, 757 tokens in, 141 out" in out
    assert "stopped: the server sent 'functions.bash:'" in err


def test_a_one_turn_answer_without_a_call_is_done_and_no_check(
    tmp_path: Path,
    fake_provider: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_provider.reply(openai_completion("I cannot list files."))

    code = run_chapter_1(fake_provider, monkeypatch, tmp_path, "--max-turns", "1")

    out, _ = capsys.readouterr()
    assert code == 0 and "── done: 1 turn, 0 tool calls" in out  # it answered: not a check
    assert "reached" not in out
