"""A bound on what one run may spend: input plus output tokens over all its model calls.

    model = Budgeted(load_model(spec), 200_000)

A live run is paid by the token.  `--max-turns` bounds the calls, not what each one
costs, and every call of a long run costs more than the one before it, since it sends
the whole conversation again.  So the bound is kept before each call, not after it:
the call is sent only if what it will read, and a reply of useful length, fit in what
is left, and its reply is capped (`max_tokens`) to that room.  What a call will read is
the last call's input as the provider counted it, plus an estimate of the messages
added since (the whole request is estimated at the first call, or after the history
was rewritten shorter); the total can pass the bound only by that estimate's error.

A call that does not fit is refused with `BudgetSpent`, a model error, so every
chapter's loop stops as it stops on any model error: the conversation closed, the
reason in the result's `error`, nothing lost.  A child agent (chapter 3) spends from
its parent's purse, and children that run at once each hold their call's share until
it returns, so together they cannot pass the bound either.
"""

from __future__ import annotations

import threading
from typing import Any

from .errors import ModelError
from .tokens import estimate_message, estimate_request
from .types import Message, Model, Reply
from .wrapper import Wrapper, for_child

SHORTEST_REPLY = 256  # tokens: a call with less room for its reply is not worth making


class BudgetSpent(ModelError):
    """The run has used the tokens `--max-tokens-total` allows it."""


class Purse:
    """The tokens of one run, shared by its agents: spent, and held by calls under way."""

    def __init__(self, limit: int) -> None:
        self.limit, self.spent, self.held = limit, 0, 0
        self._lock = threading.Lock()

    def hold(self, reading: int, max_tokens: int) -> int:
        """Hold a call's share (what it reads, and its reply), and return the reply's cap."""
        with self._lock:
            room = self.limit - self.spent - self.held - reading
            shortest = min(SHORTEST_REPLY, max_tokens)
            if room < shortest:
                held = f" (and {self.held:,} held by calls under way)" if self.held else ""
                raise BudgetSpent(
                    f"stopped before the next call: the run has used {self.spent:,} tokens"
                    f"{held}, the call would read about {reading:,} and leave less than "
                    f"{shortest:,} for its reply, and --max-tokens-total allows {self.limit:,}"
                )
            cap = min(max_tokens, room)
            self.held += reading + cap
            return cap

    def settle(self, share: int, used: int) -> None:
        """A call is back: its share is let go, and what it used is spent."""
        with self._lock:
            self.held -= share
            self.spent += used


class Budgeted(Wrapper):
    """`inner`, making no call that could take the run's tokens past `limit`."""

    def __init__(self, inner: Model, limit: int, purse: Purse | None = None) -> None:
        super().__init__(inner)
        self.limit = limit
        self.purse = purse or Purse(limit)  # one purse, shared with children
        self.last: tuple[int, int] | None = None  # messages sent at the last call, tokens read

    def complete(
        self,
        system: str,
        messages: list[Message],
        tools: list[dict[str, Any]] | None = None,
        stop: list[str] | None = None,
        max_tokens: int = 4096,
    ) -> Reply:
        reading = self.reading(system, messages, tools)
        cap = self.purse.hold(reading, max_tokens)
        used = 0
        try:
            reply = self.inner.complete(system, messages, tools=tools, stop=stop, max_tokens=cap)
            used = reply.usage.input_tokens + reply.usage.output_tokens
        finally:
            self.purse.settle(reading + cap, used)
        self.last = (len(messages), reply.usage.input_tokens)
        return reply

    def reading(self, system: str, messages: list[Message], tools: list[dict] | None) -> int:
        """What this call will read: the last call's count and what came after it."""
        if self.last is None or len(messages) < self.last[0]:
            return estimate_request(system, messages, tools)
        sent, read = self.last
        return read + sum(map(estimate_message, messages[sent:]))

    def child(self, key: str) -> Budgeted:
        return Budgeted(for_child(self.inner, key), self.limit, self.purse)
