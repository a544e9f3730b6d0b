"""`python -m lab compare`, end to end: scripted replays, a simulated window, the tables, the
JSON records and the flags.  Live runs, Ctrl-C and the progress display are in
test_lab_compare_live.py."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from lab.__main__ import main as lab_main
from lab.chapters import chapters
from lab.compare import command
from lab.compare.comparison import compare, plan
from lab.compare.progress import Progress
from lab.compare.record import Job
from lab.compare.report import width
from lab.compare.runs import run_job
from lab.compare.sources import Scripted
from lab.tasks import featured_names, load_task
from llm.result import tool_uses
from llm.types import RUNTIME_TAG
from machine import cores
from tests.conftest import OfflineComparison

CHAPTERS = ["v0_react_text", "v1_tool_loop", "v2_todos", "v3_subagents", "v4_memory"]
COUNTS = [
    "format errors", "invented observations", "plan updates", "reminders", "children",
    "compactions",
]  # fmt: skip
COLUMNS = ["chapter", "solved", "stop", "turns", "calls", "tokens in", "tokens out"]
COLUMNS += ["peak context", "wall"]
RECORD_FIELDS = {
    "chapter", "task", "run", "provenance", "model", "solved", "outcome", "verdict", "stop",
    "error", "turns", "tool_calls", "input_tokens", "output_tokens", "estimated", "peak_context",
    "context_per_turn", "wall_s", "counts", "messages", "details", "requests",
}  # fmt: skip


def tables_of(output: str, which: int = 0) -> dict[str, list[list[str]]]:
    """Each task's first table (`which=1`: its table of counts) as rows of stripped cells,
    by task name (from its heading)."""
    found: dict[str, list[list[str]]] = {}
    task, table, inside = "", -1, False
    for line in output.splitlines():
        heading = re.match(r"([\w-]+): .* \(brings out v\d", line)
        if heading:
            task, table = heading.group(1), -1
            found[task] = []
        if line.startswith("| ") and not inside:
            table += 1
        inside = line.startswith("| ")
        if inside and table == which and not line.startswith("| -"):
            found[task].append([cell.strip() for cell in line.strip("|").split("|")])
    return found


# --- offline, scripted ------------------------------------------------------------------


@pytest.fixture
def offline(offline_comparison: OfflineComparison) -> dict[str, Any]:
    """`python -m lab compare --json FILE --html PAGE`, every chapter, run once for the suite."""
    run = offline_comparison
    return {"stdout": run.stdout, "stderr": run.stderr, "json": run.document}


def test_offline_every_featured_task_is_solved_by_every_chapter(offline: dict) -> None:
    tables, counts = tables_of(offline["stdout"]), tables_of(offline["stdout"], which=1)
    assert list(tables) == featured_names() == ["one-bug", "several-steps", "wide-reading",
                                                  "long-task"]  # fmt: skip
    for task, rows in tables.items():
        header, *chapters = rows
        assert header == COLUMNS
        assert [row[0] for row in chapters] == CHAPTERS, task
        assert all(row[1] == "yes" and row[2] == "done" for row in chapters), task
        assert all(row[5].startswith("≈") for row in chapters), "scripted tokens are estimates"
        assert counts[task][0] == ["its own counts", "v0", "v1", "v2", "v3", "v4"]
        assert [row[0] for row in counts[task][1:]] == COUNTS
        counted = [list(column) for column in zip(*(r[1:] for r in counts[task][1:]), strict=True)]
        assert counted[1] == ["—"] * 6, "chapter 1 counts nothing of its own"
        assert counted[2][:2] + counted[2][4:] == ["—"] * 4, "chapter 2 counts plans only"
        assert "—" not in counted[3][2:5] and counted[3][:2] + counted[3][5:] == ["—"] * 3, task
        assert "—" not in counted[4][2:] and counted[4][:2] == ["—"] * 2, task
    assert offline["stdout"].startswith("offline: scripted cassettes, each a plausible run")
    assert "not run, nothing to replay" not in offline["stdout"]


def test_the_tables_speak_chinese_with_lang_zh(capsys: pytest.CaptureFixture[str]) -> None:
    assert command.main(["--task", "one-bug", "--chapters", "v0,v2", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert tables_of(out)["one-bug"][0][:3] == ["章", "解决", "结束方式"]
    assert tables_of(out)["one-bug"][1][:2] == ["v0_react_text", "是"]
    assert tables_of(out, which=1)["one-bug"][0] == ["各章自己的计数", "v0", "v2"]
    assert tables_of(out, which=1)["one-bug"][1][0] == "格式错误"
    assert max(width(line) for line in out.splitlines()) <= 100


def test_offline_tables_fit_a_terminal_of_100_columns(offline: dict) -> None:
    assert max(width(line) for line in offline["stdout"].splitlines()) <= 100


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_runs_the_window_stopped_still_fit_100_columns(
    lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three chapters stopped by a window of 16,000 tokens: their solved cells, their
    errors under the table and the line above it, all within a terminal's width."""
    assert command.main(["--task", "long-task", "--window", "16000", "--lang", lang]) == 0
    out = capsys.readouterr().out
    assert out.count("window full" if lang == "en" else "窗口已满") == 6  # 3 cells, 3 notes
    assert max(width(line) for line in out.splitlines()) <= 100, out


