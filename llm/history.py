"""A long conversation's history, with what is read from it at every turn kept beside it.

A session of 100,000 messages must not cost more per turn than one of 100: the request's
estimated size and the plan are needed at every turn, and estimating every message, or
reading every message for the last plan, would grow with the session.  `History` keeps
each message as `llm.repair.mend` leaves it, and with it its estimate (`llm.tokens`),
their sum, and for each tool the messages that call it, each figure worked out once, as
its message arrives; a summary in place of the start (`replaced`) moves them along.
"""

from __future__ import annotations

from collections.abc import Sequence

from .repair import closing, mend, replaced
from .result import tool_uses
from .tokens import estimate_message
from .types import Message


class History:
    """Messages mended in one at a time, each with its estimated size and its tool calls."""

    def __init__(self) -> None:
        self.messages: list[Message] = []  # as the model sees them; read, never changed
        self.sizes: list[int] = []  # the estimate of each message, in order
        self.total = 0  # their sum
        self._calls: dict[str, list[int]] = {}  # tool name: the messages that call it

    def tokens(self) -> int:
        """The estimate of the messages as a request carries them, calls still waiting
        answered (`Session.messages`), without estimating them again."""
        return self.total + sum(map(estimate_message, closing(self.messages, 0, [])))

    def calls(self, name: str) -> Sequence[int]:
        """The index of each message that calls tool `name`, in order."""
        return self._calls.get(name, [])

    def add(self, message: Message, number: int, tokens: object = None) -> list[str]:
        """`mend(messages, message, number)`, and its notes: `tokens` is the message's
        estimate as worked out before (a session line keeps it), taken if it is a count
        and mending left the message as it came, else worked out again."""
        start = len(self.messages)
        notes = mend(self.messages, message, number)
        if message["role"] == "assistant" and self.messages:
            last = len(self.messages) - 1
            for name in {call["name"] for call in tool_uses(self.messages[last])}:
                indices = self._calls.setdefault(name, [])
                if indices[-1:] != [last]:  # a message joined to the last is still one
                    indices.append(last)
        if notes:  # joined, answered or left out: the last message may have changed too
            self._sized(max(start - 1, 0), None)
        else:  # added as it came (its results perhaps put in call order)
            counted = type(tokens) is int and tokens >= 0  # a bool, a float or -1 is not
            self._sized(start, [tokens] if counted else None)
        return notes

    def replaced(self, upto: object, summary: object) -> History:
        """A new history: `replaced(messages, upto, summary)` (or its ValueError), the
        kept messages' figures moved along with them."""
        history = History()
        history.messages = replaced(self.messages, upto, summary)
        shift = len(self.messages) - len(history.messages)  # the kept moved up by as many
        for name, indices in self._calls.items():
            history._calls[name] = [index - shift for index in indices if index - shift > 0]
        kept = self.sizes[len(self.sizes) - len(history.messages) + 1 :]
        history._sized(0, [estimate_message(history.messages[0]), *kept])
        return history

    def _sized(self, start: int, sizes: list[int] | None) -> None:
        """The estimates from message `start` on: `sizes`, or worked out again."""
        if sizes is None:
            sizes = list(map(estimate_message, self.messages[start:]))
        self.total += sum(sizes) - sum(self.sizes[start:])
        self.sizes[start:] = sizes
