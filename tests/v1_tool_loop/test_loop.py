"""The chapter 1 loop on scripted model replies, with the tools running for real."""

from __future__ import annotations

import time
from pathlib import Path

from llm.tokens import estimate_request
from tests.scripted import assert_valid_history, replay, text, tool
from v1_tool_loop.agent import SYSTEM, run
from v1_tool_loop.tools import TOOLS


def test_several_tool_calls_in_one_reply_then_an_answer(tmp_path: Path) -> None:
    (tmp_path / "hello.txt").write_text("hi there\n")
    model = replay(
        (
            [
                text("Two things at once."),
                tool("t1", "read_file", path="hello.txt"),
                tool("t2", "bash", command="echo from-bash"),
            ],
            "tool_use",
        ),
        ([text("The file says hi there.")], "end_turn"),
    )
    result = run("What does hello.txt say?", model=model, workdir=tmp_path)

    assert result.stop == "done"
    assert result.answer == "The file says hi there."
    assert result.turns == 2 and result.tool_calls == 2
    results = result.messages[2]["content"]
    assert [r["tool_use_id"] for r in results] == ["t1", "t2"]
    assert results[0]["content"] == "hi there" and results[1]["content"] == "from-bash"
    assert not any(r["is_error"] for r in results)
    # Scripted replies carry no usage of their own: it is estimated from each request sent.
    first, second = (estimate_request(SYSTEM, result.messages[:n], TOOLS) for n in (1, 3))
    assert result.context_tokens == [first, second]
    assert result.usage.estimated
    assert_valid_history(result.messages)


def test_a_tool_error_goes_back_to_the_model_and_the_loop_goes_on(tmp_path: Path) -> None:
    model = replay(
        ([tool("t1", "launch_rockets", count=3)], "tool_use"),
        ([tool("t2", "bash", command="exit 4")], "tool_use"),
        ([text("Neither worked.")], "end_turn"),
    )
    result = run("try things", model=model, workdir=tmp_path)
    assert result.stop == "done"
    first, second = result.messages[2]["content"][0], result.messages[4]["content"][0]
    assert first["is_error"] and "unknown tool 'launch_rockets'" in first["content"]
    assert second["is_error"] and "exit code 4" in second["content"]


def test_max_turns_stops_and_leaves_a_valid_history(tmp_path: Path) -> None:
    forever = ([tool("t", "bash", command="echo again")], "tool_use")
    result = run("loop", model=replay(forever, forever, forever), workdir=tmp_path, max_turns=2)
    assert result.stop == "max_turns"
    assert result.turns == 2 and result.answer == ""
    assert "stopped after 2 turns" in result.messages[-1]["content"]
    assert_valid_history(result.messages)


def test_a_cassette_that_runs_out_is_an_error_not_an_invented_reply(tmp_path: Path) -> None:
    model = replay(([tool("t1", "bash", command="echo one")], "tool_use"))
    result = run("go", model=model, workdir=tmp_path)
    assert result.stop == "error"
    assert "never invents" in result.error and "asked for reply 2" in result.error
    assert_valid_history(result.messages)


def test_ctrl_c_during_a_tool_answers_every_call_and_keeps_history(tmp_path: Path) -> None:
    # The command sends SIGINT to this very process (bash's parent), just as Ctrl-C in
    # a terminal would, while the loop is waiting for the tool.  The sleep outlasts the
    # signal's way to the loop on a busy machine; only the loop gets the signal, not the
    # sleep, which the loop stops (a terminal's Ctrl-C reaches both).  A file call comes
    # first, so that the call finished before the interrupt is one that no loop would
    # run side by side with the command (exercise 6 runs commands together).
    model = replay(
        (
            [
                tool("t1", "write_file", path="before.txt", content="before\n"),
                tool("t2", "bash", command="kill -INT $PPID; sleep 30"),
                tool("t3", "write_file", path="never.txt", content="x"),
            ],
            "tool_use",
        ),
    )
    started = time.monotonic()
    result = run("do three things", model=model, workdir=tmp_path)
    assert result.stop == "interrupted"
    assert time.monotonic() - started < 20  # the sleep was stopped, not waited for
    assert (tmp_path / "before.txt").exists() and not (tmp_path / "never.txt").exists()
    answers = result.messages[2]["content"]
    assert answers[0]["content"] == "wrote 1 line to before.txt" and not answers[0]["is_error"]
    assert [a["content"] for a in answers[1:]] == ["interrupted by the user"] * 2
    assert_valid_history(result.messages)

    # The conversation goes on from there, as in the interactive prompt.
    follow_up = run(
        "and now?",
        model=replay(([text("Stopped as asked.")], "end_turn")),
        workdir=tmp_path,
        history=result.messages,
    )
    assert follow_up.answer == "Stopped as asked."
    assert follow_up.messages[: len(result.messages)] == result.messages
    assert_valid_history(follow_up.messages)
