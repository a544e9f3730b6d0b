"""Cassettes on disk: a malformed line is a CassetteError that names the file and the line,
and a recording never destroys a cassette, however the run ends."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from llm import CassetteError, Reply, Usage
from llm.anthropic_model import AnthropicModel
from llm.cassette import ReplayModel, read_cassette, without_varying
from llm.recording import RecordingModel
from llm.result import text_of
from tests.fake_provider import FakeProvider, anthropic_message, text, tool_use
from v4_memory.agent import run as chapter_4

HEADER = {"format": "cassette/1", "provenance": "scripted", "chapter": "v1_tool_loop"}
TEXT = {"type": "text", "text": "Let me look."}
CALL = {"type": "tool_use", "id": "toolu_01", "name": "bash", "input": {"command": "ls"}}
REQUEST = {"system": "0a1b2c3d4e5f", "tools": "0a1b2c3d4e5f", "stop": [], "messages": ["0a1b"]}


def reply_line(**changes: Any) -> dict[str, Any]:
    """A valid reply line with some fields replaced (a value of ... removes the field)."""
    reply = {
        "content": [TEXT, CALL],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 10, "output_tokens": 2},
    }
    reply |= changes
    return {"reply": {key: value for key, value in reply.items() if value is not ...}}


def with_block(block: Any) -> dict[str, Any]:
    return reply_line(content=[TEXT, block])


def write_cassette(path: Path, *rows: Any) -> Path:
    """One line per row; a string row is written as it is, anything else as JSON."""
    lines = [row if isinstance(row, str) else json.dumps(row, ensure_ascii=False) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


MALFORMED = {
    "header is a list": (["[1, 2]"], 1, "header"),
    "header is a string": (['"cassette/1"'], 1, "header"),
    "header has no format": ([{"provenance": "scripted"}], 1, "format"),
    "header from a later format": ([{"format": "cassette/2"}], 1, "cassette/2"),
    "header task is not text": ([HEADER | {"task": 7}], 1, "task"),
    "line is not JSON": ([HEADER, '{"reply": {'], 2, "not valid JSON"),
    "line is a list": ([HEADER, [reply_line()]], 2, '"reply"'),
    "line has no reply": ([HEADER, {"content": [TEXT]}], 2, '"reply"'),
    "content is text": ([HEADER, reply_line(content="hello")], 2, "content"),
    "content is missing": ([HEADER, reply_line(content=...)], 2, "content"),
    "block is a string": ([HEADER, with_block("ls")], 2, "content[1]"),
    "block has no type": ([HEADER, with_block({"text": "hi"})], 2, "type"),
    "unknown block type": ([HEADER, with_block({"type": "image"})], 2, "image"),
    "text is null": ([HEADER, with_block({"type": "text", "text": None})], 2, "null"),
    "tool_use id is a number": ([HEADER, with_block(CALL | {"id": 1})], 2, "id"),
    "tool_use has no name": (
        [HEADER, with_block({k: v for k, v in CALL.items() if k != "name"})],
        2,
        "name",
    ),
    "tool_use input is a list": ([HEADER, with_block(CALL | {"input": ["ls"]})], 2, "input"),
    "tool_result in a reply": (
        [HEADER, with_block({"type": "tool_result", "tool_use_id": "t", "content": "x"})],
        2,
        "tool_result",
    ),
    "stop_reason unknown": ([HEADER, reply_line(stop_reason="done")], 2, '"done"'),
    "stop_reason missing": ([HEADER, reply_line(stop_reason=...)], 2, "stop_reason"),
    "usage is a list": ([HEADER, reply_line(usage=[10, 2])], 2, "usage"),
    "usage is null": ([HEADER, reply_line(usage=None)], 2, "usage"),
    "usage count negative": (
        [HEADER, reply_line(usage={"input_tokens": -1, "output_tokens": 2})],
        2,
        "input_tokens",
    ),
    "usage count is text": (
        [HEADER, reply_line(usage={"input_tokens": 1, "output_tokens": "2"})],
        2,
        "output_tokens",
    ),
    "usage count is true": (
        [HEADER, reply_line(usage={"input_tokens": True, "output_tokens": 2})],
        2,
        "input_tokens",
    ),
    "usage count is missing": ([HEADER, reply_line(usage={"input_tokens": 1})], 2, "output_tokens"),
    "counted after blank lines": ([HEADER, reply_line(), "", "  ", "[]"], 5, '"reply"'),
}


@pytest.mark.parametrize(("rows", "line", "words"), MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_line_names_the_file_and_the_line(
    tmp_path: Path, rows: list[Any], line: int, words: str
) -> None:
    path = write_cassette(tmp_path / "bad.jsonl", *rows)
    with pytest.raises(CassetteError) as caught:
        ReplayModel(path)
    message = str(caught.value)
    assert f"{path}:{line}: " in message
    assert words in message
    assert "\n" not in message


def test_an_empty_file_is_not_a_cassette(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n")
    with pytest.raises(CassetteError, match=f"{path} is empty"):
        read_cassette(path)


def test_bytes_that_are_not_utf8_are_named_by_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(json.dumps(HEADER).encode() + b'\n{"reply": "caf\xe9"}\n')
    with pytest.raises(CassetteError, match=f"{path}:2: not UTF-8 text"):
        read_cassette(path)


def test_line_separators_inside_text_do_not_split_a_line(tmp_path: Path) -> None:
    # JSON keeps U+2028 and U+0085 unescaped, and str.splitlines() would cut at them.
    said = "one\u2028two\x85three"
    path = write_cassette(
        tmp_path / "ok.jsonl", HEADER, reply_line(content=[TEXT | {"text": said}])
    )
    _, entries = read_cassette(path)
    assert entries[0]["reply"]["content"][0]["text"] == said


BAD_REQUESTS = {
    "not an object": ["a1b2"],
    "system is a number": REQUEST | {"system": 7},
    "messages is text": REQUEST | {"messages": "0a1b"},
    "stop holds a number": REQUEST | {"stop": [1]},
}


@pytest.mark.parametrize("request_", BAD_REQUESTS.values(), ids=BAD_REQUESTS.keys())
def test_strict_checks_the_shape_of_each_request(tmp_path: Path, request_: Any) -> None:
    good, bad = reply_line() | {"request": REQUEST}, reply_line() | {"request": request_}
    path = write_cassette(tmp_path / "run.jsonl", HEADER, good, bad)
    assert len(ReplayModel(path).entries) == 2  # a plain replay never reads `request`
    with pytest.raises(CassetteError, match=f"{path}:3: .*request"):
        ReplayModel(path, strict=True)


def test_strict_on_a_cassette_without_digests_is_refused_at_load(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "scripted.jsonl", HEADER, reply_line())
    with pytest.raises(CassetteError, match="holds no request digests, so --strict has nothing"):
        ReplayModel(path, strict=True)


# Recording


def replies(*texts: str) -> ReplayModel:
    """The model a recording wraps: here a replay held in memory."""
    return ReplayModel(
        [Reply([{"type": "text", "text": text}], "end_turn", Usage(5, 1)) for text in texts]
    )


def ask(model: Any, question: str = "hi") -> Reply:
    return model.complete("be brief", [{"role": "user", "content": question}])


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def partials(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.partial"))


def test_a_recording_grows_beside_the_cassette_and_replaces_it_on_close(tmp_path: Path) -> None:
    target = tmp_path / "run.jsonl"
    earlier = write_cassette(target, HEADER | {"provenance": "recorded"}, reply_line())
    before = earlier.read_bytes()
    recorder = RecordingModel(replies("one", "two"), target, chapter="v1_tool_loop", task="t")
    assert recorder.partial.parent == tmp_path and partials(tmp_path) == [recorder.partial]

    ask(recorder)
    # Flushed line by line: a process that dies now leaves a cassette that replays.
    header, entries = read_cassette(recorder.partial)
    assert header["provenance"] == "recorded" and len(entries) == 1
    assert target.read_bytes() == before  # the earlier recording is intact until the end
    ask(recorder, "again")

    assert recorder.close() is True
    assert partials(tmp_path) == []
    rows = lines_of(target)
    assert [row["reply"]["content"][0]["text"] for row in rows[1:]] == ["one", "two"]
    assert all("request" in row for row in rows[1:])
    assert recorder.close() is True  # closing twice is harmless


def test_a_recording_without_replies_leaves_the_cassette_as_it_was(tmp_path: Path) -> None:
    target = write_cassette(tmp_path / "run.jsonl", HEADER | {"provenance": "recorded"})
    before = target.read_bytes()
    recorder = RecordingModel(replies("unused"), target, chapter="v1_tool_loop", task=None)
    assert recorder.close() is False
    assert target.read_bytes() == before and partials(tmp_path) == []


def test_a_recording_is_saved_when_the_run_fails(tmp_path: Path) -> None:
    target = tmp_path / "run.jsonl"
    with (
        pytest.raises(CassetteError, match="has 1 reply and"),
        RecordingModel(replies("only"), target, chapter="v1_tool_loop", task="t") as recorder,
    ):
        ask(recorder)
        ask(recorder)  # the inner replay runs out
    assert len(lines_of(target)) == 2 and partials(tmp_path) == []


def test_a_lone_surrogate_from_a_model_is_recorded_and_replayed(tmp_path: Path) -> None:
    # JSON can carry "\ud800"; UTF-8 cannot, so the line keeps it as an escape.
    target = tmp_path / "run.jsonl"
    with RecordingModel(replies("half \ud800 pair"), target, chapter="v1", task="t") as recorder:
        ask(recorder, "and \udcff back")
    assert ask(ReplayModel(target)).content[0]["text"] == "half \ud800 pair"


def unwritable_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    if os.access(folder, os.W_OK):  # root writes anywhere, but not into sysfs
        return Path("/sys")
    return folder


@pytest.mark.parametrize(
    ("target", "words"),
    [
        (lambda tmp: tmp, "is a folder"),
        (lambda tmp: tmp / "notes.txt" / "run.jsonl", "notes.txt is a file, not a folder"),
        (lambda tmp: unwritable_folder(tmp) / "run.jsonl", "cannot record to"),
        (lambda tmp: tmp / "scripted.jsonl", "scripted"),
        (lambda tmp: tmp / "notes.txt", "not a cassette"),
    ],
    ids=["folder", "under a file", "unwritable", "scripted cassette", "other file"],
)
def test_recording_refuses_a_target_it_would_lose(tmp_path: Path, target: Any, words: str) -> None:
    (tmp_path / "notes.txt").write_text("my notes\n")
    write_cassette(tmp_path / "scripted.jsonl", HEADER, reply_line())
    before = {path: path.read_bytes() for path in tmp_path.iterdir() if path.is_file()}
    path = target(tmp_path)
    with pytest.raises(CassetteError, match=words) as caught:
        RecordingModel(replies("x"), path, chapter="v1_tool_loop", task="t")
    assert str(path) in str(caught.value)
    assert {path: path.read_bytes() for path in before} == before
    assert partials(tmp_path) == []


def test_recording_refuses_the_cassette_being_replayed(tmp_path: Path) -> None:
    played = write_cassette(
        tmp_path / "run.jsonl", HEADER | {"provenance": "recorded"}, reply_line()
    )
    before = played.read_bytes()
    (tmp_path / "sub").mkdir()
    same = tmp_path / "sub" / ".." / "run.jsonl"
    with pytest.raises(CassetteError, match="the cassette being replayed"):
        RecordingModel(ReplayModel(played), same, chapter="v1_tool_loop", task="t")
    assert played.read_bytes() == before and partials(tmp_path) == []


@pytest.mark.parametrize(
    "key, owner",
    [("summary-1", "the summary side call summary-1"), ("toolu_04", "the child of call toolu_04")],
)
def test_a_section_that_runs_out_names_whose_it_is(tmp_path: Path, key: str, owner: str) -> None:
    """Chapter 4's /compact on a cassette without a summary: a summary is not a child."""
    cassette = write_cassette(tmp_path / "c.jsonl", HEADER, reply_line())
    section = ReplayModel(cassette).child(key)
    with pytest.raises(CassetteError) as error:
        section.complete("system", [{"role": "user", "content": "hi"}])
    assert f"has 0 replies for {owner} and the run asked for reply 1" in str(error.value)


