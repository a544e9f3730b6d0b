"""Turn a model spec such as `anthropic:claude-sonnet-4-5` into a Model.

Which model a run uses is decided in this order: the `--model` flag, then the
`AGENT_MODEL` variable, then whichever key is set (`ANTHROPIC_API_KEY`, then
`OPENAI_API_KEY` or `OPENAI_BASE_URL`).  Those variables come from the environment
or from a `.env` file, read here.  Provider SDKs are imported only when a live
model is actually built.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

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


# A base URL decides where the keys of its provider are sent.
KEYS_SENT_TO = {
    "OPENAI_BASE_URL": ("OPENAI_API_KEY",),
    "ANTHROPIC_BASE_URL": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
}

# What a .env may set: the course's own settings, and nothing else.  Any other variable
# (a proxy or a CA bundle the provider's HTTP client would obey, BASH_ENV or LD_PRELOAD
# that every command would run) would be chosen by whoever wrote the file, which may be
# a repository you cloned: it is left out, with a warning that names it.
ENV_FILE_SETTINGS = frozenset(
    {
        "AGENT_MODEL",
        "AGENT_TIMEOUT",
        "AGENT_RETRIES",
        "AGENT_TEXT_TOOL_CALLS",
        "AGENT_RECORD_SETUP",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "NO_COLOR",
    }
)
# The names a .env added, listed in the environment for `machine`, which gives the
# agent's commands the environment the learner started with: never what a .env added.
FROM_ENV_FILE = "AGENT_FROM_ENV_FILE"

SETTING = re.compile(r"(?:export\s+)?(?P<name>[A-Za-z_]\w*)\s*=(?P<value>.*)", re.ASCII)
QUOTED = re.compile(r"""(?P<quote>["'])(?P<value>.*?)(?P=quote)\s*(?:#.*)?""")


def read_env_file(path: Path) -> tuple[dict[str, str], list[int]]:
    """The NAME=VALUE settings of a .env file, and the numbers of the lines that are not one.

    Only what every .env reader agrees on: blank lines and `#` comments are skipped,
    `export ` before a name is allowed, a value in '…' or "…" is taken as it is
    (nothing inside is expanded), and an unquoted value ends at a ` #` comment.  An
    empty value counts as not set, as in `.env.example`.  Raises OSError, and
    UnicodeDecodeError for a file that is not UTF-8.
    """
    settings, skipped = {}, []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        setting = SETTING.fullmatch(line)
        if not setting:
            skipped.append(number)
            continue
        value = setting["value"].strip()
        quoted = QUOTED.fullmatch(value)
        value = quoted["value"] if quoted else re.sub(r"(^|\s)#.*", "", value).strip()
        if value:
            settings[setting["name"]] = value
    return settings, skipped


def redirected_keys(from_file: Mapping[str, str], environment: Mapping[str, str]) -> list[str]:
    """A warning for each key of the environment that a base URL from .env would receive.

    Whoever wrote the .env chose that URL; the key is yours.
    """
    return [
        f"your {key} from the environment will be sent to {from_file[url]} set by ./.env"
        for url, keys in KEYS_SENT_TO.items()
        if url in from_file
        for key in keys
        if environment.get(key) and key not in from_file
    ]


def load_model(spec: str | None = None, *, strict: bool = False) -> Model:
    """Build the Model a spec names; `strict` applies to replays only."""
    spec = choose_spec(spec)
    provider, _, name = spec.partition(":")
    if not name:
        raise ModelError(
            f"model spec '{spec}' has no name: write anthropic:MODEL, openai:MODEL or replay:PATH"
        )
    if provider == "replay":  # replay:~/… is in your home folder, in PowerShell too
        return ReplayModel(os.path.expanduser(name), strict=strict)
    if strict:
        raise ModelError(
            f"--strict compares a replay with its recording, and {spec} is live: "
            "drop --strict, or replay a cassette with --model replay:PATH"
        )
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
