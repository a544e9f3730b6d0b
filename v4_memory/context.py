"""Keeping a long session inside the context window, in stages, cheapest remedy first:

    fit(system, tools), before every model call
      ├─ estimate ≤ budget? ───────────────────────────────────────────► send the history
      ├─ stage 1: old tool results cut to a preview, in a view ────────► ≤ budget? send it
      ├─ stage 2: [memory flush] the oldest turns summarised, recorded ► ≤ budget? send it
      └─ stage 3: ContextFull: /compact, a bigger --context-budget, or a new session

A preview is the same every time and needs no record; a summary would read differently
if asked again, so the session records it (whole turns only: `Session.boundaries()`)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from llm import default_budget
from llm.errors import ContextTooLong, ModelError
from llm.result import text_of, transcript
from llm.sizing import RequestSize, Tools, TrimmedView
from llm.types import EMPTY_REPLY, Block, Message, Model, Reply, Usage, said_last
from llm.wrapper import for_child
from v3_subagents.subagents import DelegationRunResult

from .memory import Hit
from .session import Session

Flush = Callable[[Model, str, list[Message]], None] | None  # the memory flush: side, system, view

# The runtime note names the model spec and the work folder, whose length differs from one
# run to the next (a recording and its replay); counted at its length, it would move a
# compaction to another turn, and a strict replay would then stop there.  So it counts as
# at least this many tokens, more than it takes in a folder of the usual depth; a longer
# one counts in full, so that no request passes the budget by it.
NOTE_TOKENS = 100

# --- Stage 1: old tool results cut to a preview ------------------------------------------------

KEEP_TURNS = 3  # the tool results of the last three model calls are always sent whole
TRIM_OVER = 1_000  # characters; a shorter result costs little and is often the whole answer
PREVIEW_CHARS = 300  # what is kept of a longer one: its first lines, up to this many characters
CUT_NOTE = (
    "[… {cut:,} characters cut from this old tool result to save context; "
    "run the tool again if you need it]"
)


def trim_old_results(messages: list[Message], keep_turns: int = KEEP_TURNS) -> list[Message]:
    """Stage 1: a copy with each long tool result before the last `keep_turns` turns cut."""
    start = recent_start(messages, keep_turns)
    return [trim_results(message) for message in messages[:start]] + messages[start:]


def recent_start(messages: list[Message], keep_turns: int) -> int:
    """Where the last `keep_turns` turns (model calls and their results) begin."""
    seen = 0
    for index in range(len(messages) - 1, -1, -1):
        seen += messages[index]["role"] == "assistant"
        if seen == keep_turns:
            return index
    return 0


def trim_results(message: Message) -> Message:
    """`message` with its long tool results cut to a preview; itself if it has none."""
    content = message["content"]
    if isinstance(content, str) or not any(map(_long_result, content)):
        return message
    trimmed = [
        {**block, "content": preview(text_of(block["content"]))} if _long_result(block) else block
        for block in content
    ]
    return {"role": message["role"], "content": trimmed}


def preview(text: str) -> str:
    """The first lines of `text`, up to PREVIEW_CHARS characters, and a note of what was cut."""
    head = text[:PREVIEW_CHARS]
    line_end = head.rfind("\n")
    if line_end >= PREVIEW_CHARS // 2:  # whole lines read better, unless that loses too much
        head = head[:line_end]
    return f"{head}\n{CUT_NOTE.format(cut=len(text) - len(head))}"


def _long_result(block: Block) -> bool:
    return block.get("type") == "tool_result" and len(text_of(block.get("content", ""))) > TRIM_OVER


# --- Stage 2: the oldest turns summarised --------------------------------------------------------

KEEP_SHARE = 0.25  # of the budget, for the recent turns a summary leaves as they are
SUMMARY_TOKENS = 2_000  # room for the summary's reply; asked for in about 400 words
SUMMARY_PREFIX = "Summary of the earlier conversation:"
SUMMARY_SYSTEM = """You summarise the first part of a conversation between a user and a \
coding agent, so that the agent can go on with the work without it. Write plain text of at \
most about 400 words: what the user asked for and any constraints; what was done (files read \
and changed, commands run, the results that still matter); decisions and their reasons; what \
is still open and the next step. Keep exact file paths, names, numbers and error messages the \
work still needs. If the conversation starts with an earlier summary, fold it in. Do not call \
tools and do not address the user."""


class ContextFull(ModelError):
    """Stage 3: over the budget after stages 1 and 2; a ModelError, so the loop ends cleanly."""


@dataclass(frozen=True)
class Compaction:
    """One stage taken, for the run's record (`turn` 0: a `/compact` before any model call)."""

    turn: int
    stage: int
    tokens_before: int
    tokens_after: int
    detail: str = ""
    usage: Usage | None = None


