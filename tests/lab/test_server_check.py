"""`python -m lab.server_check`: what a server lets through, judged from its token counts.

The server is the fake provider on 127.0.0.1, answering with the counts a real server
reported for each setting; the requests are checked to be shaped as chapter 1 sends them.
"""

from __future__ import annotations

import json

from lab import server_check
from tests.fake_provider import FakeProvider, openai_completion, openai_tool_call


def answer(server: FakeProvider, counts: list[int], last: dict) -> None:
    """Four replies counting `counts` prompt tokens, then `last` for the question."""
    for prompt in counts:
        server.reply(openai_completion("…", usage=(prompt, 5)))
    server.reply(last)


def test_a_server_that_lets_everything_through(fake_provider, tmp_path, capsys):
    answer(fake_provider, [33, 1040, 1060, 2100], openai_completion("4", usage=(1050, 1)))
    target = tmp_path / "check.json"
    url = fake_provider.url + "/v1"
    assert server_check.main(["--model", "m", "--base-url", url, "--json", str(target)]) == 0
    out = capsys.readouterr().out
    assert "tools: arrive: 33 tokens in without them, 1040 with them" in out
    assert 'results: arrive: 1060 tokens in with the result "ok", 2100 with a 60-line result' in out
    assert 'text: arrives: "4"' in out
    kept = json.loads(target.read_text(encoding="utf-8"))
    assert [probe["prompt_tokens"] for probe in kept["probes"]] == [33, 1040, 1060, 2100, 1050]
    first, tooled, short, long, question = (request.body for request in fake_provider.requests)
    assert "tools" not in first and tooled["tool_choice"] == "auto"
    assert [tool["function"]["name"] for tool in tooled["tools"]][0] == "bash"
    assert short["messages"][-1] == {"role": "tool", "tool_call_id": "call_0", "content": "ok"}
    assert long["messages"][-1]["content"].count("\n") == 59  # sixty lines
    assert question["messages"][-1]["content"] == server_check.QUESTION


def test_a_server_that_drops_results_and_blanks_text_is_caught(fake_provider, capsys):
    """As llama-cpp-python's chatml-function-calling format does: tools arrive, results
    do not (the same count whatever the result), and the answer is a call's start."""
    blank = openai_completion(None, [openai_tool_call("c", "bash", "")], usage=(300, 2))
    answer(fake_provider, [33, 240, 247, 247], blank)
    assert server_check.main(["--model", "m", "--base-url", fake_provider.url + "/v1"]) == 0
    out = capsys.readouterr().out
    assert "tools: arrive" in out
    assert "results: dropped: 247 tokens in" in out
    assert "text: no answer" in out and "bash" in out


def test_a_reply_that_is_only_a_calls_start_is_no_answer(fake_provider, capsys):
    """What llama-cpp-python's chatml-function-calling format sent for "What is 2 + 2?"."""
    answer(fake_provider, [107, 522, 554, 554], openai_completion("functions.write_file:"))
    assert server_check.main(["--model", "m", "--base-url", fake_provider.url + "/v1"]) == 0
    assert (
        'text: no answer: "functions.write_file:", the start of a call' in capsys.readouterr().out
    )


def test_a_server_that_drops_the_tools_is_caught(fake_provider, capsys):
    answer(fake_provider, [106, 106, 120, 700], openai_completion("4", usage=(110, 1)))
    assert server_check.main(["--model", "m", "--base-url", fake_provider.url + "/v1"]) == 0
    assert "tools: dropped: 106 tokens in without them, 106 with them" in capsys.readouterr().out
