"""The chapter 3 loop on scripted replies: children in fresh contexts, their tools, their failures,
side by side and in order, replayed deterministically; and the demo on the command line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from llm import Console, Reply
from llm.cassette import ReplayModel
from llm.recording import RecordingModel
from machine import OUTPUT_LIMIT
from tests.scripted import assert_valid_history, text, tool, write_cassette
from v3_subagents.agent import MAIN, run
from v3_subagents.subagents import AGENT_TYPES, AgentType

REPO = Path(__file__).resolve().parent.parent
DONE = ([text("done")], "end_turn")


def task(call_id: str, agent_type: str = "explore", description: str = "look") -> dict:
    return tool(
        call_id, "task", description=description, prompt=f"do {call_id}", agent_type=agent_type
    )


def replay(tmp_path: Path, replies: list, children: dict | None = None) -> ReplayModel:
    return ReplayModel(write_cassette(tmp_path / "run.jsonl", replies, children))


def result_of(messages: list[dict], call_id: str) -> dict:
    return next(
        block
        for message in messages
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("tool_use_id") == call_id
    )


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.txt").write_text("the answer is 42\n")
    return folder


def test_a_child_starts_fresh_and_only_its_report_reaches_the_parent(
    tmp_path: Path, workdir: Path
) -> None:
    model = replay(
        tmp_path,
        [([text("Sending an explorer."), task("t1")], "tool_use"), DONE],
        {
            "t1": [
                ([tool("c1", "read_file", path="notes.txt")], "tool_use"),
                ([text("The notes say 42.")], "end_turn"),
            ]
        },
    )
    result = run("what do the notes say?", model=model, workdir=workdir)

    assert result.stop == "done"
    report = result_of(result.messages, "t1")
    assert not report["is_error"]
    assert report["content"].startswith(
        "The notes say 42.\n\n[explore agent: 2 turns, 1 tool call,"
    )
    assert "the answer is 42" not in json.dumps(result.messages)  # the file stayed in the child
    [child] = result.children
    assert child.description == "look" and child.agent_type == "explore"
    assert child.result.messages[0] == {"role": "user", "content": "do t1"}
    assert "the answer is 42" in json.dumps(child.result.messages)
    assert result.counts()["children"] == 1
    assert_valid_history(result.messages)
    assert_valid_history(child.result.messages)


def test_usage_totals_include_the_children(tmp_path: Path, workdir: Path) -> None:
    model = replay(
        tmp_path,
        [([task("t1"), task("t2")], "tool_use"), DONE],
        {"t1": [([text("one")], "end_turn")], "t2": [([text("two")], "end_turn")]},
    )
    result = run("go", model=model, workdir=workdir)
    own = sum(u.input_tokens for u in result.turn_usage)
    children = sum(c.result.usage.input_tokens for c in result.children)
    assert children > 0
    assert result.usage.input_tokens == own + children
    assert result.usage.estimated
    assert result.context_tokens == [u.input_tokens for u in result.turn_usage]  # the parent's


@pytest.mark.parametrize("forbidden", ["write_file", "bash", "edit_file", "task"])
def test_an_explorer_cannot_write_run_commands_or_start_children(
    tmp_path: Path, workdir: Path, forbidden: str
) -> None:
    args = {
        "write_file": {"path": "pwned.txt", "content": "x"},
        "bash": {"command": "touch pwned.txt"},
        "edit_file": {"path": "notes.txt", "old_text": "42", "new_text": "43"},
        "task": {"description": "d", "prompt": "p", "agent_type": "code"},
    }[forbidden]
    model = replay(
        tmp_path,
        [([task("t1")], "tool_use"), DONE],
        {"t1": [([tool("c1", forbidden, **args)], "tool_use"), ([text("could not")], "end_turn")]},
    )
    result = run("go", model=model, workdir=workdir)

    refused = result_of(result.children[0].result.messages, "c1")
    assert refused["is_error"]
    assert refused["content"].startswith(f"unknown tool '{forbidden}'. Available tools: read_file")
    assert not (workdir / "pwned.txt").exists()
    assert (workdir / "notes.txt").read_text() == "the answer is 42\n"


def test_no_agent_type_may_start_children() -> None:
    assert "task" in MAIN.tools
    assert all("task" not in kind.tools for kind in AGENT_TYPES.values())
    assert AGENT_TYPES["explore"].tools == ("read_file", "list_files", "grep")
    assert "bash" not in AGENT_TYPES["plan"].tools


def test_a_coder_keeps_its_own_plan(tmp_path: Path, workdir: Path) -> None:
    child_plan = [{"content": "child step", "status": "in_progress"}]
    model = replay(
        tmp_path,
        [
            (
                [
                    tool(
                        "p1", "todo_write", items=[{"content": "parent step", "status": "pending"}]
                    ),
                    task("t1", "code"),
                ],
                "tool_use",
            ),
            DONE,
        ],
        {"t1": [([tool("c1", "todo_write", items=child_plan)], "tool_use"), DONE]},
    )
    result = run("go", model=model, workdir=workdir)
    assert result.plan == [{"content": "parent step", "status": "pending"}]
    assert result.children[0].result.plan == child_plan


def test_an_unknown_agent_type_is_an_error_result(tmp_path: Path, workdir: Path) -> None:
    model = replay(tmp_path, [([task("t1", "wizard")], "tool_use"), DONE])
    result = run("go", model=model, workdir=workdir)
    refused = result_of(result.messages, "t1")
    assert refused["is_error"]
    assert "unknown agent_type 'wizard'; choose one of explore, plan, code" in refused["content"]
    assert result.stop == "done"


def test_no_child_is_given_more_turns_than_the_run(tmp_path: Path, workdir: Path) -> None:
    """--max-turns reaches the children: a child's limit is its type's, or the run's if that
    is smaller, so a learner's bound on a live run bounds every loop in it."""
    looking = ([tool("c1", "read_file", path="notes.txt")], "tool_use")
    children = {"t1": [looking] * 5 + [DONE]}  # five turns of reading, then an answer
    model = replay(tmp_path, [([task("t1")], "tool_use"), DONE], children)
    result = run("go", model=model, workdir=workdir, max_turns=3)
    (child,) = result.children
    assert (child.result.stop, child.result.turns) == ("max_turns", 3)
    model = replay(tmp_path, [([task("t1")], "tool_use"), DONE], children)
    (child,) = run("go", model=model, workdir=workdir).children  # 30: the type's 20 hold
    assert (child.result.stop, child.result.turns) == ("done", 6)


