"""The checks of chapter 3's exercises: a `test` agent type, and the children's recordings.

3.3 runs the learner's chapter with a `test` child on a failing test made fresh for the
check (a name and a message no answer can know): its `run_tests` must really run the
tests and hand back that failure, its `read_file` must read, and its attempts to change
a file (with `bash`, `write_file`, `edit_file`, or an argument slipped to `run_tests`)
must all leave the files as they were.  A type that has `bash`, or a `run_tests` that
returns a fixed text or runs one fixed module, is "not done".

3.4 takes only what the course's recorder writes: a `recorded` header with its model and
date, request digests on every line, children's sections.  It then replays the file with
the learner's chapter and compares every request, the children's too, with the digests
recorded beside its reply, as `--strict` does, except that what a command printed may
differ (the tests' time, the temporary folder).  The scripted demo, lines written by
hand, a recording without children, with its `child` tags lost or a reply edited, are
"not done".
"""

from __future__ import annotations

import json
import random
import re
import secrets
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm import Message, Reply, RunResult
from llm.cassette import ReplayModel, read_cassette, request_digest
from llm.result import tool_uses

from .check import (
    EXPLAIN,
    FINISH,
    LIVE,
    MEASURE,
    REPO,
    Exercise,
    Said,
    Verdict,
    calls,
    fresh_random,
    named_file,
    run_chapter,
    text_of,
    tool_use,
)

CHAPTER = "v3_subagents"
WORDS = ("ledger", "parcel", "tariff", "voucher", "rebate", "refund", "quota", "batch")


def run_sections(parent: list[dict], children: dict[str, list[dict]]) -> RunResult:
    """The learner's chapter on a scripted cassette of these replies, each child's tagged."""
    header = {"format": "cassette/1", "provenance": "scripted", "chapter": CHAPTER}
    lines = [header | {"task": "An exercise check."}, *({"reply": r} for r in parent)]
    lines += [{"child": key, "reply": r} for key, replies in children.items() for r in replies]
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "check.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        return run_chapter(CHAPTER, path)


def answers(messages: list[Message]) -> dict[str, dict[str, Any]]:
    """Every tool_result of a conversation, by the id of the call it answers."""
    return {
        block["tool_use_id"]: block
        for message in messages
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    }


def shown(result: dict[str, Any]) -> str:
    """A tool result on one line, short enough for a verdict."""
    said = " ".join(text_of(result).split())
    return said if len(said) <= 160 else said[:160] + "…"


# --- 3.3 A `test` agent type ---------------------------------------------------------------


@dataclass(frozen=True)
class FailingTest:
    """A test module made for one check: one test that fails with a message of its own."""

    path: str
    method: str
    message: str
    source: str
    failure: str  # what unittest prints when the test fails, and only then

    @staticmethod
    def fresh(rng: random.Random) -> FailingTest:
        word, number = rng.choice(WORDS), rng.randint(10, 99)
        got, expected = rng.sample(range(100, 1000), 2)
        message = f"{rng.choice(WORDS)}-{rng.randint(1000, 9999)}"
        method = f"test_{word}_{number}"
        source = (
            f"import unittest\n\n\nclass {word.title()}{number}Test(unittest.TestCase):\n"
            f"    def {method}(self):\n"
            f'        self.assertEqual({got}, {expected}, "{message}")\n'
        )
        failure = f"{got} != {expected} : {message}"
        return FailingTest(f"tests/test_{word}_{number}.py", method, message, source, failure)


def tester_run(test: FailingTest, marks: list[str], text: str) -> RunResult:
    """The parent writes the fresh test and sends a `test` child, which runs the tests,
    reads the test (and lists and searches for it), and tries to change files four ways,
    with fresh names and a fresh `text`; run_tests's try starts as a test run does.  The
    parent then reads back the files the child could have made or changed."""
    job = {"description": "run the tests", "agent_type": "test", "prompt": "Run the tests."}
    read_back = [tool_use(f"r{n}", "read_file", {"path": p}) for n, p in enumerate(marks)]
    edit = {"path": test.path, "old_text": test.message, "new_text": text}
    run_and_touch = f"python -m unittest discover -s tests; touch {marks[2]}"
    tester = [
        tool_use("c1", "run_tests", {}),
        tool_use("c2", "read_file", {"path": test.path}),
        tool_use("c7", "list_files", {"pattern": "tests/*.py"}),
        tool_use("c8", "grep", {"pattern": test.message}),
        tool_use("c3", "bash", {"command": f"touch {marks[0]}"}),
        tool_use("c4", "write_file", {"path": marks[1], "content": f"{text}\n"}),
        tool_use("c5", "run_tests", {"command": run_and_touch}),
        tool_use("c6", "edit_file", edit),
    ]
    report = {"content": [{"type": "text", "text": "One test fails."}], "stop_reason": "end_turn"}
    parent = [
        calls(tool_use("p1", "write_file", {"path": test.path, "content": test.source})),
        calls(tool_use("tester", "task", job)),
        calls(*read_back, tool_use("r9", "read_file", {"path": test.path})),
        FINISH,
    ]
    return run_sections(parent, {"tester": [calls(*tester), report]})


