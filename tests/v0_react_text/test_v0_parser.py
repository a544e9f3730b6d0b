"""Chapter 0's parser against a corpus of realistic replies, and against any text at all.

The corpus (tests/data/react_replies.jsonl) holds one reply per line with what the
parser must make of it: an action, a final answer, or a format error whose message
contains given phrases.  It covers well-formed replies, the variants models really
write (bold, full-width colons, fences, Chinese thoughts) and the ways they break.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.exercises.chapter0_corpus import SHIPPED, digest, shipped_digests
from tests import REPO
from v0_react_text.agent import STOP
from v0_react_text.parser import Action, FinalAnswer, FormatError, parse, split_off_observation

CORPUS_PATH = REPO / "tests" / "data" / "react_replies.jsonl"
CORPUS = [json.loads(line) for line in CORPUS_PATH.read_text(encoding="utf-8").splitlines()]


def test_the_corpus_is_large_and_varied() -> None:
    groups = {case["group"] for case in CORPUS}
    kinds = {case["expect"]["type"] for case in CORPUS}
    assert len(CORPUS) >= 40
    assert groups == {"well-formed", "tolerated", "malformed"}
    assert kinds == {"action", "final", "error"}
    assert any(any("\u4e00" <= ch <= "\u9fff" for ch in case["text"]) for case in CORPUS)
    assert len({case["id"] for case in CORPUS}) == len(CORPUS)


@pytest.mark.docs  # the corpus as the course ships it
def test_exercise_checks_know_every_shipped_case() -> None:
    """Exercises 0.2 and 0.5 refuse a corpus whose other cases changed: they know each by
    a digest, which must be the case's as shipped (after adding or changing a case, write
    the digests again: `chapter0_corpus.digests` holds one `id digest` line per case)."""
    shipped = {case["id"]: digest(case) for case in CORPUS if case["id"] not in SHIPPED}
    assert shipped_digests() == shipped


@pytest.mark.parametrize("case", CORPUS, ids=[case["id"] for case in CORPUS])
def test_corpus_reply(case: dict) -> None:
    expect = case["expect"]
    if expect["type"] == "error":
        with pytest.raises(FormatError) as caught:
            parse(case["text"])
        for phrase in expect["message_contains"]:
            assert phrase in str(caught.value)
    elif expect["type"] == "action":
        assert parse(case["text"]) == Action(expect["tool"], expect["args"], expect["thought"])
    else:
        assert parse(case["text"]) == FinalAnswer(expect["answer"], expect["thought"])


@pytest.mark.parametrize("case", CORPUS, ids=[case["id"] for case in CORPUS])
def test_corpus_invented_observations_are_found(case: dict) -> None:
    kept, invented = split_off_observation(case["text"])
    assert bool(invented) == case["invented_observation"]
    if invented:
        assert invented.lstrip(" *").lower().startswith("observation")
        assert "bservation:" not in kept and "bservation：" not in kept.split("\n")[-1]


INVENTED = [
    case for case in CORPUS if case["invented_observation"] and case["expect"]["type"] != "error"
]


@pytest.mark.parametrize("case", INVENTED, ids=[case["id"] for case in INVENTED])
def test_a_reply_cut_by_the_stop_sequences_reads_as_the_whole_reply(case: dict) -> None:
    """What a server sends back, cut at the first stop sequence, gives the step the whole
    reply gives: `**Observation:**` stops at `Observation:` and leaves its two stars."""
    text = case["text"]
    cut = min((text.find(stop) for stop in STOP if stop in text), default=len(text))
    assert parse(text[:cut]) == parse(text)


def test_the_stars_of_a_cut_bold_observation_are_dropped() -> None:
    action = 'Thought: Who runs this?\nAction: bash\nAction Input: {"command": "whoami"}'
    assert split_off_observation(action + "\n**") == (action, "")
    assert split_off_observation(action + "\r\n  ** ") == (action, "")
    assert parse(action + "\n**") == Action("bash", {"command": "whoami"}, "Who runs this?")
    assert parse("Final Answer: Done.\n**") == FinalAnswer("Done.")
    assert split_off_observation("**") == ("", "")
    bold = "Final Answer: Done.\n**5 tests pass**"
    assert parse(bold) == FinalAnswer("Done.\n**5 tests pass**")  # bold text stays


def test_format_error_is_a_value_error() -> None:
    assert issubclass(FormatError, ValueError)


def test_invented_observation_never_reaches_the_step() -> None:
    """A fabricated result must not become part of the thought or the arguments."""
    step = parse(
        'Action: bash\nAction Input: {"command": "ls"}\nObservation: secret.txt\nThought: rm it'
    )
    assert step == Action("bash", {"command": "ls"}, "")


# --- any text at all ------------------------------------------------------------------

FRAGMENTS = [
    "Thought:",
    "Action:",
    "Action Input:",
    "Final Answer:",
    "Observation:",
    "**Action:**",
    "Action：",
    "final answer：",
    "\n",
    "\r\n",
    "```json\n",
    "```",
    "{",
    "}",
    "[",
    "]",
    '"',
    '{"command": "ls"}',
    '{"path": "a.py"}',
    ",",
    ":",
    "bash",
    "read_file",
    " ",
    "\t",
    "思考",
    "\u2028",
    "\\",
    "null",
    "1e999",
    "**",
]
REPLIES = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=20), max_size=40).map("".join)


def step_or_error(text: str) -> Action | FinalAnswer | FormatError:
    """What `parse` makes of a text; any other exception escapes and fails the test."""
    try:
        return parse(text)
    except FormatError as error:
        return error


@settings(max_examples=400)
@given(REPLIES)
def test_any_reply_gives_a_step_or_a_format_error(text: str) -> None:
    outcome = step_or_error(text)
    assert isinstance(outcome, (Action, FinalAnswer, FormatError))
    if isinstance(outcome, FormatError):
        assert str(outcome)  # the model is always told something
    if isinstance(outcome, Action):
        assert outcome.tool and isinstance(outcome.args, dict)
    if isinstance(outcome, FinalAnswer):
        assert outcome.answer


@settings(max_examples=200)
@given(st.text())
def test_any_text_gives_a_step_or_a_format_error(text: str) -> None:
    assert isinstance(step_or_error(text), (Action, FinalAnswer, FormatError))


PATHOLOGICAL = {
    "a line of spaces": " " * 200_000,
    "spaces after a keyword": "Action" + " " * 200_000 + "x",
    "spaces inside a keyword": "Action" + " " * 200_000 + "Inputs:",
    "bold markers": "**" * 100_000,
    "deep nesting": "Action: bash\nAction Input: " + "[" * 100_000,
    "deep object": "Action: bash\nAction Input: " + '{"a":' * 50_000 + "1" + "}" * 50_000,
    "huge number": 'Action: bash\nAction Input: {"timeout": ' + "9" * 50_000 + "}",
    "many thoughts": "Thought: x\n" * 100_000 + 'Action: bash\nAction Input: {"command": "ls"}',
    "many actions": "Action: bash\n" * 100_000,
    "many observations": "Observation: x\n" * 100_000,
}


@pytest.mark.parametrize("text", PATHOLOGICAL.values(), ids=PATHOLOGICAL.keys())
def test_pathological_replies_give_a_step_or_a_format_error(text: str) -> None:
    """How fast the parser reads such replies is measured by `python -m lab bench`."""
    assert isinstance(step_or_error(text), (Action, FinalAnswer, FormatError))
