"""Adapter for any OpenAI-compatible Chat Completions endpoint.

OpenAI, DeepSeek, Qwen, Kimi, GLM, Ollama, vLLM, llama.cpp server and LM Studio all
speak this dialect; `OPENAI_BASE_URL` says which one.  The agent keeps talking in
Anthropic-shaped blocks, so this module translates both ways:

    assistant tool_use blocks  <->  assistant "tool_calls"
    user tool_result blocks    <->  one {"role": "tool"} message per result
    finish_reason              <->  stop_reason ("tool_calls" -> "tool_use", …)
"""

from __future__ import annotations

import json
import os
import re
from typing import Any
from urllib.parse import urlsplit

from .errors import (
    AuthenticationFailed,
    ContextTooLong,
    ModelError,
    ModelNotFound,
    NoModelConfigured,
    ProviderUnavailable,
    RateLimited,
)
from .provider_http import (
    attempts,
    error_detail,
    json_object,
    request_timeout,
    retry_count,
    timed_out,
    usage_from,
)
from .text_calls import check_tool_calls
from .types import INVALID_JSON, Block, Message, Reply, Usage, unique_call_ids

FINISH_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
}
CHECK_BASE_URL = "is OPENAI_BASE_URL an OpenAI-compatible Chat Completions API?"