class ContextWindow:
    """Fits each request of one session into `budget` tokens: `ask` sends what `fit` returns,
    then the reply's usage to `note_usage`; the memory flush sees the view before each summary."""

    def __init__(
        self, model: Model, session: Session, budget: int | None, *, before_summary: Flush = None
    ) -> None:
        budget = default_budget(model.name) if budget is None else budget  # the model's window
        if budget <= 0:
            raise ValueError(f"the context budget must be a positive number of tokens: {budget}")
        self.model, self.session, self.budget = model, session, budget
        self.before_summary = before_summary
        self.compactions: list[Compaction] = []
        self.turn = 0  # `fit` calls so far: the model call being prepared
        self.tokens = 0  # the size of the last request given, corrected
        self.size = RequestSize(note_floor=NOTE_TOKENS)  # the estimate, and its correction
        self.trimmed = TrimmedView(
            trim_results, lambda messages: recent_start(messages, KEEP_TURNS)
        )
        self._refused_turn = -1  # the last turn the provider refused as too long

    @property
    def ratio(self) -> float:
        """The provider's count / our estimate, from the last report."""
        return self.size.ratio

    def fit(self, system: str, tools: Tools = None, note: str = "") -> list[Message]:
        """The messages to send next, within the budget; ContextFull if they cannot be.
        `note`, a text that will end the request (the runtime note), counts too, as
        NOTE_TOKENS unless it is longer."""
        self.turn += 1
        return self._fit(system, tools, note, forced=False)

    def fit_after_overflow(self, system: str, tools: Tools = None, note: str = "") -> list[Message]:
        """After the provider refused `fit`'s messages as too long: stage 2 at once, once a turn."""
        if self._refused_turn == self.turn:
            raise ContextFull(
                "the provider refused the request as too long again, even after summarising "
                "older turns: start again with a smaller --context-budget, or a new session"
            )
        self._refused_turn = self.turn
        return self._fit(system, tools, note, forced=True)

    def ask(self, system: str, tools: Tools, note: str) -> Reply:
        """One call on the part of the session that fits the budget, `note` last; after
        `ContextTooLong` (the estimate was low), room is made and the call made again once."""
        try:
            with said_last(self.fit(system, tools, note), note) as sent:
                reply = self.model.complete(system, sent, tools=tools)
        except ContextTooLong:
            with said_last(self.fit_after_overflow(system, tools, note), note) as sent:
                reply = self.model.complete(system, sent, tools=tools)
        self.note_usage(reply.usage)
        return reply

    def note_usage(self, usage: Usage) -> None:
        """Scale later estimates to the provider's count (ignored if estimated or missing)."""
        self.size.report(usage)

    def compact_now(self, system: str, tools: Tools = None) -> Compaction | None:
        """`/compact`: stage 2 over the whole conversation; None if there is nothing yet."""
        messages, boundaries = self.session.messages(), self.session.boundaries()
        if not boundaries:
            return None
        tokens = self.size.corrected(self._size(system, tools))
        return self._summarise(system, boundaries[-1], messages, tokens, flush=True)

    def _fit(self, system: str, tools: Tools, note: str, *, forced: bool) -> list[Message]:
        self.size.end_with(note)
        view, size = self._view(system, tools)
        tokens = self.size.corrected(size)
        if forced or tokens > self.budget:
            self._summarise(system, self._cut(tokens, forced), view, tokens, flush=not forced)
            view, size = self._view(system, tools)
            tokens = self.size.corrected(size)
        if tokens > self.budget:
            raise self._full(tokens, "even after trimming old results and summarising")
        self.size.sent, self.tokens = size, tokens
        return view

    def _view(self, system: str, tools: Tools) -> tuple[list[Message], int]:
        """Stage 1: the history, or its view if the history is over the budget, and its size."""
        messages = self.session.messages()
        size = self._size(system, tools)
        if self.size.corrected(size) <= self.budget:
            self.trimmed.shown = False
            return messages, size
        view = self.trimmed.of(messages, self.session.history.sizes)
        trimmed = size - self.trimmed.saved
        if trimmed < size and not self.trimmed.shown:
            cut = sum(old is not new for old, new in zip(messages, view, strict=True))
            before, after = self.size.corrected(size), self.size.corrected(trimmed)
            self._record(1, before, after, f"long tool results cut in {cut} old messages")
        self.trimmed.shown = trimmed < size
        return view, trimmed

    def _cut(self, tokens: int, forced: bool) -> int:
        """How many messages stage 2 summarises: all but the recent turns that fit in KEEP_SHARE
        of the budget, so one summary buys many turns and the work at hand keeps its text."""
        before = list(itertools.accumulate(self.session.history.sizes, initial=0))  # before each
        cuts = [upto for upto in self.session.boundaries() if upto < len(before) - 1]
        if not cuts:
            refused = "refused by the provider, " if forced else ""
            raise self._full(tokens, f"{refused}with no older turns left to summarise")
        room = KEEP_SHARE * min(tokens, self.budget) / self.ratio
        fits = [upto for upto in cuts if before[-1] - before[upto] <= room]
        return fits[0] if fits else cuts[-1]  # at the least, all but the last turn

    def _summarise(
        self, system: str, upto: int, view: list[Message], tokens: int, *, flush: bool
    ) -> Compaction:
        """Stage 2: the first `upto` messages replaced by a summary, recorded in the session;
        the memory flush first sees the view under the system prompt of the call at hand."""
        # Side calls: in a cassette each one's replies have a section of their own, by key.
        number = self.session.compactions + 1
        if flush and self.before_summary:
            self.before_summary(for_child(self.model, f"flush-{number}"), system, view)
        old = [trim_results(message) for message in self.session.messages()[:upto]]
        request = [{"role": "user", "content": transcript(old)}]  # long results as in stage 1
        summariser = for_child(self.model, f"summary-{number}")
        try:
            reply = summariser.complete(SUMMARY_SYSTEM, request, max_tokens=SUMMARY_TOKENS)
        except ContextTooLong as error:
            why = "and the turns to summarise are too long for the model to read at once"
            raise self._full(tokens, why) from error
        text = text_of(reply.content)
        if text in ("", EMPTY_REPLY):
            raise self._full(tokens, "and the model wrote no summary")
        if reply.stop_reason == "max_tokens":
            text += "\n[the summary was cut off here]"
        self.session.compact(upto, {"role": "user", "content": f"{SUMMARY_PREFIX}\n\n{text}"})
        self.trimmed.restart()  # the history's start changed: its view starts again
        after = self.size.corrected(self.size.fixed_tokens + self.session.history.tokens())
        return self._record(2, tokens, after, f"{upto} messages summarised", reply.usage)

    def _full(self, tokens: int, why: str) -> ContextFull:
        return ContextFull(
            f"the next request does not fit the context: about {tokens:,} tokens for a budget "
            f"of {self.budget:,}, {why}; run /compact to summarise all of it, start again "
            "with a bigger --context-budget if the model's window allows it, or start a new "
            "session"
        )

    def _record(self, *fields: Any) -> Compaction:
        self.compactions.append(Compaction(self.turn, *fields))
        return self.compactions[-1]

    def _size(self, system: str, tools: Tools) -> int:
        """The next request's estimate: the session keeps each message's, and their sum."""
        return self.size.fixed(system, tools) + self.size.note + self.session.history.tokens()


