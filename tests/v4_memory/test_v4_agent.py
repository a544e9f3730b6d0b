"""The chapter 4 loop on scripted replies: the session on disk, the context in stages, the memory
flush, recall into the prompt, skills, a reply cut off, Ctrl-C; and the command line."""

from __future__ import annotations

import itertools
import json
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from llm import Reply
from llm.cassette import ReplayModel
from llm.errors import ContextTooLong
from llm.result import CONTINUE
from llm.types import RUNTIME_TAG, is_runtime, without_runtime
from machine import jsonl
from tests import REPO
from tests.scripted import assert_valid_history, text, tool, write_cassette
from v4_memory.agent import run
from v4_memory.memory import MemoryStore
from v4_memory.session import SESSIONS_DIR, SessionStore

DONE = ([text("done")], "end_turn")


class Listening:
    """A model that passes calls on to a replay and keeps every request it was sent."""

    def __init__(self, inner: ReplayModel, requests: list | None = None) -> None:
        self.inner, self.name = inner, inner.name
        self.requests = requests if requests is not None else []

    def child(self, key: str) -> Listening:
        return Listening(self.inner.child(key), self.requests)

    def complete(self, system, messages, tools=None, stop=None, max_tokens=4096) -> Reply:
        # A copy: the list is the session's own, valid for this call only.
        self.requests.append({"system": system, "messages": list(messages), "tools": tools})
        return self.inner.complete(system, messages, tools, stop, max_tokens)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    for day in range(1, 9):  # eight files of about 1,800 tokens each
        (folder / f"log-{day}.txt").write_text(f"day {day}: " + "status ok, queue 3\n" * 400)
    return folder


def session_file(workdir: Path) -> Path:
    [path] = (workdir / SESSIONS_DIR).glob("*.jsonl")
    return path


def test_every_message_is_saved_as_it_happens_and_a_new_store_reads_the_same(
    tmp_path: Path, workdir: Path
) -> None:
    model = ReplayModel(
        write_cassette(
            tmp_path / "c.jsonl",
            [
                (
                    [text("Reading."), tool("t1", "read_file", path="log-1.txt", limit=2)],
                    "tool_use",
                ),
                DONE,
            ],
        )
    )
    result = run("look at log-1", model=model, workdir=workdir)

    assert result.stop == "done" and result.session_id
    rows = jsonl.load(session_file(workdir)).records
    assert rows[0]["type"] == "session" and rows[0]["chapter"] == "v4_memory"
    assert [row["role"] for row in rows[1:]] == ["user", "assistant", "user", "assistant"]
    reopened = SessionStore(workdir / SESSIONS_DIR).open(result.session_id)
    assert reopened.messages() == result.messages
    assert_valid_history(result.messages)
    assert result.highlights()[-1] == f"session {result.session_id} is saved: go on with --continue"


def reading(count: int) -> list:
    """The model reads one log per turn and notes what it saw."""
    return [
        (
            [text(f"Day {day} is fine."), tool(f"r{day}", "read_file", path=f"log-{day}.txt")],
            "tool_use",
        )
        for day in range(1, count + 1)
    ]


def test_stage_one_then_stage_two_and_the_flush_before_it(tmp_path: Path, workdir: Path) -> None:
    model = Listening(
        ReplayModel(
            write_cassette(
                tmp_path / "c.jsonl",
                [*reading(8), DONE],
                {
                    "flush-1": [
                        (
                            [
                                tool(
                                    "f1",
                                    "memory_write",
                                    text="Logs are in log-N.txt files.",
                                    category="project",
                                ),
                                text("saved"),
                            ],
                            "end_turn",
                        )
                    ],
                    "summary-1": [
                        (
                            [
                                text(
                                    "The user asked to read the logs; days read so far "
                                    "were all fine."
                                )
                            ],
                            "end_turn",
                        )
                    ],
                },
            )
        )
    )
    result = run("read every log", model=model, workdir=workdir, context_budget=9000)

    assert result.stop == "done"
    stages = [c.stage for c in result.compactions]
    assert stages[:2] == [1, 2] and set(stages) == {1, 2}
    first, second = result.compactions[0], result.compactions[1]
    assert first.tokens_after < first.tokens_before <= 9000 * 1.5
    assert second.tokens_after < second.tokens_before
    assert result.counts()["compactions"] == len(result.compactions)
    assert result.details()["compactions"][0]["stage"] == 1
    # Every request the loop sent stayed within the budget.
    sizes = [u.input_tokens for u in result.turn_usage]
    assert max(sizes) <= 9000
    # The flush saved its memory before the summary, and the summary is on disk.
    assert [hit.text for hit in MemoryStore(workdir / ".agent").search("log files")] == [
        "Logs are in log-N.txt files."
    ]
    rows = jsonl.load(session_file(workdir)).records
    assert [row["type"] for row in rows if row.get("type") == "compaction"] == ["compaction"]
    view = SessionStore(workdir / SESSIONS_DIR).open(result.session_id).messages()
    assert view[0]["content"].startswith("Summary of the earlier conversation:")
    assert "days read so far were all fine" in view[0]["content"]
    assert_valid_history(view)
    assert result.messages[0] == {"role": "user", "content": "read every log"}  # the transcript


