"""The comparison's table and its statistics: Wilson intervals, means, columns, alignment."""

from __future__ import annotations

import math

import pytest

from lab.report import aligned, mean, solved_cell, task_table, width, wilson
from lab.runs import Record


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
    assert solved_cell(runs, "en") == f"2/3 · 67% ({low:.0%}–{high:.0%})" == "2/3 · 67% (21%–94%)"
    assert solved_cell(runs[:1], "en") == "yes" and solved_cell(runs[1:2], "zh") == "否"


def test_means_keep_one_decimal_below_a_hundred() -> None:
    assert mean([5]) == "5"
    assert mean([5, 6]) == "5.5"
    assert mean([6562, 6563]) == "6,562"  # 6,562.5 rounds to even
    assert mean([1000, 2000]) == "1,500"


def test_a_table_has_a_row_per_chapter_and_a_column_per_count() -> None:
    rows = [
        record("v0_react_text", counts={"format errors": 1, "invented observations": 0}),
        record("v1_tool_loop"),
        record("v2_todos", counts={"plan updates": 3}),
    ]
    lines = task_table(rows).splitlines()
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header == [
        "chapter", "solved", "stop", "turns", "tool calls", "tokens in", "tokens out",
        "peak context", "wall", "format errors", "invented observations", "plan updates",
    ]  # fmt: skip
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]
    assert [row[0] for row in cells] == ["0 · v0_react_text", "1 · v1_tool_loop", "2 · v2_todos"]
    assert cells[0][-3:] == ["1", "0", "—"] and cells[1][-3:] == ["—", "—", "—"]
    assert cells[2][-3:] == ["—", "—", "3"]
    assert cells[1][5:8] == ["≈6,562", "≈263", "≈1,700"] and cells[1][8] == "0.2 s"


def test_recorded_figures_are_not_marked_and_failures_get_a_note() -> None:
    failed = record(
        solved=False, estimated=False, stop="error", error="the request is ≈20,000 tokens"
    )
    lines = task_table([failed], wall=False).splitlines()
    assert "| 6,562 " in lines[2] and "≈" not in lines[2]
    assert lines[3] == "" and lines[4] == (
        "- v1_tool_loop: not solved: `3 of 8 hidden tests fail: test_a`; "
        "error: `the request is ≈20,000 tokens`"
    )


def test_columns_line_up_with_chinese_headers() -> None:
    table = aligned(["章", "解决"], [["1 · v1_tool_loop", "是"]]).splitlines()
    assert len({width(line) for line in table}) == 1
    assert width("峰值上下文") == 10