class OpenAIModel:
    """Model backed by `openai.OpenAI().chat.completions.create`, non-streaming."""

    def __init__(self, model: str, *, api_key: str | None = None, base_url: str | None = None):
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = api_key or os.environ.get("OPENAI_API_KEY")
        if not api_key and not self.base_url:
            raise NoModelConfigured(
                f"OPENAI_API_KEY is not set: export it to use openai:{model}, or set "
                "OPENAI_BASE_URL for a local server such as Ollama"
            )
        import openai  # after the check: the SDK takes a second to import, a refusal none

        self.name = f"openai:{model}"
        self.model = model
        self.where = self.base_url or "api.openai.com"
        self.timeout = request_timeout(self.base_url)
        self._sdk = openai
        # Local servers need no key, but the SDK insists on one.  The SDK retries
        # 408/409/429/5xx, timeouts and lost connections itself, with backoff.
        self._client = openai.OpenAI(
            api_key=api_key or "not-needed",
            base_url=self.base_url,
            max_retries=retry_count(),
            timeout=self.timeout,
        )

    def complete(
        self,
        system: str,
        messages: list[Message],
        tools: list[dict[str, Any]] | None = None,
        stop: list[str] | None = None,
        max_tokens: int = 4096,
    ) -> Reply:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": to_chat_messages(system, messages),
        }
        # OpenAI's own newer models accept only max_completion_tokens; most
        # compatible servers (Ollama, llama.cpp, DeepSeek, …) know only max_tokens.
        official = self.base_url is None or "api.openai.com" in self.base_url
        request["max_completion_tokens" if official else "max_tokens"] = max_tokens
        if tools:
            request["tools"] = to_chat_tools(tools)
            # "auto" is the API's default, but some servers act on tools only when it is
            # said: llama-cpp-python's chatml-function-calling format drops them silently.
            request["tool_choice"] = "auto"
        if stop:
            request["stop"] = stop
        try:
            # The raw response: compatible servers vary, so we check the JSON ourselves
            # rather than trust the SDK's objects built from whatever came.
            response = self._client.chat.completions.with_raw_response.create(**request)
        except self._sdk.APIError as exc:
            raise self._translate(exc) from None
        body = json_object(response.http_response, "OPENAI_BASE_URL", "often ending in /v1")
        # A call the server left in the text would otherwise read as a final answer.
        return check_tool_calls(self._reply(body, messages), tools, messages)

    def _reply(self, body: dict[str, Any], history: list[Message]) -> Reply:
        """A Chat Completions answer as a Reply, or a ModelError that says what is wrong."""
        choices = body.get("choices")
        if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)):
            raise self._malformed("with no choices")
        choice = choices[0]
        message = choice.get("message")
        if not isinstance(message, dict):
            raise self._malformed("with a choice with no message")
        text = message.get("content")
        if text is not None and not isinstance(text, str):
            raise self._malformed("with message content that is not text")
        calls = message.get("tool_calls") or []
        if not isinstance(calls, list):
            raise self._malformed("with tool_calls that is not a list")
        finish_reason = choice.get("finish_reason")
        return from_chat_message(
            text,
            [self._call(call) for call in calls],
            finish_reason if isinstance(finish_reason, str) else None,
            usage_from(body.get("usage"), "prompt_tokens", "completion_tokens"),
            history,
        )

    def _call(self, call: Any) -> tuple[str | None, str, Any]:
        """(id, name, arguments) of one tool call; without a name there is nothing to run."""
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not (isinstance(name, str) and name):
            raise self._malformed(
                "with a tool call that has no function name",
                f"does the server support tool calls for '{self.model}'?",
            )
        call_id = call.get("id")
        return (call_id if isinstance(call_id, str) else None, name, function.get("arguments"))

    def _malformed(self, problem: str, check: str = CHECK_BASE_URL) -> ModelError:
        return ModelError(f"{self.where} answered {problem}: {check}")

    def _translate(self, exc: Exception) -> ModelError:
        """Map the SDK's exception onto one of ours, with a message that says what to do."""
        sdk = self._sdk
        detail = error_detail(exc)
        where = self.where
        if isinstance(exc, (sdk.AuthenticationError, sdk.PermissionDeniedError)):
            return AuthenticationFailed(
                f"{where} refused the API key ({detail}). Check OPENAI_API_KEY."
            )
        if isinstance(exc, sdk.NotFoundError) and lacks_version(self.base_url):
            # Most compatible servers serve the API under /v1: without it, every path is
            # unknown, and a 404 that happens to quote the request names the model too.
            return ModelError(
                f"{exc.request.url} answered 404 ({detail}): OPENAI_BASE_URL probably lacks "
                f"/v1; try OPENAI_BASE_URL={str(self.base_url).rstrip('/')}/v1"
            )
        named = self.model.lower() in json.dumps(exc.body or {}).lower() + detail.lower()
        if isinstance(exc, sdk.NotFoundError) and not (isinstance(exc.body, dict) and named):
            # A web page, or a JSON 404 that names no model (`{"detail": "Not Found"}` from
            # a server whose address lacks /v1): the address is wrong, not the model.
            return ModelError(
                f"nothing answers at {exc.request.url} ({detail}): is OPENAI_BASE_URL the "
                "API address (often ending in /v1)?"
            )
        if isinstance(exc, sdk.NotFoundError):
            return ModelNotFound(
                f"{where} has no model '{self.model}'. Pick another with --model openai:NAME "
                "or AGENT_MODEL (for Ollama, a name from `ollama list`)."
            )
        if isinstance(exc, sdk.RateLimitError):
            return RateLimited(
                f"{where} is rate limiting this key, still after {attempts(exc)}. "
                "Wait a minute and run again."
            )
        body = json.dumps(getattr(exc, "body", None) or {}).lower() + detail.lower()
        if isinstance(exc, sdk.BadRequestError) and (
            "context_length_exceeded" in body  # OpenAI and most hosted servers
            or "context length" in body
            or "context size" in body  # llama.cpp server: exceed_context_size_error
        ):
            return ContextTooLong(
                f"the conversation no longer fits {self.model}'s context window ({detail}). "
                "Start a new session or give the agent a smaller task."
            )
        if isinstance(exc, sdk.APITimeoutError):
            return timed_out(where, self.base_url, self.timeout, exc)
        if isinstance(exc, sdk.APIStatusError) and exc.status_code >= 500:
            return ProviderUnavailable(
                f"{where} answered HTTP {exc.status_code} after {attempts(exc)} ({detail}): "
                "the server is running but failed on this request; its own log says why "
                "(a model that did not load, a chat template that failed, no memory left)"
            )
        if isinstance(exc, sdk.APIConnectionError):
            return ProviderUnavailable(
                f"no answer from {where} after {attempts(exc)} ({detail}). "
                "Is the server running and OPENAI_BASE_URL right?"
            )
        return ModelError(f"{where} rejected the request: {detail}")