def test_a_resumed_session_sees_the_compacted_context(tmp_path: Path, workdir: Path) -> None:
    sections = {
        "summary-1": [([text("Earlier: logs read.")], "end_turn")],
        "flush-1": [([text("saved")], "end_turn")],
    }
    first = run(
        "read every log",
        model=ReplayModel(write_cassette(tmp_path / "a.jsonl", [*reading(8), DONE], sections)),
        workdir=workdir,
        context_budget=9000,
    )
    session = SessionStore(workdir / SESSIONS_DIR).open(first.session_id)
    model = Listening(ReplayModel(write_cassette(tmp_path / "b.jsonl", [DONE])))
    run("and now?", model=model, workdir=workdir, session=session, context_budget=9000)

    sent = model.requests[0]["messages"]
    assert sent[0]["content"].startswith("Summary of the earlier conversation:")
    assert sent[-1]["content"][0] == text("and now?")  # then the runtime note


def test_the_calls_of_a_turn_send_the_same_system_prompt_and_grow_one_prefix(
    tmp_path: Path, workdir: Path
) -> None:
    """What a prefix cache needs: each request starts with the one before, byte for byte,
    but for the runtime note, which holds the clock and rides last."""
    replies = [
        ([tool(f"t{n}", "read_file", path=f"log-{n}.txt", limit=2)], "tool_use") for n in (1, 2)
    ]
    model = Listening(ReplayModel(write_cassette(tmp_path / "a.jsonl", [*replies, DONE])))
    run("look at two logs", model=model, workdir=workdir)

    first, *later = model.requests
    assert len(later) == 2
    for request in later:
        assert request["system"].encode() == first["system"].encode()
    assert RUNTIME_TAG not in first["system"]
    for before, after in itertools.pairwise(model.requests):
        *kept, last = before["messages"]
        assert after["messages"][: len(kept)] == kept
        assert blocks(after["messages"][len(kept)]) == blocks(without_runtime(last))
        assert blocks(last)[-1]["text"].startswith(RUNTIME_TAG)  # the note ends the request
        assert not any(is_runtime(b) for m in after["messages"][:-1] for b in blocks(m))


def blocks(message: dict) -> list[dict]:
    content = message["content"]
    return [text(content)] if isinstance(content, str) else content


def test_memories_saved_in_one_session_are_recalled_into_the_next_ones_prompt(
    tmp_path: Path, workdir: Path
) -> None:
    saved = [
        tool("m1", "memory_write", text="The user wants answers in French.", category="preference")
    ]
    run(
        "Always answer me in French, please.",
        model=ReplayModel(write_cassette(tmp_path / "a.jsonl", [(saved, "tool_use"), DONE])),
        workdir=workdir,
    )
    model = Listening(ReplayModel(write_cassette(tmp_path / "b.jsonl", [DONE])))
    result = run("In which language should you answer?", model=model, workdir=workdir)

    system = model.requests[0]["system"]
    assert "The user wants answers in French." in system.split("# Memory")[1]
    assert [hit.text for hit in result.recalled] == ["The user wants answers in French."]
    assert result.session_id != ""  # a new session: nothing but memory links the two


def test_skills_are_listed_and_loaded_on_demand(tmp_path: Path, workdir: Path) -> None:
    model = Listening(
        ReplayModel(
            write_cassette(
                tmp_path / "c.jsonl",
                [
                    (
                        [
                            tool("s1", "load_skill", name="commit-message"),
                            tool("s2", "load_skill", name="poetry"),
                        ],
                        "tool_use",
                    ),
                    DONE,
                ],
            )
        )
    )
    result = run("write a commit message", model=model, workdir=workdir)

    assert "commit-message" in model.requests[0]["system"]
    body = result.messages[2]["content"]
    assert not body[0]["is_error"] and len(body[0]["content"]) > 200
    assert body[1]["is_error"] and "there is no skill named 'poetry'" in body[1]["content"]


def test_a_reply_cut_off_at_max_tokens_is_answered_and_the_loop_goes_on(
    tmp_path: Path, workdir: Path
) -> None:
    cut = (
        [text("Writing it"), tool("w1", "write_file", path="a.txt", content="half")],
        "max_tokens",
    )
    model = ReplayModel(write_cassette(tmp_path / "c.jsonl", [cut, DONE]))
    result = run("write a long file", model=model, workdir=workdir)

    assert result.stop == "done" and result.turns == 2
    answer = result.messages[2]["content"]
    assert answer[0]["tool_use_id"] == "w1" and answer[0]["is_error"]
    assert answer[1] == {"type": "text", "text": CONTINUE}
    assert not (workdir / "a.txt").exists()  # the half-written call never ran
    assert_valid_history(result.messages)


