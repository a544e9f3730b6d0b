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
from typing import Any

from .errors import (
    AuthenticationFailed,
    ContextTooLong,
    ModelError,
    ModelNotFound,
    NoModelConfigured,
    ProviderUnavailable,
    RateLimited,
)
from .types import INVALID_JSON, Block, Message, Reply, Usage

MAX_RETRIES = 4
TIMEOUT_SECONDS = 120.0
FINISH_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
}


class OpenAIModel:
    """Model backed by `openai.OpenAI().chat.completions.create`, non-streaming."""

    def __init__(self, model: str, *, api_key: str | None = None, base_url: str | None = None):
        import openai

        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = api_key or os.environ.get("OPENAI_API_KEY")
        if not api_key and not self.base_url:
            raise NoModelConfigured(
                f"OPENAI_API_KEY is not set: export it to use openai:{model}, or set "
                "OPENAI_BASE_URL for a local server such as Ollama"
            )
        self.name = f"openai:{model}"
        self.model = model
        self._sdk = openai
        # Local servers need no key, but the SDK insists on one.
        self._client = openai.OpenAI(
            api_key=api_key or "not-needed",
            base_url=self.base_url,
            max_retries=MAX_RETRIES,
            timeout=TIMEOUT_SECONDS,
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
        if stop:
            request["stop"] = stop
        try:
            response = self._client.chat.completions.create(**request)
        except self._sdk.APIError as exc:
            raise self._translate(exc) from None
        if not response.choices:
            raise ModelError(f"{self.name} returned no choices; the server may be misconfigured")
        choice = response.choices[0]
        usage = response.usage
        return from_chat_message(
            choice.message.content,
            [
                (call.id, call.function.name, call.function.arguments)
                for call in choice.message.tool_calls or []
            ],
            choice.finish_reason,
            Usage(
                (usage.prompt_tokens or 0) if usage else 0,
                (usage.completion_tokens or 0) if usage else 0,
            ),
        )

    def _translate(self, exc: Exception) -> ModelError:
        """Map the SDK's exception onto one of ours, with a message that says what to do."""
        sdk = self._sdk
        detail = getattr(exc, "message", str(exc))
        where = self.base_url or "api.openai.com"
        if isinstance(exc, (sdk.AuthenticationError, sdk.PermissionDeniedError)):
            return AuthenticationFailed(
                f"{where} refused the API key ({detail}). Check OPENAI_API_KEY."
            )
        if isinstance(exc, sdk.NotFoundError):
            return ModelNotFound(
                f"{where} has no model '{self.model}'. Pick another with --model openai:NAME "
                "or AGENT_MODEL (for Ollama, a name from `ollama list`)."
            )
        if isinstance(exc, sdk.RateLimitError):
            return RateLimited(
                f"{where} is rate limiting this key, still after {MAX_RETRIES} retries. "
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
        if isinstance(exc, (sdk.APIConnectionError, sdk.InternalServerError)) or (
            isinstance(exc, sdk.APIStatusError) and exc.status_code >= 500
        ):
            return ProviderUnavailable(
                f"no answer from {where} after {MAX_RETRIES} retries ({detail}). "
                "Is the server running and OPENAI_BASE_URL right?"
            )
        return ModelError(f"{where} rejected the request: {detail}")


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
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
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
    calls: list[tuple[str | None, str, str]],
    finish_reason: str | None,
    usage: Usage,
) -> Reply:
    """A Chat Completions answer -> canonical Reply.

    `calls` are (id, name, arguments-as-JSON-text).  Arguments that are not valid JSON
    are passed on under INVALID_JSON (`_invalid_json`), so the tool layer answers the model with an
    error instead of the loop crashing.  Some local servers send no call ids, or say
    "stop" while calling tools; both are repaired here.
    """
    content: list[Block] = [{"type": "text", "text": text}] if text else []
    for index, (call_id, name, arguments) in enumerate(calls):
        try:
            parsed = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            parsed = {INVALID_JSON: arguments}
        if not isinstance(parsed, dict):
            parsed = {INVALID_JSON: arguments}
        content.append(
            {"type": "tool_use", "id": call_id or f"call_{index}", "name": name, "input": parsed}
        )
    stop_reason = FINISH_REASONS.get(finish_reason or "stop", "end_turn")
    if calls:
        stop_reason = "tool_use"
    elif stop_reason == "tool_use":  # "tool_calls" with no calls: nothing to run, so it ended
        stop_reason = "end_turn"
    return Reply(content=content, stop_reason=stop_reason, usage=usage)
