"""Adapter for Anthropic's Messages API.

Our canonical message shape *is* the Messages API shape, so this adapter only has to
check the JSON that comes back and turn the SDK's exceptions into ours.  The SDK is
imported here, lazily, so `--help` and offline replays never pay for it.
"""

from __future__ import annotations

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
from .provider_http import (
    attempts,
    error_detail,
    json_object,
    request_timeout,
    retry_count,
    timed_out,
    usage_from,
)
from .types import STOP_REASONS, Block, Message, Reply, unique_call_ids


class AnthropicModel:
    """Model backed by `anthropic.Anthropic().messages.create`, non-streaming."""

    def __init__(self, model: str, *, api_key: str | None = None, base_url: str | None = None):
        api_key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not api_key:
            raise NoModelConfigured(
                "ANTHROPIC_API_KEY is not set: export it (or put it in .env) to use "
                f"anthropic:{model}"
            )
        import anthropic  # after the check: the SDK takes seconds to import, a refusal none

        self.name = f"anthropic:{model}"
        self.model = model
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self.where = self.base_url or "api.anthropic.com"
        self.timeout = request_timeout(self.base_url)
        self._sdk = anthropic
        # The SDK retries 408/409/429/5xx, timeouts and lost connections itself, with
        # exponential backoff (0.5 s doubling, at most 8 s) or the server's retry-after.
        self._client = anthropic.Anthropic(
            api_key=api_key,
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
            "system": system,
            "messages": messages,
            "max_tokens": max_tokens,
        }
        if tools:
            request["tools"] = tools
        if stop:
            request["stop_sequences"] = stop
        try:
            # The raw response, because its JSON already is our message shape: we check
            # it ourselves rather than trust the SDK's objects built from whatever came.
            response = self._client.messages.with_raw_response.create(**request)
        except self._sdk.APIError as exc:
            raise self._translate(exc) from None
        body = json_object(response.http_response, "ANTHROPIC_BASE_URL", "without /v1")
        return self._reply(body, messages)

    def _reply(self, body: dict[str, Any], history: list[Message]) -> Reply:
        """A Messages API answer as a Reply, or a ModelError that says what is wrong with it.

        A compatible server may send an id the conversation already has (the same one in
        every reply): such a call gets a free one (`unique_call_ids`), as with OpenAI.
        """
        content = body.get("content")
        if not isinstance(content, list):
            raise self._malformed("without a list of content blocks")
        found = [block for block in map(self._block, content) if block is not None]
        blocks = unique_call_ids(found, history)
        return Reply(
            content=blocks,
            stop_reason=_stop_reason(body.get("stop_reason"), blocks),
            usage=usage_from(body.get("usage"), "input_tokens", "output_tokens"),
        )

    def _block(self, block: Any) -> Block | None:
        """A text or tool_use block with only the fields we send back.  Other types
        (thinking, server tools: features the course never turns on) are left out, so a
        conversation holds only the blocks every chapter knows."""
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(kind, str):
            raise self._malformed("with a content block with no type")
        if kind == "text":
            if not isinstance(block.get("text"), str):
                raise self._malformed("with a text block with no text")
            return {"type": "text", "text": block["text"]}
        if kind == "tool_use":
            call_id, name, tool_input = block.get("id"), block.get("name"), block.get("input")
            named = all(isinstance(value, str) and value for value in (call_id, name))
            if not (named and isinstance(tool_input, dict)):
                raise self._malformed(
                    "with a tool_use block that lacks an id, a name or an input object"
                )
            return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}
        return None

    def _malformed(self, problem: str) -> ModelError:
        return ModelError(
            f"{self.where} answered {problem}, which is not a Messages API reply: "
            "is ANTHROPIC_BASE_URL an Anthropic-compatible API?"
        )

    def _translate(self, exc: Exception) -> ModelError:
        """Map the SDK's exception onto one of ours, with a message that says what to do."""
        sdk = self._sdk
        detail = error_detail(exc)
        if isinstance(exc, (sdk.AuthenticationError, sdk.PermissionDeniedError)):
            return AuthenticationFailed(
                f"Anthropic refused the API key ({detail}). Check ANTHROPIC_API_KEY."
            )
        if isinstance(exc, sdk.NotFoundError) and not isinstance(exc.body, dict):
            return ModelError(
                f"nothing answers at {exc.request.url} ({detail}): is ANTHROPIC_BASE_URL the "
                "API address (without /v1)?"
            )
        if isinstance(exc, sdk.NotFoundError):
            return ModelNotFound(
                f"Anthropic has no model '{self.model}'. Pick another with "
                "--model anthropic:NAME or AGENT_MODEL (e.g. anthropic:claude-sonnet-4-5)."
            )
        if isinstance(exc, sdk.RateLimitError):
            return RateLimited(
                f"Anthropic is rate limiting this key, still after {attempts(exc)}. "
                "Wait a minute and run again."
            )
        if isinstance(exc, sdk.BadRequestError) and "too long" in detail.lower():
            return ContextTooLong(
                f"the conversation no longer fits {self.model}'s context window ({detail}). "
                "Start a new session or give the agent a smaller task."
            )
        if isinstance(exc, sdk.APITimeoutError):
            return timed_out(self.where, self.base_url, self.timeout, exc)
        if isinstance(exc, sdk.APIStatusError) and exc.status_code >= 500:
            return ProviderUnavailable(
                f"Anthropic answered HTTP {exc.status_code} at {self.where} after "
                f"{attempts(exc)} ({detail}): it is up, and failed on this request. "
                "Try again later."
            )
        if isinstance(exc, sdk.APIConnectionError):
            return ProviderUnavailable(
                f"Anthropic did not answer at {self.where} after {attempts(exc)} "
                f"({detail}). Check your network or try again later."
            )
        return ModelError(f"Anthropic rejected the request: {detail}")


def _stop_reason(reason: Any, blocks: list[Block]) -> str:
    """One of STOP_REASONS.  A full context window is a kind of max_tokens; a reason that
    is missing or not ours (refusal, pause_turn, a proxy's own) is read from the blocks."""
    if reason == "model_context_window_exceeded":
        return "max_tokens"
    if reason in STOP_REASONS:
        return reason
    return "tool_use" if any(block["type"] == "tool_use" for block in blocks) else "end_turn"
