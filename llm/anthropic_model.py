"""Adapter for Anthropic's Messages API.

Our canonical message shape *is* the Messages API shape, so this adapter only has to
turn the SDK's response objects into plain dicts and its exceptions into ours.  The
SDK is imported here, lazily, so `--help` and offline replays never pay for it.
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
from .types import STOP_REASONS, Message, Reply, Usage

# The SDK retries 408/409/429/5xx and connection errors itself, with exponential
# backoff (0.5 s doubling, at most 8 s) and any retry-after header the server sends.
MAX_RETRIES = 4
TIMEOUT_SECONDS = 120.0


class AnthropicModel:
    """Model backed by `anthropic.Anthropic().messages.create`, non-streaming."""

    def __init__(self, model: str, *, api_key: str | None = None, base_url: str | None = None):
        import anthropic

        api_key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not api_key:
            raise NoModelConfigured(
                "ANTHROPIC_API_KEY is not set: export it (or put it in .env) to use "
                f"anthropic:{model}"
            )
        self.name = f"anthropic:{model}"
        self.model = model
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self._sdk = anthropic
        self._client = anthropic.Anthropic(
            api_key=api_key,
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
            "system": system,
            "messages": messages,
            "max_tokens": max_tokens,
        }
        if tools:
            request["tools"] = tools
        if stop:
            request["stop_sequences"] = stop
        try:
            response = self._client.messages.create(**request)
        except self._sdk.APIError as exc:
            raise self._translate(exc) from None
        return Reply(
            content=[_block_to_dict(block) for block in response.content],
            stop_reason=_stop_reason(response.stop_reason),
            usage=Usage(response.usage.input_tokens, response.usage.output_tokens),
        )

    def _translate(self, exc: Exception) -> ModelError:
        """Map the SDK's exception onto one of ours, with a message that says what to do."""
        sdk = self._sdk
        detail = getattr(exc, "message", str(exc))
        if isinstance(exc, (sdk.AuthenticationError, sdk.PermissionDeniedError)):
            return AuthenticationFailed(
                f"Anthropic refused the API key ({detail}). Check ANTHROPIC_API_KEY."
            )
        if isinstance(exc, sdk.NotFoundError):
            return ModelNotFound(
                f"Anthropic has no model '{self.model}'. Pick another with "
                "--model anthropic:NAME or AGENT_MODEL (e.g. anthropic:claude-sonnet-4-5)."
            )
        if isinstance(exc, sdk.RateLimitError):
            return RateLimited(
                f"Anthropic is rate limiting this key, still after {MAX_RETRIES} retries. "
                "Wait a minute and run again."
            )
        if isinstance(exc, sdk.BadRequestError) and "too long" in detail.lower():
            return ContextTooLong(
                f"the conversation no longer fits {self.model}'s context window ({detail}). "
                "Start a new session or give the agent a smaller task."
            )
        if isinstance(exc, (sdk.APIConnectionError, sdk.InternalServerError)) or (
            isinstance(exc, sdk.APIStatusError) and exc.status_code >= 500
        ):
            where = self.base_url or "api.anthropic.com"
            return ProviderUnavailable(
                f"Anthropic did not answer at {where} after {MAX_RETRIES} retries "
                f"({detail}). Check your network or try again later."
            )
        return ModelError(f"Anthropic rejected the request: {detail}")


def _stop_reason(reason: str | None) -> str:
    """One of STOP_REASONS: a full context window is a kind of max_tokens, and the rarer
    reasons (refusal, pause_turn) end the turn like end_turn does."""
    if reason == "model_context_window_exceeded":
        return "max_tokens"
    return reason if reason in STOP_REASONS else "end_turn"


def _block_to_dict(block: Any) -> dict[str, Any]:
    """Plain dict for one content block; text and tool_use keep only the fields we send back."""
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return block.model_dump(exclude_none=True)