def lacks_version(base_url: str | None) -> bool:
    """A base URL whose path has no version part (/v1, or /v4 as GLM's): the API is most
    likely one level further down.  OpenAI's own address, the default, is never one."""
    if not base_url:
        return False
    return re.search(r"/v\d+", urlsplit(base_url).path) is None


def to_chat_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic tool schemas -> Chat Completions function tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool.get("description", ""),
                "parameters": tool["input_schema"],
            },
        }
        for tool in tools
    ]


def to_chat_messages(system: str, messages: list[Message]) -> list[dict[str, Any]]:
    """Canonical messages -> Chat Completions messages, system prompt first."""
    chat: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            chat.append({"role": message["role"], "content": content})
        elif message["role"] == "assistant":
            chat.append(_assistant_to_chat(content))
        else:
            chat.extend(_user_to_chat(content))
    return chat


def _assistant_to_chat(blocks: list[Block]) -> dict[str, Any]:
    text = "".join(block["text"] for block in blocks if block["type"] == "text")
    calls = [
        {
            "id": block["id"],
            "type": "function",
            "function": {"name": block["name"], "arguments": json.dumps(block["input"])},
        }
        for block in blocks
        if block["type"] == "tool_use"
    ]
    # "" rather than null when there are only calls: both are valid Chat Completions, but
    # llama-cpp-python's server refuses null, and no server refuses "".
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = calls
    return message


def _user_to_chat(blocks: list[Block]) -> list[dict[str, Any]]:
    """Tool results become `tool` messages, which must come right after the assistant's calls."""
    chat = []
    for block in blocks:
        if block["type"] == "tool_result":
            text = _result_text(block.get("content", ""))
            if block.get("is_error"):
                text = "Error: " + text
            chat.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": text})
    texts = [block["text"] for block in blocks if block["type"] == "text"]
    if texts:
        chat.append({"role": "user", "content": "\n\n".join(texts)})
    return chat


def _result_text(content: str | list[Block]) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content)


def from_chat_message(
    text: str | None,
    calls: list[tuple[str | None, str, Any]],
    finish_reason: str | None,
    usage: Usage,
    history: list[Message] | None = None,
) -> Reply:
    """A Chat Completions answer -> canonical Reply.

    `calls` are (id, name, arguments), the arguments as JSON text (see `tool_input`).
    Some local servers send no call ids, or the same id twice, or say "stop" while
    calling tools; all are repaired here.  `history` is the conversation the reply
    answers: its call ids are taken (`unique_call_ids`).
    """
    content: list[Block] = [{"type": "text", "text": text}] if text else []
    for call_id, name, arguments in calls:
        content.append(
            {"type": "tool_use", "id": call_id, "name": name, "input": tool_input(arguments)}
        )
    # Ids missing, repeated in the reply or used earlier in the conversation get a free one.
    content = unique_call_ids(content, history or [])
    stop_reason = FINISH_REASONS.get(finish_reason or "stop", "end_turn")
    if calls and stop_reason != "max_tokens":  # a cut-off call may be half written: not run
        stop_reason = "tool_use"
    elif stop_reason == "tool_use":  # "tool_calls" with no calls: nothing to run, so it ended
        stop_reason = "end_turn"
    return Reply(content=content, stop_reason=stop_reason, usage=usage)


def tool_input(arguments: Any) -> dict[str, Any]:
    """A tool call's arguments as a dict.

    The model writes them as JSON text; arguments that are not a JSON object are passed
    on under INVALID_JSON (`_invalid_json`), so the tool layer answers the model with an
    error instead of the loop crashing.  A few servers send an object instead of the
    text: its meaning is the same, so it is taken as it is.
    """
    if isinstance(arguments, dict):
        return arguments
    if not arguments:  # None or "": a tool called with no arguments
        return {}
    if not isinstance(arguments, str):
        return {INVALID_JSON: json.dumps(arguments)}
    try:
        parsed = json.loads(arguments)
    except (json.JSONDecodeError, RecursionError):  # broken, or nested past Python's stack
        parsed = None
    return parsed if isinstance(parsed, dict) else {INVALID_JSON: arguments}
