"""The provider adapters, driven through the real SDKs against a fake provider on 127.0.0.1.

What is checked is the translation both ways: what our adapters make of the
provider's JSON (blocks, stop reasons, usage, errors) and what they put on the wire
(system prompt, tools, stop sequences, token limits, tool history).  Only the HTTP
is fake; the SDKs parse, retry and raise for real.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import llm
from llm import Reply, RunResult, Usage
from llm.anthropic_model import AnthropicModel
from llm.cassette import ReplayModel, read_cassette
from llm.openai_model import OpenAIModel, lacks_version
from llm.provider_http import DEFAULT_RETRIES, HOSTED_TIMEOUT, LOCAL_TIMEOUT, is_local
from llm.recording import RecordingModel
from tests.fake_provider import (
    NO_RETRY,
    FakeProvider,
    Received,
    anthropic_error,
    anthropic_message,
    closed_port_url,
    openai_completion,
    openai_error,
    openai_tool_call,
    text,
    tool_use,
)
from v1_tool_loop import agent
from v1_tool_loop.tools import TOOLS

REPO = Path(__file__).resolve().parent.parent
PROVIDERS = ["anthropic", "openai"]
HELLO = [{"role": "user", "content": "hello"}]

READ_FILE_TOOL = {
    "name": "read_file",
    "description": "Read a text file.",
    "input_schema": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}

# A conversation after two tool rounds, in the canonical (Anthropic) shape: text and two
# calls, their results (one failed) plus a user remark, then a call with no text whose
# result is a list of text blocks.
TOOL_HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "Fix the failing test."},
    {
        "role": "assistant",
        "content": [
            text("Two things to check."),
            tool_use("toolu_01", "bash", {"command": "pytest -q"}),
            tool_use("toolu_02", "read_file", {"path": "missing.py"}),
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": "1 failed"},
            {
                "type": "tool_result",
                "tool_use_id": "toolu_02",
                "content": "no file 'missing.py'",
                "is_error": True,
            },
            text("Keep the style of the file."),
        ],
    },
    {"role": "assistant", "content": [tool_use("toolu_03", "read_file", {"path": "a.py"})]},
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_03",
                "content": [text("line 1"), text("line 2")],
            }
        ],
    },
]


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    """Runs a test once per adapter."""
    return request.param


@pytest.fixture
def model(provider: str, request: pytest.FixtureRequest) -> AnthropicModel | OpenAIModel:
    """The adapter for `provider`, pointed at the fake server (see conftest)."""
    return request.getfixturevalue(f"{provider}_model")


def key_sent(request: Received) -> str:
    """The API key as the SDK sent it: `x-api-key` or a bearer token, depending on the SDK."""
    bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
    return request.headers.get("x-api-key") or bearer


def with_decoded_arguments(chat: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat messages with each tool call's JSON arguments parsed, so spacing does not matter."""
    decoded = json.loads(json.dumps(chat))
    for message in decoded:
        for call in message.get("tool_calls") or []:
            call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    return decoded


# --- Anthropic: replies and requests -----------------------------------------------------


def test_anthropic_text_reply_is_translated(
    fake_provider: FakeProvider, anthropic_model: AnthropicModel
) -> None:
    fake_provider.reply(anthropic_message(text("Hello there."), input_tokens=31, output_tokens=4))

    reply = anthropic_model.complete("Be brief.", HELLO)

    assert reply == Reply([text("Hello there.")], "end_turn", Usage(31, 4))
    (request,) = fake_provider.requests
    assert request.path == "/v1/messages"
    assert key_sent(request) == "sk-ant-test"
    assert "anthropic-version" in request.headers
    # The system prompt is a top-level field, and nothing optional is sent when unused.
    assert request.body == {
        "model": "claude-test",
        "system": "Be brief.",
        "messages": HELLO,
        "max_tokens": 4096,
    }


def test_anthropic_text_and_several_tool_uses_keep_ids_names_inputs(
    fake_provider: FakeProvider, anthropic_model: AnthropicModel
) -> None:
    blocks = [
        text("I'll look around first."),
        tool_use("toolu_01", "bash", {"command": "ls -la"}),
        tool_use("toolu_02", "read_file", {"path": "src/app.py", "offset": 3}),
    ]
    fake_provider.reply(anthropic_message(*blocks, stop_reason="tool_use"))

    reply = anthropic_model.complete("sys", HELLO, tools=TOOLS)

    assert reply.content == blocks
    assert reply.stop_reason == "tool_use"


def test_anthropic_request_carries_tools_stop_sequences_and_history_unchanged(
    fake_provider: FakeProvider, anthropic_model: AnthropicModel
) -> None:
    fake_provider.reply(anthropic_message(text("Done.")))

    anthropic_model.complete(
        "You are terse.",
        TOOL_HISTORY,
        tools=[READ_FILE_TOOL],
        stop=["Observation:"],
        max_tokens=321,
    )

    body = fake_provider.requests[0].body
    assert body["system"] == "You are terse."
    assert body["tools"] == [READ_FILE_TOOL]
    assert body["stop_sequences"] == ["Observation:"]
    assert "stop" not in body
    assert body["max_tokens"] == 321
    # Our canonical shape is Anthropic's, so the conversation goes out as is.
    assert body["messages"] == TOOL_HISTORY


@pytest.mark.parametrize("stop_reason", ["stop_sequence", "max_tokens", "end_turn"])
def test_anthropic_stop_reasons_are_kept(
    fake_provider: FakeProvider, anthropic_model: AnthropicModel, stop_reason: str
) -> None:
    stop_sequence = "Observation:" if stop_reason == "stop_sequence" else None
    fake_provider.reply(
        anthropic_message(
            text("Thought: list the files\nAction: bash"),
            stop_reason=stop_reason,
            stop_sequence=stop_sequence,
        )
    )

    reply = anthropic_model.complete("sys", HELLO, stop=["Observation:"])

    assert reply.stop_reason == stop_reason


