"""Chapter 4's context window: old results trimmed, old turns summarised, then a clear stop."""

from __future__ import annotations

import copy
import json
import math
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm.anthropic_model import AnthropicModel
from llm.cassette import ReplayModel
from llm.errors import ContextTooLong, ModelError
from llm.tokens import estimate_block, estimate_request
from llm.types import Message, Reply, Usage, said_last
from llm.windows import FALLBACK_WINDOW, REPLAY_BUDGET, default_budget
from llm.wrapper import Wrapper
from tests.fake_provider import FakeProvider, anthropic_error, anthropic_message, text
from tests.v4_memory.test_session import assert_valid_request
from v4_memory.context import (
    CUT_NOTE,
    KEEP_SHARE,
    KEEP_TURNS,
    NOTE_TOKENS,
    PREVIEW_CHARS,
    SUMMARY_PREFIX,
    SUMMARY_SYSTEM,
    Compaction,
    ContextFull,
    ContextWindow,
    trim_old_results,
)
from v4_memory.prompt import Layer
from v4_memory.session import Session, SessionStore

SYSTEM = "You are a coding agent. Use the tools."
TOOLS = [
    {
        "name": "bash",
        "description": "Run a shell command in the project directory.",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
    }
]
CUT = re.compile(r"\[… [\d,]+ characters cut from this old tool result")


def user(words: str) -> Message:
    return {"role": "user", "content": words}


def call(tool_id: str, command: str = "pytest -q") -> Message:
    tool = {"type": "tool_use", "id": tool_id, "name": "bash", "input": {"command": command}}
    return {"role": "assistant", "content": [{"type": "text", "text": "Let me look."}, tool]}


def results(tool_id: str, output: str) -> Message:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": output, "is_error": False}
    return {"role": "user", "content": [block]}


def output(tool_id: str, chars: int) -> str:
    """Tool output of about `chars` characters, its first line naming the call."""
    lines = [f"output of {tool_id}"]
    while sum(map(len, lines)) + len(lines) < chars:
        lines.append(f"line {len(lines)}: collected 12 items, test_parse passed in 0.01s")
    return "\n".join(lines)


class Summariser(Wrapper):
    """The model, faked: scripted summaries in order, each request kept for the test to read."""

    def __init__(self, *summaries: str, stop_reason: str = "end_turn") -> None:
        replies = [Reply([{"type": "text", "text": summary}], stop_reason) for summary in summaries]
        super().__init__(ReplayModel(replies))
        self.name = "replay:memory"
        self.requests: list[dict[str, Any]] = []

    def before(self, system: str, messages: list[Message], tools: list[dict] | None) -> None:
        self.requests.append({"system": system, "messages": list(messages), "tools": tools})


def tool_turn(session: Session, chars: int = 2_000) -> None:
    """The model's tool call and its result, as the loop saves them."""
    tool_id = f"t{len(session.messages())}"
    session.append(call(tool_id))
    session.append(results(tool_id, output(tool_id, chars)))


def work(session: Session, window: ContextWindow, turns: int, chars: int = 2_000) -> None:
    """`turns` turns of the loop: fit, then the model's tool call and its result."""
    for _ in range(turns):
        window.fit(SYSTEM, TOOLS)
        tool_turn(session, chars)


def work_until(
    session: Session, window: ContextWindow, stage: int, chars: int = 2_000
) -> tuple[list[Message], list[Message]]:
    """Turns of the loop until one takes `stage`: the history before that turn's `fit`,
    and the view it gave."""
    taken = len(window.compactions)
    for _ in range(200):
        history = session.messages()
        view = window.fit(SYSTEM, TOOLS)
        if any(compaction.stage == stage for compaction in window.compactions[taken:]):
            return history, view
        tool_turn(session, chars)
    raise AssertionError(f"stage {stage} never came")


def compaction_lines(session: Session) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in session.path.read_text().splitlines()]
    return [line for line in lines if line.get("type") == "compaction"]


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path, sync=False)


# --- The stages, in order ---------------------------------------------------------------------


