"""Every figure in the docs is what the code prints now, and the figures tell the truth."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest

from lab import figures
from llm.tokens import estimate_message

REPO = Path(__file__).resolve().parent.parent
BLOCKS = figures.all_blocks()


def where(block: figures.Block) -> str:
    return f"{block.doc.relative_to(REPO)}:{block.line} ({block.spec})"


def test_the_docs_have_figures() -> None:
    assert {block.spec.split()[0] for block in BLOCKS} == set(figures.FIGURES)


@pytest.mark.parametrize("block", BLOCKS, ids=where)
def test_figure_in_doc_is_what_the_code_prints_now(block: figures.Block) -> None:
    if not block.comparable():
        pytest.skip(f"{where(block)} was printed with another Python version; tool output differs")
    assert block.current == block.expected(), (
        f"{where(block)} is out of date: the code now prints something else. "
        "Run `python -m lab.figures --update` and review the diff."
    )


def test_both_languages_show_the_same_figures() -> None:
    for english in sorted((REPO / "docs/en").glob("*.md")):
        chinese = REPO / "docs/zh" / english.name
        specs = [[b.spec for b in figures.blocks(doc)] for doc in (english, chinese)]
        assert specs[0] == specs[1], english.name


def test_update_rewrites_a_stale_block_and_leaves_the_rest() -> None:
    text = "Before.\n\n<!-- figure: demo-summary -->\n| old | table |\n<!-- /figure -->\n\nAfter.\n"
    new = figures.updated(text, "en")
    assert new.startswith("Before.\n\n<!-- figure: demo-summary -->\n\n<!-- printed with Python")
    assert new.endswith("\n\n<!-- /figure -->\n\nAfter.\n")
    assert "| old | table |" not in new and "`v1_tool_loop`" in new
    assert figures.updated(new, "en") == new


def test_chinese_blocks_get_chinese_headers() -> None:
    assert figures.render("demo-summary", "zh").splitlines()[1].startswith("| 章 |")
    assert figures.language_of(REPO / "docs/zh/README.md") == "zh"
    assert figures.language_of(REPO / "docs/en/README.md") == "en"


def test_an_unknown_figure_is_named_in_the_error() -> None:
    with pytest.raises(SystemExit, match="no figure 'demo-turn'; the figures are demo-turns"):
        figures.render("demo-turn v1_tool_loop")
    with pytest.raises(SystemExit, match="no chapter 'v9_nothing'"):
        figures.render("demo-turns v9_nothing")


@pytest.mark.parametrize("chapter", figures.chapters())
def test_turn_table_adds_up_to_what_the_command_line_reports(chapter: str) -> None:
    """The figure's run and `python -m CHAPTER --demo` are the same run, figure for figure."""
    output = figures.render(f"demo-output {chapter}")
    summary = re.search(
        r"── done: (\d+) turns, (\d+) tool calls, ≈?([\d,]+) tokens in, ≈?([\d,]+) out", output
    )
    assert summary, output
    turns, calls, tokens_in, tokens_out = summary.groups()
    rows = figures.render(f"demo-turns {chapter}").splitlines()[3:]
    cells = [cell.strip() for cell in rows[-1].strip("|").split("|")]
    assert cells[0] == "all turns"
    assert len(rows) - 1 == int(turns)
    assert cells[2:5] == [calls, tokens_in, tokens_out]


def test_request_sizes_measure_what_the_agent_sends() -> None:
    """Chapter 0 describes its tools in the prompt; chapter 1 sends schemas beside it."""
    from v0_react_text.prompt import SYSTEM as V0_SYSTEM
    from v1_tool_loop.agent import SYSTEM as V1_SYSTEM

    rows = {row.split("|")[1].strip(): row for row in figures.render("request-sizes").splitlines()}
    assert f"| {len(V0_SYSTEM):,} | none |" in rows["0 · `v0_react_text`"]
    assert f"| {len(V1_SYSTEM):,} |" in rows["1 · `v1_tool_loop`"]


def test_two_measuring_runs_take_turns_in_the_scratch_folder() -> None:
    """A second run (another checkout's, say) must not empty the folder under the first."""
    first_inside = threading.Event()
    second_ran = []

    def second_run() -> None:
        first_inside.wait()
        with figures.scratch_folder():
            second_ran.append(True)

    thread = threading.Thread(target=second_run)
    thread.start()
    with figures.scratch_folder() as folder:
        (folder / "demo").write_text("in use")
        first_inside.set()
        time.sleep(0.3)
        assert (folder / "demo").exists() and not second_ran
    thread.join(timeout=10)
    assert second_ran == [True]


def table_rows(markdown: str) -> list[list[str]]:
    """The body rows of a figure's table, as lists of stripped cells."""
    lines = [line for line in markdown.splitlines() if line.startswith("|")][2:]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def test_plan_figures_agree_with_the_demo_run() -> None:
    """Chapter 2's plan tables measure the same run as its turn table, and tell its story."""
    result = figures.run_demo("v2_todos").result
    distance = table_rows(figures.render("plan-distance v2_todos"))
    turns = table_rows(figures.render("demo-turns v2_todos"))[:-1]
    assert [row[1] for row in distance] == [row[3] for row in turns]
    behind_first = [int(row[3].replace(",", "")) for row in distance[1:]]
    assert behind_first == sorted(set(behind_first)), "the first reply slides back every turn"
    assert behind_first[0] == estimate_message(result.messages[2])  # turn 2: only its results

    history = table_rows(figures.render("plan-history v2_todos"))
    *items, reminded = history
    last_update = result.plan_history[-1][0]
    marks = {"`[x]`": "completed", "`[>]`": "in_progress", "`[ ]`": "pending"}
    assert [(row[0], marks[row[last_update]]) for row in items] == [
        (item["content"], item["status"]) for item in result.plan
    ]
    assert [turn for turn, cell in enumerate(reminded[1:], 1) if cell] == result.reminders
    with pytest.raises(SystemExit, match="v1_tool_loop keeps no plan"):
        figures.render("plan-history v1_tool_loop")
