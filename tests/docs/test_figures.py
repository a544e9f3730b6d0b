"""Every figure in the docs is what the code prints now, and the figures tell the truth."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest

from lab import figures
from lab.chapters import chapters
from llm.tokens import estimate_message, estimate_request
from tests import REPO
from v0_react_text.parser import Action, FormatError, parse

pytestmark = pytest.mark.docs  # pins the docs: see README, "Two commands"

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
        "Run `python -m lab.figures --update` and review the diff (if an exercise changed "
        'the code, this is expected: `pytest -m "not docs"` runs the other tests alone).'
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


@pytest.mark.parametrize("chapter", chapters())
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
        if first_inside.wait(timeout=600):
            with figures.scratch_folder():
                second_ran.append(True)

    # A daemon, so that a failure here can never keep pytest from exiting.
    thread = threading.Thread(target=second_run, daemon=True)
    thread.start()
    with figures.scratch_folder() as folder:
        (folder / "demo").write_text("in use")
        first_inside.set()
        time.sleep(0.3)  # time for the second run to reach the lock: it must wait there
        assert (folder / "demo").exists() and not second_ran
    thread.join(timeout=600)
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


def test_delegation_figures_agree_with_the_demo_run() -> None:
    """Chapter 3's tables measure the demo's own run: the summary line, the delegation line,
    and each child's report smaller than the work it kept to itself."""
    result = figures.run_demo("v3_subagents").result
    [line] = result.highlights()
    without = re.search(r"it would have held ≈([\d,]+)", line)
    assert without
    delegation = table_rows(figures.render("delegation v3_subagents"))
    assert delegation[-1][4] == without.group(1)
    assert [row[2] for row in delegation] == [f"{n:,}" for n in result.context_tokens]

    *agents, everyone = table_rows(figures.render("children v3_subagents"))
    assert everyone[4:6] == [f"{result.usage.input_tokens:,}", f"{result.usage.output_tokens:,}"]
    tokens_in = [int(row[4].replace(",", "")) for row in agents]
    assert sum(tokens_in) == result.usage.input_tokens
    for row in agents[1:]:
        kept, reported = (int(cell.replace(",", "")) for cell in row[6:8])
        assert reported < kept, row


def test_context_growth_splits_each_call_into_fixed_part_and_conversation() -> None:
    from v1_tool_loop.agent import SYSTEM
    from v1_tool_loop.tools import TOOLS
    from v3_subagents.agent import ALL_SCHEMAS, MAIN

    rows = table_rows(figures.render("context-growth wide-reading v1_tool_loop v3_subagents"))
    fixed = rows[-1]
    v3_tools = [ALL_SCHEMAS[name] for name in MAIN.tools]
    assert fixed[3] == f"{estimate_request(SYSTEM, [], TOOLS):,}"
    assert fixed[6] == f"{estimate_request(MAIN.system, [], v3_tools):,}"
    records = {r.chapter: r for r in figures.lab_records("wide-reading", None)}
    contexts = records["v1_tool_loop"].context_per_turn
    assert [row[3] for row in rows[:-1]] == [f"{n:,}" for n in contexts]


def test_grouped_demo_output_moves_lines_and_loses_none() -> None:
    """Each child's lines follow the parent's `→ task` line that started it; no line is lost."""
    grouped = figures.render("demo-output-by-agent v3_subagents").split("\n")[2:-1]
    assert sorted(grouped) == sorted(figures.demo_stdout("v3_subagents").split("\n"))
    for child in figures.run_demo("v3_subagents").result.children:
        start = grouped.index(f"→ task  {child.description}")
        first = next(g for g in grouped if g.startswith(f"    {child.description} │"))
        assert grouped.index(first) == start + 1


