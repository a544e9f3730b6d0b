"""The token estimate, and the honesty of the figures a run reports.

The estimate's accuracy against a real tokenizer is measured by `python -m
lab.token_check` (it needs an extra package); these tests pin down its shape: one
token per CJK character, about four characters per token of English, denser code
and JSON, overheads per message, and a request that is the sum of its parts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm import Reply, Usage
from llm.cassette import ReplayModel
from llm.cli import main
from llm.tokens import (
    BLOCK_OVERHEAD,
    MESSAGE_OVERHEAD,
    TOOL_OVERHEAD,
    estimate_block,
    estimate_message,
    estimate_reply,
    estimate_request,
    estimate_text,
    estimate_tool,
)
from tests.v1_tool_loop.test_loop import text, tool
from v1_tool_loop import agent
from v1_tool_loop.__main__ import CHAPTER
from v1_tool_loop.tools import TOOLS

ENGLISH = (
    "A model keeps no state between calls. When you send the tenth message of a "
    "conversation, the provider does not remember the first nine: your program sends "
    "all ten again, and the model reads them from the start. What looks like memory "
    "is a list that the client keeps and sends on every call."
)
CHINESE = (
    "模型在两次调用之间不保存任何状态。当你发出一段对话的第十条消息时，服务商并不记得前九条："
    "你的程序会把十条全部重新发一遍，模型从头读起。所谓对话的记忆，其实是客户端自己保存、"
    "每次调用都重新发送的一个列表。"
)
CODE = """def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2 == 0:
        return (ordered[middle - 1] + ordered[middle]) / 2
    return ordered[middle]
