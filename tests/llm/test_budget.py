"""--max-tokens-total holds: no call is made that could take a run past its bound, whether
one agent calls or several children call at once."""

from __future__ import annotations

import threading

import pytest

from llm.budget import SHORTEST_REPLY, Budgeted, BudgetSpent
from llm.tokens import estimate_request
from llm.types import Reply, Usage

SYSTEM = "You are a coding agent. " * 20
TOOLS = [{"name": "bash", "description": "Run a command.", "input_schema": {"type": "object"}}]


class Greedy:
    """A provider whose counts are the course's estimates, and whose every reply uses all
    the room it is given: the worst case for a bound."""

    name = "greedy"

    def __init__(self) -> None:
        self.caps: list[int] = []

    def complete(self, system, messages, tools=None, stop=None, max_tokens=4096) -> Reply:
        self.caps.append(max_tokens)
        reading = estimate_request(system, messages, tools)
        text = [{"type": "text", "text": "word " * max_tokens}]
        return Reply(text, "max_tokens", Usage(reading, max_tokens))


def work(model: Budgeted) -> tuple[int, int]:
    """An agent's loop: each reply and a tool result of 500 words join the history, until
    the bound refuses a call; the tokens its calls used, and what the refused one reads."""
    messages, used = [{"role": "user", "content": "Fix the tests."}], 0
    while True:
        try:
            reply = model.complete(SYSTEM, messages, TOOLS, max_tokens=1_000)
        except BudgetSpent:
            return used, estimate_request(SYSTEM, messages, TOOLS)
        used += reply.usage.input_tokens + reply.usage.output_tokens
        messages += [
            {"role": "assistant", "content": reply.content},
            {"role": "user", "content": "result " * 500},
        ]


@pytest.mark.parametrize("limit", [3_000, 20_000, 100_000])
def test_one_agent_never_passes_the_bound_and_stops_near_it(limit: int) -> None:
    provider = Greedy()
    used, refused = work(Budgeted(provider, limit))
    assert used <= limit
    assert limit - used < refused + SHORTEST_REPLY, "a call that fitted was refused"
    assert max(provider.caps) <= 1_000 and min(provider.caps) >= SHORTEST_REPLY


def test_children_calling_at_once_never_pass_the_bound_together() -> None:
    """Four children spend from their parent's purse from four threads: each call holds its
    share while it is out, so no two can both take the last room."""
    provider, limit = Greedy(), 30_000
    parent = Budgeted(provider, limit)
    used: list[int] = []
    threads = [
        threading.Thread(target=lambda key=key: used.append(work(parent.child(key))[0]))
        for key in ("toolu_1", "toolu_2", "toolu_3", "toolu_4")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(used) == 4 and sum(used) <= limit
    assert parent.purse.spent == sum(used) and parent.purse.held == 0


def test_a_call_that_does_not_fit_says_what_it_would_read_and_what_is_allowed() -> None:
    with pytest.raises(BudgetSpent) as refused:
        Budgeted(Greedy(), 100).complete(SYSTEM, [{"role": "user", "content": "hi"}], TOOLS)
    said = str(refused.value)
    assert "the run has used 0 tokens, the call would read about" in said
    assert f"leave less than {SHORTEST_REPLY} for its reply" in said
    assert said.endswith("--max-tokens-total allows 100")
