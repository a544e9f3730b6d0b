"""A bound on what one run may spend: input plus output tokens over all its model calls.

    model = Budgeted(load_model(spec), 200_000)

A live run is paid by the token.  `--max-turns` bounds the calls, not what each one
costs, and every call of a long run costs more than the one before it, since it sends
the whole conversation again.  Before each call the tokens used so far are compared
with the bound; once it is reached, the call is refused with `BudgetSpent`, a model
error, so every chapter's loop stops as it stops on any model error: the conversation
closed, the reason in the result's `error`, nothing lost.  A child agent (chapter 3)
spends from its parent's budget.
"""

from __future__ import annotations

from .errors import ModelError
from .types import Message, Model, Reply
from .wrapper import Wrapper, for_child


class BudgetSpent(ModelError):
    """The run has used the tokens `--max-tokens-total` allows it."""


class Budgeted(Wrapper):
    """`inner`, refusing any call once the run's tokens (input plus output) reach `limit`."""

    def __init__(self, inner: Model, limit: int, spent: list[int] | None = None) -> None:
        super().__init__(inner)
        self.limit = limit
        self.spent = spent if spent is not None else [0]  # one counter, shared with children

    def before(self, system: str, messages: list[Message], tools: list[dict] | None) -> None:
        if self.spent[0] >= self.limit:
            raise BudgetSpent(
                f"stopped before the next call: the run has used {self.spent[0]:,} tokens "
                f"and --max-tokens-total allows {self.limit:,}"
            )

    def after(self, reply: Reply, system: str, tools: list[dict] | None) -> None:
        self.spent[0] += reply.usage.input_tokens + reply.usage.output_tokens

    def child(self, key: str) -> Budgeted:
        return Budgeted(for_child(self.inner, key), self.limit, self.spent)
