"""Chapter 4's figures measure the demo that `python -m v4_memory --demo` runs, and add up."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from lab import figures
from lab.bench.memory_example import print_example
from llm.types import without_runtime
from v4_memory.prompt import assemble

pytestmark = pytest.mark.docs  # pins the docs: see README, "Two commands"


def table_rows(markdown: str) -> list[list[str]]:
    """The body rows of every table in a figure, as lists of stripped cells."""
    rows = []
    for line in markdown.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and not set(cells) <= {"---"}:
            rows.append(cells)
    return rows


def tokens(cell: str) -> int:
    return int(cell.lstrip("≈").replace(",", ""))


def test_the_stages_table_is_the_run_the_command_line_prints() -> None:
    """Each step's calls add up to the summary line of that step in the demo's output, and the
    stages come before the turns the output names, with the same sizes."""
    output = figures.render("demo-output-masked v4_memory")
    done = [tokens(t) for t in re.findall(r"── done: \d+ turns, .*?, (≈[\d,]+) tokens in", output)]
    stage = r"context: (stage \d) before turn (\d+), (≈[\d,]+) → (≈[\d,]+) tokens"
    said = re.findall(stage, output)

    rows = table_rows(figures.render("context-stages v4_memory"))[1:]
    starts = [i for i, row in enumerate(rows) if row[0]] + [len(rows)]
    steps = [rows[a:b] for a, b in zip(starts, starts[1:], strict=False)]
    assert [sum(tokens(row[5]) for row in step) for step in steps] == done
    shown = [
        (row[6].split(":")[0], row[1], *row[6].split(": ")[1].split(" → "))
        for row in steps[0]
        if row[6]
    ]
    assert shown == said
    assert [row[0] for row in rows if row[0]] == [
        "1 · new session",
        "2 · resumed (`--continue`)",
        "3 · new session",
    ]


def test_a_summary_leaves_fewer_messages_and_a_resumed_step_starts_from_them() -> None:
    steps = figures.session_steps("v4_memory")
    first, resumed = steps[0], steps[1]
    summary = next(c for c in first.result.compactions if c.stage == 2)
    before, after = first.sent[summary.turn - 2], first.sent[summary.turn - 1]
    assert len(after) < len(before)
    assert after[0]["role"] == "user" and "Summary of the earlier conversation" in str(after[0])
    # The resumed step's first request is the first step's last one, its answer and the new
    # task: the same messages, each request's runtime note left out.
    last = [without_runtime(message) for message in first.sent[-1]]
    resumed_start = [without_runtime(message) for message in resumed.sent[0][: len(last)]]
    assert resumed_start == last
    assert len(resumed.sent[0]) == len(first.sent[-1]) + 2


def test_the_layers_are_the_prompt_each_step_sent() -> None:
    """The layers, assembled, are exactly as long as the system prompt of the step's calls."""
    steps = figures.session_steps("v4_memory")
    for step in steps:
        assert len(assemble(step.layers)) == step.turns[0].request["system prompt"]
    rows = {row[0]: row[1:] for row in table_rows(figures.render("prompt-layers v4_memory"))}
    assert [tokens(cell) for cell in rows["total"]] == [
        sum(layer.tokens for layer in step.layers) for step in steps
    ]
    runtime = [tokens(cell) for cell in rows["8 · `runtime`, after the conversation"]]
    assert runtime == [step.runtime.tokens for step in steps]
    memory = [tokens(cell) for cell in rows["7 · `memory`"]]
    assert memory == sorted(memory) and memory[0] < memory[-1], "recall adds to the memory layer"


def test_listing_the_skills_costs_less_than_loading_them_all() -> None:
    rows = table_rows(figures.render("skill-costs v4_memory"))[1:]
    *skills, listed, loaded = rows
    assert {row[0] for row in skills} >= {"`commit-message`", "`ops-report`"}
    assert tokens(listed[1]) < tokens(loaded[2])
    assert tokens(listed[1]) > sum(tokens(row[1]) for row in skills), "the schema is paid too"


def test_the_bm25_tables_give_the_scores_the_benchmark_prints() -> None:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        print_example()
    totals = re.findall(r"total: (.*?)  \(", printed.getvalue())
    rows = table_rows(figures.render("bm25-example"))
    scores = [row for row in rows if row[0] == "score"]
    shown = []
    for row in scores:
        found = [(cell.strip("*"), name) for name, cell in zip("ABC", row[3:], strict=True)]
        best_first = sorted((s, n) for s, n in found if s != "—")[::-1]
        shown.append(", ".join(f"{name} {score}" for score, name in best_first))
    assert shown == totals


def test_masking_keeps_widths_and_tells_sessions_apart() -> None:
    text = "session 20261130-093241-02702f; again 20261130-093241-02702f; 20261201-101500-7c5875"
    text += " m-20261130-0002 2026-11-30T09:32:41+01:00"
    masked = figures.masked(text)
    assert masked == (
        "session 20250314-153012-a1b2c3; again 20250314-153012-a1b2c3; 20250314-153012-d4e5f6"
        " m-20250314-0002 2025-03-14T15:30:12+01:00"
    )
    assert len(masked) == len(text)


def test_the_session_file_holds_the_compaction_among_the_messages() -> None:
    lines = figures.render("session-file v4_memory").strip("`\n").splitlines()
    assert lines[0].startswith('{"type":"session","schema":1,"id":"20250314-153012-a1b2c3"')
    records = [line for line in lines if line.startswith('{"type":"compaction"')]
    steps = figures.session_steps("v4_memory")
    assert len(records) == sum(c.stage == 2 for c in steps[0].result.compactions) == 1
    messages = [line for line in lines if line.startswith('{"role":')]
    assert len(messages) == len(steps[1].result.messages)
    assert all(len(line) <= 110 for line in lines)