def test_under_the_budget_the_history_is_sent_as_it_is(store: SessionStore) -> None:
    session = store.create()
    session.append(user("Fix the failing test."))
    window = ContextWindow(Summariser(), session, budget=50_000)

    work(session, window, 5)
    view = window.fit(SYSTEM, TOOLS)

    assert view == session.messages()
    assert window.compactions == []
    assert window.tokens == estimate_request(SYSTEM, view, TOOLS)


def test_the_stages_come_in_order_on_a_growing_session(store: SessionStore) -> None:
    session = store.create()
    session.append(user("Fix the failing test."))
    model = Summariser("The user wants test_parse fixed; pytest shows it failing.", "Still on it.")
    window = ContextWindow(model, session, budget=3_000)

    work_until(session, window, stage=1)  # over: stage 1 alone is enough, and asks no model
    [trimmed] = window.compactions
    assert trimmed.turn > 1 and trimmed.stage == 1
    assert trimmed.tokens_before > 3_000 >= trimmed.tokens_after
    assert model.requests == [] and compaction_lines(session) == []

    work_until(session, window, stage=2)  # stage 1 keeps up for a while, then is not enough
    [_, summarised] = window.compactions
    assert summarised.stage == 2 and summarised.turn > trimmed.turn + 1
    assert summarised.tokens_before > 3_000 >= summarised.tokens_after
    assert len(model.requests) == 1 and len(compaction_lines(session)) == 1

    # A result too large for the budget in the last turn: no stage can drop it.
    tool_id = "t-huge"
    session.append(call(tool_id, "cat huge.log"))
    session.append(results(tool_id, output(tool_id, 40_000)))
    with pytest.raises(ContextFull) as full:
        window.fit(SYSTEM, TOOLS)
    assert "/compact" in str(full.value) and "--context-budget" in str(full.value)
    assert "new session" in str(full.value)
    assert [compaction.stage for compaction in window.compactions] == [1, 2, 2]
    assert_valid_request(session.messages())


def test_stage_one_cuts_old_results_in_the_view_only(store: SessionStore) -> None:
    session = store.create()
    session.append(user("Fix the failing test."))
    window = ContextWindow(Summariser(), session, budget=3_000)  # no summary: none may be asked

    history, view = work_until(session, window, stage=1)

    assert session.messages() == history
    assert len(view) == len(history) and view[0] == history[0]
    old = [message for message in view[1 : -2 * KEEP_TURNS] if message["role"] == "user"]
    recent = [message for message in view[-2 * KEEP_TURNS :] if message["role"] == "user"]
    for message in old:
        result = message["content"][0]["content"]
        tool_id = message["content"][0]["tool_use_id"]
        assert result.startswith(f"output of {tool_id}\nline 1:") and CUT.search(result)
        assert len(result) < PREVIEW_CHARS + len(CUT_NOTE) + 10
    assert all(not CUT.search(message["content"][0]["content"]) for message in recent)
    assert not CUT.search(session.path.read_text()), "the file keeps every result whole"
    assert not CUT.search(json.dumps(history, ensure_ascii=False)), "and so does the history"


def test_stage_one_is_a_pure_function_of_the_messages() -> None:
    messages = [user("Fix it.")]
    for number in range(6):
        messages += [call(f"t{number}"), results(f"t{number}", output(f"t{number}", 3_000))]
    original = copy.deepcopy(messages)

    view = trim_old_results(messages)

    assert messages == original, "nothing is changed in place"
    assert trim_old_results(copy.deepcopy(messages)) == view
    assert view[-2 * KEEP_TURNS :] == messages[-2 * KEEP_TURNS :]
    assert (
        sum(bool(CUT.search(json.dumps(message, ensure_ascii=False))) for message in view)
        == 6 - KEEP_TURNS
    )
    short = [user("Fix it."), call("t1"), results("t1", "ok"), call("t2"), results("t2", "ok")]
    assert trim_old_results(short, keep_turns=1) == short, "short results are kept whole"