class RefusesFirst(ReplayModel):
    """A replay whose provider refuses the first request as too long, as a real one can."""

    refused = False

    def complete(self, system, messages, tools=None, stop=None, max_tokens=4096) -> Reply:
        if self.key is None and not self.refused:
            RefusesFirst.refused = True
            raise ContextTooLong("prompt is too long")
        return super().complete(system, messages, tools, stop, max_tokens)


def test_a_provider_refusal_summarises_once_and_asks_again(tmp_path: Path, workdir: Path) -> None:
    first = run(
        "read three",
        model=ReplayModel(write_cassette(tmp_path / "a.jsonl", [*reading(3), DONE])),
        workdir=workdir,
    )
    session = SessionStore(workdir / SESSIONS_DIR).open(first.session_id)
    model = RefusesFirst(
        write_cassette(
            tmp_path / "b.jsonl",
            [DONE],
            {"summary-1": [([text("Three logs were read.")], "end_turn")]},
        )
    )
    result = run("go on", model=model, workdir=workdir, session=session)

    assert result.stop == "done"
    assert [c.stage for c in result.compactions] == [2]
    view = session.messages()
    assert view[0]["content"].endswith("Three logs were read.")


def test_ctrl_c_leaves_a_session_that_reopens_valid(tmp_path: Path, workdir: Path) -> None:
    """Ctrl-C while the second of two tools runs: the first result is kept, the second is not."""
    model = ReplayModel(
        write_cassette(
            tmp_path / "c.jsonl",
            [
                (
                    [
                        tool("t1", "read_file", path="log-1.txt", limit=1),
                        tool("t2", "bash", command="kill -INT $PPID; sleep 30"),
                    ],
                    "tool_use",
                ),
                DONE,
            ],
        )
    )
    result = run("go", model=model, workdir=workdir)

    assert result.stop == "interrupted"
    reopened = SessionStore(workdir / SESSIONS_DIR).open(result.session_id).messages()
    results = reopened[2]["content"]
    assert [b["tool_use_id"] for b in results] == ["t1", "t2"]
    assert not results[0]["is_error"] and results[1]["is_error"]
    assert_valid_history(reopened)


# --- the command line -------------------------------------------------------------------


