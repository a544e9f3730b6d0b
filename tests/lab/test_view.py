"""The run viewer's page, read as HTML without a browser: every run and turn is in it, what a
chapter's idea did is shown at its turn, a run's text is escaped and cut, the labels follow
--lang, and bad records files are one-line errors.  tests/lab/test_view_browser.py opens the page
in a real browser."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lab import view
from lab.__main__ import main as lab_main
from lab.bench.view import long_run
from llm.tokens import estimate_request
from tests import REPO
from tests.conftest import OfflineComparison

HOSTILE = "<script>alert(1)</script></div>"
MEGABYTE = 1_000_000


def offline_comparison(folder: Path, *flags: str) -> tuple[Path, Path]:
    """`python -m lab compare --json … --html …` on the featured tasks, every chapter, offline:
    the records and the page."""
    records, page = folder / "records.json", folder / "page.html"
    command = [sys.executable, "-m", "lab", "compare", "--json", str(records)]
    done = subprocess.run(
        [*command, "--html", str(page), *flags], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert f"wrote the runs side by side to {page}" in done.stderr
    return records, page


@pytest.fixture
def offline(offline_comparison: OfflineComparison) -> dict[str, Any]:
    return {
        "records": offline_comparison.records,
        "document": offline_comparison.document,
        "page": offline_comparison.page.read_text(encoding="utf-8"),
        "size": offline_comparison.page.stat().st_size,
    }


def record(chapter: str, messages: list[dict], **fields: Any) -> dict[str, Any]:
    """A record of the lab-records/2 format, as a comparison writes one."""
    turns = sum(message["role"] == "assistant" for message in messages)
    base = {
        "chapter": chapter, "task": "one-bug", "run": 1, "provenance": "scripted",
        "model": "replay:cassette.jsonl", "solved": True, "outcome": "solved",
        "verdict": "every hidden test passes",
        "stop": "done", "error": "", "turns": turns, "tool_calls": 1, "input_tokens": 100,
        "output_tokens": 10, "estimated": True, "peak_context": 60,
        "context_per_turn": [40 + 10 * n for n in range(turns)], "wall_s": 0.1, "counts": {},
        "messages": messages, "details": {},
    }  # fmt: skip
    return {**base, **fields}


def document(*records: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": "lab-records/2",
        "created_at": "2025-06-01T09:30:00Z",
        "model": None,
        "window": None,
        "interrupted": False,
        "records": list(records),
    }


def tool_turn(name: str, arguments: dict, result: str, call_id: str, error: bool = False) -> list:
    """An assistant message calling one tool, and the user message that answers it."""
    call = {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
    answer = {"type": "tool_result", "tool_use_id": call_id, "content": result, "is_error": error}
    return [
        {"role": "assistant", "content": [{"type": "text", "text": f"I'll use {name}."}, call]},
        {"role": "user", "content": [answer]},
    ]


def run_of(*turns: list, answer: str = "Done.") -> list[dict]:
    final = {"role": "assistant", "content": [{"type": "text", "text": answer}]}
    return [{"role": "user", "content": "Fix the bug."}, *sum(turns, []), final]


def rows(page: str, task: str = "one-bug") -> dict[int, str]:
    """Each turn's row of one task's runs, by turn number."""
    pattern = rf'<tr class="turn[^"]*" id="task-{task}-turn-(\d+)">(.*?)</tr>'
    found = re.findall(pattern, page, re.DOTALL)
    return {int(number): row for number, row in found}


def without_script(page: str) -> str:
    return re.sub(r"<script>.*?</script>", "", page, flags=re.DOTALL)


# --- the offline comparison ----------------------------------------------------------------


def test_every_run_and_every_turn_is_on_the_page(offline: dict) -> None:
    records = offline["document"]["records"]
    page = offline["page"]
    assert {r["task"] for r in records} == {"one-bug", "several-steps", "wide-reading", "long-task"}
    for task in {r["task"] for r in records}:
        runs = [r for r in records if r["task"] == task]
        section = page.split(f'<section class="task" id="task-{task}">')[1].split("</section>")[0]
        headings = re.findall(r'<th class="run"[^>]*><span class="label">([^<]*)<', section)
        assert headings == [f"{r['chapter'][1]} · {r['chapter']}" for r in runs]
        by_turn = rows(section, task)
        assert sorted(by_turn) == list(range(1, max(r["turns"] for r in runs) + 1))
        for number, row in by_turn.items():
            assert row.count("<td") == len(runs), f"{task} turn {number}"
            ended = [r["chapter"] for r in runs if r["turns"] < number]
            assert row.count('<td class="ended"') == len(ended), f"{task} turn {number}"


def test_the_table_has_the_terminals_columns_and_figures(offline: dict) -> None:
    table = offline["page"].split('<table class="summary">')[1].split("</table>")[0]
    headers = re.findall(r"<th>(.*?)</th>", table)
    assert headers == [
        "chapter", "solved", "stop", "turns", "calls", "tokens in", "tokens out",
        "peak context", "wall",
    ]  # fmt: skip
    counts = offline["page"].split('<table class="counts">')[1].split("</table>")[0]
    assert re.findall(r"<th>(.*?)</th>", counts)[0] == "its own counts"
    one_bug = [r for r in offline["document"]["records"] if r["task"] == "one-bug"]
    cells = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1])
    for run, row in zip(one_bug, cells, strict=True):
        assert f"<td>≈{run['peak_context']:,}</td>" in row
        assert f"<td>{run['turns']}</td>" in row


def test_every_tool_result_is_in_the_page_without_javascript(offline: dict) -> None:
    """The script adds keys and a switch; the content is all in the HTML, folded in <details>."""
    page = without_script(offline["page"])
    first = next(r for r in offline["document"]["records"] if r["chapter"] == "v1_tool_loop")
    results = [
        block["content"]
        for message in first["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]
    assert results
    for result in results:
        assert view.esc(result[: view.LIMIT]) in page
    assert page.count("<details") >= len(results)
    hidden = re.findall(r"<[^>]* hidden[ >]", page)  # shown by the script, which they need
    assert hidden[0] == '<p class="controls" id="controls" hidden>'
    assert set(hidden[1:]) == {'<fieldset class="picker" hidden '}


def test_chapter_0s_format_errors_and_invented_observations_are_marked(offline: dict) -> None:
    records = offline["document"]["records"]
    page = offline["page"]
    for task in ("one-bug", "several-steps"):
        run = next(r for r in records if r["task"] == task and r["chapter"] == "v0_react_text")
        marked = rows(page, task)
        errors = [n for n, row in marked.items() if 'class="event format_error"' in row]
        invented = [n for n, row in marked.items() if 'class="event invented"' in row]
        assert len(errors) == run["counts"]["format errors"] >= 1
        assert len(invented) == run["counts"]["invented observations"]
        observations = [m["content"] for m in run["messages"][1:] if m["role"] == "user"]
        failed = [n for n, text in enumerate(observations, 1) if "Format error:" in text]
        assert failed == errors


def test_chapter_2s_plans_and_chapter_3s_children_are_shown_at_their_turns(offline: dict) -> None:
    records = offline["document"]["records"]
    page = offline["page"]
    todos = next(r for r in records if r["chapter"] == "v2_todos")
    marked = rows(page, todos["task"])
    for update in todos["details"]["plan_history"]:
        row = marked[update["turn"]]
        assert 'class="event plan"' in row
        for item in update["items"]:
            assert view.esc(item["content"]) in row
    for turn in todos["details"]["reminders"]:
        assert 'class="event reminder"' in marked[turn]
    delegating = [r for r in records if r["task"] == "wide-reading" and "children" in r["details"]]
    children = [child for r in delegating for child in r["details"]["children"]]
    section = page.split('id="task-wide-reading">')[1].split("</section>")[0]
    assert children and section.count('<details class="child">') == len(children)
    for child in children:
        assert view.esc(child["description"]) in section
        for message in child["messages"][1:]:
            for block in message["content"]:
                if block["type"] == "tool_result":
                    assert view.esc(block["content"][: view.LIMIT]) in section


def test_the_chart_has_a_line_per_run_and_a_point_per_turn(offline: dict) -> None:
    for task in ("one-bug", "long-task"):
        runs = [r for r in offline["document"]["records"] if r["task"] == task]
        section = offline["page"].split(f'id="task-{task}">')[1]
        chart = section.split("<svg")[1].split("</svg>")[0]
        assert chart.count("<polyline") == len(runs)
        assert chart.count("<circle") == sum(len(r["context_per_turn"]) for r in runs)


def test_the_page_of_all_featured_tasks_stays_under_two_megabytes(offline: dict) -> None:
    assert offline["size"] < 2 * MEGABYTE


def test_view_writes_the_same_page_from_the_saved_records(offline: dict, tmp_path: Path) -> None:
    page = tmp_path / "again.html"
    assert lab_main(["view", str(offline["records"]), "-o", str(page)]) == 0
    assert page.read_text(encoding="utf-8") == offline["page"]


def test_the_page_needs_nothing_from_the_network(offline: dict) -> None:
    page = offline["page"]
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "default-src 'none'" in page
    assert page.count("<script") == 1 and page.count("<style") == 1


def test_a_run_cut_short_ends_on_the_loops_note_not_on_an_extra_turn(tmp_path: Path) -> None:
    """In a small window the request no longer fits; the loop closes the conversation with a
    note of its own, shown at the last turn the model answered."""
    records, page = offline_comparison(
        tmp_path, "--task", "long-task", "--window", "16000", "--chapters", "v0,v1"
    )
    runs = json.loads(records.read_text(encoding="utf-8"))["records"]
    marked = rows(page.read_text(encoding="utf-8"), "long-task")
    assert len(marked) == max(run["turns"] for run in runs)
    for column, run in enumerate(runs):
        assert run["stop"] == "error"
        last = marked[run["turns"]].split("<td")[column + 1]
        assert '<div class="event stopped">' in last and view.esc(run["error"]) in last


# --- escaping, cutting, languages ---------------------------------------------------------


def test_a_runs_text_stays_text(tmp_path: Path) -> None:
    messages = run_of(tool_turn("bash", {"command": HOSTILE}, HOSTILE, "toolu_1"), answer=HOSTILE)
    hostile = record("v1_tool_loop", messages, task=HOSTILE, model=HOSTILE, verdict=HOSTILE)
    page = view.render_page(document({**hostile, "solved": False}))
    assert page.count("<script") == 1  # the page's own
    body = page.split("<body>")[1]
    assert body.count("<div") == body.count("</div>")  # none of the run's closes the page's
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;/div&gt;" in page
    assert "alert(1)</script>" not in page


def test_bidirectional_controls_are_shown_as_escapes(tmp_path: Path) -> None:
    """U+202E in a tool's output or a file name turns the rest of its line around; the
    page shows it as its escape, as the console does."""
    turned = "invoice\u202efdp.exe and \u2066isolated\u2069"
    messages = run_of(tool_turn("bash", {"command": "ls"}, turned, "toolu_1"), answer=turned)
    page = view.render_page(document({**record("v1_tool_loop", messages), "solved": True}))
    assert not any(chr(code) in page for code in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)])
    assert "invoice\\u202efdp.exe and \\u2066isolated\\u2069" in page


def test_a_megabyte_of_output_is_cut(tmp_path: Path) -> None:
    output = "x" * MEGABYTE
    messages = run_of(tool_turn("bash", {"command": "yes x"}, output, "toolu_1"))
    page = view.render_page(document(record("v1_tool_loop", messages)))
    assert len(page) < 100_000
    assert "x" * view.LIMIT in page and "x" * (view.LIMIT + 1) not in page
    assert f"… {MEGABYTE - view.LIMIT:,} more characters not shown" in page


def test_chinese_labels_and_the_models_own_words(offline: dict, tmp_path: Path) -> None:
    page = tmp_path / "zh.html"
    assert lab_main(["view", str(offline["records"]), "-o", str(page), "--lang", "zh"]) == 0
    text = page.read_text(encoding="utf-8")
    assert '<html lang="zh">' in text
    for label in ("各章运行并排对照", "只看不同之处", "每一轮的上下文", "格式错误", "编造的观察"):
        assert label in text
    for header in ("<th>章</th>", "<th>解决</th>", "<th>峰值上下文</th>", ">轮</th>"):
        assert header in text
    for english in ("Show only the differences", "format error", ">turn<", "<th>solved</th>"):
        assert english not in text
    thought = offline["document"]["records"][0]["messages"][1]["content"].splitlines()[0]
    assert view.esc(thought.removeprefix("Thought: ")) in text


def test_compactions_and_recalled_memories_are_shown_before_their_turn() -> None:
    messages = run_of(
        tool_turn("read_file", {"path": "logs/day01.log"}, "day one", "toolu_1"),
        tool_turn("read_file", {"path": "logs/day02.log"}, "day two", "toolu_2"),
    )
    details = {
        "compactions": [
            {"turn": 2, "stage": 1, "tokens_before": 12_000, "tokens_after": 7_500},
            {"turn": 3, "stage": 2, "tokens_before": 15_000, "tokens_after": 3_000,
             "detail": "turns 1-2 summarised"},
            {"stage": 2, "tokens_before": 1, "tokens_after": 1},  # no turn: left off
        ],
        "recalled": [{"turn": 1, "hits": [{"id": "m1", "text": "order 17 ships late",
                                           "score": 3.2, "category": "fact"}]}],
    }  # fmt: skip
    page = view.render_page(document(record("v4_memory", messages, details=details)))
    marked = rows(page)
    assert "stage 1: 12,000 → 7,500 tokens" in marked[2]
    assert "stage 2: 15,000 → 3,000 tokens turns 1-2 summarised" in marked[3]
    assert marked[2].index("event compaction") < marked[2].index("read_file")
    assert "recalled memories" in marked[1] and "order 17 ships late" in marked[1]
    assert sum(row.count("event compaction") for row in marked.values()) == 2


def test_the_charts_legend_names_the_compaction_marks_when_there_are_some() -> None:
    compacted = {"compactions": [{"turn": 2, "stage": 2, "tokens_before": 9, "tokens_after": 3}]}
    messages = run_of(tool_turn("bash", {"command": "ls"}, "a.py", "toolu_1"))
    for details, lang, key in [
        (compacted, "en", "compaction before the turn (chapter 4)"),
        (compacted, "zh", "在这一轮之前压缩（第 4 章）"),
        ({}, "en", ""),
    ]:
        page = view.render_page(document(record("v4_memory", messages, details=details)), lang)
        legend = page.split('<ul class="legend">')[1].split("</ul>")[0]
        assert ('class="compaction"' in legend) == bool(key)
        assert legend.endswith(f"{key}</li>") and legend.count("<li") == 1 + bool(key)


def test_the_same_tools_in_the_same_order_make_a_turn_the_same() -> None:
    bash = tool_turn("bash", {"command": "pytest"}, "1 failed", "toolu_1")
    read = tool_turn("read_file", {"path": "stats.py"}, "def mean(): ...", "toolu_2")
    edit = tool_turn("edit_file", {"path": "stats.py"}, "edited", "toolu_3")
    first = record("v1_tool_loop", run_of(bash, read, edit))
    second = record("v2_todos", run_of(bash, edit, edit))
    marked = re.findall(
        r'<tr class="(turn[^"]*)" id="task-one-bug-turn-(\d+)"',
        view.render_page(document(first, second)),
    )
    assert marked == [("turn same", "1"), ("turn", "2"), ("turn same", "3"), ("turn same", "4")]


# --- the command line ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("{not json", "is not JSON"),
        ('{"format": "cassette/1"}', "is not a lab-records/2 file"),
        (json.dumps(document({"chapter": "v1_tool_loop"})), "record 1 has no field 'task'"),
        (
            json.dumps(document({**record("v1_tool_loop", []), "messages": "hello"})),
            "record 1: 'messages' is not a list",
        ),
    ],
)
def test_records_it_cannot_read_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    records = tmp_path / "records.json"
    if content is not None:
        records.write_text(content, encoding="utf-8")
    assert view.main([str(records)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: ") and message in error and error.count("\n") == 1
    assert not records.with_suffix(".html").exists()


def test_compare_stops_before_running_when_the_page_has_no_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "missing" / "page.html"
    assert lab_main(["compare", "--task", "one-bug", "--html", str(page)]) == 2
    captured = capsys.readouterr()
    assert f"error: cannot write {page}: there is no folder" in captured.err
    assert captured.out == ""  # nothing ran


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_docs_show_the_page_and_say_where_it_cuts(lang: str) -> None:
    text = (REPO / "docs" / lang / "lab.md").read_text(encoding="utf-8")
    section = text.split("\n## 10. ")[1]
    assert f"{view.LIMIT:,} " in section
    image = {"en": "viewer.png", "zh": "viewer.zh.png"}[lang]  # each page in its language
    assert f"](../images/{image})" in section and (REPO / "docs/images" / image).exists()
    assert "python -m tests.lab.test_view_browser" in section


def test_requests_that_are_not_as_written_leave_only_what_can_be_read() -> None:
    """A records file edited by hand, or written by another program: what was sent shows
    the parts it can read, and the page is written."""
    requests = {
        "systems": [5],
        "tools": [["x", {"name": 3}]],
        "extra": [{"role": "user", "content": ["not a block"]}, "not a message"],
        "calls": [{"system": 0, "tools": 0, "messages": [0, 2, 3, "a", -1, 99]}, "x", {}],
    }
    one = record("v1_tool_loop", run_of(), requests=requests)
    page = view.render_page(document(one))
    folds = re.findall(r'<details class="request"><summary>(.*?)</summary>', page)
    size = estimate_request("", run_of()[:1], [{"name": 3}])  # the task, and the one tool
    assert folds[0] == f"what was sent: 1 message, ≈{size:,} tokens"
    assert "tools offered (1)" in page


def test_several_files_need_one_label_each(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    paths = []
    for name in ("a", "b"):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(document(record("v1_tool_loop", run_of()))))
    assert view.main([*map(str, paths), "--label", "only one"]) == 2
    assert capsys.readouterr().err == "error: 1 --label for 2 records files: give one each\n"
    assert view.main([*map(str, paths), "--label", "x", "--label", "x"]) == 2
    assert "the same label" in capsys.readouterr().err
    assert not (tmp_path / "a.html").exists()
    assert view.main(list(map(str, paths))) == 0
    page = (tmp_path / "a.html").read_text(encoding="utf-8")
    assert "1 · v1_tool_loop · a" in page and "1 · v1_tool_loop · b" in page


def test_the_verdict_lines_keep_the_run_number() -> None:
    runs = [
        record("v1_tool_loop", run_of(), run=n, solved=False, outcome="not solved", verdict=f"v{n}")
        for n in (1, 2)
    ]
    page = view.render_page(document(*runs))
    verdicts = page.split('<ul class="verdicts">')[1].split("</ul>")[0]
    assert "v1_tool_loop · run 1: not solved: <code>v1</code>" in verdicts
    assert "v1_tool_loop · run 2: not solved: <code>v2</code>" in verdicts


def test_ids_of_any_shape_and_task_names_that_are_paths_make_a_page(tmp_path: Path) -> None:
    """A records file from anywhere: ids that are lists or objects match nothing, and a task
    name is a name: `../../x/evil` never reads a task.json outside lab/tasks."""
    planted = tmp_path / "x" / "evil"
    planted.mkdir(parents=True)
    (planted / "task.json").write_text('{"title": "PLANTED TITLE"}')
    messages = run_of(tool_turn("bash", {"command": "ls"}, "out", "toolu_1"), answer="ok")
    for message in messages:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block["type"] == "tool_result":
                block["tool_use_id"] = ["toolu_1"]
            if block["type"] == "tool_use":
                block["id"] = {"id": "toolu_1"}
    children = {"children": [{"call_id": ["toolu_1"]}, {"call_id": {"a": 1}}]}
    up = "../" * len(Path(view.__file__).resolve().parents)
    for task in [f"{up}{planted.relative_to(planted.anchor)}", "t" * 5000]:
        one = {
            **record("v1_tool_loop", messages),
            "solved": True,
            "task": task,
            "details": children,
        }
        page = view.render_page(document(one))
        assert "PLANTED TITLE" not in page and "<h2>" in page


# --- long runs --------------------------------------------------------------------------------


def sent_lists(page: str) -> list[tuple[str, str, str]]:
    """Each "what was sent" list of the page: its lines' id prefix, its `data-sent`, and its
    lines as written."""
    pattern = r'<ol class="sent" data-lines="([^"]*)" data-sent="([^"]*)">(.*?)</ol>'
    return re.findall(pattern, page, re.DOTALL)


def numbers(ranges: str) -> list[int]:
    found = []
    for run in filter(None, ranges.split(",")):
        first, _, last = run.partition("-")
        found += range(int(first), int(last or first) + 1)
    return found


def test_every_id_on_the_page_of_the_featured_tasks_is_its_own(offline: dict) -> None:
    """The lines of what was sent are found by id when a fold is rebuilt: an id two runs
    shared would bring one run's message into the other's request."""
    ids = re.findall(r' id="([^"]+)"', offline["page"])
    assert len(ids) == len(set(ids))
    assert sum(1 for found in ids if re.fullmatch(r"task-[\w-]+-run-\d+-\d+", found)) > 100


def test_the_page_of_a_long_run_grows_with_the_run_not_with_its_square() -> None:
    """Each message's line is written once, in the fold of the first turn that sent it;
    twice the turns make about twice the page, where repeating the earlier messages at
    every turn would make four times."""
    pages = {turns: view.render_page(document(long_run(turns))) for turns in (100, 200)}
    sizes = {turns: len(page.encode("utf-8")) for turns, page in pages.items()}
    assert sizes[200] < 2.4 * sizes[100], sizes
    for turns, page in pages.items():
        lines = re.findall(r'<li id="task-long-run-run-0-(\d+)"', page)
        assert len(lines) == len(set(lines)) == 2 * turns - 1  # the task, then two a turn


def test_a_late_turns_list_names_every_message_it_sent() -> None:
    """What the page's script rebuilds a fold from: the numbers of the messages the call
    sent, in order, each with its line on the page before the fold or in it."""
    run = long_run(60)
    page = view.render_page(document(run))
    lists = sent_lists(page)
    assert len(lists) == 60
    prefix, sent, written = lists[49]
    assert numbers(sent) == run["requests"]["calls"][49]["messages"] == list(range(99))
    before = page[: page.index(f'data-sent="{sent}"')] + written
    assert all(f'<li id="{prefix}{n}"' in before for n in numbers(sent))
    assert re.findall(r'<li id="[^"]*-(\d+)"', written) == ["97", "98"]  # its two new ones
    assert "messages 1–97: sent before" in written  # what a reader without the script sees