def test_a_child_key_used_again_gets_its_own_section_on_record_and_replay(
    tmp_path: Path,
) -> None:
    """A provider may reuse a call id once older turns were summarised away: the second
    child under that key records and replays a section of its own, not the first's."""

    class Live:  # a live model serves its children itself, as the SDK clients do
        name = "live-test"

        def __init__(self) -> None:
            self.texts = iter(["first child", "second child"])

        def complete(self, system, messages, tools=None, stop=None, max_tokens=4096) -> Reply:
            return Reply([{"type": "text", "text": next(self.texts)}], "end_turn", Usage(5, 1))

    target = tmp_path / "run.jsonl"
    hello = [{"role": "user", "content": "go"}]
    with RecordingModel(Live(), target, chapter="v3_subagents", task="t") as recorder:
        said = [recorder.child("call_0").complete("s", hello) for _ in range(2)]
    assert [r.content[0]["text"] for r in said] == ["first child", "second child"]
    rows = [json.loads(line) for line in target.read_text().splitlines()[1:]]
    assert [row["child"] for row in rows] == ["call_0", "call_0#2"]
    replay = ReplayModel(target)
    again = [replay.child("call_0").complete("s", hello).content[0]["text"] for _ in range(2)]
    assert again == ["first child", "second child"]