@pytest.mark.slow  # end to end: see tests/conftest.py
def test_every_figure_comes_out_the_same_for_another_user_clone_date_and_temporary_folder(
    tmp_path: Path,
) -> None:
    """A learner's fresh clone prints the docs' figures: whoever they are, wherever the clone
    is (a path with a space), whatever the files' dates, the temporary folder and its
    contents, and with the class's .env beside it.  Measured for real, in a copy of the
    checkout's files."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=False
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout: no list of the course's files to copy")
    clone = tmp_path / "a learner's clone"
    for name in filter(None, listed.stdout.split("\0")):
        if (REPO / name).is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, clone / name)
    (clone / ".env").write_text("OPENAI_API_KEY=sk-class-key\nAGENT_TIMEOUT=600\n")  # a class's
    another_day = datetime(2001, 2, 3, 4, 5, 6).timestamp()
    for path in clone.rglob("*"):
        os.utime(path, (another_day, another_day))
    temporary = tmp_path / "other temp"
    for left_over in ("v1_tool_loop-demo-1", "lab-compare-1", "agent-course-figures"):
        (temporary / left_over).mkdir(parents=True)
    home = tmp_path / "home of someone else"
    home.mkdir()
    person = {"HOME": str(home), "USER": "someone-else", "LOGNAME": "someone-else"}
    env = {**os.environ, **person, "TMPDIR": str(temporary)}

    def run(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, *args]
        return subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True,
                              timeout=1200)  # fmt: skip

    imported = run("-c", "import lab, llm; print(lab.__file__); print(llm.__file__)")
    assert imported.stdout.splitlines() == [
        str(clone / "lab/__init__.py"),
        str(clone / "llm/__init__.py"),
    ], imported.stderr
    checked = run("-m", "lab.figures", "--check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "stale" not in checked.stdout


# What a command prints about the account, the clock or the place it runs in: the owner
# and date columns of `ls -l`, the date, the user, the folder.
UNREPEATABLE = re.compile(
    r"\bls\s+-\w*[lgno]|--full-time|\b(date|whoami|id|who|stat|pwd|hostname|uptime)\b"
    r"|\$\{?(HOME|USER|LOGNAME|PWD)\b|~"
)


def bash_commands(cassette: Path) -> list[str]:
    """Every shell command a cassette's replies run, chapter 0's text protocol included."""
    commands = []
    for line in cassette.read_text(encoding="utf-8").splitlines()[1:]:
        for block in json.loads(line)["reply"]["content"]:
            if block.get("type") == "tool_use" and block["name"] == "bash":
                commands.append(block["input"]["command"])
            elif block.get("type") == "text":  # chapter 0 reads its actions with its parser
                with contextlib.suppress(FormatError):
                    step = parse(block["text"])
                    if isinstance(step, Action) and step.tool == "bash":
                        commands.append(step.args.get("command", ""))
    return commands


CASSETTES = sorted([*REPO.glob("v*/demo/*.jsonl"), *REPO.glob("lab/tasks/*/cassettes/*.jsonl")])


@pytest.mark.parametrize("cassette", CASSETTES, ids=lambda path: str(path.relative_to(REPO)))
def test_no_cassette_runs_a_command_whose_output_names_the_account_or_the_clock(
    cassette: Path,
) -> None:
    """Tool output is part of the measured figures, and another user or another day would
    see other owners and dates: list a folder by name or by size (`wc -c`) instead."""
    commands = bash_commands(cassette)
    assert [command for command in commands if UNREPEATABLE.search(command)] == []


def test_the_scratch_folder_is_its_users_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Students sharing a server each measure in a folder of their own, which no one else
    can read, and one that is not private is refused rather than used."""
    with figures.scratch_folder() as folder:
        assert folder.parent == figures.MEASURING
        for path, mode in [
            (figures.MEASURING, 0o700),
            (folder, 0o700),
            (figures.SCRATCH_LOCK, 0o600),
        ]:
            assert path.stat().st_mode & 0o777 == mode, path
            assert path.stat().st_uid == os.getuid()

    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    monkeypatch.setattr(figures.demos, "MEASURING", shared)  # where scratch_folder reads it
    refused = pytest.raises(SystemExit, match="is not a private folder of yours")
    with refused, figures.scratch_folder():
        pass
