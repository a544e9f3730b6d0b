"""A scripted model provider on 127.0.0.1, so the real Anthropic and OpenAI SDKs run in tests.

Only the provider's HTTP is fake: the SDKs build real requests, retry for real and
parse real JSON, and our adapters translate what comes back.  A test queues the
answers (status, JSON body, headers) and afterwards reads what the server received.

    server.reply(anthropic_message(text("hi")))
    reply = model.complete("be brief", [{"role": "user", "content": "hello"}])
    assert server.requests[0].body["system"] == "be brief"

Two routes are served: `POST /v1/messages` (Anthropic Messages) and
`POST /v1/chat/completions` (OpenAI Chat Completions).  Answers are handed out in
the order they were queued, whatever the route.  Broken servers can be played too:
a raw text body with its own content type (a proxy's HTML login page), or
`server.never_answer()`, a request that is read and then left without a reply.
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from typing import Any

ANTHROPIC_PATH = "/v1/messages"
OPENAI_PATH = "/v1/chat/completions"
ROUTES = (ANTHROPIC_PATH, OPENAI_PATH)

# Both SDKs wait this long before a retry when the response says so, instead of
# their own backoff (0.5 s doubling); without it a retry test would sleep seconds.
RETRY_FAST = {"retry-after-ms": "1"}

# Tells the SDKs not to retry: an unscripted request is a test bug, not a hiccup.
NO_RETRY = {"x-should-retry": "false"}

_ids = count(1)


@dataclass
class Scripted:
    """One answer the server will give: status code, JSON body (or raw text) and headers,
    which may replace the default `content-type: application/json`."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Received:
    """One request as the server saw it; header names are lower-cased."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


# The answer of a server that reads the request and never replies (see never_answer).
SILENCE = Scripted(0, None)


class FakeProvider:
    """A loopback HTTP server that answers from a queue and records every request."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self._answers: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        # A short poll interval lets stop() return at once instead of after 0.5 s.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        """Base URL without the `/v1` part: what `anthropic.Anthropic(base_url=…)` expects."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeProvider:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    # --- scripting -----------------------------------------------------------------

    def queue(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        """Queue any answer; the next request to either route gets it."""
        lowered = {name.lower(): value for name, value in (headers or {}).items()}
        with self._lock:
            self._answers.append(Scripted(status, body, lowered))

    def reply(self, body: dict[str, Any]) -> None:
        """Queue a 200 with a success body (see the body builders below)."""
        self.queue(200, body)

    def fail(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        """Queue an error answer that the SDK, if it retries, retries after 1 ms."""
        self.queue(status, body, {**RETRY_FAST, **(headers or {})})

    def never_answer(self, times: int = 1) -> None:
        """Queue `times` requests that are read and recorded but never answered, like a hung
        server: the client waits until its own timeout."""
        with self._lock:
            self._answers.extend([SILENCE] * times)

    @property
    def pending(self) -> int:
        """Answers queued but not yet handed out: a test can check all were used."""
        with self._lock:
            return len(self._answers)

    # --- called from the handler thread ---------------------------------------------

    def _answer(self, request: Received) -> Scripted:
        with self._lock:
            self.requests.append(request)
            if request.method != "POST" or request.path not in ROUTES:
                return Scripted(404, _unknown_route(request), NO_RETRY)
            if not self._answers:
                return Scripted(500, _nothing_queued(request, len(self.requests)), NO_RETRY)
            return self._answers.popleft()


def _handler_for(provider: FakeProvider) -> type[BaseHTTPRequestHandler]:
    """A handler class bound to one FakeProvider (http.server wants a class, not an object)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (name fixed by http.server)
            self._handle()

        def do_GET(self) -> None:  # noqa: N802
            self._handle()

        def _handle(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length).decode("utf-8") if length else ""
            try:
                body = json.loads(raw) if raw else None
            except json.JSONDecodeError:
                body = raw
            received = Received(
                method=self.command,
                path=self.path.split("?", 1)[0],
                headers={name.lower(): value for name, value in self.headers.items()},
                body=body,
            )
            answer = provider._answer(received)
            if answer is SILENCE:
                provider._released.wait(timeout=600)  # until stop(): the client times out first
                return
            payload = (
                answer.body if isinstance(answer.body, str) else json.dumps(answer.body)
            ).encode("utf-8")
            request_id_header = "request-id" if received.path == ANTHROPIC_PATH else "x-request-id"
            headers = {
                "content-type": "application/json",
                "content-length": str(len(payload)),
                request_id_header: f"req_fake_{next(_ids):04d}",
                **answer.headers,
            }
            self.send_response(answer.status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Silence the per-request log line; pytest output stays readable."""

    return Handler


def _unknown_route(request: Received) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {
            "type": "not_found_error",
            "message": f"fake provider serves only POST {ROUTES}, got {request.method} "
            f"{request.path}",
        },
    }


def _nothing_queued(request: Received, number: int) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {
            "type": "api_error",
            "message": f"fake provider: no answer queued for request {number} to "
            f"{request.path}; queue one with server.reply(...)",
        },
    }


def closed_port_url() -> str:
    """A loopback URL where nothing listens, so connecting is refused at once."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# --- Anthropic Messages bodies ---------------------------------------------------------


def text(value: str) -> dict[str, Any]:
    """An Anthropic text block."""
    return {"type": "text", "text": value}


def tool_use(call_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic tool_use block."""
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}


def anthropic_message(
    *blocks: dict[str, Any],
    stop_reason: str = "end_turn",
    stop_sequence: str | None = None,
    input_tokens: int = 25,
    output_tokens: int = 7,
    model: str = "claude-test",
) -> dict[str, Any]:
    """A Messages API success body, shaped like the real one."""
    return {
        "id": f"msg_fake_{next(_ids):04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": list(blocks),
        "stop_reason": stop_reason,
        "stop_sequence": stop_sequence,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def anthropic_error(kind: str, message: str) -> dict[str, Any]:
    """A Messages API error body, e.g. kind="authentication_error" or "rate_limit_error"."""
    return {"type": "error", "error": {"type": kind, "message": message}}


# --- OpenAI Chat Completions bodies ----------------------------------------------------


def openai_tool_call(call_id: str | None, name: str, arguments: str | dict[str, Any]) -> dict:
    """One entry of `message.tool_calls`; a dict is encoded, a string is sent as is."""
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def openai_completion(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str = "stop",
    usage: tuple[int, int] | None = (25, 7),
    model: str = "gpt-test",
) -> dict[str, Any]:
    """A chat.completion success body; `usage=None` leaves usage out, as some servers do."""
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": f"chatcmpl-fake{next(_ids):04d}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
        ],
    }
    if usage is not None:
        prompt, completion = usage
        body["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
    return body


def openai_error(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    """A Chat Completions error body, e.g. kind="invalid_request_error"."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
