"""`python -m lab exercise N.M [FILE]`: is exercise M of chapter N done?

    python -m lab exercise              every exercise, and whether a program can check it
    python -m lab exercise 2.3          checks exercise 3 of chapter 2
    python -m lab exercise 1.5 FILE     checks the cassette FILE that exercise asked you to write

The answer comes from what the chapter does, never from reading your code: the
checker runs the chapter (on a fresh copy of its demo workspace, with a cassette
written here or the one you name) or calls the function the exercise changes, and
looks at the result.  When the exercise is not done yet, it says what it saw and
gives a hint.  Exercises that need a live model, or ask for a measurement or an
explanation, have no check here; each chapter says which those are.
"""

from __future__ import annotations

import importlib
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm import RunResult
from llm.cassette import CassetteError, ReplayModel, read_cassette

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "data" / "react_replies.jsonl"
CHAPTERS = ["v0_react_text", "v1_tool_loop", "v2_todos", "v3_subagents", "v4_memory"]


@dataclass
class Verdict:
    """What the check saw, and, when the exercise is not done, what to try."""

    done: bool
    seen: str
    hint: str = ""


class ExerciseInputError(ValueError):
    """The command names no file, or one that is not there: a usage error, exit code 2."""


@dataclass
class Exercise:
    title: str
    check: Callable[[list[str]], Verdict] | None = None  # given the words after N.M
    unchecked: str = ""  # why no program can tell, for an exercise without a check


# --- running a chapter ------------------------------------------------------------------


def run_chapter(chapter: str, cassette: Path, task: str | None = None) -> RunResult:
    """The chapter's own run, replaying `cassette`, on a fresh copy of its demo workspace."""
    spec = importlib.import_module(f"{chapter}.__main__").CHAPTER
    header, _ = read_cassette(cassette)
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch) / "ws"
        shutil.copytree(spec.demo_workspace, workdir)
        return spec.run(
            task or header.get("task") or "Fix the tests",
            model=ReplayModel(cassette),
            workdir=workdir,
        )


def run_replies(chapter: str, *replies: dict[str, Any]) -> RunResult:
    """The chapter's run on a scripted cassette of these replies, written for the check."""
    header = {"format": "cassette/1", "provenance": "scripted", "chapter": chapter}
    header["task"] = "An exercise check."
    lines = [json.dumps(header), *(json.dumps({"reply": reply}) for reply in replies)]
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "check.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return run_chapter(chapter, path)


def calls(*blocks: dict[str, Any]) -> dict[str, Any]:
    """A reply asking for these tool calls."""
    return {"content": list(blocks), "stop_reason": "tool_use"}