def test_stage_two_summarises_the_oldest_turns_and_keeps_the_recent_ones(
    store: SessionStore,
) -> None:
    session = store.create()
    session.append(user("Fix the failing test in parse.py."))
    model = Summariser("parse() drops the last line; test_parse fails on it.")
    flushed: list[tuple[str, list[Message]]] = []  # the system prompt and the view it saw
    window = ContextWindow(model, session, 3_000, before_summary=lambda _, *it: flushed.append(it))

    before, view = work_until(session, window, stage=2)

    assert [compaction.stage for compaction in window.compactions] == [1, 2]
    [request] = model.requests
    assert request["system"] == SUMMARY_SYSTEM and request["tools"] is None
    [asked] = request["messages"]
    assert (
        asked["role"] == "user" and "[user] Fix the failing test in parse.py." in asked["content"]
    )
    assert "[tool call] bash" in asked["content"] and CUT.search(asked["content"])
    summary = view[0]["content"]
    assert summary.startswith(SUMMARY_PREFIX) and "parse() drops the last line" in summary
    [record] = compaction_lines(session)
    kept = before[record["upto"] :]
    assert view[1:] == kept and len(kept) >= 2, "the recent turns are kept word for word"
    assert flushed == [(SYSTEM, trim_old_results(before))], "the flush saw the context first"
    compaction = window.compactions[-1]
    assert compaction == Compaction(
        window.turn,
        2,
        estimate_request(SYSTEM, trim_old_results(before), TOOLS),
        estimate_request(SYSTEM, view, TOOLS),
        f"{record['upto']} messages summarised",
        compaction.usage,
    )
    assert compaction.usage is not None and compaction.usage.output_tokens > 0
    summary_only = estimate_request(SYSTEM, view[:1], TOOLS)
    assert window.tokens == estimate_request(SYSTEM, view, TOOLS)
    assert window.tokens <= summary_only + KEEP_SHARE * 3_000, "a quarter of the budget is kept"


def test_a_summary_cut_off_says_so_and_an_empty_one_stops(store: SessionStore) -> None:
    session = store.create()
    session.append(user("Fix it."))
    window = ContextWindow(Summariser("The user", stop_reason="max_tokens"), session, 3_000)
    work_until(session, window, stage=2)
    assert session.messages()[0]["content"].endswith("The user\n[the summary was cut off here]")

    session = store.create()
    session.append(user("Fix it."))
    window = ContextWindow(Summariser("  "), session, 3_000)
    with pytest.raises(ContextFull, match="the model wrote no summary"):
        work_until(session, window, stage=2)
    assert compaction_lines(session) == []


def test_a_resumed_session_sees_the_same_context(store: SessionStore) -> None:
    session = store.create()
    session.append(user("Fix the failing test."))
    window = ContextWindow(Summariser("First summary."), session, budget=3_000)
    work_until(session, window, stage=2)
    _, view = work_until(session, window, stage=1)  # summarised once, and trimming again since
    assert [compaction.stage for compaction in window.compactions] == [1, 2, 1]
    session.close()

    with store.open(session.id) as resumed:
        # No summary is scripted: a resume that asked the model again would fail here.
        again = ContextWindow(Summariser(), resumed, budget=3_000).fit(SYSTEM, TOOLS)

    assert again == view
    assert again[0]["content"] == f"{SUMMARY_PREFIX}\n\nFirst summary."
    assert any(CUT.search(json.dumps(message, ensure_ascii=False)) for message in again)


def test_compact_now_summarises_everything_on_demand(store: SessionStore) -> None:
    session = store.create()
    flushed: list[tuple[str, list[Message]]] = []
    model = Summariser("All done: parse.py fixed.")
    window = ContextWindow(model, session, 50_000, before_summary=lambda _, *it: flushed.append(it))
    assert window.compact_now(SYSTEM, TOOLS) is None, "nothing to summarise yet"
    session.append(user("Fix the failing test."))
    work(session, window, 3)
    session.append({"role": "assistant", "content": [{"type": "text", "text": "Fixed."}]})
    history = session.messages()

    compaction = window.compact_now(SYSTEM, TOOLS)

    assert compaction is not None and compaction.stage == 2
    assert compaction.turn == 3 and compaction.tokens_after < compaction.tokens_before
    assert flushed == [(SYSTEM, history)]
    assert session.messages() == [user(f"{SUMMARY_PREFIX}\n\nAll done: parse.py fixed.")]
    session.append(user("Now add a test for empty input."))
    assert_valid_request(window.fit(SYSTEM, TOOLS))


