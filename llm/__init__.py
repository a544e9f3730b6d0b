"""The model boundary: one call, `model.complete(...) -> Reply`, whatever the provider.

Also home to what every chapter shares but none teaches: the run result, the
terminal console and the command line.  Nothing here imports a chapter.
"""

from .console import Console
from .errors import (
    AuthenticationFailed,
    CassetteError,
    ContextTooLong,
    ModelError,
    ModelNotFound,
    NoModelConfigured,
    ProviderUnavailable,
    RateLimited,
)
from .result import RunResult
from .spec import load_model
from .types import Block, Message, Model, Reply, Usage
from .windows import default_budget

__all__ = [
    "AuthenticationFailed",
    "Block",
    "CassetteError",
    "Console",
    "ContextTooLong",
    "Message",
    "Model",
    "ModelError",
    "ModelNotFound",
    "NoModelConfigured",
    "ProviderUnavailable",
    "RateLimited",
    "Reply",
    "RunResult",
    "Usage",
    "default_budget",
    "load_model",
]