def tool_use(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


FINISH = {"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"}


def results(result: RunResult) -> list[dict[str, Any]]:
    """Every tool_result block of the run, in order."""
    return [
        block
        for message in result.messages
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def text_of(block: dict[str, Any]) -> str:
    content = block.get("content", "")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return str(content)


def named_file(words: list[str], what: str, number: str) -> Path:
    """The file the learner wrote, named after the exercise number."""
    if not words:
        raise ExerciseInputError(f"name the {what}: python -m lab exercise {number} FILE")
    path = Path(words[0]).expanduser()
    if not path.is_file():
        raise ExerciseInputError(f"no file {path}: name the {what} you wrote")
    return path


# --- chapter 0 ----------------------------------------------------------------------------


def three_strikes(words: list[str]) -> Verdict:
    result = run_chapter("v0_react_text", named_file(words, "cassette of three replies", "0.1"))
    seen = f"the run ended with `{result.stop}` after {result.turns} turns"
    if result.stop == "format_errors" and result.turns == 3:
        return Verdict(True, seen)
    return Verdict(False, seen, "three malformed replies in a row end the run with format_errors")


def corpus_case(name: str) -> dict[str, Any]:
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    return next(case for case in map(json.loads, lines) if case["id"] == name)


def parsed_as_action(name: str) -> tuple[bool, str]:
    """Whether chapter 0's parser reads a corpus case as an action, and how it read it."""
    from v0_react_text.parser import Action, parse

    try:
        step = parse(corpus_case(name)["text"])
    except ValueError as error:
        return False, f"`{name}` is a format error: {error}"
    return isinstance(step, Action), f"`{name}` parses as {step!r}"


def one_more_variant(words: list[str]) -> Verdict:
    is_action, seen = parsed_as_action("single-backticks")
    expected = corpus_case("single-backticks")["expect"]["type"] == "action"
    if is_action and expected:
        return Verdict(True, seen + ", and the corpus expects an action")
    if is_action:
        return Verdict(False, seen, "change the case's `expect` in the corpus to that action")
    return Verdict(False, seen, "let `_unfence` take off one backtick on each side")


def full_width_stop(words: list[str]) -> Verdict:
    from v0_react_text.agent import STOP

    seen = f"STOP is {STOP!r}"
    if "Observation：" in STOP:
        return Verdict(True, seen)
    return Verdict(False, seen, 'add "Observation：" (a full-width colon) to STOP in agent.py')


def chinese_keywords(words: list[str]) -> Verdict:
    is_action, seen = parsed_as_action("zh-translated-keywords")
    cases = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    chinese = [c for c in cases if "行动：" in c["text"] and c["expect"]["type"] == "action"]
    seen += f"; {len(chinese)} corpus case(s) with 行动： expect an action"
    if is_action and len(chinese) >= 3:
        return Verdict(True, seen)
    if not is_action:
        return Verdict(False, seen, "accept 思考：, 行动：, 行动输入： and 最终答案：")
    return Verdict(False, seen, "move the case to an expected action and add two of your own")


# --- chapter 1 ----------------------------------------------------------------------------


def list_dir_tool(words: list[str]) -> Verdict:
    listing = calls(tool_use("t1", "list_dir", {"path": "."}))
    answer = results(run_replies("v1_tool_loop", listing, FINISH))[0]
    seen = f"list_dir answered: {text_of(answer)[:80]!r}"
    if not answer.get("is_error") and "stats.py" in text_of(answer):
        return Verdict(True, seen)
    return Verdict(False, seen, "add its schema to TOOLS and its handler to HANDLERS in tools.py")


def strict_replay(words: list[str]) -> Verdict:
    path = named_file(words, "recording", "1.4")
    header, entries = read_cassette(path)
    if header.get("provenance") != "recorded" or not all("request" in e for e in entries):
        seen = f"{path} is {header.get('provenance', 'not a recording')}, without request digests"
        return Verdict(False, seen, "record it with --record FILE, live or on the fake provider")
    spec = importlib.import_module("v1_tool_loop.__main__").CHAPTER
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch) / "ws"
        shutil.copytree(spec.demo_workspace, workdir)
        model = ReplayModel(path, strict=True)
        result = spec.run(header.get("task", ""), model=model, workdir=workdir)
    seen = f"the strict replay ended with `{result.stop}` {result.error}".strip()
    if result.stop == "done":
        return Verdict(True, seen)
    return Verdict(False, seen, "record on a task whose tools print the same thing every time")


def door_holds(words: list[str]) -> Verdict:
    result = run_chapter("v1_tool_loop", named_file(words, "cassette", "1.5"))
    refused = [block for block in results(result) if block.get("is_error")]
    seen = f"{len(refused)} call(s) refused, and the run ended with `{result.stop}`"
    if len(refused) >= 3 and result.stop == "done":
        return Verdict(True, seen)
    return Verdict(False, seen, "three bash calls (bad argument, sudo, timeout), then end_turn")


def calls_at_once(words: list[str]) -> Verdict:
    sleeps = [tool_use(f"t{n}", "bash", {"command": "sleep 1"}) for n in range(1, 4)]
    started = time.monotonic()
    result = run_replies("v1_tool_loop", calls(*sleeps), FINISH)
    took = time.monotonic() - started
    order = [block["tool_use_id"] for block in results(result)]
    seen = f"three `sleep 1` calls took {took:.1f} s, results in the order {order}"
    if took < 2.5 and order == ["t1", "t2", "t3"]:
        return Verdict(True, seen)
    if order != ["t1", "t2", "t3"]:
        return Verdict(False, seen, "keep the results in the order of the calls")
    return Verdict(False, seen, "the calls ran one after another: run them in a thread pool")


# --- chapter 2 ----------------------------------------------------------------------------


def rules_broken(words: list[str]) -> Verdict:
    plans = [
        block
        for block in results(run_chapter("v2_todos", named_file(words, "cassette", "2.2")))
        if "todo" in text_of(block).lower()
    ]
    if not plans:
        return Verdict(False, "no todo_write result in the run", "the first reply calls todo_write")
    first = text_of(plans[0])
    seen = f"the first plan's result: {first[:120]}"
    if plans[0].get("is_error") and first.startswith("the todo list was not changed:"):
        return Verdict(True, seen)
    return Verdict(False, seen, "two items in_progress, a third empty with the status done")


def no_duplicates(words: list[str]) -> Verdict:
    from v2_todos.todos import problems_with

    items = [{"content": "Fix median", "status": "pending"}]
    items.append({"content": " fix MEDIAN ", "status": "pending"})
    problems = problems_with(items)
    seen = f"problems_with on 'Fix median' and ' fix MEDIAN ': {problems}"
    if any("same" in problem for problem in problems):
        return Verdict(True, seen)
    return Verdict(False, seen, "compare the items' content stripped and lower-cased")


# --- chapter 3 ----------------------------------------------------------------------------


def test_agent_type(words: list[str]) -> Verdict:
    from v3_subagents.subagents import AGENT_TYPES, TASK_TOOL

    listed = TASK_TOOL["input_schema"]["properties"]["agent_type"]["enum"]
    if "test" not in AGENT_TYPES or "test" not in listed:
        seen = f"the task tool offers {listed}"
        return Verdict(False, seen, "add a `test` entry to AGENT_TYPES in subagents.py")
    tools = AGENT_TYPES["test"].tools
    seen = f"a `test` type with the tools {tools}"
    if "bash" in tools:
        return Verdict(False, seen, "give it a tool that runs only the tests, not bash")
    return Verdict(True, seen)


def children_recorded(words: list[str]) -> Verdict:
    header, entries = read_cassette(named_file(words, "recording", "3.4"))
    tags = sorted({entry["child"] for entry in entries if "child" in entry})
    seen = f"the recording of {header.get('chapter')} has child tags {tags}"
    if header.get("chapter") == "v3_subagents" and tags:
        return Verdict(True, seen)
    return Verdict(False, seen, "record python -m v3_subagents --demo with --record FILE")


# --- chapter 4 ----------------------------------------------------------------------------


def user_layer(words: list[str]) -> Verdict:
    from v4_memory.prompt import build_layers

    with tempfile.TemporaryDirectory() as scratch:
        (Path(scratch) / ".agent").mkdir()
        (Path(scratch) / ".agent" / "USER.md").write_text("Name: Ada. " * 400, encoding="utf-8")
        layers = build_layers(scratch)
    names = [layer.name for layer in layers]
    seen = f"the layers are {names}"
    if "user" not in names:
        return Verdict(False, seen, "read .agent/USER.md with read_capped, as soul is read")
    user = layers[names.index("user")]
    seen += f"; a long USER.md gives a user layer of {user.tokens} tokens"
    if names.index("user") != names.index("soul") + 1:
        return Verdict(False, seen, "put the user layer right after soul")
    if user.tokens > 500 or not user.cut:
        return Verdict(False, seen, "cap the layer at 500 tokens")
    return Verdict(True, seen)


def empty_text_repaired(words: list[str]) -> Verdict:
    from machine import jsonl
    from v4_memory.session import SessionStore

    call = tool_use("t1", "bash", {"command": "ls"})
    answer = {"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}
    messages = [
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": [{"type": "text", "text": ""}, call]},
        {"role": "user", "content": [answer]},
    ]
    with tempfile.TemporaryDirectory() as scratch:
        store = SessionStore(Path(scratch))
        with store.create() as session:
            pass
        with open(session.path, "ab") as file:
            file.write(b"".join(jsonl.encode(message) for message in messages))
        with store.open(session.id) as loaded:
            kept, repairs = loaded.messages(), loaded.repairs
    blocks = kept[1]["content"] if len(kept) > 1 else []
    empty = [b for b in blocks if b.get("type") == "text" and not b.get("text")]
    seen = f"after loading, {len(empty)} empty text block(s) and the repairs {repairs}"
    if not empty and repairs:
        return Verdict(True, seen)
    hint = "drop empty text blocks in mend, in llm/repair.py, and add a note to repairs"
    return Verdict(False, seen, hint)


def fts5_searcher(words: list[str]) -> Verdict:
    from lab.bench_memory import searchers

    with searchers(True) as found:
        built_in = {"IndexedStore", "NaiveTfidf", "Fts5Trigram"}
        added = [s for s in found if type(s).__name__ not in built_in]
        names = [s.name for s in found]
        if not added:
            return Verdict(False, f"the bench's searchers are {names}", "add yours to `searchers`")
        mine = added[0]
        wanted = mine.add("用户喜欢喝咖啡，不加糖。")
        mine.add("Integration tests are slow.")
        hits = list(mine.ids("咖啡", 1))
    seen = f"{mine.name} finds {hits} for 咖啡 (the memory is {wanted})"
    if hits == [wanted]:
        return Verdict(True, seen)
    return Verdict(False, seen, "index each memory as the store's own terms joined by spaces")


LIVE = "it needs a live model: compare your runs with the table the exercise asks for"
MEASURE = "it asks for a measurement and what you make of it: compare with the worked solution"
EXPLAIN = "it asks you to run a command and explain what it prints: the chapter gives the check"

EXERCISES: dict[str, Exercise] = {
    "0.1": Exercise("Three strikes", three_strikes),
    "0.2": Exercise("Accept one more variant", one_more_variant),
    "0.3": Exercise("Add the full-width stop sequence", full_width_stop),
    "0.4": Exercise("Take the stop sequences away", unchecked=LIVE),
    "0.5": Exercise("Support Chinese keywords", chinese_keywords),
    "0.6": Exercise("Measure the fragility", unchecked=LIVE),
    "1.1": Exercise("Stop early", unchecked=EXPLAIN),
    "1.2": Exercise("Run a cassette dry", unchecked=EXPLAIN),
    "1.3": Exercise("Add a list_dir tool", list_dir_tool),
    "1.4": Exercise("Record, then replay strictly", strict_replay),
    "1.5": Exercise("Watch the door hold", door_holds),
    "1.6": Exercise("Run independent calls at once", calls_at_once),
    "2.1": Exercise("Read the plan back", unchecked=EXPLAIN),
    "2.2": Exercise("Break the rules on purpose", rules_broken),
    "2.3": Exercise("No duplicate items", no_duplicates),
    "2.4": Exercise("Tune the reminder and measure it", unchecked=MEASURE),
    "2.5": Exercise("Measure the benefit live", unchecked=LIVE),
    "3.1": Exercise("What stays in the child", unchecked=EXPLAIN),
    "3.2": Exercise("A child that runs out of turns", unchecked=EXPLAIN),
    "3.3": Exercise("A test agent type", test_agent_type),
    "3.4": Exercise("Record the children, replay them", children_recorded),
    "3.5": Exercise("Measure the saving", unchecked=MEASURE),
    "3.6": Exercise("Delegation, live", unchecked=LIVE),
    "4.1": Exercise("Crash a session and watch it repaired", unchecked=EXPLAIN),
    "4.2": Exercise("A new prompt layer", user_layer),
    "4.3": Exercise("A repair rule", empty_text_repaired),
    "4.4": Exercise("Change the recall k and measure it", unchecked=MEASURE),
    "4.5": Exercise("Memory in SQLite FTS5", fts5_searcher),
    "4.6": Exercise("A long session, live", unchecked=LIVE),
}


def listing() -> str:
    rows = []
    for number, exercise in EXERCISES.items():
        how = "checked" if exercise.check else "no check: " + exercise.unchecked.split(":")[0]
        rows.append(f"{number}  {exercise.title:<40} {how}")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip() + "\n\n" + listing())
        return 0
    number, words = argv[0], argv[1:]
    exercise = EXERCISES.get(number)
    if exercise is None:
        print(f"error: no exercise {number}; they are {', '.join(EXERCISES)}", file=sys.stderr)
        return 2
    if exercise.check is None:
        print(f"{number} {exercise.title}: no program can check this one; {exercise.unchecked}")
        return 0
    try:
        verdict = exercise.check(words)
    except ExerciseInputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (CassetteError, ImportError, AttributeError, KeyError, TypeError) as error:
        print(f"{number} {exercise.title}: not done yet: the check failed with {error!r}")
        return 1
    if verdict.done:
        print(f"{number} {exercise.title}: done. {verdict.seen}")
        return 0
    print(f"{number} {exercise.title}: not done yet. {verdict.seen}\nhint: {verdict.hint}")
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