# --- Pairs are never split --------------------------------------------------------------------

TURN = st.tuples(
    st.integers(min_value=0, max_value=4),  # tool rounds before the answer
    st.lists(st.integers(min_value=1, max_value=3), min_size=4, max_size=4),  # calls per round
    st.lists(st.integers(min_value=0, max_value=4_000), min_size=12, max_size=12),  # sizes
    st.booleans(),  # whether the model answers in the end, or the task stops mid-way
)


@settings(max_examples=80, deadline=None)
@given(st.lists(TURN, min_size=1, max_size=8), st.integers(min_value=1_000, max_value=8_000))
def test_no_compaction_ever_separates_a_call_from_its_result(
    turns: list[tuple[int, list[int], list[int], bool]], budget: int
) -> None:
    with tempfile.TemporaryDirectory() as root:
        store = SessionStore(root, sync=False)
        session = store.create()
        window = ContextWindow(Summariser(*["Summary."] * 60), session, budget=budget)
        view: list[Message] = []
        try:
            for rounds, calls, sizes, answers in turns:
                session.append(user("Next task."))
                view = window.fit(SYSTEM, TOOLS)
                assert_valid_request(view)
                for round_number in range(rounds):
                    number = len(session.messages())
                    ids = [f"t{number}-{index}" for index in range(calls[round_number])]
                    blocks = [call(tool_id)["content"][1] for tool_id in ids]
                    session.append({"role": "assistant", "content": blocks})
                    outputs = [
                        output(tool_id, size)
                        for tool_id, size in zip(ids, sizes[: len(ids)], strict=True)
                    ]
                    answer = [
                        results(i, o)["content"][0] for i, o in zip(ids, outputs, strict=True)
                    ]
                    session.append({"role": "user", "content": answer})
                    view = window.fit(SYSTEM, TOOLS)
                    assert_valid_request(view)
                    assert_valid_request(session.messages())
                if answers:
                    session.append({"role": "assistant", "content": "Done."})
        except ContextFull:
            assert_valid_request(session.messages())
            return
        finished = session.messages()[-1]["role"] == "assistant"
        session.close()
        with store.open(session.id) as resumed:
            again = ContextWindow(Summariser("All of it."), resumed, budget)
            if not finished:  # resumed where the last request was made: the same request
                assert again.fit(SYSTEM, TOOLS) == view
            again.compact_now(SYSTEM, TOOLS)
            assert_valid_request(resumed.messages())


# --- The provider's word --------------------------------------------------------------------


def test_the_estimate_is_corrected_by_the_reported_count(
    store: SessionStore, fake_provider: FakeProvider, anthropic_model: AnthropicModel
) -> None:
    session = store.create()
    session.append(user("Fix the failing test."))
    for number in range(6):
        session.append(call(f"t{number}"))
        session.append(results(f"t{number}", output(f"t{number}", 2_000)))
    estimate = estimate_request(SYSTEM, session.messages(), TOOLS)
    window = ContextWindow(anthropic_model, session, budget=estimate + 100)
    assert window.fit(SYSTEM, TOOLS) == session.messages() and window.compactions == []

    # The provider counts half as much again: its tokenizer splits this text finer.
    reported = estimate * 3 // 2
    fake_provider.reply(anthropic_message(text("Let me check."), input_tokens=reported))
    reply = anthropic_model.complete(SYSTEM, session.messages(), tools=TOOLS)
    window.note_usage(reply.usage)
    assert window.ratio == reported / estimate

    view = window.fit(SYSTEM, TOOLS)
    [trimmed] = window.compactions  # the same history is over the budget now
    assert trimmed.stage == 1 and trimmed.tokens_before == reported
    assert window.tokens == math.ceil(estimate_request(SYSTEM, view, TOOLS) * window.ratio)


