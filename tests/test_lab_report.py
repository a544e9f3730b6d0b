"""The comparison's table and its statistics: Wilson intervals, means, columns, alignment."""

from __future__ import annotations

import math

import pytest

from lab.compare.record import Record
from lab.compare.report import (
    aligned,
    mean,
    solved_cell,
    task_table,
    unfinished_cell,
    width,
    wilson,
)


def test_wilson_matches_published_values() -> None:
    # Newcombe (1998), Statistics in Medicine 17:857, table I, method 3.
    assert wilson(81, 263) == pytest.approx((0.2553, 0.3662), abs=1e-4)
    assert wilson(15, 148) == pytest.approx((0.0624, 0.1605), abs=1e-4)
    assert wilson(0, 20) == pytest.approx((0.0, 0.1611), abs=1e-4)
    assert wilson(1, 29) == pytest.approx((0.0061, 0.1718), abs=1e-4)


@pytest.mark.parametrize(("wins", "runs"), [(0, 1), (1, 3), (2, 3), (5, 5), (7, 19), (50, 100)])
def test_wilson_bounds_are_where_the_score_test_stops_rejecting(wins: int, runs: int) -> None:
    """The interval is every p for which |p̂ - p| <= z·√(p(1-p)/n): its ends solve the
    equality, and points just inside satisfy it."""
    z = 1.959963984540054
    p_hat = wins / runs
    low, high = wilson(wins, runs)
    for bound in (low, high):
        if 0 < bound < 1:
            assert abs(p_hat - bound) == pytest.approx(z * math.sqrt(bound * (1 - bound) / runs))
    assert low <= p_hat <= high
    assert (low == 0) == (wins == 0) and (high == 1) == (wins == runs)


def test_wilson_refuses_what_is_not_a_rate() -> None:
    for wins, runs in [(1, 0), (4, 3), (-1, 3)]:
        with pytest.raises(ValueError):
            wilson(wins, runs)


def record(chapter: str = "v1_tool_loop", solved: bool = True, **changes: object) -> Record:
    fields: dict[str, object] = {
        "chapter": chapter,
        "task": "one-bug",
        "run": 1,
        "provenance": "scripted",
        "model": "replay:x",
        "solved": solved,
        "outcome": "solved" if solved else "not solved",
        "verdict": "all 8 hidden tests pass" if solved else "3 of 8 hidden tests fail: test_a",
        "stop": "done",
        "error": "",
        "turns": 5,
        "tool_calls": 4,
        "input_tokens": 6562,
        "output_tokens": 263,
        "estimated": True,
        "peak_context": 1700,
        "context_per_turn": [1700],
        "wall_s": 0.25,
        "counts": {},
        "messages": [],
    }
    fields.update(changes)
    return Record(**fields)  # type: ignore[arg-type]


def test_several_runs_show_a_rate_with_its_interval() -> None:
    runs = [record(solved=True), record(solved=False), record(solved=True)]
    low, high = wilson(2, 3)
    assert solved_cell(runs, "en", several=True) == "2/3 (21–94%)"
    wide = solved_cell(runs, "en", several=True, wide=True)
    assert wide == f"2/3 · 67% ({low:.0%}–{high:.0%})" == "2/3 · 67% (21%–94%)"
    assert solved_cell(runs[:1], "en") == "yes" and solved_cell(runs[1:2], "zh") == "否"


def test_runs_that_could_not_finish_are_counted_beside_the_rate() -> None:
    """A rate limit says nothing of the chapter: the rate is over the runs that finished."""

    def limited(run: int) -> Record:
        return record(
            solved=False, run=run, outcome="rate limited", stop="error", error="429, again"
        )

    runs = [record(solved=True), limited(2), record(solved=False, run=3), limited(4)]
    assert solved_cell(runs, "en", several=True) == "1/2 (9–91%)"
    assert unfinished_cell(runs, "en") == "2 rate limited"
    assert unfinished_cell(runs, "zh") == "2 被限流"
    assert solved_cell([limited(1)], "en") == "rate limited"
    assert solved_cell([limited(1), limited(2)], "en", several=True) == "—"
    lines = task_table(runs).splitlines()
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header[:3] == ["chapter", "solved", "could not finish"]
    assert "- v1_tool_loop run 2: could not finish: rate limited; error: `429, again`" in lines