def test_agent_type(words: list[str]) -> Verdict:
    rng = fresh_random()
    test = FailingTest.fresh(rng)
    marks = [f"{secrets.token_hex(rng.randint(2, 5))}.{rng.choice(['txt', 'md', 'log'])}"]
    marks += [f"{rng.choice(WORDS)}_{secrets.token_hex(2)}.txt" for _ in range(2)]
    rng.shuffle(marks)
    result = tester_run(test, marks, f"{rng.choice(WORDS)} {secrets.token_hex(3)}")
    case = f"the fresh test {test.method} in {test.path}, failing with '{test.message}'"
    zh = f"新写的测试 {test.path} 里的 {test.method}，失败信息为 '{test.message}'"
    parent = answers(result.messages)
    if not result.children:  # no such type, or one whose tools are not all gathered
        said = shown(parent["tester"])
        seen = Said(f"{case}; the task call answered: {said}", f"{zh}；task 调用的回答：{said}")
        hint = Said(
            'add a `test` row to AGENT_TYPES in subagents.py, its tools ("run_tests", *READ_ONLY),'
            " and run_tests's schema to ALL_SCHEMAS",
            '在 subagents.py 的 AGENT_TYPES 里加一行 `test`，工具是 ("run_tests", *READ_ONLY)，'
            "并把 run_tests 的 schema 加进 ALL_SCHEMAS",
        )
        return Verdict(False, seen, hint)
    from v3_subagents.subagents import TASK_TOOL

    offered = TASK_TOOL["input_schema"]["properties"]["agent_type"].get("enum", [])
    if not {"explore", "plan", "code", "test"} <= set(offered):  # what the model picks from
        seen = Said(
            f"{case}; the task tool offers the model the agent types {offered}",
            f"{zh}；task 工具提供给模型的智能体类型是 {offered}",
        )
        hint = Said(
            "keep explore, plan and code, and add the test row to AGENT_TYPES itself: "
            "TASK_TOOL's enum and description are built from it",
            "保留 explore、plan 和 code，并把 test 这一行写进 AGENT_TYPES 本身："
            "TASK_TOOL 的 enum 和说明都由它生成",
        )
        return Verdict(False, seen, hint)
    mine = answers(result.children[0].result.messages)
    mine = {"c1": {}, "c2": {}, "c7": {}, "c8": {}} | mine  # asked nothing: answered nothing
    ran, read = text_of(mine["c1"]), text_of(mine["c2"])
    counted = re.search(r"Ran (\d+) tests?", ran)
    if counted is None or int(counted.group(1)) < 2:  # the new test alone is not the tests
        ran = shown(mine["c1"])
        seen = Said(
            f"{case}; run_tests answered: {ran}, where the project has tests of its own too",
            f"{zh}；run_tests 的回答：{ran}，而项目本来也有自己的测试",
        )
        hint = Said(
            "run_tests runs every test of the project: python -m unittest discover -s tests",
            "run_tests 运行项目的全部测试：python -m unittest discover -s tests",
        )
        return Verdict(False, seen, hint)
    if test.method not in ran or test.failure not in ran:  # the test ran, and failed
        ran = shown(mine["c1"])
        seen = Said(f"{case}; run_tests answered: {ran}", f"{zh}；run_tests 的回答：{ran}")
        hint = Said(
            "run_tests runs the project's tests (python -m unittest discover -s tests) and returns"
            " what they print; add its schema to ALL_SCHEMAS and its handler to ALL_HANDLERS",
            "run_tests 要运行项目的测试（python -m unittest discover -s tests）并返回输出；"
            "把它的 schema 加进 ALL_SCHEMAS，处理函数加进 ALL_HANDLERS",
        )
        return Verdict(False, seen, hint)
    tries = [f"bash: {marks[0]}", f"write_file: {marks[1]}", f"run_tests(command): {marks[2]}"]
    changed = [tried for n, tried in enumerate(tries) if not parent[f"r{n}"].get("is_error")]
    if test.message not in text_of(parent["r9"]):
        changed.append(f"edit_file: {test.path}")
    if changed:
        made = "; ".join(changed)
        seen = Said(
            f"{case}; the test agent changed files ({made})",
            f"{zh}；test 智能体改动了文件（{made}）",
        )
        hint = Said(
            "a test agent runs and reads, nothing else: no bash, write_file or edit_file in its"
            " tools, and no arguments to run_tests",
            "test 智能体只运行测试和读代码：它的工具里不要 bash、write_file、edit_file，"
            "run_tests 也不带参数",
        )
        return Verdict(False, seen, hint)
    searched = [mine["c7"], mine["c8"]]  # list_files, grep
    if any(a.get("is_error") or test.path.split("/")[-1] not in text_of(a) for a in searched):
        read = "; ".join(shown(a) for a in searched)
        seen = Said(
            f"{case}; list_files and grep answered: {read}",
            f"{zh}；list_files 和 grep 的回答：{read}",
        )
        hint = Said(
            "give it every read-only tool: READ_ONLY in its tools",
            "把所有只读工具都给它：工具里加上 READ_ONLY",
        )
        return Verdict(False, seen, hint)
    if mine["c2"].get("is_error") or test.message not in read:
        read = shown(mine["c2"])
        seen = Said(f"{case}; read_file answered: {read}", f"{zh}；read_file 的回答：{read}")
        hint = Said(
            "let it read code too: READ_ONLY in its tools", "也让它能读代码：工具里加上 READ_ONLY"
        )
        return Verdict(False, seen, hint)
    seen = Said(
        f"{case}: run_tests reported it, read_file read it, and bash, write_file, edit_file"
        " and run_tests with an argument changed nothing",
        f"{zh}：run_tests 报告了它，read_file 读到了它，bash、write_file、edit_file"
        "和带参数的 run_tests 都没有改动任何文件",
    )
    return Verdict(True, seen)