@dataclass(kw_only=True)
class SessionRunResult(DelegationRunResult):
    """A chapter 3 result, plus the session (`messages`: its transcript) and its stages."""

    session_id: str = ""
    compactions: list[Compaction] = field(default_factory=list)
    recalled: list[Hit] = field(default_factory=list)
    calls: int = 0  # tool calls of this run: a summary may have replaced the messages of some

    @property
    def tool_calls(self) -> int:
        return self.calls

    def counts(self) -> dict[str, int]:
        return {**super().counts(), "compactions": len(self.compactions)}

    def details(self) -> dict[str, Any]:
        compactions = [{k: v for k, v in vars(c).items() if k != "usage"} for c in self.compactions]
        recalled = [{"turn": 1, "hits": [vars(h) for h in self.recalled]}] if self.recalled else []
        mine = {"session": self.session_id, "compactions": compactions, "recalled": recalled}
        return {**super().details(), **mine}

    def highlights(self) -> list[str]:
        lines = super().highlights() + [
            f"context: stage {c.stage} before turn {c.turn}, ≈{c.tokens_before:,} → "
            f"≈{c.tokens_after:,} tokens ({c.detail})"
            for c in self.compactions
        ]
        if self.session_id:
            lines.append(f"session {self.session_id} is saved: go on with --continue")
        return lines
