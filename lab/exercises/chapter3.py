"""The checks of chapter 3's exercises: agent types and the children's recordings."""

from __future__ import annotations

from llm.cassette import read_cassette

from .check import EXPLAIN, LIVE, MEASURE, Exercise, Said, Verdict, named_file


def test_agent_type(words: list[str]) -> Verdict:
    from v3_subagents.subagents import AGENT_TYPES, TASK_TOOL

    listed = TASK_TOOL["input_schema"]["properties"]["agent_type"]["enum"]
    if "test" not in AGENT_TYPES or "test" not in listed:
        seen = Said(f"the task tool offers {listed}", f"task 工具提供的类型是 {listed}")
        hint = Said(
            "add a `test` entry to AGENT_TYPES in subagents.py",
            "在 subagents.py 的 AGENT_TYPES 里加一个 `test` 项",
        )
        return Verdict(False, seen, hint)
    tools = AGENT_TYPES["test"].tools
    seen = Said(f"a `test` type with the tools {tools}", f"`test` 类型的工具是 {tools}")
    if "bash" in tools:
        hint = Said(
            "give it a tool that runs only the tests, not bash",
            "给它一个只运行测试的工具，而不是 bash",
        )
        return Verdict(False, seen, hint)
    return Verdict(True, seen)


def children_recorded(words: list[str]) -> Verdict:
    header, entries = read_cassette(named_file(words, Said("recording", "录制文件"), "3.4"))
    tags = sorted({entry["child"] for entry in entries if "child" in entry})
    chapter = header.get("chapter")
    seen = Said(
        f"the recording of {chapter} has child tags {tags}",
        f"{chapter} 的录制文件里的子智能体标签是 {tags}",
    )
    if chapter == "v3_subagents" and tags:
        return Verdict(True, seen)
    hint = Said(
        "record python -m v3_subagents --demo with --record FILE",
        "用 --record FILE 录制 python -m v3_subagents --demo",
    )
    return Verdict(False, seen, hint)


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
