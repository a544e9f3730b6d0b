"""The base of the wrappers: a model that passes every call on to another model.

The lab limits a model (`Budgeted`, `Windowed`) and watches it (`Watched`, the figures'
`WatchedModel`), a recording keeps its replies (`RecordingModel`), chapter 3 stops a child's
(`StoppableModel`), `--step` pauses before each call (`Stepping`).  Each is a `Wrapper`
that overrides only what it adds, so the call is passed on in one place.
"""

from __future__ import annotations

from typing import Any

from .types import Message, Model, Reply


def for_child(model: Model, key: str) -> Model:
    """The model a child agent started by tool call `key` talks to.

    A replay or a recording gives the child its own section of the cassette; a live
    model simply serves the child too (the SDK clients are safe to share between
    threads).  Wrappers that pass calls on (the lab's, say) offer `child` as well.
    """
    child = getattr(model, "child", None)
    return child(key) if callable(child) else model


class Wrapper:
    """Passes every call on to `inner`, under the inner model's name.

    A wrapper overrides `before` to refuse a call (it raises) and `after` to look at the
    reply; one that must change the call itself overrides `complete`. It has no `child`:
    a wrapper that should wrap a child agent's model as well says how, in its own `child`.
    """

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.name = inner.name

    def complete(
        self,
        system: str,
        messages: list[Message],
        tools: list[dict[str, Any]] | None = None,
        stop: list[str] | None = None,
        max_tokens: int = 4096,
    ) -> Reply:
        self.before(system, messages, tools)
        reply = self.inner.complete(system, messages, tools=tools, stop=stop, max_tokens=max_tokens)
        self.after(reply, system, tools)
        return reply

    def before(
        self, system: str, messages: list[Message], tools: list[dict[str, Any]] | None
    ) -> None:
        """Called before the call is passed on; raising refuses it."""

    def after(self, reply: Reply, system: str, tools: list[dict[str, Any]] | None) -> None:
        """Called with the reply, before it is returned."""