# --- 3.4 Record the children, replay them -----------------------------------------------

COMMANDS = ("bash", "run_tests")  # tools whose output can differ between two runs


@dataclass
class Compared:
    """A replay that compares each request with the digests recorded beside its reply, in
    the parent and in every child (each its own section), and keeps what differed."""

    replay: ReplayModel
    asked: Counter[str | None]  # the replies each section was asked for
    differ: list[Said]  # what differed that must not
    printed: set[tuple[str | None, int]]  # messages that differ in a command's output only

    @property
    def name(self) -> str:
        return self.replay.name

    def child(self, key: str) -> Compared:
        return Compared(self.replay.child(key), self.asked, self.differ, self.printed)

    def complete(
        self,
        system: str,
        messages: list[Message],
        tools: Any = None,
        stop: Any = None,
        max_tokens: int = 4096,
    ) -> Reply:
        replay = self.replay
        if replay.turn < len(replay.entries):
            self.asked[replay.key] += 1
            recorded = replay.entries[replay.turn]["request"]
            self.compare(recorded, request_digest(system, messages, tools, stop), messages)
        return replay.complete(system, messages, tools, stop, max_tokens)

    def compare(self, recorded: dict, actual: dict, messages: list[Message]) -> None:
        """Keep what differs between the two digests: any part, except a message that holds
        what a command printed, which a second run changes (the tests' time, the folder)."""
        key, turn = self.replay.key, self.replay.turn + 1
        parts = [Said(p, p) for p in ("system", "tools", "stop") if recorded[p] != actual[p]]
        if len(recorded["messages"]) != len(actual["messages"]):
            parts.append(Said("how many messages", "消息条数"))
        pairs = zip(recorded["messages"], actual["messages"], strict=False)
        for index, (was, now) in enumerate(pairs):
            if was == now:
                continue
            if index and any(c["name"] in COMMANDS for c in tool_uses(messages[index - 1])):
                self.printed.add((key, index))
            else:
                parts.append(Said(f"message {index + 1}", f"第 {index + 1} 条消息"))
        whose = Said(f"{key or 'parent'}, turn {turn}", f"{key or '父智能体'}第 {turn} 轮")
        self.differ += [Said(f"{whose.en}: {p.en}", f"{whose.zh}：{p.zh}") for p in parts]


def not_a_recording(header: dict[str, Any], entries: list[dict[str, Any]]) -> Said | None:
    """Why the file is not what the course's recorder writes for chapter 3, or None."""
    made = {key: header.get(key) for key in ("provenance", "chapter", "model", "recorded_at")}
    if made["provenance"] != "recorded" or not made["model"] or not made["recorded_at"]:
        return Said(f"its header says {made}: not a recording", f"它的头部是 {made}：不是录制文件")
    if made["chapter"] != CHAPTER:
        return Said(f"it records {made['chapter']}", f"它录的是 {made['chapter']}")
    bare = sum("request" not in entry for entry in entries)
    if bare:
        return Said(f"{bare} of its lines have no request digests", f"其中 {bare} 行没有请求摘要")
    if not any("child" in entry for entry in entries):
        return Said("no line belongs to a child", "没有一行属于子智能体")
    return None


