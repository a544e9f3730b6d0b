"""How much a model reads at once: the input window of model families, and the budget
a request may take on one.

Each figure is a floor, as the providers document it: too small only makes an agent
compact its context earlier, while too large is met by the provider's `ContextTooLong`.
"""

from __future__ import annotations

# The input window of model families, by the start of the model's name.
WINDOWS = {
    "claude": 200_000,  # every Claude 3, 3.5, 3.7, 4 and 4.5 model
    "gpt-4o": 128_000,  # gpt-4o and gpt-4o-mini
    "gpt-4.1": 1_047_576,  # gpt-4.1, -mini and -nano
    "gpt-5": 272_000,  # 400,000 in all, of which up to 128,000 go to the reply
    "o3": 200_000,
    "o4-mini": 200_000,
    "deepseek": 128_000,  # deepseek-chat and deepseek-reasoner, since DeepSeek-V3.1
}
# Any other model: a local server may run one with a much smaller window (Ollama's
# default is a few thousand tokens); give --context-budget then.
FALLBACK_WINDOW = 32_000
# The estimate is off by 5 to 8% on average before a provider's report corrects it
# (`llm/tokens.py`), so a tenth of the window is kept in reserve for the first call.
ESTIMATE_MARGIN = 0.10
# Replays run on a budget small enough that chapter 4's demo goes through the stages
# of its context window; a cassette plays back the same stages only with the budget it
# was made with.
REPLAY_BUDGET = 12_000


def default_budget(model_name: str, reply_tokens: int = 4096) -> int:
    """Tokens a request may take on `model_name` (e.g. "anthropic:claude-sonnet-4-5"):
    the window, less the estimate's margin, less the reply's room (`max_tokens`),
    which the APIs count inside the window too."""
    provider, _, name = model_name.partition(":")
    if provider == "replay":
        return REPLAY_BUDGET
    prefixes = [prefix for prefix in WINDOWS if name.startswith(prefix)]
    window = WINDOWS[max(prefixes, key=len)] if prefixes else FALLBACK_WINDOW
    return int(window * (1 - ESTIMATE_MARGIN)) - reply_tokens