def test_offline_progress_is_one_plain_line_per_run(offline: dict) -> None:
    """A line per run as it ends (side by side, in the order they end)."""
    *lines, saved, _page, _timing = offline["stderr"].splitlines()
    assert len(lines) == 20 and "\x1b" not in offline["stderr"]
    assert re.fullmatch(r"wrote 20 records to .*records\.json", saved)
    first = r"v0_react_text · one-bug · solved · 6 turns · ≈[\d,]+ tokens · [\d.]+ s"
    assert [line for line in lines if re.fullmatch(first, line)], lines
    assert len({tuple(line.split(" · ")[:2]) for line in lines}) == 20  # each run once


def seconds_of(lines: list[str]) -> float:
    """The runs' own times, as their progress lines give them (rounded to 0.1 s each)."""
    return sum(float(line.rsplit(" · ", 1)[1].removesuffix(" s")) for line in lines)


def test_offline_runs_go_side_by_side_and_the_last_line_sums_their_seconds(
    offline: dict,
) -> None:
    """README promises seconds: a replay asks no provider, so its runs share the machine's
    cores (at most 4 at a time), and the last line sums where each run's seconds went."""
    *lines, timing = offline["stderr"].splitlines()
    at_once = min(command.OFFLINE_JOBS, cores())
    if at_once == 1:
        pytest.skip("one core: the runs go one at a time (the next test reads that line)")
    parts = re.fullmatch(
        rf"20 runs in ([\d.]+) s, {at_once} at a time; summed over the runs: "
        r"the loops ([\d.]+) s, copying and checking ([\d.]+) s",
        timing,
    )
    assert parts and len(timing) <= 100, timing
    _total, loops, around = map(float, parts.groups())
    assert abs(loops - seconds_of(lines[:20])) <= 0.1 + 0.05 * 20
    assert around > 0