def not_the_demo(entries: list[dict[str, Any]]) -> Said | None:
    """Why the replies recorded are not the demo's, section by section, or None: the
    exercise records the demo's replay, so every reply is the demo cassette's, the last
    ones too, which no later request's digest covers."""
    demo = read_cassette(REPO / CHAPTER / "demo" / "cassette.jsonl")[1]

    def by_section(lines: list[dict[str, Any]]) -> dict[str | None, list[Any]]:
        sections: dict[str | None, list[Any]] = {}
        for line in lines:
            sections.setdefault(line.get("child"), []).append(line["reply"].get("content"))
        return sections

    mine, theirs = by_section(entries), by_section(demo)
    for key in sorted(set(mine) | set(theirs), key=lambda key: key or ""):
        got, wanted = mine.get(key, []), theirs.get(key, [])
        if got != wanted:
            turn = next(
                (n for n, (a, b) in enumerate(zip(got, wanted, strict=False), 1) if a != b),
                min(len(got), len(wanted)) + 1,
            )
            whose = Said(key or "the parent", key or "父智能体")
            return Said(
                f"{whose.en}'s reply {turn} is not the demo's",
                f"{whose.zh}的第 {turn} 条回复不是演示里的",
            )
    return None


def children_recorded(words: list[str]) -> Verdict:
    path = named_file(words, Said("recording", "录制文件"), "3.4")
    hint = Said(
        "record the demo with python -m v3_subagents --demo --record FILE (again, if you have"
        " changed the chapter since), and hand in FILE as the recorder wrote it",
        "用 python -m v3_subagents --demo --record FILE 录下演示（如果之后改过本章，就重新录），"
        "原样交上录制器写的 FILE",
    )
    header, entries = read_cassette(path)
    wrong = not_a_recording(header, entries) or not_the_demo(entries)
    if wrong:
        return Verdict(False, Said(f"{path}: {wrong.en}", f"{path}：{wrong.zh}"), hint)
    read_cassette(path, strict=True)  # the digests have the recorder's shape
    replay = Compared(ReplayModel(path), Counter(), [], set())
    result = run_chapter(CHAPTER, path, model=replay)
    lines = Counter(entry.get("child") for entry in entries)
    wrong = [Said(f"{said.en} differs", f"{said.zh}不同") for said in replay.differ[:3]]
    if replay.asked != lines:
        asked = ", ".join(f"{key or 'parent'} {n}" for key, n in replay.asked.items())
        wrong.append(Said(f"the replay asked for {asked}", f"回放请求的是 {asked}"))
    for child in result.children:
        if child.result.stop != "done":
            stop, call = child.result.stop, child.call_id
            wrong.append(
                Said(f"the child {call} ended with `{stop}`", f"子智能体 {call} 以 `{stop}` 结束")
            )
    if result.stop != "done":
        stop = f"`{result.stop}`" + (f": {result.error[:120]}" if result.error else "")
        wrong.append(Said(f"the run ended with {stop}", f"运行以 {stop} 结束"))
    by_section = sorted(lines.items(), key=lambda item: item[0] or "")  # parent, then calls
    sections = ", ".join(f"{key or 'parent'} {n}" for key, n in by_section)
    zh_sections = "，".join(f"{key or '父智能体'} {n} 行" for key, n in by_section)
    model, at, asked = header["model"], header["recorded_at"], sum(replay.asked.values())
    seen = Said(
        f"{path}, recorded by {model} at {at}, lines by section: {sections}; replayed,"
        f" {asked} requests compared with their digests, {len(replay.printed)} message(s)"
        " differ in a command's output only" + "".join(f"; {said.en}" for said in wrong),
        f"{path}，由 {model} 于 {at} 录制，各部分：{zh_sections}；回放时 {asked} 个请求与摘要比对，"
        f"{len(replay.printed)} 条消息只在命令输出上不同"
        + "".join(f"；{said.zh}" for said in wrong),
    )
    return Verdict(not wrong, seen, hint if wrong else None)


EXERCISES = {
    "3.1": Exercise(Said("What stays in the child", "什么留在了子智能体里"), unchecked=EXPLAIN),
    "3.2": Exercise(
        Said("A child that runs out of turns", "用完轮数的子智能体"), unchecked=EXPLAIN
    ),
    "3.3": Exercise(Said("A test agent type", "一个 test 智能体类型"), test_agent_type),
    "3.4": Exercise(
        Said("Record the children, replay them", "录下子智能体，再回放"), children_recorded
    ),
    "3.5": Exercise(Said("Measure the saving", "测量省下了多少"), unchecked=MEASURE),
    "3.6": Exercise(Said("Delegation, live", "在线委派"), unchecked=LIVE),
}
