"""`python -m lab compare` live, against the loopback fake provider: runs repeated, recorded,
replayed, in parallel and bounded; rate limits; Ctrl-C; the progress display; servers that
cannot finish a run.  The offline comparison and the flags are in test_lab_compare.py."""

from __future__ import annotations

import io
import json
import os
import re
import runpy
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lab import plots, view
from lab.compare import command
from lab.compare.comparison import compare, plan
from lab.compare.progress import Progress
from lab.compare.record import Job
from lab.compare.report import wilson
from lab.compare.sources import Scripted
from lab.tasks import load_task
from llm import Model, Reply
from llm.cassette import read_cassette
from llm.tokens import estimate_request
from tests import REPO
from tests.fake_provider import FakeProvider, anthropic_message, openai_completion, text, tool_use
from tests.lab.test_lab_compare import CHAPTERS, tables_of
from v1_tool_loop.agent import SYSTEM
from v1_tool_loop.tools import TOOLS

# --- live, against the loopback fake provider -----------------------------------------

FIX = {
    "path": "stats.py",
    "old_text": "(ordered[middle] + ordered[middle + 1]) / 2",
    "new_text": "(ordered[middle - 1] + ordered[middle]) / 2",
}


def queue_react(server: FakeProvider, solve: bool) -> None:
    """Chapter 0's replies for one run: plain text, cut at the stop sequence."""
    if solve:
        action = (
            f"Thought: median is off by one.\nAction: edit_file\nAction Input: {json.dumps(FIX)}"
        )
        server.reply(anthropic_message(text(action), stop_reason="stop_sequence"))
    server.reply(anthropic_message(text("Thought: done.\nFinal Answer: median is fixed.")))


def queue_tools(server: FakeProvider, solve: bool) -> None:
    """Chapter 1's replies for one run: a tool call, then the answer."""
    if solve:
        call = tool_use("toolu_1", "edit_file", FIX)
        server.reply(anthropic_message(text("Fixing median."), call, stop_reason="tool_use"))
    server.reply(anthropic_message(text("median is fixed.")))


@pytest.fixture
def live_env(fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> FakeProvider:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_provider.url)
    return fake_provider


def without_wall(output: str) -> dict[str, list[list[str]]]:
    tables = tables_of(output)
    for rows in tables.values():
        column = rows[0].index("wall")
        for row in rows:
            del row[column]
    return tables