def test_estimated_or_missing_counts_leave_the_estimate_as_it_is(store: SessionStore) -> None:
    session = store.create()
    session.append(user("Fix the failing test."))
    model = ReplayModel([Reply([{"type": "text", "text": "Done."}], "end_turn")])
    window = ContextWindow(model, session, budget=10_000)
    view = window.fit(SYSTEM, TOOLS)

    reply = model.complete(SYSTEM, view, tools=TOOLS)
    window.note_usage(reply.usage)
    window.note_usage(Usage(0, 5))  # a provider that sent no usage
    assert reply.usage.estimated and window.ratio == 1.0


def test_a_refusal_as_too_long_summarises_once_then_stops(
    store: SessionStore, fake_provider: FakeProvider, anthropic_model: AnthropicModel
) -> None:
    session = store.create()
    session.append(user("Fix the failing test."))
    for number in range(6):
        session.append(call(f"t{number}"))
        session.append(results(f"t{number}", output(f"t{number}", 2_000)))
    flushed: list[tuple[str, list[Message]]] = []
    window = ContextWindow(
        anthropic_model, session, 100_000, before_summary=lambda _, *seen: flushed.append(seen)
    )
    too_long = "prompt is too long: 215031 tokens > 200000 maximum"
    fake_provider.fail(400, anthropic_error("invalid_request_error", too_long))
    fake_provider.reply(anthropic_message(text("The test fails in parse().")))
    fake_provider.reply(anthropic_message(text("Fixed.")))

    # What chapter 4's loop does around its model call.
    messages = window.fit(SYSTEM, TOOLS)
    try:
        reply = anthropic_model.complete(SYSTEM, messages, tools=TOOLS)
    except ContextTooLong:
        messages = window.fit_after_overflow(SYSTEM, TOOLS)
        reply = anthropic_model.complete(SYSTEM, messages, tools=TOOLS)

    assert reply.content == [text("Fixed.")]
    refused, summary, retried = (request.body for request in fake_provider.requests)
    assert summary["system"] == SUMMARY_SYSTEM and "tools" not in summary
    assert SUMMARY_PREFIX in json.dumps(retried["messages"][0], ensure_ascii=False)
    assert len(retried["messages"]) < len(refused["messages"])
    [compaction] = window.compactions
    assert (compaction.turn, compaction.stage) == (1, 2) and len(compaction_lines(session)) == 1
    assert flushed == [], "no flush turn on a context the provider has just refused"
    with pytest.raises(ContextFull, match="refused the request as too long again"):
        window.fit_after_overflow(SYSTEM, TOOLS)
    assert issubclass(ContextFull, ModelError), "the loop's ModelError exit catches it"


# --- The running total, the budget --------------------------------------------------------------


def test_the_running_total_equals_a_fresh_estimate(store: SessionStore) -> None:
    session = store.create()
    session.append(user("Fix the failing test."))
    window = ContextWindow(Summariser("Summary one.", "Summary two."), session, budget=3_000)
    for _ in range(40):  # through stage 1, stage 2, and both again
        work(session, window, 1, chars=1_500)
        view = window.fit(SYSTEM, TOOLS)
        assert window.tokens == estimate_request(SYSTEM, view, TOOLS)
        system = SYSTEM + " Be brief."  # a changed system prompt is estimated again
        assert window.fit(system, TOOLS) == view or window.compactions[-1].stage == 2
        assert window.tokens == estimate_request(system, window.fit(system, TOOLS), TOOLS)
    assert [compaction.stage for compaction in window.compactions].count(2) == 2


