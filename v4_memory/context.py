"""Keeping a long session inside the context window, in stages.

The conversation only grows, and a model reads all of it at every call: sooner or later
the next request is larger than the model's window, and the provider refuses it.  So
before each call the agent measures the request (system prompt, tool schemas, messages)
and, while it is over the budget, frees room, cheapest remedy first:

    fit(system, tools), before every model call
      │
      ├─ estimate ≤ budget? ───────────────────────────────────► send the history
      │
      ├─ stage 1: old tool results cut to a short preview
      │           (a view: the session file keeps them whole) ─► ≤ budget? send it
      │
      ├─ stage 2: [memory flush] the oldest turns summarised by the model,
      │           the summary recorded in the session ─────────► ≤ budget? send it
      │
      └─ stage 3: ContextFull: /compact, a bigger --context-budget, or a new session

A preview costs no model call and loses little (the model can run the tool again), and
the same history always gives the same previews, so stage 1 needs no record.  A summary
costs a call, loses detail for good, and asked again would read differently, so it comes
second and is written to the session (`Session.compact`), which a resumed session
replays.  It replaces whole turns only, cutting where `Session.boundaries()` allows,
since the APIs refuse a tool result whose call is not just before it:

    [task] [call t1] [result t1] [call t2] [result t2] [answer] [task] …
                    ✗           ✓          ✗           ✓        ✓

The window keeps a running total: each message is estimated once, when it joins the
history, and the provider's count corrects the estimate after each call.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from llm.cassette import for_child
from llm.errors import ContextTooLong, ModelError
from llm.result import CUT_OFF, text_of
from llm.tokens import estimate_message, estimate_request
from llm.types import EMPTY_REPLY, Block, Message, Model, Usage
from v3_subagents.subagents import DelegationRunResult

from .memory import Hit
from .session import Session

Tools = list[dict[str, Any]] | None  # the tool schemas sent with a request

# --- Budgets ---------------------------------------------------------------------------------

# The input window of model families, by the start of the model's name, as their
# providers document them.  Each figure is a floor: too small only compacts earlier,
# while too large is met by the provider's ContextTooLong, which `fit_after_overflow`
# turns into a compaction.
WINDOWS = {
    "claude": 200_000,  # every Claude 3, 3.5, 3.7, 4 and 4.5 model
    "gpt-4o": 128_000,  # gpt-4o and gpt-4o-mini
    "gpt-4.1": 1_047_576,  # gpt-4.1, -mini and -nano
    "gpt-5": 272_000,  # 400,000 in all, of which up to 128,000 go to the reply
    "o3": 200_000,
    "o4-mini": 200_000,
    "deepseek": 128_000,  # deepseek-chat and deepseek-reasoner, since DeepSeek-V3.1
}
# Any other model: a local server may run one with a much smaller window (Ollama's
# default is a few thousand tokens); give --context-budget then.
FALLBACK_WINDOW = 32_000
# The estimate is off by 5 to 8% on average before a provider's report corrects it
# (`llm/tokens.py`), so a tenth of the window is kept in reserve for the first call.
ESTIMATE_MARGIN = 0.10
# Replays run on a budget small enough that the demo's dozen turns go through stage 1
# and stage 2; a cassette plays back the same stages only with the budget it was made with.
REPLAY_BUDGET = 12_000


def default_budget(model_name: str, reply_tokens: int = 4096) -> int:
    """Tokens a request may take on `model_name` (e.g. "anthropic:claude-sonnet-4-5"):
    the window, less the estimate's margin, less the reply's room (`max_tokens`),
    which the APIs count inside the window too."""
    provider, _, name = model_name.partition(":")
    if provider == "replay":
        return REPLAY_BUDGET
    prefixes = [prefix for prefix in WINDOWS if name.startswith(prefix)]
    window = WINDOWS[max(prefixes, key=len)] if prefixes else FALLBACK_WINDOW
    return int(window * (1 - ESTIMATE_MARGIN)) - reply_tokens


# --- Stage 1: old tool results cut to a preview ------------------------------------------------

KEEP_TURNS = 3  # the tool results of the last three model calls are always sent whole
TRIM_OVER = 1_000  # characters; a shorter result costs little and is often the whole answer
PREVIEW_CHARS = 300  # what is kept of a longer one: its first lines, up to this many characters
CUT_NOTE = (
    "[… {cut:,} characters cut from this old tool result to save context; "
    "run the tool again if you need it]"
)


def trim_old_results(messages: list[Message], keep_turns: int = KEEP_TURNS) -> list[Message]:
    """Stage 1: the messages with every long tool result before the last `keep_turns`
    model calls cut to a preview.  Nothing is changed in place."""
    start = recent_start(messages, keep_turns)
    return [trim_results(message) for message in messages[:start]] + messages[start:]


def recent_start(messages: list[Message], keep_turns: int) -> int:
    """Where the last `keep_turns` turns begin: a turn is one assistant message (one model
    call) and the results that answer it."""
    seen = 0
    for index in range(len(messages) - 1, -1, -1):
        if messages[index]["role"] == "assistant":
            seen += 1
            if seen == keep_turns:
                return index
    return 0


def trim_results(message: Message) -> Message:
    """`message` with each tool result over TRIM_OVER characters cut to a preview;
    the very same object when it has none."""
    content = message["content"]
    if isinstance(content, str) or not any(map(_long_result, content)):
        return message
    trimmed = [
        {**block, "content": preview(_result_text(block))} if _long_result(block) else block
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
    return block.get("type") == "tool_result" and len(_result_text(block)) > TRIM_OVER


def _result_text(block: Block) -> str:
    content = block.get("content", "")
    return content if isinstance(content, str) else text_of(content)


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


def transcript(messages: list[Message]) -> str:
    """The messages as plain text for the summariser: who said what, which tools ran,
    and their results, long ones cut to a preview as in stage 1."""
    lines = []
    for message in messages:
        content = message["content"]
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            lines.append(_transcript_line(message["role"], block))
    return "\n\n".join(lines)


def _transcript_line(role: str, block: Block) -> str:
    kind = block.get("type")
    if kind == "tool_use":
        arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
        if len(arguments) > PREVIEW_CHARS:  # a file written in full: its start says enough
            arguments = arguments[:PREVIEW_CHARS] + " …"
        return f"[tool call] {block.get('name')} {arguments}"
    if kind == "tool_result":
        text = _result_text(block)
        label = "[tool error]" if block.get("is_error") else "[tool result]"
        return f"{label} {preview(text) if len(text) > TRIM_OVER else text}"
    return f"[{role}] {block.get('text', '')}"


def summary_message(text: str) -> Message:
    """The user message of text that stands for the summarised turns."""
    return {"role": "user", "content": f"{SUMMARY_PREFIX}\n\n{text}"}


# --- The window ----------------------------------------------------------------------------------

CONTINUE = (
    "Your last reply was cut off at the output limit (max_tokens). Go on from where it "
    "stopped. If you were writing a tool call, it did not run: make it again, smaller "
    "(a long file in parts)."
)


def continuation(cut_off: list[Block]) -> Message:
    """What chapter 4 sends after a reply cut off at max_tokens, to go on instead of stopping:
    an error result for each call in it (half written, none ran), then the request to go on."""
    results = [
        {"type": "tool_result", "tool_use_id": call["id"], "content": CUT_OFF, "is_error": True}
        for call in cut_off
        if call.get("type") == "tool_use"
    ]
    return {"role": "user", "content": [*results, {"type": "text", "text": CONTINUE}]}


class ContextFull(ModelError):
    """Stage 3: the request does not fit the budget even after the other stages.  A
    ModelError, so a loop that already ends cleanly on one ends cleanly on this too."""


@dataclass(frozen=True)
class Compaction:
    """One stage taken to fit the budget, for the run's record.

    `turn` is the model call it came before, counted from 1 by `fit` (0: `/compact`
    before any call); the tokens are the request's, corrected as the budget check
    sees them; `usage` is what stage 2's own model call cost.
    """

    turn: int
    stage: int
    tokens_before: int
    tokens_after: int
    detail: str = ""
    usage: Usage | None = None


class ContextWindow:
    """Fits each request of one session into `budget` tokens (see the module's docstring).

    The loop calls `fit` before each model call and sends what it returns, then
    `note_usage` with the reply's usage.  `compactions` lists the stages taken.

    `before_summary`, if given, is called just before each stage-2 summary with the
    messages as they would be sent: the memory flush, a side turn in which the agent
    saves what it wants to keep.  A callable rather than a signal back to the loop, so
    that the flush comes before every summary (automatic or `/compact`) and the loop
    stays one `fit` per turn.  It is not called after the provider refused a request
    as too long, since the flush turn would be refused too.
    """

    def __init__(
        self,
        model: Model,
        session: Session,
        budget: int,
        *,
        keep_turns: int = KEEP_TURNS,
        before_summary: Callable[[list[Message]], None] | None = None,
    ) -> None:
        if budget <= 0:
            raise ValueError(f"the context budget must be a positive number of tokens: {budget}")
        self.model, self.session, self.budget = model, session, budget
        self.keep_turns = keep_turns
        self.before_summary = before_summary
        self.compactions: list[Compaction] = []
        self.turn = 0  # `fit` calls so far: the model call being prepared
        self.ratio = 1.0  # the provider's count / our estimate, from the last report
        self.tokens = 0  # the size of the last request given, corrected, for display
        self._sent = 0  # our own estimate of that request, which a report is compared to
        self._trimming = False  # whether that request was a stage-1 view
        self._overflow_turn = -1
        self._fixed: tuple[str, Tools, int] = ("", None, 0)  # system, tools, their estimate
        self._start_count()

    def fit(self, system: str, tools: Tools = None) -> list[Message]:
        """The messages to send next, within the budget: stages 1 and 2 as needed.
        Raises ContextFull (stage 3) when even they do not make room."""
        self.turn += 1
        return self._fit(system, tools, forced=False)

    def fit_after_overflow(self, system: str, tools: Tools = None) -> list[Message]:
        """The messages to send after the provider refused `fit`'s as too long; once a turn.

        The refusal does not say by how much, so there is no figure to correct the
        estimate with: stage 2 is taken at once, since it frees the most.
        """
        if self._overflow_turn == self.turn:
            raise ContextFull(
                "the provider refused the request as too long again, even after summarising "
                "older turns: start again with a smaller --context-budget, or a new session"
            )
        self._overflow_turn = self.turn
        return self._fit(system, tools, forced=True)

    def note_usage(self, usage: Usage) -> None:
        """Learn from the provider's count of the request `fit` gave.  Estimated figures
        (a scripted replay) and missing ones (0) teach nothing and are ignored."""
        if not usage.estimated and usage.input_tokens > 0 and self._sent > 0:
            self.ratio = usage.input_tokens / self._sent

    def compact_now(self, system: str, tools: Tools = None) -> Compaction | None:
        """`/compact`: stage 2 on demand over the whole conversation; None when there is
        nothing to summarise yet."""
        boundaries = self.session.boundaries()
        if not boundaries:
            return None
        messages = self.session.messages()
        tokens = self._corrected(self._size(system, tools, messages))
        return self._summarise(boundaries[-1], messages, tokens, flush=True)

    # --- the stages ---

    def _fit(self, system: str, tools: Tools, *, forced: bool) -> list[Message]:
        view, size = self._view(system, tools)
        tokens = self._corrected(size)
        if forced or tokens > self.budget:
            upto = self._cut(min(tokens, self.budget))
            if upto is None:
                refused = "refused by the provider, " if forced else ""
                raise self._full(tokens, f"{refused}with no older turns left to summarise")
            self._summarise(upto, view, tokens, flush=not forced)
            view, size = self._view(system, tools)
            tokens = self._corrected(size)
        if tokens > self.budget:
            raise self._full(tokens, "even after trimming old results and summarising")
        self._sent, self.tokens = size, tokens
        return view

    def _view(self, system: str, tools: Tools) -> tuple[list[Message], int]:
        """The history, or its stage-1 view when the history is over the budget, and
        its estimated size.  Records stage 1 when it starts trimming."""
        messages = self.session.messages()
        size = self._size(system, tools, messages)
        if self._corrected(size) <= self.budget:
            self._trimming = False
            return messages, size
        view, trimmed = self._trimmed(messages)
        trimmed += self._fixed[2]
        if trimmed < size and not self._trimming:
            cut = sum(old is not new for old, new in zip(messages, view, strict=True))
            before, after = self._corrected(size), self._corrected(trimmed)
            self._record(1, before, after, f"long tool results cut in {cut} old messages")
        self._trimming = trimmed < size
        return view, trimmed

    def _cut(self, limit: int) -> int | None:
        """How many messages stage 2 summarises: all but the recent turns that fit in
        KEEP_SHARE of `limit` (the budget, or after a refusal the smaller size refused),
        and never the last message or a call without its result.

        A summary costs a model call and loses detail, so one should buy many turns:
        after it the request is the system prompt, the summary and at most a quarter of
        the budget.  The recent turns are kept word for word because the work in
        progress needs their exact text (the file just read, the error just seen).
        """
        history = self.session.messages()
        self._count(history)
        cuts = [upto for upto in self.session.boundaries() if upto < len(history)]
        if not cuts:
            return None
        allowed, room = set(cuts), KEEP_SHARE * limit / self.ratio
        best, kept = cuts[-1], 0  # at the least, all but the last turn
        for upto in range(len(history) - 1, 0, -1):  # the kept part grows, newest first
            kept += self._sizes[upto]
            if kept > room:
                break
            if upto in allowed:
                best = upto
        return best

    def _summarise(self, upto: int, view: list[Message], tokens: int, *, flush: bool) -> Compaction:
        """Stage 2: replace the first `upto` messages by a summary, recorded in the session.
        `view` is what the memory flush sees; `tokens`, the size of the request before."""
        if flush and self.before_summary:
            self.before_summary(view)
        request = [{"role": "user", "content": transcript(self.session.messages()[:upto])}]
        # A side call, not a turn: a cassette keeps its reply in a section of its own, so
        # a replay gives each summary its text wherever the budget makes it happen.
        summariser = for_child(self.model, f"summary-{self.session.compactions + 1}")
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
        self.session.compact(upto, summary_message(text))
        self._trimming = False
        after = self._corrected(self._fixed[2] + self._count(self.session.messages()))
        return self._record(2, tokens, after, f"{upto} messages summarised", reply.usage)

    def _full(self, tokens: int, why: str) -> ContextFull:
        return ContextFull(
            f"the next request does not fit the context: about {tokens:,} tokens for a budget "
            f"of {self.budget:,}, {why}; run /compact to summarise all of it, start again "
            "with a bigger --context-budget if the model's window allows it, or start a new "
            "session"
        )

    def _record(
        self, stage: int, before: int, after: int, detail: str, usage: Usage | None = None
    ) -> Compaction:
        compaction = Compaction(self.turn, stage, before, after, detail, usage)
        self.compactions.append(compaction)
        return compaction

    # --- the estimate: a running total ---

    def _corrected(self, size: int) -> int:
        """Our estimate scaled to the provider's count, as the last report showed it."""
        return math.ceil(size * self.ratio)

    def _size(self, system: str, tools: Tools, messages: list[Message]) -> int:
        """`estimate_request(system, messages, tools)`, from the running total.  The system
        prompt and tools are estimated again only when they change."""
        if (self._fixed[0], self._fixed[1]) != (system, tools):
            self._fixed = (system, tools, estimate_request(system, [], tools))
        return self._fixed[2] + self._count(messages)

    def _start_count(self) -> None:
        """Forget every figure: at the start, and after a summary replaced the history's start."""
        self._summaries = self.session.compactions if self.session else 0
        self._sizes: list[int] = []  # the estimate of each message counted, by position
        self._total = 0  # their sum
        self._last: Message | None = None  # the last message counted, as it was then
        self._old: list[Message] = []  # stage 1's view of the first messages, kept as it grows
        self._old_size = 0  # its estimate
        self._old_whole = 0  # the estimate of the same messages whole

    def _count(self, messages: list[Message]) -> int:
        """The estimate of `messages`: the running total, extended by the messages new
        since the last count.  The history only grows at its end, and only its last
        message may be replaced (joined with the next one, or the stand-in answer to
        open calls replaced by the results), so that is the one figure checked again;
        a summary changes the start, and the count starts again."""
        if self._summaries != self.session.compactions or len(messages) < len(self._sizes) - 1:
            self._start_count()
        elif self._sizes and messages[len(self._sizes) - 1 : len(self._sizes)] != [self._last]:
            self._total -= self._sizes.pop()
        for message in messages[len(self._sizes) :]:
            self._sizes.append(estimate_message(message))
            self._total += self._sizes[-1]
        self._last = messages[-1] if messages else None
        return self._total

    def _trimmed(self, messages: list[Message]) -> tuple[list[Message], int]:
        """`trim_old_results(messages)` and its estimate (without the system prompt and
        tools), from the view kept so far: a message is trimmed once, when it leaves the
        last `keep_turns` turns.  `messages` must have been counted (`_count`)."""
        start = recent_start(messages, self.keep_turns)
        if start < len(self._old):  # the recent turns grew backwards: never as a session grows
            self._old, self._old_size, self._old_whole = [], 0, 0
        for index in range(len(self._old), start):
            message, size = messages[index], self._sizes[index]
            self._old.append(trim_results(message))
            self._old_size += size if self._old[-1] is message else estimate_message(self._old[-1])
            self._old_whole += size
        return self._old + messages[start:], self._total - self._old_whole + self._old_size


@dataclass(kw_only=True)
class SessionRunResult(DelegationRunResult):
    """A chapter 3 result, plus where the conversation is kept and what kept it in budget.

    `messages` is the session's whole transcript, every message as written; what the
    model last saw (after a summary, the summary and the recent turns) is the session's
    `messages()`.  The fields below are given by name: `SessionRunResult(stop, messages,
    usage, session_id=…, compactions=…)`.
    """

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
        compactions = [
            {key: value for key, value in vars(c).items() if key != "usage"}
            for c in self.compactions
        ]
        recalled = (
            [{"turn": 1, "hits": [vars(hit) for hit in self.recalled]}] if self.recalled else []
        )
        return {
            **super().details(),
            "session": self.session_id,
            "compactions": compactions,
            "recalled": recalled,
        }

    def highlights(self) -> list[str]:
        lines = super().highlights()
        for c in self.compactions:
            lines.append(
                f"context: stage {c.stage} before turn {c.turn}, ≈{c.tokens_before:,} → "
                f"≈{c.tokens_after:,} tokens ({c.detail})"
            )
        if self.session_id:
            lines.append(f"session {self.session_id} is saved: go on with --continue")
        return lines
