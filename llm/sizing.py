"""What the next request of a long conversation costs, kept from one request to the next.

A long session is sent again before every model call, so estimating it afresh each time
would cost more the longer it runs.  The pieces here keep what was estimated:
`RequestSize` the system prompt and tools (estimated again only when they change) and
the provider's correction, `TrimmedView` a history with its old messages trimmed (each
trimmed once, as it leaves the recent turns).  Chapter 4's context window uses both.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .tokens import estimate_block, estimate_message, estimate_request
from .types import Message, Usage

Tools = list[dict[str, Any]] | None  # the tool schemas sent with a request


class RequestSize:
    """The parts of the next request's estimate that do not live in the history, and the
    ratio that corrects the estimate by the provider's count of the last request."""

    def __init__(self, note_floor: int = 0) -> None:
        self.note_floor = note_floor  # a note that ends the request counts as at least this
        self.ratio = 1.0  # the provider's count / our estimate, from the last report
        self.sent = 0  # our own estimate of the last request, which a report is compared to
        self.note = 0  # the estimate of the text that will end the next request
        self.fixed_tokens = 0  # the estimate of the last system prompt and tools given
        self._fixed: tuple[str, Tools] = ("", None)

    def end_with(self, note: str) -> None:
        """The next request ends with `note` (none: "")."""
        text = {"type": "text", "text": note}
        self.note = max(self.note_floor, estimate_block(text)) if note else 0

    def fixed(self, system: str, tools: Tools) -> int:
        """The estimate of the system prompt and tools, made again only when they change."""
        if self._fixed != (system, tools):
            self._fixed, self.fixed_tokens = (system, tools), estimate_request(system, [], tools)
        return self.fixed_tokens

    def corrected(self, size: int) -> int:
        return math.ceil(size * self.ratio)

    def report(self, usage: Usage) -> None:
        """Scale later estimates to the provider's count (ignored if estimated or missing)."""
        if not usage.estimated and usage.input_tokens > 0 and self.sent > 0:
            self.ratio = usage.input_tokens / self.sent


class TrimmedView:
    """`[trim(m) for m in messages[:recent_start(messages)]] + the rest`, kept from one
    request to the next: each message trimmed once, as it leaves the recent turns, and
    only the recent ones taken again (the last may have changed); `saved` adds up the
    tokens the trimming saves, and `shown` says whether the last request was this view."""

    def __init__(
        self, trim: Callable[[Message], Message], recent_start: Callable[[list[Message]], int]
    ) -> None:
        self.trim, self.recent_start = trim, recent_start
        self.restart()

    def restart(self) -> None:
        """The history's start changed (a summary): the view starts again."""
        self.messages: list[Message] = []
        self.settled = 0  # how many of its first messages are trimmed for good
        self.saved = 0
        self.shown = False

    def of(self, messages: list[Message], sizes: Sequence[int]) -> list[Message]:
        """The view of `messages`, whose estimates are `sizes`."""
        view = self.messages
        del view[self.settled :]
        for index in range(self.settled, self.recent_start(messages)):
            view.append(self.trim(messages[index]))
            if view[-1] is not messages[index]:
                self.saved += sizes[index] - estimate_message(view[-1])
        self.settled = len(view)
        view += messages[len(view) :]
        return view
