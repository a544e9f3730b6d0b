"""Turn a model spec such as `anthropic:claude-sonnet-4-5` into a Model.

Which model a run uses is decided in this order: the `--model` flag, then the
`AGENT_MODEL` variable, then whichever key is set (`ANTHROPIC_API_KEY`, then
`OPENAI_API_KEY` or `OPENAI_BASE_URL`).  Provider SDKs are imported only when a
live model is actually built.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from .cassette import ReplayModel
from .errors import ModelError, NoModelConfigured
from .types import Model

DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4.1-mini"}

NO_MODEL_HELP = (
    "no model configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY (or OPENAI_BASE_URL for a "
    "local server such as Ollama), or pass --model PROVIDER:NAME. "
    "Without any of them, --demo runs offline."
)


def choose_spec(spec: str | None, env: Mapping[str, str] = os.environ) -> str:
    """The spec to use: the one given, else AGENT_MODEL, else one guessed from the keys set."""
    if spec:
        return spec
    if env.get("AGENT_MODEL"):
        return env["AGENT_MODEL"]
    if env.get("ANTHROPIC_API_KEY"):
        return f"anthropic:{DEFAULT_MODELS['anthropic']}"
    if env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL"):
        return f"openai:{DEFAULT_MODELS['openai']}"
    raise NoModelConfigured(NO_MODEL_HELP)


def load_model(spec: str | None = None, *, strict: bool = False) -> Model:
    """Build the Model a spec names; `strict` applies to replays only."""
    spec = choose_spec(spec)
    provider, _, name = spec.partition(":")
    if not name:
        raise ModelError(
            f"model spec '{spec}' has no name: write anthropic:MODEL, openai:MODEL or replay:PATH"
        )
    if provider == "replay":
        return ReplayModel(name, strict=strict)
    if provider == "anthropic":
        from .anthropic_model import AnthropicModel

        return AnthropicModel(name)
    if provider == "openai":
        from .openai_model import OpenAIModel

        return OpenAIModel(name)
    raise ModelError(
        f"unknown provider '{provider}' in '{spec}': use anthropic:, openai: (any "
        "OpenAI-compatible server via OPENAI_BASE_URL) or replay:"
    )