def test_one_at_a_time_the_last_line_says_where_the_seconds_went_and_they_add_up(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--jobs 1`: the parts add up to the whole, the loops being the runs' own times (the
    tables' last column)."""
    assert command.main(["--task", "one-bug", "--chapters", "v0,v2", "--jobs", "1"]) == 0
    *lines, timing = capsys.readouterr().err.splitlines()
    parts = re.fullmatch(
        r"2 runs in ([\d.]+) s: the loops ([\d.]+) s, copying and checking ([\d.]+) s, "
        r"loading and printing ([\d.]+) s",
        timing,
    )
    assert parts and len(timing) <= 100, timing
    total, loops, around, rest = map(float, parts.groups())
    assert abs(loops + around + rest - total) <= 0.15  # each part rounded to 0.1 s
    assert abs(loops - seconds_of(lines)) <= 0.1 + 0.05 * 2
    assert around > 0 and rest >= 0


def test_json_records_have_the_documented_format(offline: dict) -> None:
    data = offline["json"]
    assert list(data) == ["format", "created_at", "model", "window", "interrupted", "records"]
    assert data["format"] == "lab-records/2"
    assert (data["model"], data["window"], data["interrupted"]) == (None, None, False)
    records = data["records"]
    assert [(r["task"], r["chapter"]) for r in records] == [
        (task, chapter) for task in featured_names() for chapter in CHAPTERS
    ]
    for record in records:
        assert set(record) == RECORD_FIELDS
        assert record["provenance"] == "scripted" and record["estimated"] is True
        assert record["solved"] is True and record["run"] == 1 and record["outcome"] == "solved"
        assert len(record["context_per_turn"]) == record["turns"]
        assert record["peak_context"] == max(record["context_per_turn"])
        children = record["details"].get("children", [])
        children_read = sum(child["input_tokens"] for child in children)
        assert record["input_tokens"] == sum(record["context_per_turn"]) + children_read
        if record["chapter"] in CHAPTERS[:2]:
            assert record["details"] == {}, "chapters 0 and 1 have no idea of their own to keep"
        assert record["messages"][0] == {
            "role": "user",
            "content": load_task(record["task"]).prompt,
        }
        sent = record["requests"]
        assert len(sent["calls"]) == record["turns"], "a request for every answered call"
        pool = record["messages"] + sent["extra"]
        (first,) = sent["calls"][0]["messages"]  # the first call sends the task alone
        if record["chapter"] == "v4_memory":  # with the runtime note after it, never kept
            blocks = pool[first]["content"]
            assert blocks[0]["text"] == record["messages"][0]["content"]
            assert blocks[-1]["text"].startswith(RUNTIME_TAG) and first >= len(record["messages"])
        else:
            assert first == 0
        for call in sent["calls"]:
            assert all(0 <= ref < len(pool) for ref in call["messages"])
            assert sent["systems"][call["system"]] and sent["tools"][call["tools"]] is not None
    v0 = records[0]
    assert v0["counts"] == {"format errors": 1, "invented observations": 1}
    assert v0["verdict"] == "all 8 hidden tests pass"


def test_every_scripted_cassette_replays_to_a_solved_verdict(offline: dict) -> None:
    """Scripted cassettes exist for every chapter on every featured task, and each solves it
    (the records above); each is named for its chapter and holds the task's prompt."""
    for name in featured_names():
        task = load_task(name)
        assert set(CHAPTERS) <= set(task.cassettes), name
        for chapter, path in task.cassettes.items():
            header = json.loads(path.read_text().splitlines()[0])
            assert header["chapter"] == chapter and header["task"] == task.prompt
            assert header["provenance"] == "scripted" and "not a recording" in header["note"]


def records_of(offline: dict, chapter: str) -> dict[str, dict]:
    """One chapter's JSON records, by task."""
    return {r["task"]: r for r in offline["json"]["records"] if r["chapter"] == chapter}


def calls_named(messages: list[dict], name: str) -> list[dict]:
    return [call for message in messages for call in tool_uses(message) if call["name"] == name]


def test_chapter_2_records_keep_the_plan_history(offline: dict) -> None:
    """Every todo_write of the scripted runs was accepted and is in `plan_history`, with its
    turn; a plan written for a task of several steps ends with every item completed."""
    records = records_of(offline, "v2_todos")
    assert list(records) == featured_names()
    for task, record in records.items():
        details = record["details"]
        assert set(details) == {"plan_history", "reminders"}
        history = details["plan_history"]
        assert len(history) == record["counts"]["plan updates"]
        assert len(details["reminders"]) == record["counts"]["reminders"]
        written = [call["input"]["items"] for call in calls_named(record["messages"], "todo_write")]
        assert [update["items"] for update in history] == written, task
        turns = [update["turn"] for update in history]
        assert turns == sorted(set(turns)) and all(0 < turn <= record["turns"] for turn in turns)
        if history:
            assert {item["status"] for item in history[-1]["items"]} == {"completed"}, task
    planned = {task: bool(r["details"]["plan_history"]) for task, r in records.items()}
    assert planned == {"one-bug": False, "several-steps": True, "wide-reading": True,
                       "long-task": True}  # fmt: skip
    # One fix needs no plan; with four tool calls and no plan, the reminder still comes once.
    assert records["one-bug"]["details"]["reminders"] == [3]


def test_chapter_3_records_keep_each_child_run(offline: dict) -> None:
    """Each child is in `children`, in the order of the task calls, with its own messages;
    delegation is used where there is much to read, not on one small file."""
    records = records_of(offline, "v3_subagents")
    for task, record in records.items():
        details = record["details"]
        assert set(details) == {"plan_history", "reminders", "children"}
        asked = {call["id"]: call["input"] for call in calls_named(record["messages"], "task")}
        children = details["children"]
        assert [child["call_id"] for child in children] == list(asked), task
        assert len(children) == record["counts"]["children"]
        for child in children:
            given = asked[child["call_id"]]
            assert child["stop"] == "done" and child["agent_type"] == given["agent_type"]
            assert child["messages"][0] == {"role": "user", "content": given["prompt"]}
            assert len(child["context_per_turn"]) == child["turns"]
    kinds = {t: [c["agent_type"] for c in r["details"]["children"]] for t, r in records.items()}
    assert kinds == {
        "one-bug": [],
        "several-steps": [],
        "wide-reading": ["explore", "explore", "code"],
        "long-task": ["explore"] * 4,
    }
    long = records["long-task"]
    explorers = long["details"]["children"]
    read = [
        call["input"]["path"] for c in explorers for call in calls_named(c["messages"], "read_file")
    ]
    assert read == [f"logs/day-{day:02d}.log" for day in range(1, 13)]
    assert not calls_named(long["messages"], "read_file")
    assert "all checks green" not in json.dumps(long["messages"]), "the logs stay in the children"


def long_task_in_a_window(window: int, chapters: list[str], scratch: Path) -> list[Any]:
    jobs, _ = plan([load_task("long-task")], chapters, 1, Scripted())
    quiet = Progress(io.StringIO())
    return compare(jobs, Scripted(), window=window, progress=quiet, scratch=scratch).records


def test_chapter_4_records_keep_the_session_and_each_compaction(offline: dict) -> None:
    """The long task goes through stage 1 and then stage 2 within chapter 4's budget; the
    other tasks fit whole, and each run leaves one fact in long-term memory."""
    records = records_of(offline, "v4_memory")
    for task, record in records.items():
        details = record["details"]
        assert {"session", "compactions", "recalled", "children"} <= set(details), task
        assert len(details["compactions"]) == record["counts"]["compactions"]
        assert calls_named(record["messages"], "memory_write") or task == "long-task"
    stages = [c["stage"] for c in records["long-task"]["details"]["compactions"]]
    assert stages == [1, 2]
    assert max(records["long-task"]["context_per_turn"]) <= 12_000  # the replay budget
    assert all(not records[t]["details"]["compactions"] for t in ("one-bug", "several-steps"))


def test_a_small_window_stops_chapters_0_to_2_on_the_long_task_but_not_3_or_4(
    tmp_path: Path,
) -> None:
    """Chapters 0 to 2 keep every log they read; chapter 3's parent keeps the explorers'
    reports, and each explorer reads three logs in a context of its own; chapter 4 keeps
    its requests inside its budget, trimming old logs and then summarising them."""
    *keeping, delegating, compacting = long_task_in_a_window(16_000, CHAPTERS, tmp_path)
    assert compacting.chapter == "v4_memory" and compacting.solved, compacting.verdict
    assert compacting.peak_context <= 16_000
    assert [record.chapter for record in keeping] == CHAPTERS[:3]
    for record in keeping:
        assert not record.solved and record.stop == "error" and not record.finished
        assert record.outcome == "window full" and record.verdict == "could not finish: window full"
        assert "the context window is 16,000 (--window)" in record.error
        assert record.peak_context <= 16_000, "every request the model answered fitted"
    assert delegating.chapter == "v3_subagents"
    assert delegating.solved and delegating.stop == "done", delegating.verdict
    assert delegating.peak_context <= 16_000
    children = delegating.details["children"]
    assert len(children) == 4
    for child in children:
        assert child["stop"] == "done" and max(child["context_per_turn"]) <= 16_000
    assert delegating.peak_context < min(max(c["context_per_turn"]) for c in children)


def test_the_window_holds_for_child_agents_too(tmp_path: Path) -> None:
    """A window too small for three logs stops every explorer, and the parent is told."""
    job = Job("v3_subagents", load_task("long-task"))
    record = run_job(job, Scripted(), tmp_path, window=6_000)
    children = record.details["children"]
    assert [child["stop"] for child in children] == ["error"] * 4
    results = {
        block["tool_use_id"]: block
        for message in record.messages
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    }
    for child in children:
        result = results[child["call_id"]]
        assert result["is_error"] and "stopped without finishing" in result["content"]
        assert "the context window is 6,000 (--window)" in result["content"]


# --- flags -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--record-dir", "runs"], "--record-dir keeps live runs: add --model SPEC"),
        (["--runs", "3"], "--runs repeats live runs; a replay gives the same run every time"),
        (["--jobs", "9"], "--jobs must be between 1 and 8"),
        (["--window", "0"], "--window must be a number of tokens, 1 or more"),
        (["--max-tokens-total", "0"], "--max-tokens-total must be 1 or more"),
        (["--max-turns", "0"], "--max-turns must be 1 or more"),
        (["--model", "anthropic:x", "--replay-dir", "."], "--replay-dir replays recorded runs"),
        (["--replay-dir", "nowhere"], "--replay-dir nowhere is not a folder"),
        (["--task", "nope"], "no task 'nope'; the tasks are add-flag, codebase-question"),
        (["--chapters", "v9"], "no chapter 'v9' in --chapters; the chapters are v0_react_text"),
        (["--task", "add-flag"], "nothing to replay: no runs scripted for these tasks"),
        (["--model", "nope:x"], "unknown provider 'nope' in 'nope:x'"),
        (["--model", "anthropic:claude-test"], "ANTHROPIC_API_KEY is not set"),
        (["--task", "one-bug", "--json", "."], "cannot write .: it is a folder"),
        (
            ["--task", "one-bug", "--html", "no/such/x.html"],
            "cannot write no/such/x.html: there is no folder",
        ),
    ],
)
def test_flags_that_cannot_work_are_one_line(
    argv: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # away from a .env of the learner's beside the clone
    assert command.main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"error: {message}") and captured.err.count("\n") == 1


def test_chapters_are_named_short_or_long() -> None:
    assert command.chapter_names("v1, v0_react_text") == ["v1_tool_loop", "v0_react_text"]
    assert command.chapter_names(None) == chapters()


def test_the_lab_command_lists_tasks_and_explains_itself(capsys: pytest.CaptureFixture) -> None:
    assert lab_main(["tasks"]) == 0
    listing = capsys.readouterr().out
    assert all(name in listing for name in ["one-bug", "long-task", "refactor"])
    assert "* one-bug" in listing and "  refactor" in listing
    assert lab_main([]) == 2
    assert "python -m lab compare" in capsys.readouterr().err


def test_a_run_that_fails_is_its_verdict_and_the_comparison_goes_on(tmp_path: Path) -> None:
    import dataclasses

    broken = dataclasses.replace(load_task("one-bug"), workspace=tmp_path / "gone")
    jobs = [Job("v1_tool_loop", broken, 1, 1), Job("v1_tool_loop", load_task("one-bug"), 1, 1)]
    out = io.StringIO()
    comparison = compare(jobs, Scripted(), progress=Progress(out), scratch=tmp_path)
    failed, solved = comparison.records
    assert not failed.solved and failed.stop == "error"
    assert failed.verdict.startswith("the run failed: FileNotFoundError")
    assert solved.solved and not comparison.interrupted


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_json_path_is_refused_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    assert command.main(["--task", "one-bug", "--json", str(locked / "r.json")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "permission denied" in captured.err.lower()


def test_a_replay_dir_says_its_commands_run_for_real_and_shows_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = load_task("one-bug")
    kept = tmp_path / "runs" / "one-bug" / "v1_tool_loop"
    kept.mkdir(parents=True)
    (kept / "1.jsonl").write_bytes(task.cassette("v1_tool_loop").read_bytes())
    assert command.main(["--replay-dir", str(tmp_path / "runs")]) == 0
    err = capsys.readouterr().err
    warning = err[: err.index("v1_tool_loop · one-bug")]  # before the first run
    assert "the tools run for real, on this machine" in warning
    assert "  $ python -m unittest" in warning and "  $ ls" in warning


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")
def test_a_records_file_that_cannot_be_made_stops_the_comparison_before_it_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """/proc takes no new file, even from root, who may write anywhere else."""
    assert command.main(["--task", "one-bug", "--json", "/proc/records.json"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: cannot write /proc/records.json: ") and error.count("\n") == 1


def test_records_that_cannot_be_written_at_the_end_are_kept_elsewhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = {"format": "lab-records/1", "records": [{"chapter": "v1_tool_loop"}]}
    gone = tmp_path / "removed meanwhile" / "records.json"
    kept = command.keep_records(gone, document)
    assert kept != gone and json.loads(kept.read_text()) == document
    assert f"error: cannot write {gone}: No such file or directory" in capsys.readouterr().err
    kept.unlink()