def chapter4(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "TMPDIR": str(cwd)}
    return subprocess.run(
        [sys.executable, "-m", "v4_memory", *args],
        cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def test_a_recorded_demo_keeps_all_three_steps_and_replays_them_strictly(tmp_path: Path) -> None:
    """The recording wraps a replay here, as it wraps a live model: the runtime note then
    names one model spec and work directory, and its strict replay another of each."""
    demo = REPO / "v4_memory" / "demo"
    recorded = chapter4(
        "--demo", "--model", f"replay:{demo / 'cassette.jsonl'}", "--record", "run.jsonl",
        cwd=tmp_path,
    )  # fmt: skip
    assert recorded.returncode == 0, recorded.stderr
    for name, step in [("run", "cassette"), ("run.resume", "resume"), ("run.recall", "recall")]:
        header = json.loads((tmp_path / f"{name}.jsonl").read_text().splitlines()[0])
        bundled = json.loads((demo / f"{step}.jsonl").read_text().splitlines()[0])
        assert header["provenance"] == "recorded" and header["task"] == bundled["task"]

    replayed = chapter4("--demo", "--model", "replay:run.jsonl", "--strict", cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout.count("── done:") == 3
    assert "--strict --model replay:" in replayed.stdout and "run.recall.jsonl" in replayed.stdout
    assert "differs" not in replayed.stderr

    (tmp_path / "run.recall.jsonl").unlink()
    partial = chapter4("--demo", "--model", "replay:run.jsonl", cwd=tmp_path)
    assert partial.returncode == 2 and "run.recall.jsonl" in partial.stderr
    assert "── done" not in partial.stdout  # refused before the first step
    other = REPO / "v1_tool_loop" / "demo" / "cassette.jsonl"
    wrong = chapter4("--demo", "--model", f"replay:{other}", cwd=tmp_path)
    assert wrong.returncode == 2 and "not for this demo" in wrong.stderr


def test_a_demo_recorded_as_far_as_its_first_step_went_replays_that_step(tmp_path: Path) -> None:
    """A recording of a demo whose first step stopped early holds no later step: its replay,
    under the bound the recording keeps, plays the first step back to the same stop, and
    says so, instead of refusing the recording."""
    demo = REPO / "v4_memory" / "demo" / "cassette.jsonl"
    short = ("--max-turns", "3")
    recorded = chapter4("--demo", "--model", f"replay:{demo}", "--record", "run.jsonl", *short,
                        cwd=tmp_path)  # fmt: skip
    assert recorded.returncode == 1 and sorted(p.name for p in tmp_path.glob("*.jsonl")) == [
        "run.jsonl"
    ]
    replayed = chapter4("--demo", "--model", "replay:run.jsonl", "--strict", cwd=tmp_path)
    assert replayed.returncode == 1, replayed.stderr
    assert "replaying under the bounds it was recorded with: --max-turns 3" in replayed.stdout
    assert "the recording holds the demo's first step alone" in replayed.stdout
    assert "── max_turns: 3 turns" in replayed.stdout and "$ python -m" not in replayed.stdout


def test_demo_compacts_resumes_in_a_new_process_and_recalls_in_a_new_session(
    tmp_path: Path,
) -> None:
    done = chapter4("--demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "context: stage 1 before turn" in out and "context: stage 2 before turn" in out
    assert "memory flush before older turns are summarised: 1 saved" in out
    # A clone whose path holds a space shows the cassette's path in quotes.
    assert re.search(r'--continue --model "?replay:', out) and "resumed session " in out
    assert out.count("recalled: ") == 2
    assert "→ load_skill  ops-report" in out
    workspace = tmp_path / "v4_memory-demo-1"
    maker = runpy.run_path(str(REPO / "lab/tasks/long-task/make_logs.py"), run_name="make_logs")
    expected = "\n".join(maker["generate"]()[1]) + "\n"  # the demo's logs' stuck orders
    assert (workspace / "stuck.txt").read_text() == expected
    assert (workspace / "report.md").exists()
    assert "A-1241" in (workspace / "reports/stuck-after-retry.md").read_text()
    assert len(list((workspace / SESSIONS_DIR).glob("*.jsonl"))) == 2


def test_the_learners_bounds_hold_for_every_step_of_the_demo(tmp_path: Path) -> None:
    """--max-turns and --max-tokens-total reach the later steps, each a new process: the
    command line each step prints carries them (and without them, nothing is added)."""
    done = chapter4("--demo", "--max-turns", "15", "--max-tokens-total", "900000", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    steps = [line for line in done.stdout.splitlines() if line.startswith("$ python -m")]
    assert len(steps) == 2 and all("--max-turns 15 --max-tokens-total 900000" in s for s in steps)


def test_continue_without_a_session_and_an_unknown_id_are_one_line_errors(tmp_path: Path) -> None:
    cassette = write_cassette(tmp_path / "c.jsonl", [DONE])
    nothing = chapter4("--continue", "--model", f"replay:{cassette}", "hi", cwd=tmp_path)
    assert nothing.returncode == 2
    assert nothing.stderr.startswith("error: no session to continue in ")
    unknown = chapter4("--resume", "nope", "--model", f"replay:{cassette}", "hi", cwd=tmp_path)
    assert unknown.returncode == 2 and "no session 'nope'" in unknown.stderr


def test_a_session_open_in_another_process_is_refused(tmp_path: Path) -> None:
    cassette = write_cassette(tmp_path / "c.jsonl", [DONE, DONE])
    assert chapter4("--model", f"replay:{cassette}", "first", cwd=tmp_path).returncode == 0
    store = SessionStore(tmp_path / SESSIONS_DIR)
    with store.open(store.latest().id):
        busy = chapter4("--continue", "--model", f"replay:{cassette}", "again", cwd=tmp_path)
    assert busy.returncode == 2 and "is open in another process" in busy.stderr


def test_the_interactive_commands(tmp_path: Path) -> None:
    cassette = write_cassette(
        tmp_path / "c.jsonl",
        [([text("Hello.")], "end_turn")],
        {"summary-1": [([text("The user said hello.")], "end_turn")]},
    )
    done = chapter4(
        "--model", f"replay:{cassette}", cwd=tmp_path,
        stdin="hello\n/sessions\n/prompt\n/compact\n/resume nope\n/todos\n/exit\n",
    )  # fmt: skip
    out = done.stdout
    assert "Also: /sessions, /resume, /compact, /prompt, /todos." in out
    assert re.search(r"    2 messages +\d+ kB  hello", out)  # /sessions, the current one starred
    assert "layer" in out and "identity" in out and "<runtime>" in out  # /prompt
    assert "compacted: 2 messages summarised" in out
    assert "no session 'nope'" in out
    assert "Todos: (none)" in out
    [path] = (tmp_path / SESSIONS_DIR).glob("*.jsonl")
    assert any(
        json.loads(line).get("type") == "compaction" for line in path.read_text().splitlines()
    )