# --- what --strict compares when the tools run for real -----------------------------------

VARYING = """import random, tempfile
print(f"1 passed in {random.uniform(0.1, 9):.4f}s")
print("kept in", f"{tempfile.gettempdir()}/scratch-{random.randrange(10**9)}/out.txt")
"""
# A wrong answer to the rule: output that varies in what a strict replay must compare.
UNRULY = VARYING + "print('seed', random.randrange(10**9))\n"


def record_chapter_4(
    script: str, fake_provider: FakeProvider, anthropic_model: AnthropicModel, tmp_path: Path
) -> Path:
    """Chapter 4 live, through the fake provider, recorded: one command, then an answer."""
    workdir = tmp_path / "live"
    workdir.mkdir()
    (workdir / "report.py").write_text(script)
    command = f"{shlex.quote(sys.executable)} report.py"
    fake_provider.reply(anthropic_message(
        tool_use("toolu_1", "bash", {"command": command}), stop_reason="tool_use"
    ))  # fmt: skip
    fake_provider.reply(anthropic_message(text("The tests pass.")))
    cassette = tmp_path / "run.jsonl"
    with RecordingModel(anthropic_model, cassette, chapter="v4_memory", task=TASK) as recorder:
        assert chapter_4(TASK, model=recorder, workdir=workdir).stop == "done"
    return cassette