def test_the_running_total_follows_a_last_message_that_was_replaced(store: SessionStore) -> None:
    for budget in (100_000, 1_050):  # the whole history, then stage 1's view
        session = store.create()
        window = ContextWindow(Summariser(), session, budget=budget)
        steps = [
            user("Fix the failing test."),
            user("Please."),  # joined with the message before it
            call("t1"),  # an open call: messages() ends with a stand-in answer
            results("t1", output("t1", 3_000)),  # which the real result replaces
            call("t2"),
            results("t2", "ok"),
            *[message for n in range(3, 7) for message in (call(f"t{n}"), results(f"t{n}", "x"))],
            {"role": "assistant", "content": "Done."},
            {"role": "assistant", "content": "Also this."},  # joined with the answer before
        ]
        for message in steps:
            session.append(message)
            view = window.fit(SYSTEM, TOOLS)
            assert view in (session.messages(), trim_old_results(session.messages()))
            assert window.tokens == estimate_request(SYSTEM, view, TOOLS)
        assert [c.stage for c in window.compactions] == ([1] if budget < 100_000 else [])


def test_default_budgets_leave_room_for_the_estimate_and_the_reply() -> None:
    assert default_budget("anthropic:claude-sonnet-4-5") == 180_000 - 4_096
    assert default_budget("openai:gpt-4o-mini") == int(128_000 * 0.9) - 4_096
    assert default_budget("openai:gpt-4.1-mini") == int(1_047_576 * 0.9) - 4_096
    assert default_budget("openai:deepseek-chat", reply_tokens=8_192) == 115_200 - 8_192
    assert default_budget("openai:llama3.2") == int(FALLBACK_WINDOW * 0.9) - 4_096
    assert default_budget("replay:v4_memory/demo/cassette.jsonl") == REPLAY_BUDGET
    with pytest.raises(ValueError, match="positive"):
        ContextWindow(Summariser(), None, budget=0)  # type: ignore[arg-type]


def test_the_runtime_note_that_ends_a_request_is_counted_in_every_stage(
    store: SessionStore,
) -> None:
    """What the window lets through is what is sent: the note appended after `fit` counts,
    in the history as it is and in stage 1's view, so no request passes the budget by it;
    one longer than NOTE_TOKENS counts in full."""
    note = Layer("runtime", "Runtime: 2026-12-02 09:30, model replay, work dir ~/w. " * 30)
    assert estimate_block({"type": "text", "text": note.text}) > NOTE_TOKENS
    with store.create() as session:
        session.append(user("Read the logs."))
        window = ContextWindow(Summariser("done"), session, budget=20_000)
        for stage in (0, 1):
            while len(window.compactions) < stage:
                tool_turn(session, 4_000)
                window.fit(SYSTEM, TOOLS, note.text)
            view = window.fit(SYSTEM, TOOLS, note.text)
            with said_last(view, note.text) as request:
                assert window.tokens == estimate_request(SYSTEM, request, TOOLS)
            assert window.tokens <= window.budget


def test_a_runtime_note_of_another_length_compacts_on_the_same_turn(store: SessionStore) -> None:
    """A recording's note names one model spec and folder, its replay's another: a note
    within NOTE_TOKENS changes nothing the window decides, so a strict replay asks for
    its summary on the turn the recording did, wherever the course lives."""
    short = "<runtime>\nModel: openai:fake\nWork directory: /tmp/w\n</runtime>"
    longer = short.replace("/tmp/w", "/home/learner/" + "course/" * 16 + "w")
    sizes = [estimate_block({"type": "text", "text": note}) for note in (short, longer)]
    assert sizes[0] < sizes[1] <= NOTE_TOKENS
    decided = []
    for note in (short, longer):
        with store.create() as session:
            session.append(user("Read the logs."))
            window = ContextWindow(Summariser("done"), session, budget=4_000)
            sent = []
            for _ in range(10):
                tool_turn(session, 4_000)
                window.fit(SYSTEM, TOOLS, note)
                sent.append(window.tokens)
            decided.append((sent, [(c.turn, c.stage, c.tokens_before) for c in window.compactions]))
    assert decided[0] == decided[1]
    assert {stage for _, stage, _ in decided[0][1]} == {1, 2}  # both stages taken