def test_a_child_that_fails_is_an_error_result_and_the_parent_goes_on(
    tmp_path: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(
        AGENT_TYPES, "brief", AgentType("two turns", "Be brief.", ("read_file",), 2)
    )
    read = ([tool("c", "read_file", path="notes.txt")], "tool_use")
    model = replay(
        tmp_path,
        [([task("t1", "brief"), task("t2")], "tool_use"), DONE],
        {"t1": [([text("Reading."), *read[0]], "tool_use"), read], "t2": []},  # t2 runs out
    )
    result = run("go", model=model, workdir=workdir)

    assert result.stop == "done"
    turn_limit, model_error = result_of(result.messages, "t1"), result_of(result.messages, "t2")
    assert turn_limit["is_error"] and model_error["is_error"]
    assert "the brief agent stopped without finishing (max_turns)" in turn_limit["content"]
    assert "Its last words: Reading." in turn_limit["content"]
    assert "the explore agent stopped without finishing (the cassette" in model_error["content"]
    assert "for the child of call t2" in model_error["content"]


class SlowFirstChild:
    """A model whose child of call `slow` answers only once the child `fast` has answered,
    and that notes when each child's call starts and ends (a fake of what is outside the
    project: the model).  Children run one after the other would wait in vain, for a
    bounded time, and the log would show it."""

    def __init__(
        self,
        inner: ReplayModel,
        key: str | None = None,
        log: list | None = None,
        fast_done: threading.Event | None = None,
    ):
        self.inner, self.key, self.name = inner, key, inner.name
        self.log = log if log is not None else []
        self.fast_done = fast_done or threading.Event()

    def child(self, key: str) -> SlowFirstChild:
        return SlowFirstChild(self.inner.child(key), key, self.log, self.fast_done)

    def complete(self, system, messages, tools=None, stop=None, max_tokens=4096) -> Reply:
        self.log.append(("start", self.key))
        if self.key == "slow":
            self.fast_done.wait(timeout=600)
        reply = self.inner.complete(system, messages, tools, stop, max_tokens)
        self.log.append(("end", self.key))
        if self.key == "fast":
            self.fast_done.set()
        return reply


def test_children_run_side_by_side_and_results_come_back_in_call_order(
    tmp_path: Path, workdir: Path
) -> None:
    model = SlowFirstChild(
        replay(
            tmp_path,
            [
                (
                    [task("slow"), task("fast"), tool("p1", "read_file", path="notes.txt")],
                    "tool_use",
                ),
                DONE,
            ],
            {
                "slow": [([text("slow report")], "end_turn")],
                "fast": [([text("fast report")], "end_turn")],
            },
        )
    )
    result = run("go", model=model, workdir=workdir)

    log = model.log
    assert log.index(("start", "fast")) < log.index(("end", "slow"))  # overlapped
    assert log.index(("end", "fast")) < log.index(("end", "slow"))
    answers = [b["tool_use_id"] for b in result.messages[2]["content"]]
    assert answers == ["slow", "fast", "p1"]
    assert [c.call_id for c in result.children] == ["slow", "fast"]


def test_parallel_children_replay_to_identical_transcripts(tmp_path: Path, workdir: Path) -> None:
    def reading(key: str, path: str) -> list:
        return [
            (
                [
                    tool(f"{key}1", "grep", pattern="answer"),
                    tool(f"{key}2", "read_file", path=path),
                ],
                "tool_use",
            ),
            ([text(f"{key} read {path}")], "end_turn"),
        ]

    (workdir / "more.txt").write_text("another answer\n")
    cassette = write_cassette(
        tmp_path / "run.jsonl",
        [([task("a"), task("b"), task("c")], "tool_use"), DONE],
        {"a": reading("a", "notes.txt"), "b": reading("b", "more.txt"), "c": reading("c", "x")},
    )

    def transcript() -> str:
        result = run("go", model=ReplayModel(cassette), workdir=workdir)
        nested = [result.messages, *[c.result.messages for c in result.children]]
        return json.dumps(nested)

    first = transcript()
    assert all(transcript() == first for _ in range(5))


class InterruptsWhileChildrenWork(ReplayModel):
    """A replay whose child of call `slow` presses Ctrl-C in the main thread on its first call."""

    def complete(self, system, messages, tools=None, stop=None, max_tokens=4096) -> Reply:
        if self.key == "slow" and self.turn == 0:
            # The main thread waits for this child once it has set its own Ctrl-C handler,
            # and it has taken the Ctrl-C once that handler has put the next one in its place.
            wait_until(lambda: signal.getsignal(signal.SIGINT) is not signal.default_int_handler)
            waiting = signal.getsignal(signal.SIGINT)
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)  # Ctrl-C
            wait_until(lambda: signal.getsignal(signal.SIGINT) is not waiting)
        return super().complete(system, messages, tools, stop, max_tokens)


