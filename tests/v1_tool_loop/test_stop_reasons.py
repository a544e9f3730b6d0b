"""A reply cut off at max_tokens is a stop of its own, and an empty reply is never stored empty.

Both chapters run on scripted replies with the tools running for real; the command
line is run in-process on the same replies written as a cassette.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm import Reply
from llm.cassette import ReplayModel
from llm.cli import main
from llm.result import CUT_OFF
from llm.types import EMPTY_REPLY
from tests.v1_tool_loop.test_loop import assert_valid_history, text, tool
from v0_react_text import agent as v0
from v0_react_text.__main__ import CHAPTER as V0_CHAPTER
from v1_tool_loop import agent as v1
from v1_tool_loop.__main__ import CHAPTER as V1_CHAPTER

# A write_file call whose content was still being written when the limit struck.
HALF_WRITTEN = tool("t1", "write_file", path="big.py", content="def main():\n    pri")
V0_HALF_WRITTEN = (
    "Thought: I'll write the whole module at once.\nAction: write_file\n"
    'Action Input: {"path": "big.py", "content": "def main():\\n    pri'
)
V0_HALF_ANSWER = "Thought: I know it now.\nFinal Answer: The bug is in median, which"


def cassette(path: Path, replies: list[Reply], chapter: str) -> Path:
    header = {"format": "cassette/1", "provenance": "scripted", "chapter": chapter, "task": "t"}
    lines = [header, *({"reply": reply.to_dict()} for reply in replies)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


# --- chapter 1 ------------------------------------------------------------------------


def test_v1_a_call_cut_off_at_max_tokens_never_runs_and_is_answered(tmp_path: Path) -> None:
    model = ReplayModel([Reply([text("Writing it."), HALF_WRITTEN], "max_tokens")])
    result = v1.run("write big.py", model=model, workdir=tmp_path)

    assert result.stop == "max_tokens"
    assert result.answer == "" and result.turns == 1
    assert not (tmp_path / "big.py").exists()
    answer = result.messages[2]["content"][0]
    assert answer == {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": CUT_OFF,
        "is_error": True,
    }
    assert_valid_history(result.messages)
    assert result.messages[-1]["role"] == "assistant"


def test_v1_text_cut_off_at_max_tokens_is_not_done(tmp_path: Path) -> None:
    model = ReplayModel([Reply([text("The bug is in median, which")], "max_tokens")])
    result = v1.run("find the bug", model=model, workdir=tmp_path)
    assert result.stop == "max_tokens" and result.answer == ""
    assert result.messages[-1] == {
        "role": "assistant",
        "content": [text("The bug is in median, which")],
    }


def test_v1_the_conversation_goes_on_after_a_cut_off_reply(tmp_path: Path) -> None:
    first = v1.run(
        "write big.py",
        model=ReplayModel([Reply([HALF_WRITTEN], "max_tokens")]),
        workdir=tmp_path,
    )
    smaller = tool("t2", "write_file", path="big.py", content="def main():\n    pass\n")
    follow_up = v1.run(
        "write it in smaller parts",
        model=ReplayModel([Reply([smaller], "tool_use"), Reply([text("Written.")], "end_turn")]),
        workdir=tmp_path,
        history=first.messages,
    )
    assert follow_up.stop == "done"
    assert (tmp_path / "big.py").read_text() == "def main():\n    pass\n"
    assert_valid_history(follow_up.messages)


def test_v1_an_empty_reply_is_stored_as_a_text_block(tmp_path: Path) -> None:
    model = ReplayModel([Reply([], "end_turn"), Reply([text("Here now.")], "end_turn")])
    first = v1.run("hello?", model=model, workdir=tmp_path)
    assert first.messages[-1] == {"role": "assistant", "content": [text(EMPTY_REPLY)]}
    second = v1.run("again?", model=model, workdir=tmp_path, history=first.messages)
    assert all(message["content"] for message in second.messages)
    assert second.answer == "Here now."


def test_reply_keeps_tool_calls_and_drops_only_blank_text() -> None:
    call = tool("t1", "bash", command="ls")
    assert Reply([text("  \n"), call], "tool_use").content == [call]
    assert Reply([text("\n")], "end_turn").content == [text(EMPTY_REPLY)]
    assert Reply([text("ok")], "end_turn").content == [text("ok")]


def test_v1_cli_exits_1_and_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = cassette(tmp_path / "cut.jsonl", [Reply([HALF_WRITTEN], "max_tokens")], "v1_tool_loop")
    code = main(V1_CHAPTER, ["--model", f"replay:{path}", "--workdir", str(tmp_path), "write"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "── max_tokens: 1 turn, 1 tool call" in out
    assert "cut off at the token limit (max_tokens)" in err and "smaller steps" in err
    assert not (tmp_path / "big.py").exists()


# --- chapter 0 ------------------------------------------------------------------------


def test_v0_an_action_cut_off_at_max_tokens_never_runs(tmp_path: Path) -> None:
    model = ReplayModel([Reply([text(V0_HALF_WRITTEN)], "max_tokens")])
    result = v0.run("write big.py", model=model, workdir=tmp_path)
    assert result.stop == "max_tokens"
    assert result.format_errors == 0  # not blamed on the format: the text was cut short
    assert not (tmp_path / "big.py").exists()
    assert result.messages[-1] == {"role": "assistant", "content": V0_HALF_WRITTEN}
    assert_valid_history(result.messages)


def test_v0_a_final_answer_cut_off_at_max_tokens_is_not_an_answer(tmp_path: Path) -> None:
    model = ReplayModel([Reply([text(V0_HALF_ANSWER)], "max_tokens")])
    result = v0.run("find the bug", model=model, workdir=tmp_path)
    assert result.stop == "max_tokens"
    assert result.answer == ""


def test_v0_an_empty_reply_uses_the_shared_placeholder(tmp_path: Path) -> None:
    finish = "Thought: Done.\nFinal Answer: nothing to do"
    model = ReplayModel([Reply([], "end_turn"), Reply([text(finish)], "end_turn")])
    result = v0.run("hello?", model=model, workdir=tmp_path)
    assert result.messages[1] == {"role": "assistant", "content": EMPTY_REPLY}
    assert result.format_errors == 1 and result.stop == "done"


def test_v0_cli_exits_1_and_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replies = [Reply([text(V0_HALF_ANSWER)], "max_tokens")]
    path = cassette(tmp_path / "cut.jsonl", replies, "v0_react_text")
    code = main(V0_CHAPTER, ["--model", f"replay:{path}", "--workdir", str(tmp_path), "why?"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "── max_tokens: 1 turn" in out
    assert "cut off at the token limit (max_tokens)" in err