def replay_chapter_4(cassette: Path, tmp_path: Path, script: str) -> Any:
    workdir = tmp_path / "again"
    workdir.mkdir()
    (workdir / "report.py").write_text(script)
    return chapter_4(TASK, model=ReplayModel(cassette, strict=True), workdir=workdir)


TASK = "Run report.py and say what it reports."


def test_a_strict_replay_of_a_live_run_leaves_out_durations_and_temporary_paths(
    fake_provider: FakeProvider, anthropic_model: AnthropicModel, tmp_path: Path
) -> None:
    cassette = record_chapter_4(VARYING, fake_provider, anthropic_model, tmp_path)

    replayed = replay_chapter_4(cassette, tmp_path, VARYING)

    assert replayed.stop == "done", replayed.error
    outputs = [text_of(m["content"][0]["content"]) for m in replayed.messages[2:3]]
    assert "1 passed in " in outputs[0] and "/scratch-" in outputs[0]  # it really ran again
    assert len(fake_provider.requests) == 2  # the replay never reached the provider


def test_a_strict_replay_still_stops_where_other_output_differs_and_shows_the_rule(
    fake_provider: FakeProvider, anthropic_model: AnthropicModel, tmp_path: Path
) -> None:
    cassette = record_chapter_4(UNRULY, fake_provider, anthropic_model, tmp_path)

    replayed = replay_chapter_4(cassette, tmp_path, UNRULY)

    assert replayed.stop == "error"
    assert "turn 2" in replayed.error and "message 3 (user) differs" in replayed.error
    assert "with its temporary paths and durations left out: VARYING_OUTPUT" in replayed.error


@pytest.mark.parametrize(
    ("printed", "compared"),
    [
        ("===== 1 passed in 0.59s =====", "===== 1 passed in <duration> ====="),
        ("Ran 3 tests in 0.001s\nOK", "Ran 3 tests in <duration>\nOK"),
        ("rootdir: /tmp/v4-demo-2", "rootdir: <tmp>"),
        ('File "/tmp/lab-compare-1/one-bug-v1-1/stats.py", line 4', 'File "<tmp>", line 4'),
        ("took 12 ms, then 3 seconds", "took <duration>, then <duration>"),
        ("python3.12s and 2 files in v1s", "python3.12s and 2 files in v1s"),  # not durations
        ("stats.py:12: AssertionError: 3 != 2", "stats.py:12: AssertionError: 3 != 2"),
    ],
)
def test_what_varies_in_tool_output_is_named_by_one_rule(printed: str, compared: str) -> None:
    assert without_varying(printed) == compared