def wait_until(condition: Callable[[], bool], limit: float = 60) -> None:
    """Poll `condition` until it holds, for `limit` seconds at most (a busy machine is slow)."""
    deadline = time.monotonic() + limit
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.005)


def test_ctrl_c_stops_the_children_and_the_parent_goes_on(tmp_path: Path, workdir: Path) -> None:
    model = InterruptsWhileChildrenWork(
        write_cassette(
            tmp_path / "run.jsonl",
            [([task("slow")], "tool_use"), ([text("The child was stopped.")], "end_turn")],
            {"slow": [([tool("c1", "read_file", path="notes.txt")], "tool_use"), DONE]},
        )
    )
    assert threading.current_thread() is threading.main_thread()
    result = run("go", model=model, workdir=workdir)

    assert result.stop == "done"
    stopped = result_of(result.messages, "slow")
    assert stopped["is_error"]
    assert "stopped without finishing (interrupted)" in stopped["content"]
    assert result.children[0].result.stop == "interrupted"


def test_child_output_is_labelled_and_never_mixed_within_a_line(
    tmp_path: Path, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    many = [([tool(f"c{n}", "read_file", path="notes.txt") for n in range(5)], "tool_use"), DONE]
    model = replay(
        tmp_path,
        [([task("t1", description="first"), task("t2", description="second")], "tool_use"), DONE],
        {"t1": many, "t2": many},
    )
    run("go", model=model, workdir=workdir, console=Console())
    lines = capsys.readouterr().out.splitlines()
    child_lines = [line for line in lines if "│ " in line and line.startswith("    ")]
    assert sum(line.startswith("    first │ ") for line in child_lines) >= 11
    assert sum(line.startswith("    second │ ") for line in child_lines) >= 11
    assert all(line.count("│") <= 2 for line in child_lines)


def test_recording_writes_each_child_its_section_and_the_recording_replays_strictly(
    tmp_path: Path, workdir: Path
) -> None:
    scripted = write_cassette(
        tmp_path / "scripted.jsonl",
        [([task("t1"), task("t2")], "tool_use"), DONE],
        {
            "t1": [([tool("c1", "read_file", path="notes.txt")], "tool_use"), DONE],
            "t2": [([text("nothing to read")], "end_turn")],
        },
    )
    recording = tmp_path / "recorded.jsonl"
    with RecordingModel(ReplayModel(scripted), recording, chapter="v3", task="go") as recorder:
        first = run("go", model=recorder, workdir=workdir)
    rows = [json.loads(line) for line in recording.read_text().splitlines()[1:]]
    assert sorted(row.get("child", "") for row in rows) == ["", "", "t1", "t1", "t2"]

    again = run("go", model=ReplayModel(recording, strict=True), workdir=workdir)
    assert again.messages == first.messages
    assert [c.result.messages for c in again.children] == [
        c.result.messages for c in first.children
    ]


def test_demo_delegates_fixes_both_bugs_and_shows_what_it_saved(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "v3_subagents", "--demo"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "    trace the discount │ ▶ explore agent" in done.stdout
    assert "    fix both bugs │ → edit_file  invoicing/storage.py" in done.stdout
    assert "delegation: 3 children; the parent's context peaked at ≈" in done.stdout
    tests = subprocess.run(
        [sys.executable, "-m", "unittest", "discover", "-s", "tests"],
        cwd=tmp_path / "v3_subagents-demo-1",
        capture_output=True,
        text=True,
    )
    assert tests.returncode == 0 and "Ran 7 tests" in tests.stderr


# --- hostile or careless input: ids repeated, huge reports, empty prompts -------------


def test_two_task_calls_sharing_an_id_each_get_a_child_and_a_report(
    tmp_path: Path, workdir: Path
) -> None:
    """The second `t` is renamed at the model boundary (`call_0`), on replay as live, so
    each child has its own section of the cassette and its own report."""
    model = replay(
        tmp_path,
        [([task("t"), task("t")], "tool_use"), DONE],
        {"t": [([text("first report")], "end_turn")], "call_0": [([text("second")], "end_turn")]},
    )
    result = run("go", model=model, workdir=workdir)
    assert result.stop == "done" and len(result.children) == 2
    first, second = result_of(result.messages, "t"), result_of(result.messages, "call_0")
    assert first["content"].startswith("first report")
    assert second["content"].startswith("second")


def test_a_huge_child_report_reaches_the_parent_cut_and_says_so(
    tmp_path: Path, workdir: Path
) -> None:
    model = replay(
        tmp_path,
        [([task("t1")], "tool_use"), DONE],
        {"t1": [([text("x" * 5_000_000)], "end_turn")]},
    )
    result = run("go", model=model, workdir=workdir)
    report = result_of(result.messages, "t1")["content"]
    assert len(report.encode()) < OUTPUT_LIMIT + 500 and "cut from the middle" in report


def test_an_empty_child_prompt_is_a_clear_error_result(tmp_path: Path, workdir: Path) -> None:
    empty = tool("t1", "task", description="look", prompt="  \n", agent_type="explore")
    result = run("go", model=replay(tmp_path, [([empty], "tool_use"), DONE]), workdir=workdir)
    refused = result_of(result.messages, "t1")
    assert refused["is_error"] and "the prompt is empty" in refused["content"]


def test_ctrl_c_twice_ends_the_program_and_the_child_commands(
    tmp_path: Path, workdir: Path
) -> None:
    pid_file = tmp_path / "sleeper.pid"
    command = f"echo $$ > {pid_file}; exec sleep 300"
    cassette = write_cassette(
        tmp_path / "run.jsonl",
        [([task("t1", "code")], "tool_use"), DONE],
        {"t1": [([tool("c1", "bash", command=command, timeout=300)], "tool_use"), DONE]},
    )
    program = subprocess.Popen(
        [sys.executable, "-m", "v3_subagents", "--workdir", str(workdir),
         "--model", f"replay:{cassette}", "go"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        for _ in range(600):  # up to a minute for the child's command to start
            if pid_file.exists() and pid_file.read_text().strip():
                break
            time.sleep(0.1)
        sleeper = int(pid_file.read_text())
        program.send_signal(signal.SIGINT)
        time.sleep(0.5)
        program.send_signal(signal.SIGINT)
        program.wait(timeout=60)  # the sleep would hold it for 300 s
    finally:
        program.kill()
    assert program.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(sleeper, 0)