def test_live_runs_give_rates_and_replay_to_the_same_table(
    live_env: FakeProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for solve in (True, False):
        queue_react(live_env, solve)
    for solve in (True, True):
        queue_tools(live_env, solve)
    runs, live_json = tmp_path / "runs", tmp_path / "live.json"
    argv = ["--task", "one-bug", "--chapters", "v0,v1", "--model", "anthropic:claude-test"]
    argv += ["--runs", "2", "--record-dir", str(runs), "--json", str(live_json)]
    assert command.main(argv) == 0
    live = capsys.readouterr().out
    assert live_env.pending == 0 and len(live_env.requests) == 7
    assert max(len(line) for line in live.splitlines()) <= 100, "rates and intervals fit"

    rows = tables_of(live)["one-bug"]
    half, full = wilson(1, 2), wilson(2, 2)
    assert rows[1][1] == f"1/2 ({half[0] * 100:.0f}–{half[1]:.0%})" == "1/2 (9–91%)"
    assert rows[2][1] == f"2/2 ({full[0] * 100:.0f}–{full[1]:.0%})" == "2/2 (34–100%)"
    assert rows[1][3] == "1.5" and rows[1][5] == "37.5", "means over the runs, tokens measured"
    assert "- v0_react_text run 2: not solved: `3 of 8 hidden tests fail" in live

    records = json.loads(live_json.read_text())["records"]
    assert [(r["chapter"], r["run"], r["solved"]) for r in records] == [
        ("v0_react_text", 1, True), ("v0_react_text", 2, False),
        ("v1_tool_loop", 1, True), ("v1_tool_loop", 2, True),
    ]  # fmt: skip
    assert {(r["provenance"], r["model"], r["estimated"]) for r in records} == {
        ("live", "anthropic:claude-test", False)
    }
    assert sorted(p.relative_to(runs).as_posix() for p in runs.rglob("*.jsonl")) == [
        "one-bug/v0_react_text/1.jsonl", "one-bug/v0_react_text/2.jsonl",
        "one-bug/v1_tool_loop/1.jsonl", "one-bug/v1_tool_loop/2.jsonl",
    ]  # fmt: skip

    replay_json = tmp_path / "replay.json"
    assert command.main(["--replay-dir", str(runs), "--json", str(replay_json)]) == 0
    replayed = capsys.readouterr().out
    preamble = " ".join(replayed.split("\n\n")[0].splitlines())  # wrapped at 100 columns
    assert preamble.startswith(f"replaying the runs recorded in {runs}")
    assert without_wall(replayed) == without_wall(live)
    again = json.loads(replay_json.read_text())["records"]
    for before, after in zip(records, again, strict=True):
        assert after["provenance"] == "recorded", "the live run is live, its replay recorded"
        assert {**before, "wall_s": 0, "provenance": ""} == {**after, "wall_s": 0, "provenance": ""}


def test_a_recording_replays_under_the_bounds_it_was_made_with(
    live_env: FakeProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A live run stopped by --max-turns 2 is replayed with --replay-dir alone: its header
    keeps the bounds, so the replay stops where the run stopped, not at a cassette run dry."""
    call = tool_use("toolu_1", "read_file", {"path": "stats.py"})
    for _ in range(3):
        live_env.reply(anthropic_message(call, stop_reason="tool_use"))
    runs = tmp_path / "runs"
    argv = ["--task", "one-bug", "--chapters", "v1", "--model", "anthropic:claude-test"]
    argv += ["--max-turns", "2", "--max-reply-tokens", "500", "--record-dir", str(runs)]
    assert command.main(argv) == 0
    live = capsys.readouterr().out
    assert live_env.pending == 1, "the third reply is never asked for"
    (cassette,) = runs.rglob("*.jsonl")
    assert read_cassette(cassette)[0]["bounds"] == {"max_turns": 2, "reply_tokens": 500}
    assert command.main(["--replay-dir", str(runs)]) == 0
    replayed = capsys.readouterr().out
    assert tables_of(replayed)["one-bug"][1][2] == tables_of(live)["one-bug"][1][2] == "max_turns"
    assert command.main(["--replay-dir", str(runs), "--max-turns", "1"]) == 0  # a bound given wins
    assert tables_of(capsys.readouterr().out)["one-bug"][1][3] == "1"


def test_a_recording_replays_in_the_window_it_was_made_in(
    live_env: FakeProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A live run that --window stopped at its second request keeps the window in its
    header, and --replay-dir alone stops there again: without it, the replay would ask
    for a second reply the recording does not hold."""
    first = [{"role": "user", "content": load_task("one-bug").prompt}]
    window = estimate_request(SYSTEM, first, TOOLS) + 20  # the first request fits, not stats.py
    call = tool_use("toolu_1", "read_file", {"path": "stats.py"})
    live_env.reply(anthropic_message(call, stop_reason="tool_use"))
    runs, records = tmp_path / "runs", tmp_path / "records.json"
    argv = ["--task", "one-bug", "--chapters", "v1", "--model", "anthropic:claude-test"]
    command.main([*argv, "--window", str(window), "--record-dir", str(runs)])
    (cassette,) = runs.rglob("*.jsonl")
    assert read_cassette(cassette)[0]["bounds"] == {"window": window}
    capsys.readouterr()

    command.main(["--replay-dir", str(runs), "--json", str(records)])
    (record,) = json.loads(records.read_text())["records"]
    assert (record["outcome"], record["turns"]) == ("window full", 1)
    assert f"the context window is {window:,} (--window)" in record["error"]
    command.main(["--replay-dir", str(runs), "--window", "1000000", "--json", str(records)])
    (record,) = json.loads(records.read_text())["records"]  # a window given wins
    assert record["outcome"] == "model error" and "asked for reply 2" in record["error"]


def test_a_live_run_of_the_long_task_reads_fresh_logs_and_its_replay_the_same(
    live_env: FakeProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo's answer, written by a live run, does not solve the fresh logs that run
    was given; replaying the recording gives that run's logs again, and so its verdict."""
    maker = runpy.run_path(str(REPO / "lab/tasks/long-task/make_logs.py"), run_name="make_logs")
    demo_answer = "\n".join(maker["generate"]()[1]) + "\n"
    call = tool_use("toolu_1", "write_file", {"path": "stuck.txt", "content": demo_answer})
    live_env.reply(anthropic_message(text("Writing the list."), call, stop_reason="tool_use"))
    live_env.reply(anthropic_message(text("Done.")))
    runs, live_json = tmp_path / "runs", tmp_path / "live.json"
    argv = ["--task", "long-task", "--chapters", "v1", "--model", "anthropic:claude-test"]
    command.main([*argv, "--record-dir", str(runs), "--json", str(live_json)])
    capsys.readouterr()
    live = json.loads(live_json.read_text())["records"][0]
    assert not live["solved"] and live["verdict"].startswith("stuck.txt misses")
    seed = int((runs / "long-task/v1_tool_loop/1.seed").read_text())
    assert live["verdict"].count("A-") >= 1 and str(seed) not in json.dumps(live["messages"])

    replay_json = tmp_path / "replay.json"
    command.main(["--replay-dir", str(runs), "--json", str(replay_json)])
    capsys.readouterr()
    replayed = json.loads(replay_json.read_text())["records"][0]
    assert replayed["verdict"] == live["verdict"]


def test_live_runs_in_parallel(live_env: FakeProvider, capsys: pytest.CaptureFixture[str]) -> None:
    for _ in range(4):
        live_env.reply(anthropic_message(text("I would rather not.")))
    argv = ["--task", "one-bug", "--chapters", "v1", "--model", "anthropic:claude-test"]
    assert command.main([*argv, "--runs", "4", "--jobs", "2"]) == 0
    rows = tables_of(capsys.readouterr().out)["one-bug"]
    assert rows[1][:4] == ["v1_tool_loop", "0/4 (0–49%)", "done", "1"]
    assert live_env.pending == 0


RATE_LIMITED = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}


def test_a_429_that_never_clears_is_its_own_verdict_not_a_failure(
    live_env: FakeProvider, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Thirty students on one key: a run the provider would not serve says nothing about
    the chapter, so the rate is over the runs that finished and the others are beside it."""
    monkeypatch.setenv("AGENT_RETRIES", "1")
    queue_tools(live_env, solve=True)
    for _ in range(2):  # the first attempt and its one retry, for run 2
        live_env.fail(429, RATE_LIMITED)
    queue_tools(live_env, solve=False)
    argv = ["--task", "one-bug", "--chapters", "v1", "--model", "anthropic:claude-test"]
    assert command.main([*argv, "--runs", "3"]) == 0
    captured = capsys.readouterr()
    assert live_env.pending == 0
    header, row = tables_of(captured.out)["one-bug"]
    assert header[:4] == ["chapter", "solved", "could not finish", "stop"]
    assert row[:4] == ["v1_tool_loop", "1/2 (9–91%)", "1 rate limited", "done ×2, error ×1"]
    assert "- v1_tool_loop run 2: could not finish: rate limited; error: `" in captured.out
    assert "v1_tool_loop · one-bug · run 2/3 · could not finish: rate limited" in captured.err
    assert "at a time" not in captured.err  # live, the runs go one by one unless --jobs says


def test_a_run_stops_cleanly_at_its_token_budget(
    live_env: FakeProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--max-tokens-total bounds what a run spends: a call is made only if what it reads and
    its reply, capped to the room left, fit; the run then stops and says why."""
    call = tool_use("toolu_1", "read_file", {"path": "stats.py"})
    for _ in range(10):  # the provider counts 600 tokens read, 300 written, a call
        body = anthropic_message(call, stop_reason="tool_use", input_tokens=600)
        live_env.reply({**body, "usage": {**body["usage"], "output_tokens": 300}})
    records = tmp_path / "records.json"
    argv = ["--task", "one-bug", "--chapters", "v1", "--model", "anthropic:claude-test"]
    argv += ["--max-tokens-total", "3000", "--max-reply-tokens", "300", "--json", str(records)]
    assert command.main(argv) == 0
    out = capsys.readouterr().out
    preamble = " ".join(out.split("\n\n")[0].splitlines())  # wrapped at 100 columns
    assert "at most 300 tokens a reply, 3,000 tokens a run" in preamble
    assert 1 <= len(live_env.requests) < 10 and live_env.pending > 0  # stopped before the end
    assert all(request.body["max_tokens"] <= 300 for request in live_env.requests)
    (record,) = json.loads(records.read_text())["records"]
    assert record["stop"] == "max_tokens_total" and record["outcome"] == "not solved"
    spent = record["input_tokens"] + record["output_tokens"]
    assert spent == 900 * len(live_env.requests) <= 3000
    assert f"the run has used {spent:,} tokens, the call would read about" in record["error"]
    assert record["error"].endswith("--max-tokens-total allows 3,000")


def test_max_turns_bounds_every_run(
    live_env: FakeProvider, capsys: pytest.CaptureFixture[str]
) -> None:
    call = tool_use("toolu_1", "read_file", {"path": "stats.py"})
    for _ in range(2):
        live_env.reply(anthropic_message(call, stop_reason="tool_use"))
    argv = ["--task", "one-bug", "--chapters", "v1", "--model", "anthropic:claude-test"]
    assert command.main([*argv, "--max-turns", "2"]) == 0
    row = tables_of(capsys.readouterr().out)["one-bug"][1]
    assert row[1:4] == ["no", "max_turns", "2"] and live_env.pending == 0


# --- Ctrl-C ------------------------------------------------------------------------------


class CtrlC:
    """Replays the scripted cassettes, as a person would watch them, and presses Ctrl-C
    during the `at`-th model call of the whole comparison."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.calls = 0
        self.opened = 0

    def open(self, job: Job) -> tuple[Model, str]:
        self.opened += 1
        model, provenance = Scripted().open(job)
        return Pressing(model, self), provenance

    def seed(self, job: Job) -> int | None:
        return Scripted().seed(job)


class Pressing:
    def __init__(self, inner: Model, ctrl_c: CtrlC) -> None:
        self.inner, self.ctrl_c, self.name = inner, ctrl_c, inner.name

    def complete(self, *args: Any, **kwargs: Any) -> Reply:
        self.ctrl_c.calls += 1
        if self.ctrl_c.calls == self.ctrl_c.at:
            raise KeyboardInterrupt
        return self.inner.complete(*args, **kwargs)


def four_jobs() -> list[Job]:
    tasks = [load_task("one-bug"), load_task("several-steps")]
    return plan(tasks, CHAPTERS[:2], 1, Scripted())[0]


def test_ctrl_c_keeps_the_runs_that_finished(tmp_path: Path) -> None:
    ctrl_c = CtrlC(at=13)  # one-bug takes 6 calls with chapter 0 and 5 with chapter 1
    out = io.StringIO()
    comparison = compare(four_jobs(), ctrl_c, progress=Progress(out), scratch=tmp_path)
    assert comparison.interrupted
    assert [(r.task, r.chapter, r.solved) for r in comparison.records] == [
        ("one-bug", "v0_react_text", True),
        ("one-bug", "v1_tool_loop", True),
    ]
    assert ctrl_c.opened == 3, "no run starts after Ctrl-C"
    assert (
        out.getvalue().splitlines()[-1]
        == "v0_react_text · several-steps · interrupted, not counted"
    )
    assert not list(tmp_path.iterdir()), "the scratch folder is removed"


def test_ctrl_c_stops_parallel_runs_at_their_next_turn(tmp_path: Path) -> None:
    ctrl_c = CtrlC(at=4)
    progress = Progress(io.StringIO())
    comparison = compare(four_jobs(), ctrl_c, parallel=2, progress=progress, scratch=tmp_path)
    assert comparison.interrupted and not comparison.records
    assert ctrl_c.opened == 2 and ctrl_c.calls <= 5


def test_ctrl_c_on_the_command_line(fake_provider: FakeProvider, tmp_path: Path) -> None:
    """A real SIGINT while a live run waits for the provider: exit code 130, the finished
    run in the table, in the JSON and in the recordings; the cut one in none of them."""
    queue_tools(fake_provider, solve=True)
    call = tool_use("toolu_1", "read_file", {"path": "stats.py"})
    fake_provider.reply(anthropic_message(call, stop_reason="tool_use"))
    fake_provider.never_answer()
    records, runs = tmp_path / "records.json", tmp_path / "runs"
    env = {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "ANTHROPIC_BASE_URL": fake_provider.url,
    }
    command = [sys.executable, "-m", "lab", "compare", "--task", "one-bug", "--chapters", "v1"]
    command += ["--model", "anthropic:claude-test", "--runs", "2", "--json", str(records)]
    command += ["--record-dir", str(runs)]
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stderr is not None
        for line in process.stderr:
            if line.startswith("v1_tool_loop · one-bug · run 1/2 · solved"):
                break
        deadline = time.monotonic() + 120
        while len(fake_provider.requests) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)  # until run 2 waits for its second reply
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=600)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert "interrupted: the runs above finished; the others did not run" in err
    rows = tables_of(out)["one-bug"]
    assert rows[1][:3] == ["v1_tool_loop", "yes", "done"]
    data = json.loads(records.read_text())
    assert data["interrupted"] is True and len(data["records"]) == 1
    assert [p.name for p in runs.rglob("*.jsonl*")] == ["1.jsonl"]


# --- the progress display --------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def screen(written: str) -> list[str]:
    """What a terminal shows after `written`: lines, with the two control sequences the
    display uses (cursor up N lines to their start, clear to the end of the screen)."""
    lines: list[str] = [""]
    row = 0
    for part in re.split(r"(\x1b\[\d+F|\x1b\[J|\n)", written):
        if part == "\n":
            row += 1
            if row == len(lines):
                lines.append("")
        elif part.startswith("\x1b[") and part.endswith("F"):
            row -= int(part[2:-1])
        elif part == "\x1b[J":
            del lines[row + 1 :]
            lines[row] = ""
        else:
            lines[row] += part
    return lines


def test_on_a_terminal_each_run_has_a_live_line_rewritten_in_place() -> None:
    terminal = Terminal()
    progress = Progress(terminal)
    progress.turn("v0 · one-bug", 1, 0, False)
    progress.turn("v1 · one-bug", 1, 0, False)
    progress.turn("v0 · one-bug", 2, 1234, True)
    assert screen(terminal.getvalue()) == [
        "  v0 · one-bug · turn 2 · ≈1,234 tokens",
        "  v1 · one-bug · turn 1 · 0 tokens",
        "",
    ]
    progress.finish("v0 · one-bug", "solved · 2 turns")
    progress.turn("v1 · one-bug", 2, 999, False)
    assert screen(terminal.getvalue()) == [
        "v0 · one-bug · solved · 2 turns",
        "  v1 · one-bug · turn 2 · 999 tokens",
        "",
    ]
    progress.finish("v1 · one-bug", "not solved (max_turns)")
    assert screen(terminal.getvalue()) == [
        "v0 · one-bug · solved · 2 turns",
        "v1 · one-bug · not solved (max_turns)",
        "",
    ]


def test_on_a_terminal_a_chapter_has_its_colour_of_the_page_and_the_notebooks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    terminal = Terminal()
    Progress(terminal).finish("v2_todos · one-bug", "solved")
    assert plots.chapter_colour("v2_todos") == "#009E73" == view.COLOURS[2]
    assert terminal.getvalue() == "\x1b[1;38;2;0;158;115mv2_todos\x1b[0m · one-bug · solved\n"
    monkeypatch.setenv("NO_COLOR", "1")
    plain = Terminal()
    Progress(plain).finish("v2_todos · one-bug", "solved")
    assert plain.getvalue() == "v2_todos · one-bug · solved\n"


def test_off_a_terminal_only_finished_runs_are_written() -> None:
    log = io.StringIO()
    progress = Progress(log)
    progress.turn("v0 · one-bug", 3, 100, True)
    progress.finish("v0 · one-bug", "solved · 3 turns")
    assert log.getvalue() == "v0 · one-bug · solved · 3 turns\n"


def test_a_slow_reply_says_so_once_in_a_log_and_on_the_live_line() -> None:
    """The clock is handed to `tick`, so the test waits for nothing."""
    log = io.StringIO()
    progress = Progress(log)
    progress.turn("v1 · one-bug", 2, 900, False)
    now = time.monotonic()
    progress.tick(now + 5)  # not slow yet
    progress.tick(now + 45)
    progress.tick(now + 50)  # said once, not every second
    progress.finish("v1 · one-bug", "solved · 2 turns")
    assert log.getvalue().splitlines() == [
        "v1 · one-bug · turn 2 · 900 tokens · slow reply: waiting 45 s",
        "v1 · one-bug · solved · 2 turns",
    ]
    terminal = Terminal()
    live = Progress(terminal)
    live.turn("v1 · one-bug", 2, 900, False)
    live.tick(time.monotonic() + 61)
    assert screen(terminal.getvalue())[0] == (
        "  v1 · one-bug · turn 2 · 900 tokens · slow reply: waiting 61 s"
    )


# --- servers that cannot finish a run -----------------------------------------------


def test_a_comparison_where_no_run_could_finish_says_so_and_fails(
    live_env: FakeProvider, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every run rate limited: the tables measure nothing, and the exit code says so."""
    monkeypatch.setenv("AGENT_RETRIES", "0")
    for _ in range(2):
        live_env.fail(429, RATE_LIMITED)
    argv = ["--task", "one-bug", "--chapters", "v1", "--model", "anthropic:claude-test"]
    assert command.main([*argv, "--runs", "2"]) == 1
    err = capsys.readouterr().err
    assert "error: no run could finish (2 rate limited): the tables measure nothing" in err


@pytest.mark.parametrize("chapter", ["v1", "v2", "v3", "v4"])
def test_a_call_the_server_left_in_the_text_is_a_setting_that_could_not_finish(
    chapter: str, fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The reply came, and was paid for: each chapter's loop counts its turn and tokens;
    the run is not "not solved" by the chapter but stopped by the server's setting."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_provider.url + "/v1")
    fake_provider.reply(openai_completion("functions.bash:", usage=(757, 141)))
    records = tmp_path / "r.json"
    argv = ["--task", "one-bug", "--chapters", chapter, "--model", "openai:local"]
    assert command.main([*argv, "--json", str(records)]) == 1  # nothing could finish
    (record,) = json.loads(records.read_text())["records"]
    assert record["stop"] == "tool_call_in_text" and record["outcome"] == "tool-call setting"
    assert record["verdict"] == "could not finish: tool-call setting"
    assert (record["turns"], record["input_tokens"], record["output_tokens"]) == (1, 757, 141)
    assert record["context_per_turn"] == [757]