def test_anthropic_context_window_stop_reason_becomes_max_tokens(
    fake_provider: FakeProvider, anthropic_model: AnthropicModel
) -> None:
    fake_provider.reply(
        anthropic_message(text("The answer is cut"), stop_reason="model_context_window_exceeded")
    )

    reply = anthropic_model.complete("sys", HELLO)

    assert reply.stop_reason == "max_tokens"


# --- OpenAI: replies and requests --------------------------------------------------------


def test_openai_text_reply_is_translated(
    fake_provider: FakeProvider, openai_model: OpenAIModel
) -> None:
    fake_provider.reply(openai_completion("Hello there.", usage=(31, 4)))

    reply = openai_model.complete("Be brief.", HELLO)

    assert reply == Reply([text("Hello there.")], "end_turn", Usage(31, 4))
    (request,) = fake_provider.requests
    assert request.path == "/v1/chat/completions"
    assert key_sent(request) == "sk-test"
    # The system prompt becomes the first message; a custom base_url gets max_tokens.
    assert request.body == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hello"},
        ],
        "max_tokens": 4096,
    }


def test_openai_several_tool_calls_become_tool_use_blocks(
    fake_provider: FakeProvider, openai_model: OpenAIModel
) -> None:
    calls = [
        openai_tool_call("call_a1", "bash", {"command": "ls -la"}),
        openai_tool_call("call_b2", "write_file", {"path": "x.txt", "content": "hi\n"}),
    ]
    fake_provider.reply(openai_completion(None, calls, finish_reason="tool_calls"))

    reply = openai_model.complete("sys", HELLO, tools=TOOLS)

    assert reply.content == [
        tool_use("call_a1", "bash", {"command": "ls -la"}),
        tool_use("call_b2", "write_file", {"path": "x.txt", "content": "hi\n"}),
    ]
    assert reply.stop_reason == "tool_use"


def test_openai_text_and_tool_call_keep_their_order(
    fake_provider: FakeProvider, openai_model: OpenAIModel
) -> None:
    call = openai_tool_call("call_x", "read_file", {"path": "README.md"})
    fake_provider.reply(openai_completion("Let me read it.", [call], finish_reason="tool_calls"))

    reply = openai_model.complete("sys", HELLO, tools=TOOLS)

    assert reply.content == [
        text("Let me read it."),
        tool_use("call_x", "read_file", {"path": "README.md"}),
    ]


