"""What a comparison runs and what it keeps of each run.

A `Job` is one run to make (this chapter, this task, the n-th time), `Limits` what
the comparison allows it on top of its task's own turn limit, and a `Record` what the
lab keeps of a finished run: the figures of its `RunResult`, the checker's verdict,
and the messages themselves.  `outcome_of` says how a run ended, for the tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llm import Message, Model
from llm.budget import BudgetSpent
from llm.errors import (
    AuthenticationFailed,
    ContextTooLong,
    ModelError,
    ModelNotFound,
    ProviderUnavailable,
    RateLimited,
)
from llm.recording import recorded_bounds
from llm.text_calls import ToolCallInText

from ..tasks import Task


@dataclass
class Limits:
    """What a comparison allows each run, on top of its task's own turn limit: fewer
    turns, a cap on every reply's output tokens, a total of input plus output tokens, a
    simulated context window (`--window`, see `Windowed`)."""

    max_turns: int | None = None
    reply_tokens: int | None = None
    total_tokens: int | None = None
    window: int | None = None

    def kept(self) -> dict[str, int]:
        """The bounds given, as a recording's header keeps them."""
        return {name: value for name, value in vars(self).items() if value is not None}

    def or_recorded(self, model: Model) -> Limits:
        """These bounds, each one not given taken from the recording `model` replays: a live
        run replays as it ran only under the bounds it ran under."""
        taken = {name: n for name, n in recorded_bounds(model).items() if name in vars(self)}
        return Limits(**{**taken, **self.kept()})


@dataclass
class Job:
    """One run to make: this chapter, this task, the `number`-th time of `runs`."""

    chapter: str
    task: Task
    number: int = 1
    runs: int = 1

    @property
    def label(self) -> str:
        """How the progress display names the run: `v1_tool_loop · one-bug · run 2/5`."""
        label = f"{self.chapter} · {self.task.name}"
        return f"{label} · run {self.number}/{self.runs}" if self.runs > 1 else label


@dataclass
class Record:
    """What the lab keeps of one finished run; `to_dict` is its JSON record."""

    chapter: str
    task: str
    run: int
    provenance: str  # scripted, recorded or live
    model: str
    solved: bool
    # solved, not solved (both checked), or why the run could not finish: rate limited,
    # provider error, window full, model error; `finished` tells the two kinds apart.
    outcome: str
    verdict: str
    stop: str
    error: str
    turns: int
    tool_calls: int
    input_tokens: int
    output_tokens: int
    estimated: bool
    peak_context: int
    context_per_turn: list[int]
    wall_s: float
    counts: dict[str, int]
    messages: list[Message] = field(repr=False)
    details: dict[str, Any] = field(default_factory=dict, repr=False)
    # What was sent at every answered call of the run's own loop: see `sent_requests`.
    requests: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def finished(self) -> bool:
        """The run reached its end and was checked; the others could not run to the end
        (the model could not be reached), and are counted beside the solved rates."""
        return self.outcome in CHECKED

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


CHECKED = ("solved", "not solved")
# What stopped a run that could not finish, by the error the model boundary raised.  A
# run stopped by its token budget (--max-tokens-total) did finish: it spent what it was
# given, as one stopped by --max-turns used its turns.
UNFINISHED: tuple[tuple[type[ModelError], str], ...] = (
    (RateLimited, "rate limited"),
    (ContextTooLong, "window full"),
    (ProviderUnavailable, "provider error"),
    (AuthenticationFailed, "provider error"),
    (ModelNotFound, "provider error"),
    (ToolCallInText, "tool-call setting"),  # the server left the model's call in its text
)
# What stopped a run before it measured anything of its chapter: the provider or the
# server, not the chapter (a full --window is a measurement: how far each chapter got).
UNMEASURED = ("rate limited", "provider error", "tool-call setting", "model error")


def outcome_of(failure: ModelError | None, solved: bool) -> str:
    """How the run ended, for the tables: the error that stopped it, else the check."""
    if failure is None or isinstance(failure, BudgetSpent):
        return "solved" if solved else "not solved"
    for kind, name in UNFINISHED:
        if isinstance(failure, kind):
            return name
    return "model error"
