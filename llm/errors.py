"""The few errors the model boundary raises, each with a message that says what to do.

Provider SDKs raise dozens of exception types.  A learner needs five questions
answered: is my key wrong, is the model name wrong, am I going too fast, is the
conversation too long, is the service down?  Each adapter translates into these,
and the command line prints the message on one line and exits with code 2.
"""

from .types import Usage


class ModelError(Exception):
    """Base class: the model could not give a reply; the message says why and what to do.

    `stop` is the stop a loop reports when this error ends its run.  `spent` holds the
    usage of a call the provider answered, and counted, though its answer could not be
    used (a tool call left in the text): a loop counts it as a turn.  Most errors come
    with no answer, and spend nothing.
    """

    stop = "error"
    spent: tuple[Usage, ...] = ()


class NoModelConfigured(ModelError):
    """No --model, no AGENT_MODEL and no API key: nothing to talk to."""


class AuthenticationFailed(ModelError):
    """The provider refused the key (401/403)."""


class ModelNotFound(ModelError):
    """The provider does not know the model name (404)."""


class RateLimited(ModelError):
    """Still 429 after the SDK's own retries."""


class ContextTooLong(ModelError):
    """The conversation no longer fits the model's context window."""


class ProviderUnavailable(ModelError):
    """Connection refused, timeouts or 5xx after the SDK's own retries."""


class CassetteError(ModelError):
    """A cassette cannot be replayed (missing, malformed, run out, request differs) or recorded."""


class UsageError(Exception):
    """Input the command line cannot use (a flag, the task, ./.env): one line, exit code 2."""
