"""What both adapters share about the HTTP between them and a provider.

How long one request may take (`AGENT_TIMEOUT`), how often a failed one is tried
again (`AGENT_RETRIES`), how many attempts a failed call really made, and reading a
200 answer that should be a JSON object but may be a proxy's login page.  The
retrying itself stays with the SDKs; this module only sets its limits and reports it.
"""

from __future__ import annotations

import ipaddress
import json
import math
import os
from typing import Any
from urllib.parse import urlsplit

from .errors import ModelError, ProviderUnavailable
from .types import Usage

# A hosted API that has not answered in a minute is overloaded or unreachable, and a
# learner should hear so in about two minutes, not ten: 60 s covers a reply of a few
# thousand tokens at the 50-100 tokens/s hosted models write, and one retry rides out a
# dropped connection, a 5xx or a short rate limit.  Worst case: 2 x 60 s, plus a
# backoff of under a second.
HOSTED_TIMEOUT = 60.0
DEFAULT_RETRIES = 1
# A model on your own machine may read a long conversation and write its whole answer
# (no streaming here) at a few tokens per second: five minutes before giving up.
LOCAL_TIMEOUT = 300.0


def is_local(base_url: str | None) -> bool:
    """True for a server on this machine or the local network: localhost, a name without
    a dot (a Docker service such as `ollama`), or a loopback or private address."""
    host = urlsplit(base_url).hostname if base_url else None
    if not host:
        return False  # no base URL: the provider's own hosted API
    if "." not in host:
        return True
    try:
        return ipaddress.ip_address(host).is_private
    except ValueError:
        return False


def request_timeout(base_url: str | None) -> float:
    """Seconds one request may take: `AGENT_TIMEOUT`, else the default for where the server is."""
    value = os.environ.get("AGENT_TIMEOUT", "").strip()
    if not value:
        return LOCAL_TIMEOUT if is_local(base_url) else HOSTED_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:  # also false for nan
        raise ModelError(
            f"AGENT_TIMEOUT must be a number of seconds above 0, such as 60; got {value!r}"
        )
    return seconds


def retry_count() -> int:
    """Retries after the first attempt: `AGENT_RETRIES`, else DEFAULT_RETRIES."""
    value = os.environ.get("AGENT_RETRIES", "").strip()
    if not value:
        return DEFAULT_RETRIES
    if not (value.isascii() and value.isdigit()):
        raise ModelError(
            f"AGENT_RETRIES must be a whole number, 0 or more, such as 1; got {value!r}"
        )
    return int(value)


def attempts(error: Exception) -> str:
    """How many requests a failed SDK call really sent, in words: "1 attempt", "3 attempts".

    Both SDKs number every request they send in its `x-stainless-retry-count` header
    (0 for the first, 1 for the first retry, …), and their errors carry the last
    request sent.  So the count is read, not assumed from the retry setting: a 401 is
    never retried, and a server may say `x-should-retry: false`.
    """
    request = getattr(error, "request", None)
    retries = request.headers.get("x-stainless-retry-count", "0") if request is not None else "0"
    count = int(retries) + 1 if retries.isdigit() else 1
    return f"{count} attempt" if count == 1 else f"{count} attempts"


def timed_out(where: str, base_url: str | None, seconds: float, error: Exception) -> ModelError:
    """The error for a server that took longer than AGENT_TIMEOUT on every attempt."""
    advice = (
        "A local model can be slow to write a long answer: raise AGENT_TIMEOUT."
        if is_local(base_url)
        else "Try again later, or raise AGENT_TIMEOUT."
    )
    return ProviderUnavailable(
        f"no answer from {where} within {seconds:g} s (AGENT_TIMEOUT), "
        f"{attempts(error)} made. {advice}"
    )


def error_detail(error: Exception) -> str:
    """The SDK's message about a failed request, on one short line.  An HTML error page
    (a gateway's or a proxy's) is named, not quoted."""
    body = getattr(error, "body", None)
    if isinstance(body, str) and body.lstrip().startswith("<"):
        return f"HTTP {getattr(error, 'status_code', '?')}, an HTML page"
    return one_line(getattr(error, "message", str(error)))


def one_line(text: str, limit: int = 200) -> str:
    """`text` with its whitespace collapsed, cut to `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def json_object(response: Any, base_url_variable: str, address: str) -> dict[str, Any]:
    """The body of a 200 answer (the SDK's `http_response`) as a dict, or a ModelError
    that says what came instead and which setting to check.

    A web page at the wrong address, or a proxy's login page, also answers 200.  The
    SDKs then hand back the page as a string (when it says text/html) or raise the json
    module's own decode error, and neither tells a learner what to check.
    """
    url, body = response.request.url, response.text
    check = f"is {base_url_variable} the API address ({address})"
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # broken, or nested past Python's stack
        if body.lstrip().startswith("<"):
            raise ModelError(
                f"the server at {url} answered with HTML, not JSON: {check}, not a web page?"
            ) from None
        if not body.strip():
            raise ModelError(f"the server at {url} answered with an empty body: {check}?") from None
        raise ModelError(
            f"the server at {url} answered with broken JSON ({one_line(body, 60)}): {check}, "
            "and does nothing in between cut answers short?"
        ) from None
    if not isinstance(data, dict):
        raise ModelError(f"the server at {url} answered with JSON that is not an object: {check}?")
    if data.get("error"):  # some servers and proxies report errors with status 200
        error = data["error"]
        message = error.get("message", error) if isinstance(error, dict) else error
        raise ModelError(f"the server at {url} answered with an error: {one_line(str(message))}")
    return data


def usage_from(usage: Any, input_key: str, output_key: str) -> Usage:
    """Token counts from a reply's `usage` object; missing or odd values count as 0."""
    if not isinstance(usage, dict):
        return Usage()
    counts = [usage.get(key) for key in (input_key, output_key)]
    return Usage(*(count if isinstance(count, int) and count >= 0 else 0 for count in counts))