def test_openai_request_translates_tools_stop_and_tool_history(
    fake_provider: FakeProvider, openai_model: OpenAIModel
) -> None:
    fake_provider.reply(openai_completion("Done."))

    openai_model.complete(
        "You are terse.",
        TOOL_HISTORY,
        tools=[READ_FILE_TOOL],
        stop=["Observation:"],
        max_tokens=321,
    )

    body = fake_provider.requests[0].body
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a text file.",
                "parameters": READ_FILE_TOOL["input_schema"],
            },
        }
    ]
    assert body["tool_choice"] == "auto"  # some servers drop tools unless it is said
    assert body["stop"] == ["Observation:"]
    assert "stop_sequences" not in body
    assert body["max_tokens"] == 321
    assert "max_completion_tokens" not in body
    # Calls ride on the assistant message; each result is its own `tool` message right
    # after it, errors marked in the text; the user's own words come after the results.
    assert with_decoded_arguments(body["messages"]) == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Fix the failing test."},
        {
            "role": "assistant",
            "content": "Two things to check.",
            "tool_calls": [
                {
                    "id": "toolu_01",
                    "type": "function",
                    "function": {"name": "bash", "arguments": {"command": "pytest -q"}},
                },
                {
                    "id": "toolu_02",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": {"path": "missing.py"}},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_01", "content": "1 failed"},
        {"role": "tool", "tool_call_id": "toolu_02", "content": "Error: no file 'missing.py'"},
        {"role": "user", "content": "Keep the style of the file."},
        {
            "role": "assistant",
            "content": "",  # not null, which llama-cpp-python's server refuses
            "tool_calls": [
                {
                    "id": "toolu_03",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": {"path": "a.py"}},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_03", "content": "line 1\nline 2"},
    ]


@pytest.mark.parametrize(
    ("finish_reason", "with_call", "expected"),
    [
        ("stop", False, "end_turn"),
        ("length", False, "max_tokens"),
        # Cut off while writing a call: the call may be half written, and must not run.
        ("length", True, "max_tokens"),
        ("tool_calls", True, "tool_use"),
        # Some local servers say "stop" while calling tools; the calls decide.
        ("stop", True, "tool_use"),
        # And "tool_calls" without any call leaves nothing to run: the turn has ended.
        ("tool_calls", False, "end_turn"),
    ],
)
def test_openai_finish_reason_is_mapped(
    fake_provider: FakeProvider,
    openai_model: OpenAIModel,
    finish_reason: str,
    with_call: bool,
    expected: str,
) -> None:
    calls = [openai_tool_call("call_1", "bash", {"command": "ls"})] if with_call else None
    fake_provider.reply(openai_completion("Working.", calls, finish_reason=finish_reason))

    reply = openai_model.complete("sys", HELLO, tools=TOOLS)

    assert reply.stop_reason == expected


DEEP = '{"a": ' * 100_000 + "1" + "}" * 100_000  # a hostile server's arguments


def test_openai_bad_arguments_missing_ids_and_missing_usage_do_not_crash(
    fake_provider: FakeProvider, openai_model: OpenAIModel
) -> None:
    calls = [
        openai_tool_call("call_abc", "bash", '{"command": "ls"'),  # cut off mid-object
        openai_tool_call(None, "read_file", '["a.py"]'),  # valid JSON, but not an object
        openai_tool_call("call_deep", "bash", DEEP),  # valid JSON, deeper than Python's stack
    ]
    fake_provider.reply(openai_completion(None, calls, finish_reason="tool_calls", usage=None))

    reply = openai_model.complete("sys", HELLO, tools=TOOLS)

    assert reply.content == [
        tool_use("call_abc", "bash", {"_invalid_json": '{"command": "ls"'}),
        tool_use("call_0", "read_file", {"_invalid_json": '["a.py"]'}),
        tool_use("call_deep", "bash", {"_invalid_json": DEEP}),
    ]
    assert reply.usage == Usage(0, 0)


def test_openai_official_endpoint_sends_max_completion_tokens(fake_provider: FakeProvider) -> None:
    model = OpenAIModel("gpt-test", api_key="sk-test")
    assert model.base_url is None  # i.e. api.openai.com
    # Redirect the SDK's HTTP (not our adapter) so the official branch hits the fake server.
    model._client.base_url = fake_provider.url + "/v1"
    fake_provider.reply(openai_completion("ok"))

    model.complete("sys", HELLO, max_tokens=77)

    body = fake_provider.requests[0].body
    assert body["max_completion_tokens"] == 77
    assert "max_tokens" not in body


def test_openai_local_server_from_env_needs_no_key(
    fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_provider.url + "/v1")
    fake_provider.reply(openai_completion("hi from llama"))

    reply = OpenAIModel("llama3.2").complete("sys", HELLO)

    assert llm.result.text_of(reply.content) == "hi from llama"
    request = fake_provider.requests[0]
    assert request.body["model"] == "llama3.2"
    assert request.body["max_tokens"] == 4096
    assert key_sent(request) == "not-needed"


# --- errors, for both adapters ------------------------------------------------------------

KEY_VARIABLE = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
MODEL_NAME = {"anthropic": "claude-test", "openai": "gpt-test"}

# Realistic error bodies, by provider and case.
ERROR_BODIES: dict[str, dict[str, dict[str, Any]]] = {
    "anthropic": {
        "auth": anthropic_error("authentication_error", "invalid x-api-key"),
        "not_found": anthropic_error("not_found_error", "model: claude-test"),
        "rate": anthropic_error("rate_limit_error", "Too many requests: slow down"),
        "server": anthropic_error("api_error", "Internal server error"),
        "too_long": anthropic_error(
            "invalid_request_error", "prompt is too long: 215031 tokens > 200000 maximum"
        ),
        "bad": anthropic_error("invalid_request_error", "tools.0.name: invalid pattern"),
    },
    "openai": {
        "auth": openai_error(
            "Incorrect API key provided: sk-test.", "invalid_request_error", "invalid_api_key"
        ),
        "not_found": openai_error(
            "The model `gpt-test` does not exist or you do not have access to it.",
            "invalid_request_error",
            "model_not_found",
        ),
        "rate": openai_error("Rate limit reached for gpt-test.", "requests", "rate_limit_exceeded"),
        "server": openai_error("The server had an error processing your request.", "server_error"),
        "too_long": openai_error(
            "This model's maximum context length is 128000 tokens. However, your messages "
            "resulted in 131072 tokens.",
            "invalid_request_error",
            "context_length_exceeded",
        ),
        "bad": openai_error("Invalid 'tools[0].function.name'.", "invalid_request_error"),
    },
}


def ok_body(provider: str) -> dict[str, Any]:
    """A plain successful reply saying "ok", in the provider's format."""
    if provider == "anthropic":
        return anthropic_message(text("ok"))
    return openai_completion("ok")


def test_401_is_authentication_failed_naming_the_key_variable(
    provider: str, model: Any, fake_provider: FakeProvider
) -> None:
    fake_provider.fail(401, ERROR_BODIES[provider]["auth"])

    with pytest.raises(llm.AuthenticationFailed, match=KEY_VARIABLE[provider]):
        model.complete("sys", HELLO)
    assert len(fake_provider.requests) == 1  # a wrong key is not retried


def test_404_is_model_not_found_naming_the_model(
    provider: str, model: Any, fake_provider: FakeProvider
) -> None:
    fake_provider.fail(404, ERROR_BODIES[provider]["not_found"])

    with pytest.raises(llm.ModelNotFound, match=f"'{MODEL_NAME[provider]}'"):
        model.complete("sys", HELLO)
    assert len(fake_provider.requests) == 1


@pytest.mark.parametrize(("status", "case"), [(429, "rate"), (500, "server")])
def test_one_retryable_error_then_success(
    provider: str, model: Any, fake_provider: FakeProvider, status: int, case: str
) -> None:
    fake_provider.fail(status, ERROR_BODIES[provider][case])
    fake_provider.reply(ok_body(provider))

    reply = model.complete("sys", HELLO)

    assert reply.content == [text("ok")]
    first, second = fake_provider.requests
    assert first.body == second.body
    # The SDK counts its attempts in a header: the second request is its first retry.
    retry_counts = [request.headers["x-stainless-retry-count"] for request in (first, second)]
    assert retry_counts == ["0", "1"]


def adapter(provider: str, base_url: str) -> Any:
    """A fresh adapter for `base_url`, built after a test has set AGENT_TIMEOUT or AGENT_RETRIES."""
    if provider == "anthropic":
        return AnthropicModel("claude-test", api_key="sk-ant-test", base_url=base_url)
    return OpenAIModel("gpt-test", api_key="sk-test", base_url=base_url + "/v1")


def test_429_every_time_is_rate_limited_after_the_attempts_really_made(
    provider: str, fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_RETRIES", "2")
    model = adapter(provider, fake_provider.url)
    for _ in range(3):
        fake_provider.fail(429, ERROR_BODIES[provider]["rate"])

    with pytest.raises(llm.RateLimited, match="after 3 attempts.*Wait a minute"):
        model.complete("sys", HELLO)
    assert len(fake_provider.requests) == 3
    assert fake_provider.pending == 0


def test_the_default_retry_count_applies(
    provider: str, model: Any, fake_provider: FakeProvider
) -> None:
    for _ in range(DEFAULT_RETRIES + 1):
        fake_provider.fail(429, ERROR_BODIES[provider]["rate"])

    with pytest.raises(llm.RateLimited, match=f"after {DEFAULT_RETRIES + 1} attempts"):
        model.complete("sys", HELLO)
    assert len(fake_provider.requests) == DEFAULT_RETRIES + 1


def test_the_count_is_of_requests_sent_not_of_retries_allowed(
    provider: str, fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_RETRIES", "4")
    model = adapter(provider, fake_provider.url)
    fake_provider.fail(429, ERROR_BODIES[provider]["rate"])
    # The server tells the SDK not to retry again, so only 2 of the 5 allowed are made.
    fake_provider.fail(429, ERROR_BODIES[provider]["rate"], NO_RETRY)

    with pytest.raises(llm.RateLimited, match="after 2 attempts"):
        model.complete("sys", HELLO)
    assert len(fake_provider.requests) == 2


def test_an_error_that_is_not_retried_says_one_attempt(
    provider: str, model: Any, fake_provider: FakeProvider
) -> None:
    fake_provider.fail(503, ERROR_BODIES[provider]["server"], NO_RETRY)

    with pytest.raises(llm.ProviderUnavailable, match="after 1 attempt[^s]"):
        model.complete("sys", HELLO)
    assert len(fake_provider.requests) == 1


def test_5xx_every_time_is_provider_unavailable(
    provider: str, fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_RETRIES", "2")
    model = adapter(provider, fake_provider.url)
    for _ in range(3):
        fake_provider.fail(503, ERROR_BODIES[provider]["server"])

    with pytest.raises(llm.ProviderUnavailable, match="127.0.0.1.*after 3 attempts"):
        model.complete("sys", HELLO)
    assert len(fake_provider.requests) == 3


def test_anthropic_overloaded_529_is_retried_like_a_5xx(
    fake_provider: FakeProvider, anthropic_model: AnthropicModel
) -> None:
    fake_provider.fail(529, anthropic_error("overloaded_error", "Overloaded"))
    fake_provider.reply(anthropic_message(text("ok")))

    assert anthropic_model.complete("sys", HELLO).content == [text("ok")]
    assert len(fake_provider.requests) == 2


def test_context_overflow_is_context_too_long(
    provider: str, model: Any, fake_provider: FakeProvider
) -> None:
    fake_provider.fail(400, ERROR_BODIES[provider]["too_long"])

    with pytest.raises(llm.ContextTooLong, match="context window"):
        model.complete("sys", HELLO)
    assert len(fake_provider.requests) == 1


def test_openai_llama_cpp_context_overflow_is_context_too_long(
    fake_provider: FakeProvider, openai_model: OpenAIModel
) -> None:
    # llama.cpp server's own body, with its numeric code and extra fields.
    fake_provider.fail(
        400,
        {
            "error": {
                "code": 400,
                "message": "request (9412 tokens) exceeds the available context size "
                "(8192 tokens), try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 9412,
                "n_ctx": 8192,
            }
        },
    )

    with pytest.raises(llm.ContextTooLong):
        openai_model.complete("sys", HELLO)


def test_other_bad_request_is_a_plain_model_error_with_the_detail(
    provider: str, model: Any, fake_provider: FakeProvider
) -> None:
    fake_provider.fail(400, ERROR_BODIES[provider]["bad"])

    with pytest.raises(llm.ModelError, match="tools") as caught:
        model.complete("sys", HELLO)
    assert type(caught.value) is llm.ModelError


@pytest.fixture
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shrink the SDKs' own backoff for errors that carry no retry-after header.

    A refused connection has no response, so nothing can ask for a short wait: the
    SDKs sleep 0.5 + 1 + 2 + 4 s (less up to 25 % jitter), 6-7 s per call.  The delay
    constant belongs to the SDK, not to us, so the retry count stays real.  The SDKs are
    imported here, not at the top: every pytest-xdist worker imports every test file, and
    the two SDKs take seconds to import.
    """
    import anthropic._base_client
    import openai._base_client

    monkeypatch.setattr(anthropic._base_client, "INITIAL_RETRY_DELAY", 0.001)
    monkeypatch.setattr(openai._base_client, "INITIAL_RETRY_DELAY", 0.001)


@pytest.mark.usefixtures("fast_backoff")
def test_connection_refused_is_provider_unavailable(provider: str) -> None:
    url = closed_port_url()

    with pytest.raises(llm.ProviderUnavailable, match=url.replace(".", r"\.")) as caught:
        adapter(provider, url).complete("sys", HELLO)
    assert f"after {DEFAULT_RETRIES + 1} attempts" in str(caught.value)


# --- timeouts and retries: AGENT_TIMEOUT, AGENT_RETRIES -----------------------------------


@pytest.mark.usefixtures("fast_backoff")
def test_a_server_that_never_answers_fails_after_the_set_timeout_and_attempts(
    provider: str, fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_TIMEOUT", "0.2")
    monkeypatch.setenv("AGENT_RETRIES", "1")
    model = adapter(provider, fake_provider.url)
    fake_provider.never_answer(times=2)

    started = time.monotonic()
    with pytest.raises(llm.ProviderUnavailable) as caught:
        model.complete("sys", HELLO)

    # Not the SDKs' own 600 s: the set timeout was used (a bound, not a speed test).
    assert time.monotonic() - started < 120
    message = str(caught.value)
    assert "0.2 s (AGENT_TIMEOUT)" in message
    assert "2 attempts" in message
    assert len(fake_provider.requests) == 2
    assert fake_provider.requests[0].body == fake_provider.requests[1].body


@pytest.mark.usefixtures("fast_backoff")
def test_no_retries_means_one_request(
    provider: str, fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_TIMEOUT", "0.2")
    monkeypatch.setenv("AGENT_RETRIES", "0")
    model = adapter(provider, fake_provider.url)
    fake_provider.never_answer()

    with pytest.raises(llm.ProviderUnavailable, match="1 attempt[^s]"):
        model.complete("sys", HELLO)
    assert len(fake_provider.requests) == 1


@pytest.mark.parametrize(
    ("base_url", "local"),
    [
        (None, False),  # the provider's own API
        ("https://api.deepseek.com/v1", False),
        ("https://8.8.8.8/v1", False),
        ("http://localhost:11434/v1", True),
        ("http://127.0.0.1:8080/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://192.168.1.20:1234/v1", True),
        ("http://10.0.0.5:8000/v1", True),
        ("http://ollama:11434/v1", True),  # a name without a dot: a Docker service, say
    ],
)
def test_local_servers_are_told_from_hosted_ones(base_url: str | None, local: bool) -> None:
    assert is_local(base_url) is local


def test_local_servers_get_the_longer_default_timeout(provider: str) -> None:
    hosted = adapter(provider, "https://llm.example.com")
    local = adapter(provider, "http://localhost:11434")

    assert hosted._client.timeout == HOSTED_TIMEOUT
    assert local._client.timeout == LOCAL_TIMEOUT
    assert HOSTED_TIMEOUT * (DEFAULT_RETRIES + 1) <= 125  # a dead hosted API fails in ~2 min
    assert LOCAL_TIMEOUT > HOSTED_TIMEOUT


def test_settings_from_the_environment_reach_the_sdk(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_TIMEOUT", "12.5")
    monkeypatch.setenv("AGENT_RETRIES", "3")

    model = adapter(provider, "http://localhost:11434")

    assert (model._client.timeout, model._client.max_retries) == (12.5, 3)


def test_an_empty_setting_counts_as_unset(provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TIMEOUT", "")  # as `AGENT_TIMEOUT=` in a .env file leaves it
    monkeypatch.setenv("AGENT_RETRIES", " ")

    model = adapter(provider, "https://llm.example.com")

    assert (model._client.timeout, model._client.max_retries) == (HOSTED_TIMEOUT, DEFAULT_RETRIES)


@pytest.mark.parametrize(
    ("doc", "timeouts", "retries"),
    [
        ("README.md", "(default {hosted:g}; {local:g} for", "(default {retries})"),
        (".env.example", "(default {hosted:g}; {local:g} for", "(default {retries})"),
        (
            "llm/README.md",
            "`HOSTED_TIMEOUT = {hosted:g}`, or `LOCAL_TIMEOUT = {local:g}`",
            "= {retries}`",
        ),
    ],
)
def test_the_documented_defaults_are_the_code_s(doc: str, timeouts: str, retries: str) -> None:
    text = " ".join((REPO / doc).read_text(encoding="utf-8").split())
    figures = {"hosted": HOSTED_TIMEOUT, "local": LOCAL_TIMEOUT, "retries": DEFAULT_RETRIES}

    assert timeouts.format(**figures) in text
    assert retries.format(**figures) in text


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("AGENT_TIMEOUT", "soon"),
        ("AGENT_TIMEOUT", "-5"),
        ("AGENT_TIMEOUT", "0"),
        ("AGENT_TIMEOUT", "nan"),
        ("AGENT_RETRIES", "-1"),
        ("AGENT_RETRIES", "1.5"),
        ("AGENT_RETRIES", "two"),
    ],
)
def test_an_invalid_setting_is_one_line_naming_the_variable(
    provider: str, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)

    with pytest.raises(llm.ModelError, match=f"^{name} must be") as caught:
        adapter(provider, "https://llm.example.com")
    assert repr(value) in str(caught.value)
    assert "\n" not in str(caught.value)


# --- broken answers: a 200 that is not a reply ----------------------------------------------

BASE_URL_VARIABLE = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
LOGIN_PAGE = (
    "<!DOCTYPE html>\n<html>\n<head><title>Sign in</title></head>\n"
    '<body><form action="/login">Please sign in to continue</form></body>\n</html>\n'
)


def model_error(model: Any) -> str:
    """The message of the ModelError that `model.complete` raises; it must be one line."""
    with pytest.raises(llm.ModelError) as caught:
        model.complete("sys", HELLO)
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("content_type", ["text/html; charset=utf-8", "application/json"])
def test_an_html_page_says_to_check_the_base_url(
    provider: str, model: Any, fake_provider: FakeProvider, content_type: str
) -> None:
    # A proxy's login page, sent with its own content type or (misconfigured) as JSON.
    fake_provider.queue(200, LOGIN_PAGE, {"content-type": content_type})

    message = model_error(model)

    assert "answered with HTML, not JSON" in message
    assert f"is {BASE_URL_VARIABLE[provider]} the API address" in message
    assert fake_provider.url in message


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('{"id": "reply_01", "content": [{"type": "te', "broken JSON"),
        ("", "an empty body"),
        ("[]", "JSON that is not an object"),
        ('{"error": {"message": "quota exceeded for this key"}}', "quota exceeded for this key"),
        ('{"error": "upstream model is loading"}', "upstream model is loading"),
    ],
)
def test_a_200_body_that_is_not_a_reply_is_a_model_error(
    provider: str, model: Any, fake_provider: FakeProvider, body: str, expected: str
) -> None:
    fake_provider.queue(200, body)

    message = model_error(model)

    assert expected in message
    assert BASE_URL_VARIABLE[provider] in message or "error" in message


def chat_reply(message: Any) -> dict[str, Any]:
    """A chat.completion body whose one choice carries `message` as given."""
    return {"id": "chatcmpl-1", "choices": [{"index": 0, "message": message}]}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"id": "chatcmpl-1", "object": "chat.completion"}, "with no choices"),
        ({"id": "chatcmpl-1", "choices": []}, "with no choices"),
        ({"id": "chatcmpl-1", "choices": ["hello"]}, "with no choices"),
        (chat_reply(None), "a choice with no message"),
        (chat_reply({"role": "assistant", "content": {"text": "hi"}}), "content that is not text"),
        (chat_reply({"role": "assistant", "tool_calls": "bash"}), "tool_calls that is not a list"),
        (
            chat_reply(
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "call_1", "function": {"arguments": "{}"}}],
                }
            ),
            "a tool call that has no function name",
        ),
    ],
)
def test_openai_answers_of_the_wrong_shape_are_model_errors(
    fake_provider: FakeProvider, openai_model: OpenAIModel, body: dict[str, Any], expected: str
) -> None:
    fake_provider.reply(body)

    message = model_error(openai_model)

    assert expected in message
    assert fake_provider.url in message


def test_openai_arguments_sent_as_an_object_and_partial_usage_are_accepted(
    fake_provider: FakeProvider, openai_model: OpenAIModel
) -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": {"command": "ls"}},
    }
    fake_provider.reply(
        {
            "id": "chatcmpl-1",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                }
            ],
            "usage": {"prompt_tokens": 40, "completion_tokens": None},
        }
    )

    reply = openai_model.complete("sys", HELLO, tools=TOOLS)

    assert reply == Reply([tool_use("call_1", "bash", {"command": "ls"})], "tool_use", Usage(40, 0))


def anthropic_with(**fields: Any) -> dict[str, Any]:
    """A Messages body saying "hi", with `fields` replaced; a field set to OMIT is left out."""
    body = anthropic_message(text("hi")) | fields
    return {key: value for key, value in body.items() if value is not OMIT}


OMIT = object()


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"content": None}, "without a list of content blocks"),
        ({"content": "hi"}, "without a list of content blocks"),
        ({"content": [{"text": "hi"}]}, "a content block with no type"),
        ({"content": [{"type": "text", "text": None}]}, "a text block with no text"),
        ({"content": [{"type": "tool_use", "id": "toolu_1", "input": {}}]}, "a tool_use block"),
        ({"content": [tool_use("toolu_1", "bash", {}) | {"input": "ls"}]}, "a tool_use block"),
    ],
)
def test_anthropic_answers_of_the_wrong_shape_are_model_errors(
    fake_provider: FakeProvider, anthropic_model: AnthropicModel, fields: dict, expected: str
) -> None:
    fake_provider.reply(anthropic_with(**fields))

    message = model_error(anthropic_model)

    assert expected in message
    assert "ANTHROPIC_BASE_URL" in message


def test_anthropic_unknown_blocks_are_left_out_and_missing_usage_is_zero(
    fake_provider: FakeProvider, anthropic_model: AnthropicModel
) -> None:
    thinking = {"type": "thinking", "thinking": "Let me see.", "signature": "c2ln"}
    search = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    fake_provider.reply(anthropic_with(content=[thinking, text("hi"), search], usage=OMIT))

    reply = anthropic_model.complete("sys", HELLO)

    assert reply == Reply([text("hi")], "end_turn", Usage(0, 0))


@pytest.mark.parametrize(
    ("blocks", "expected"),
    [
        ([text("done")], "end_turn"),
        ([text("checking"), tool_use("toolu_1", "bash", {"command": "ls"})], "tool_use"),
    ],
)
@pytest.mark.parametrize("stop_reason", [OMIT, None, "tool_calls"])
def test_anthropic_missing_or_unknown_stop_reason_is_read_from_the_blocks(
    fake_provider: FakeProvider,
    anthropic_model: AnthropicModel,
    blocks: list[dict[str, Any]],
    expected: str,
    stop_reason: Any,
) -> None:
    fake_provider.reply(anthropic_with(content=blocks, stop_reason=stop_reason))

    assert anthropic_model.complete("sys", HELLO).stop_reason == expected


def test_a_404_that_is_not_a_json_error_says_to_check_the_base_url(
    provider: str, model: Any, fake_provider: FakeProvider
) -> None:
    # A web server at the wrong address (Ollama without /v1 says this) rather than a missing model.
    fake_provider.queue(404, "404 page not found", {"content-type": "text/plain", **NO_RETRY})

    with pytest.raises(llm.ModelError, match=f"{BASE_URL_VARIABLE[provider]}") as caught:
        model.complete("sys", HELLO)
    assert "no model" not in str(caught.value)


def test_an_html_error_page_is_named_not_quoted(
    provider: str, model: Any, fake_provider: FakeProvider
) -> None:
    fake_provider.queue(502, LOGIN_PAGE, {"content-type": "text/html", **NO_RETRY})

    message = model_error(model)

    assert "HTML" in message
    assert "<form" not in message


def test_a_broken_answer_ends_the_turn_not_the_interactive_session(
    fake_provider: FakeProvider, tmp_path: Path
) -> None:
    fake_provider.queue(200, LOGIN_PAGE, {"content-type": "text/html"})
    fake_provider.reply(openai_completion("Still here."))
    environment = os.environ | {
        "OPENAI_BASE_URL": fake_provider.url + "/v1",
        "AGENT_MODEL": "openai:gpt-test",
    }

    session = subprocess.run(
        [sys.executable, "-m", "v1_tool_loop", "--workdir", str(tmp_path)],
        input="hello\nare you there?\n/exit\n",
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
    )

    assert session.returncode == 0, session.stderr
    assert "Traceback" not in session.stderr
    assert "answered with HTML, not JSON" in session.stdout + session.stderr
    assert "Still here." in session.stdout
    assert len(fake_provider.requests) == 2


# --- record a live run, replay it offline -------------------------------------------------

TASK = "Write hello.txt saying hello, then show it."
GREETING = "hello from the agent\n"


def script_write_then_cat(provider: str, server: FakeProvider) -> None:
    """Three model turns: write a file, `cat` it through bash, finish; in the provider's format."""
    write = {"path": "hello.txt", "content": GREETING}
    cat = {"command": "cat hello.txt"}
    answer = "hello.txt now says: hello from the agent"
    if provider == "anthropic":
        server.reply(
            anthropic_message(
                text("I'll write the file."),
                tool_use("toolu_w1", "write_file", write),
                stop_reason="tool_use",
            )
        )
        server.reply(anthropic_message(tool_use("toolu_c2", "bash", cat), stop_reason="tool_use"))
        server.reply(anthropic_message(text(answer)))
    else:
        server.reply(
            openai_completion(
                "I'll write the file.",
                [openai_tool_call("call_w1", "write_file", write)],
                finish_reason="tool_calls",
            )
        )
        server.reply(
            openai_completion(None, [openai_tool_call("call_c2", "bash", cat)], "tool_calls")
        )
        server.reply(openai_completion(answer))


def tool_results(messages: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    """(content, is_error) of every tool_result in a conversation, in order."""
    return [
        (block["content"], block["is_error"])
        for message in messages
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]


def record_run(
    model: Any, server: FakeProvider, provider: str, tmp_path: Path
) -> tuple[RunResult, Path, Path]:
    """Run the chapter-1 agent live against the fake server, recording a cassette.

    Returns the run, the cassette and the work directory the tools ran in.
    """
    script_write_then_cat(provider, server)
    cassette = tmp_path / "recorded.jsonl"
    workdir = tmp_path / "live"
    workdir.mkdir()
    with RecordingModel(model, cassette, chapter="v1_tool_loop", task=TASK) as recorder:
        return agent.run(TASK, model=recorder, workdir=workdir), cassette, workdir


def test_recorded_run_replays_to_the_same_trajectory(
    provider: str, model: Any, fake_provider: FakeProvider, tmp_path: Path
) -> None:
    live, cassette, live_dir = record_run(model, fake_provider, provider, tmp_path)

    assert live.stop == "done"
    assert (live_dir / "hello.txt").read_text() == GREETING
    assert tool_results(live.messages) == [
        ("wrote 1 line to hello.txt", False),
        ("hello from the agent", False),
    ]
    assert len(fake_provider.requests) == 3
    assert fake_provider.pending == 0
    # The last request carried the cat output back to the provider.
    assert "hello from the agent" in json.dumps(fake_provider.requests[-1].body["messages"])

    header, entries = read_cassette(cassette)
    assert header["provenance"] == "recorded"
    assert header["model"] == model.name
    assert (header["chapter"], header["task"]) == ("v1_tool_loop", TASK)
    stop_reasons = [entry["reply"]["stop_reason"] for entry in entries]
    assert stop_reasons == ["tool_use", "tool_use", "end_turn"]
    assert all("request" in entry for entry in entries)

    replay_dir = tmp_path / "replay"
    replay_dir.mkdir()
    replayed = agent.run(TASK, model=ReplayModel(cassette, strict=True), workdir=replay_dir)

    assert replayed.stop == "done"
    assert replayed.messages == live.messages
    assert replayed.answer == live.answer == "hello.txt now says: hello from the agent"
    assert replayed.turn_usage == live.turn_usage
    assert (replay_dir / "hello.txt").read_text() == GREETING  # the tools ran again, for real
    assert len(fake_provider.requests) == 3  # and the replay never touched the provider


def test_strict_replay_of_another_task_names_turn_and_message(
    fake_provider: FakeProvider, anthropic_model: AnthropicModel, tmp_path: Path
) -> None:
    _, cassette, _ = record_run(anthropic_model, fake_provider, "anthropic", tmp_path)
    other_task = [{"role": "user", "content": "Delete everything."}]

    with pytest.raises(llm.CassetteError, match=r"turn 1 .*message 1 \(user\) differs"):
        ReplayModel(cassette, strict=True).complete(agent.SYSTEM, other_task, tools=TOOLS)

    # The loop turns the same error into a clean stop that carries the message.
    workdir = tmp_path / "other"
    workdir.mkdir()
    replay = ReplayModel(cassette, strict=True)
    result = agent.run("Delete everything.", model=replay, workdir=workdir)
    assert result.stop == "error"
    assert "turn 1" in result.error
    assert "message 1 (user) differs" in result.error
    assert "Delete everything." in result.error


def test_strict_replay_stops_at_the_turn_whose_tool_result_differs(
    fake_provider: FakeProvider, anthropic_model: AnthropicModel, tmp_path: Path
) -> None:
    _, cassette, _ = record_run(anthropic_model, fake_provider, "anthropic", tmp_path)
    workdir = tmp_path / "different"
    (workdir / "hello.txt").mkdir(parents=True)  # so write_file fails this time

    result = agent.run(TASK, model=ReplayModel(cassette, strict=True), workdir=workdir)

    assert result.stop == "error"
    assert "turn 2" in result.error
    assert "message 3 (user) differs" in result.error
    assert tool_results(result.messages)[0][1] is True  # the write_file error that diverged


def test_openai_call_ids_are_unique_in_a_conversation_whatever_the_server_sends(
    fake_provider: FakeProvider, openai_model: OpenAIModel, tmp_path: Path
) -> None:
    """A local server that sends no ids, one id twice, and numbers afresh each reply: the
    chapter 2 loop still matches each result to its call, and the plan reads back."""
    from v2_todos.agent import run as chapter2

    plan = {"items": [{"content": "Look", "status": "in_progress"}]}
    bad = {"items": [{"content": "", "status": "maybe"}]}
    fake_provider.reply(
        openai_completion(
            None,
            [openai_tool_call(None, "todo_write", plan), openai_tool_call(None, "todo_write", bad)],
            finish_reason="tool_calls",
        )
    )
    fake_provider.reply(
        openai_completion(
            None,
            [openai_tool_call("call_0", "bash", {"command": "true"})] * 2,
            finish_reason="tool_calls",
        )
    )
    fake_provider.reply(openai_completion("Done."))
    result = chapter2("look", model=openai_model, workdir=tmp_path)

    assert result.stop == "done"
    ids = [block["id"] for m in result.messages if m["role"] == "assistant"
           for block in m["content"] if block["type"] == "tool_use"]  # fmt: skip
    assert len(ids) == 4 and len(set(ids)) == 4
    answers = {block["tool_use_id"]: block for m in result.messages if m["role"] == "user"
               and isinstance(m["content"], list) for block in m["content"]}  # fmt: skip
    assert [answers[i]["is_error"] for i in ids] == [False, True, False, False]
    assert [item["content"] for item in result.plan] == ["Look"]
    sent = fake_provider.requests[-1].body["messages"]
    assert len({call["id"] for m in sent for call in m.get("tool_calls") or []}) == 4


def test_anthropic_call_ids_are_unique_so_each_child_replays_its_own(
    fake_provider: FakeProvider, anthropic_model: AnthropicModel, tmp_path: Path
) -> None:
    """An Anthropic-compatible server that sends the same id in every reply: the second call
    gets an id of its own at the boundary, so the recording keeps each child's section
    apart and its replay hands each child its own reply."""
    from v3_subagents.agent import run as chapter3

    ask = {"description": "look", "agent_type": "explore", "prompt": "Report what you see."}
    for report in ("first report", "second report"):
        fake_provider.reply(
            anthropic_message(tool_use("toolu_1", "task", ask), stop_reason="tool_use")
        )
        fake_provider.reply(anthropic_message(text(report)))
    fake_provider.reply(anthropic_message(text("Done.")))
    recording = tmp_path / "children.jsonl"
    (tmp_path / "live").mkdir()
    (tmp_path / "replay").mkdir()
    with RecordingModel(anthropic_model, recording, chapter="v3_subagents", task="look") as model:
        live = chapter3("look", model=model, workdir=tmp_path / "live")
    replayed = chapter3("look", model=ReplayModel(recording), workdir=tmp_path / "replay")
    for result in (live, replayed):
        assert result.stop == "done", result.error
        assert [child.result.answer for child in result.children] == [
            "first report",
            "second report",
        ]
        assert len({child.call_id for child in result.children}) == 2


def test_a_json_404_that_names_no_model_says_to_check_the_base_url(
    openai_model: OpenAIModel, fake_provider: FakeProvider
) -> None:
    """llama-cpp-python's server at an address without /v1 answers a JSON 404 of its own."""
    fake_provider.queue(404, {"detail": "Not Found"}, NO_RETRY)

    message = model_error(openai_model)

    assert "OPENAI_BASE_URL" in message and "/v1" in message
    assert "no model" not in message


def test_a_500_says_the_server_answered_and_failed_not_that_it_is_not_running(
    openai_model: OpenAIModel, fake_provider: FakeProvider
) -> None:
    fake_provider.fail(500, {"error": {"message": "llama_decode returned -3"}}, NO_RETRY)

    message = model_error(openai_model)

    assert "answered HTTP 500" in message and "llama_decode returned -3" in message
    assert "its own log" in message and "Is the server running" not in message


@pytest.mark.parametrize("name", ["gpt-test", "completions"])
def test_a_404_at_a_base_url_without_v1_says_it_probably_lacks_v1(
    name: str, fake_provider: FakeProvider
) -> None:
    """Without /v1, every path of the server is unknown.  Its 404 may quote the request,
    and so name the model (`completions` is in `/chat/completions`): still the address."""
    model = OpenAIModel(name, api_key="sk-test", base_url=fake_provider.url)

    message = model_error(model)

    assert fake_provider.requests[0].path == "/chat/completions"
    assert "OPENAI_BASE_URL probably lacks /v1" in message
    assert f"try OPENAI_BASE_URL={fake_provider.url}/v1" in message
    assert "no model" not in message


@pytest.mark.parametrize(
    ("base_url", "lacks"),
    [
        ("http://localhost:8000", True),
        ("http://localhost:8000/", True),
        ("https://api.deepseek.com", True),  # a 404 there is said both ways: see the message
        ("http://localhost:8000/v1", False),
        ("https://dashscope.aliyuncs.com/compatible-mode/v1", False),
        ("https://open.bigmodel.cn/api/paas/v4", False),  # GLM: a version, not /v1
        (None, False),  # OpenAI itself
    ],
)
def test_which_base_urls_lack_a_version(base_url: str | None, lacks: bool) -> None:
    assert lacks_version(base_url) is lacks


def test_a_5xx_from_anthropic_says_it_answered_and_failed(
    anthropic_model: AnthropicModel, fake_provider: FakeProvider
) -> None:
    fake_provider.fail(500, ERROR_BODIES["anthropic"]["server"], NO_RETRY)

    message = model_error(anthropic_model)

    assert "answered HTTP 500" in message and "failed on this request" in message
    assert "did not answer" not in message