"""


def test_empty_and_whitespace_cost_nothing() -> None:
    assert estimate_text("") == 0
    assert estimate_text("   ") == 0


def test_about_one_token_per_cjk_character() -> None:
    assert estimate_text("你好世界" * 50) == 200
    assert estimate_text("こんにちは") == 5 and estimate_text("안녕하세요") == 5
    assert estimate_text("，。：（）") == 5  # full-width punctuation too
    cjk = sum(1 for ch in CHINESE if not ch.isascii())
    assert cjk <= estimate_text(CHINESE) <= cjk * 1.1


def test_about_four_characters_per_token_of_english() -> None:
    assert 3.5 <= len(ENGLISH) / estimate_text(ENGLISH) <= 4.5


def test_code_and_json_are_denser_than_prose() -> None:
    prose = len(ENGLISH) / estimate_text(ENGLISH)
    assert len(CODE) / estimate_text(CODE) < prose
    schema = json.dumps(TOOLS[0])
    assert len(schema) / estimate_text(schema) < prose
    assert estimate_text("1234567890") > estimate_text("abcdefghij")


def test_a_chinese_text_costs_more_than_its_length_over_four() -> None:
    # The rule of thumb len/4 would count this paragraph as a quarter of what it is.
    assert estimate_text(CHINESE) > 3 * len(CHINESE) / 4


def test_messages_and_blocks_add_their_overhead() -> None:
    assert estimate_message({"role": "user", "content": "hi"}) == MESSAGE_OVERHEAD + 1
    call = tool("t1", "bash", command="python -m unittest")
    assert estimate_block(call) == (
        BLOCK_OVERHEAD + estimate_text("bash") + estimate_text('{"command": "python -m unittest"}')
    )
    message = {"role": "assistant", "content": [text("Running the tests."), call]}
    assert estimate_message(message) == MESSAGE_OVERHEAD + estimate_text(
        "Running the tests."
    ) + estimate_block(call)
    assert estimate_tool(TOOLS[0]) == TOOL_OVERHEAD + estimate_text(json.dumps(TOOLS[0]))


def test_tool_results_count_their_content_in_either_shape() -> None:
    output = "FAILED (failures=2)\n" * 20
    as_text = {"type": "tool_result", "tool_use_id": "t1", "content": output}
    as_blocks = {"type": "tool_result", "tool_use_id": "t1", "content": [text(output)]}
    assert (
        estimate_block(as_text)
        == estimate_block(as_blocks)
        == BLOCK_OVERHEAD + estimate_text(output)
    )


def test_tool_arguments_count_chinese_as_chinese() -> None:
    call = tool("t1", "write_file", path="笔记.md", content=CHINESE)
    assert estimate_block(call) >= estimate_text(CHINESE)


def test_a_request_is_its_fixed_part_plus_each_message_so_a_caller_can_cache() -> None:
    messages = [
        {"role": "user", "content": "Fix the tests."},
        {"role": "assistant", "content": [text("Looking."), tool("t1", "bash", command="ls")]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}]},
    ]
    before = json.dumps(messages)
    fixed = estimate_request(agent.SYSTEM, [], TOOLS)
    assert estimate_request(agent.SYSTEM, messages, TOOLS) == fixed + sum(
        estimate_message(m) for m in messages
    )
    assert json.dumps(messages) == before  # pure: nothing was changed
    assert fixed > estimate_request(agent.SYSTEM, [], None)  # the schemas are read too


def test_a_reply_counts_its_blocks() -> None:
    call = tool("t1", "read_file", path="stats.py")
    reply = Reply([text("Reading."), call], "tool_use")
    assert estimate_reply(reply) == estimate_text("Reading.") + estimate_block(call)


def test_a_sum_of_usages_is_estimated_if_any_part_is() -> None:
    assert not (Usage(10, 1) + Usage(20, 2)).estimated
    total = Usage(10, 1) + Usage(20, 2, estimated=True) + Usage(5, 5)
    assert total == Usage(35, 8, estimated=True)


def test_a_reply_keeps_the_estimated_mark_through_a_cassette_line() -> None:
    measured = Reply([text("ok")], "end_turn", Usage(12, 3))
    assert "estimated" not in measured.to_dict()["usage"]
    guessed = Reply([text("ok")], "end_turn", Usage(12, 3, estimated=True))
    assert Reply.from_dict(json.loads(json.dumps(guessed.to_dict()))) == guessed


def write_cassette(path: Path, provenance: str, replies: list[dict]) -> Path:
    header = {"format": "cassette/1", "provenance": provenance, "chapter": "v1_tool_loop"}
    lines = [json.dumps(header), *(json.dumps({"reply": reply}) for reply in replies)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


BIG_OUTPUT = "python -c \"print('line of output ' * 2000)\""
REPLIES = [
    {
        "content": [tool("t1", "bash", command=BIG_OUTPUT)],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 812, "output_tokens": 41},
    },
    {
        "content": [text("It printed a lot.")],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1290, "output_tokens": 12},
    },
]


def test_a_scripted_cassette_reports_estimates_of_what_was_really_sent(tmp_path: Path) -> None:
    cassette = write_cassette(tmp_path / "scripted.jsonl", "scripted", REPLIES)
    result = agent.run("Print a lot.", model=ReplayModel(cassette), workdir=tmp_path)

    assert result.stop == "done" and result.usage.estimated
    requests = [result.messages[:1], result.messages[:3]]
    assert result.context_tokens == [estimate_request(agent.SYSTEM, m, TOOLS) for m in requests]
    # The real tool output is in the second request, and so in its estimate.
    tool_output = result.messages[2]["content"][0]["content"]
    assert result.context_tokens[1] - result.context_tokens[0] > estimate_text(tool_output)
    replies = [Reply.from_dict(reply) for reply in REPLIES]
    assert [u.output_tokens for u in result.turn_usage] == [estimate_reply(r) for r in replies]


def test_a_recorded_cassette_keeps_the_providers_figures(tmp_path: Path) -> None:
    cassette = write_cassette(tmp_path / "recorded.jsonl", "recorded", REPLIES)
    result = agent.run("Print a lot.", model=ReplayModel(cassette), workdir=tmp_path)
    assert result.turn_usage == [Usage(812, 41), Usage(1290, 12)]
    assert not result.usage.estimated


def summary_line(cassette: Path, workdir: Path, capsys: pytest.CaptureFixture[str]) -> str:
    code = main(CHAPTER, ["--model", f"replay:{cassette}", "--workdir", str(workdir), "go"])
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("──")]
    assert code == 0 and len(lines) == 1
    return lines[0]


def test_the_summary_line_gives_measured_figures_as_they_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = write_cassette(tmp_path / "run.jsonl", "recorded", REPLIES)
    line = summary_line(cassette, tmp_path, capsys)
    assert line == "── done: 2 turns, 1 tool call, 2,102 tokens in, 53 out"


def test_the_summary_line_marks_estimated_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = write_cassette(tmp_path / "run.jsonl", "scripted", REPLIES)
    line = summary_line(cassette, tmp_path, capsys)
    assert line.startswith("── done: 2 turns, 1 tool call, ≈")
    assert line.endswith(" out (estimated)") and "2,102" not in line