def test_after_ctrl_c_every_row_reads_as_a_rate() -> None:
    """One chapter has both its runs, the other only its first: both rows are rates."""
    runs = [record("v0_react_text", solved=False), record("v0_react_text", solved=False, run=2)]
    runs.append(record("v1_tool_loop", solved=False))
    lines = task_table(runs).splitlines()
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:4]]
    assert [row[1] for row in cells] == ["0/2 (0–66%)", "0/1 (0–79%)"]


def test_means_keep_one_decimal_below_a_hundred() -> None:
    assert mean([5]) == "5"
    assert mean([5, 6]) == "5.5"
    assert mean([6562, 6563]) == "6,562"  # 6,562.5 rounds to even
    assert mean([1000, 2000]) == "1,500"


def test_a_table_has_the_shared_columns_and_a_small_table_of_counts() -> None:
    rows = [
        record("v0_react_text", counts={"format errors": 1, "invented observations": 0}),
        record("v1_tool_loop"),
        record("v2_todos", counts={"plan updates": 3}),
    ]
    lines = task_table(rows).splitlines()
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header == [
        "chapter", "solved", "stop", "turns", "calls", "tokens in", "tokens out",
        "peak context", "wall",
    ]  # fmt: skip
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:5]]
    assert [row[0] for row in cells] == ["v0_react_text", "v1_tool_loop", "v2_todos"]
    assert cells[1][5:8] == ["≈6,562", "≈263", "≈1,700"] and cells[1][8] == "0.2 s"
    counts = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[6:]]
    assert counts == [
        ["its own counts", "v0", "v1", "v2"], ["-" * 21, "--", "--", "--"],
        ["format errors", "1", "—", "—"], ["invented observations", "0", "—", "—"],
        ["plan updates", "—", "—", "3"],
    ]  # fmt: skip
    assert max(width(line) for line in lines) <= 100


def test_the_wide_table_has_a_column_per_count() -> None:
    rows = [record("v0_react_text", counts={"format errors": 1}), record("v2_todos")]
    lines = task_table(rows, wide=True).splitlines()
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header[4] == "tool calls" and header[-1] == "format errors"
    assert lines[2].startswith("| 0 · v0_react_text ") and len(lines) == 4


def test_recorded_figures_are_not_marked_and_failures_get_a_note() -> None:
    failed = record(
        solved=False, estimated=False, stop="error", error="the request is ≈20,000 tokens"
    )
    lines = task_table([failed], wall=False).splitlines()
    assert "| 6,562 " in lines[2] and "≈" not in lines[2]
    assert lines[3] == "" and " ".join(line.strip() for line in lines[4:]) == (
        "- v1_tool_loop: not solved: `3 of 8 hidden tests fail: test_a`; "
        "error: `the request is ≈20,000 tokens`"
    )


def test_columns_line_up_with_chinese_headers() -> None:
    table = aligned(["章", "解决"], [["1 · v1_tool_loop", "是"]]).splitlines()
    assert len({width(line) for line in table}) == 1
    assert width("峰值上下文") == 10


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_table_of_runs_the_window_stopped_fits_in_a_hundred_columns(lang: str) -> None:
    """`--window` stops runs: their solved cell says "window full" and a long error follows;
    the headers get shorter, the notes wrap at their spaces, and no line is wider than 100."""
    error = (
        "the request is ≈23,216 tokens and the context window is 16,000 (--window): "
        "the conversation no longer fits"
    )
    full = {"solved": False, "outcome": "window full", "stop": "error", "error": error}
    runs = [
        record("v0_react_text", **full, input_tokens=43_688),
        record("v3_subagents", input_tokens=133_359, output_tokens=2_457, peak_context=11_907),
        record("v4_memory", **full, counts={"compactions": 2}),
    ]
    text = task_table(runs, lang=lang)
    lines = text.splitlines()
    assert max(map(width, lines)) <= 100, text
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header[5:8] == (
        ["tok in", "tok out", "peak ctx"] if lang == "en" else ["输入", "输出", "峰值"]
    )
    notes = text.split("\n\n")[-1]
    assert [line[:2] for line in notes.splitlines()] == ["- ", "  ", "- ", "  "]
    colon = "：" if lang == "zh" else ": "
    assert " ".join(line.strip() for line in notes.splitlines()[:2]).endswith(f"{colon}`{error}`")
    assert "| tokens in " in task_table(runs[1:2], lang="en")  # a table that fits keeps its words
