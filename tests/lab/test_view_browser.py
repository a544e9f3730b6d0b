"""The run viewer's page in a real browser: Debian's headless Chromium, driven by Playwright.

Every column and turn is there, a folded tool call opens on a click, the arrow keys move the
highlight, the differences switch hides identical turns, a hostile tool output stays text, and
the page logs no error and asks the network for nothing.  Without a browser these tests are
skipped, except under CI=true, where a missing browser is a failure (.ci/run installs it).

    python -m tests.lab.test_view_browser      draws docs/images/viewer.png and viewer.zh.png again
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lab import view
from lab.bench.view import long_run
from llm.console import content_text
from llm.tokens import estimate_message
from tests.conftest import OfflineComparison
from tests.lab.test_view import (
    HOSTILE,
    REPO,
    document,
    offline_comparison,
    record,
    run_of,
    tool_turn,
)

pytestmark = pytest.mark.slow  # a real browser, end to end: see tests/conftest.py

# Flags that keep the browser to itself: no first-run pages, no updates, no sync, no GPU.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 1000}  # a laptop's window: the page is made to fit it
DOCS_IMAGES = {
    "en": REPO / "docs" / "images" / "viewer.png",
    "zh": REPO / "docs" / "images" / "viewer.zh.png",
}


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def missing_browser() -> str:
    """Why the browser cannot run, or "" when it can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is missing: pip install -e '.[dev]'"
    if chromium() is None:
        return "no chromium on this machine: apt-get install chromium (as .ci/run does)"
    return ""


@dataclass
class Visit:
    """A page opened from disk, and what it did that it should not have."""

    page: Any
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # anything but the file itself
    dialogs: list[str] = field(default_factory=list)


class Browser:
    """A headless Chromium with a fresh profile, opening local pages one at a time."""

    def __init__(self, profile: Path) -> None:
        from playwright.sync_api import sync_playwright

        self.profile = profile
        self.driver = sync_playwright().start()
        self.contexts: dict[bool, Any] = {}

    def context(self, javascript: bool) -> Any:
        """One browser per setting, each with its own fresh profile."""
        if javascript not in self.contexts:
            self.contexts[javascript] = self.driver.chromium.launch_persistent_context(
                str(self.profile / ("scripts" if javascript else "no-scripts")),
                executable_path=chromium(),
                headless=True,
                args=FLAGS,
                viewport=VIEWPORT,
                java_script_enabled=javascript,
            )
        return self.contexts[javascript]

    def open(self, path: Path, javascript: bool = True) -> Visit:
        """Open `path`; every request but the file's own is refused and kept."""
        page = self.context(javascript).new_page()
        visit = Visit(page)
        url = path.resolve().as_uri()

        def route(handled: Any) -> None:
            if handled.request.url == url:
                handled.continue_()
            else:
                visit.requests.append(handled.request.url)
                handled.abort()

        def dialog(opened: Any) -> None:
            visit.dialogs.append(opened.message)
            opened.dismiss()

        page.route("**/*", route)
        page.on("request", lambda sent: sent.url == url or visit.requests.append(sent.url))
        page.on(
            "console", lambda message: message.type != "error" or visit.errors.append(message.text)
        )
        page.on("pageerror", lambda error: visit.errors.append(str(error)))
        page.on("dialog", dialog)
        page.goto(url)
        return visit

    def close(self) -> None:
        for context in self.contexts.values():
            context.close()
        self.driver.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    problem = missing_browser()
    if problem:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true needs a browser: {problem}")
        pytest.skip(problem)
    opened = Browser(tmp_path_factory.mktemp("profile"))
    yield opened
    opened.close()


@pytest.fixture
def offline(offline_comparison: OfflineComparison) -> dict[str, Any]:
    run = offline_comparison
    return {"page": run.page, "records": run.document["records"]}


@pytest.fixture
def visit(browser: Browser, offline: dict[str, Any]) -> Iterator[Visit]:
    """The offline comparison's page; after the test, it must have logged no error and
    fetched nothing."""
    opened = browser.open(offline["page"])
    yield opened
    assert opened.errors == []
    assert opened.requests == []
    assert opened.dialogs == []
    opened.page.close()


def visible_turns(page: Any) -> list[str]:
    return page.eval_on_selector_all(
        "tr.turn", "rows => rows.filter(r => r.getClientRects().length).map(r => r.id)"
    )


def test_every_column_and_every_turn_is_there(visit: Visit, offline: dict, tmp_path: Path) -> None:
    page = visit.page
    for task in dict.fromkeys(r["task"] for r in offline["records"]):
        runs = [r for r in offline["records"] if r["task"] == task]
        section = page.locator(f"#task-{task}")
        assert section.locator("th.run .label").all_inner_texts() == [
            f"{r['chapter'][1]} · {r['chapter']}" for r in runs
        ]
        turns = max(r["turns"] for r in runs)
        assert section.locator("tr.turn").count() == turns
        for number in range(1, turns + 1):
            assert section.locator(f"#task-{task}-turn-{number} > td").count() == len(runs)
    page.screenshot(path=tmp_path / "viewer.png", full_page=False)
    assert (tmp_path / "viewer.png").stat().st_size > 10_000


def test_clicking_a_folded_call_shows_its_result(visit: Visit, offline: dict) -> None:
    run = next(r for r in offline["records"] if r["chapter"] == "v1_tool_loop")
    answer = next(m for m in run["messages"] if m["role"] == "user" and m is not run["messages"][0])
    result = answer["content"][0]["content"]
    call = visit.page.locator(f"#task-{run['task']}-turn-1 > td").nth(1).locator("details.call")
    shown = call.first.locator("pre.result")
    assert not shown.is_visible()
    call.first.locator("summary").click()
    assert shown.is_visible()
    assert shown.inner_text() == result[: view.LIMIT]


def test_arrow_keys_move_the_highlight_in_every_column(visit: Visit) -> None:
    page = visit.page

    def highlighted() -> list[str]:
        return page.eval_on_selector_all("tr.current", "rows => rows.map(r => r.id)")

    assert highlighted() == []
    page.keyboard.press("ArrowDown")
    assert highlighted() == ["task-one-bug-turn-1"]
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert highlighted() == ["task-one-bug-turn-3"]
    page.keyboard.press("ArrowUp")
    assert highlighted() == ["task-one-bug-turn-2"]
    row = page.locator("#task-one-bug-turn-2")
    colours = row.locator(":scope > td").evaluate_all(
        "cells => cells.map(c => getComputedStyle(c).backgroundColor)"
    )
    assert len(set(colours)) == 1 and colours[0] != "rgba(0, 0, 0, 0)"
    page.locator("#task-long-task-turn-5 > th").click()
    page.keyboard.press("ArrowDown")
    assert highlighted() == ["task-long-task-turn-6"]
    assert page.locator("#task-long-task-turn-6").is_visible()


def test_the_differences_switch_hides_the_identical_turns(visit: Visit) -> None:
    page = visit.page
    every = visible_turns(page)
    same = page.eval_on_selector_all("tr.turn.same", "rows => rows.map(r => r.id)")
    assert same and len(same) < len(every)
    switch = page.locator("#differences")
    switch.click()
    assert switch.get_attribute("aria-pressed") == "true"
    assert visible_turns(page) == [turn for turn in every if turn not in same]
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.eval_on_selector_all("tr.current", "rows => rows.map(r => r.id)") == [
        [turn for turn in every if turn not in same][1]
    ]
    page.keyboard.press("d")
    assert visible_turns(page) == every


def test_without_javascript_everything_is_there_and_folds(browser: Browser, offline: dict) -> None:
    visit = browser.open(offline["page"], javascript=False)
    page = visit.page
    assert not page.locator("#differences").is_visible()
    turns = {(r["task"], n) for r in offline["records"] for n in range(1, r["turns"] + 1)}
    assert page.locator("tr.turn").count() == len(turns)
    call = page.locator("details.call").first
    call.locator("summary").click()
    assert call.locator("pre.result").is_visible()
    page.keyboard.press("ArrowDown")
    assert page.locator("tr.current").count() == 0
    assert visit.requests == [] and visit.errors == []


def test_a_hostile_output_stays_text(browser: Browser, tmp_path: Path) -> None:
    messages = run_of(tool_turn("bash", {"command": "cat page.html"}, HOSTILE, "toolu_1"))
    hostile = record("v1_tool_loop", messages, verdict=HOSTILE, solved=False)
    path = tmp_path / "hostile.html"
    view.write_page(path, document(hostile, record("v0_react_text", run_of(), turns=1)))
    visit = browser.open(path)
    page = visit.page
    page.locator("details.call summary").first.click()
    assert page.locator("pre.result").first.inner_text() == HOSTILE
    assert page.locator("script").count() == 1
    assert page.locator("#task-one-bug-turn-1 > td").count() == 2  # </div> closed nothing
    page.wait_for_timeout(200)
    assert visit.dialogs == [] and visit.errors == [] and visit.requests == []


# --- made for comparing, at 1400 by 1000 ------------------------------------------------


def scroll_width(page: Any) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


def shown_columns(section: Any) -> list[dict[str, Any]]:
    return section.locator("th.run").evaluate_all(
        "cells => cells.filter(c => c.getClientRects().length).map(c => ({"
        "label: c.querySelector('.label').textContent, width: c.getBoundingClientRect().width}))"
    )


def test_the_chart_is_within_the_first_screen(visit: Visit, offline: dict) -> None:
    """On opening, and on arriving at any task from the contents."""
    page = visit.page
    first = page.locator("figure.chart").first.bounding_box()
    assert first is not None and first["y"] + first["height"] <= VIEWPORT["height"]
    for task in dict.fromkeys(r["task"] for r in offline["records"]):
        page.locator(f'nav.contents a[href="#task-{task}"]').click()
        chart = page.locator(f"#task-{task} figure.chart").bounding_box()
        assert chart is not None and chart["y"] >= 0
        assert chart["y"] + chart["height"] <= VIEWPORT["height"], task


def test_two_chapters_stand_side_by_side_without_a_sideways_scroll(
    visit: Visit, offline: dict
) -> None:
    """Each task opens on the chapter it brings out and the one before it; a third, ticked,
    joins them, and the page still does not scroll sideways."""
    page = visit.page
    pairs = {
        "one-bug": ["0 · v0_react_text", "1 · v1_tool_loop"],
        "several-steps": ["1 · v1_tool_loop", "2 · v2_todos"],
        "wide-reading": ["2 · v2_todos", "3 · v3_subagents"],
        "long-task": ["3 · v3_subagents", "4 · v4_memory"],
    }
    for task, pair in pairs.items():
        section = page.locator(f"#task-{task}")
        columns = shown_columns(section)
        assert [column["label"] for column in columns] == pair
        assert all(column["width"] >= 500 for column in columns), columns
        cells = section.locator("tr.turn").first.locator("td")
        assert sum(cell.is_visible() for cell in cells.all()) == 2
    assert scroll_width(page) <= VIEWPORT["width"]
    section = page.locator("#task-long-task")
    section.locator('fieldset.picker input[data-column="0"]').check()
    assert [c["label"] for c in shown_columns(section)][0] == "0 · v0_react_text"
    assert len(shown_columns(section)) == 3
    assert scroll_width(page) <= VIEWPORT["width"]
    for table in page.locator("div.tables table").all():
        box = table.bounding_box()
        assert box is not None and box["x"] + box["width"] <= VIEWPORT["width"]


PHONE = {"width": 390, "height": 844}


def test_on_a_phone_the_page_does_not_scroll_sideways(
    browser: Browser, offline: dict, tmp_path: Path
) -> None:
    """At 390 pixels wide, the tables and the runs scroll inside their boxes, a long word
    breaks, and the page itself is never wider than the screen."""
    long = "x" * 300
    messages = run_of(tool_turn("bash", {"command": long}, long, "toolu_1"), answer=long)
    odd = record(f"v1_{long}", messages, model=long, solved=False, verdict=long, error=long)
    path = tmp_path / "long-words.html"
    view.write_page(path, {**document(odd, record("v0_react_text", run_of())), "model": long})
    for page_path in (offline["page"], path):
        visit = browser.open(page_path)
        page = visit.page
        page.set_viewport_size(PHONE)
        assert scroll_width(page) <= PHONE["width"]
        for picker in page.locator("fieldset.picker").all():
            for box in picker.locator("input").all():
                box.check()
        assert scroll_width(page) <= PHONE["width"]
        for fold in page.locator("details.call").all()[:3]:
            fold.locator("summary").click()
        assert scroll_width(page) <= PHONE["width"]
        boxes = page.locator("div.tables, div.runs-wrap, figure.chart").evaluate_all(
            "found => found.map(box => box.getBoundingClientRect().right)"
        )
        assert boxes and max(boxes) <= PHONE["width"]
        assert visit.errors == [] and visit.requests == []
        page.close()


def test_the_request_of_a_chapter_4_turn_shows_its_layers(visit: Visit, offline: dict) -> None:
    page = visit.page
    run = next(
        r for r in offline["records"] if r["task"] == "long-task" and r["chapter"] == "v4_memory"
    )
    column = offline["records"].index(run) - [r["task"] for r in offline["records"]].index(
        "long-task"
    )
    cell = page.locator(f'#task-long-task-turn-2 td[data-column="{column}"]')
    fold = cell.locator("details.request")
    assert "what was sent: 3 messages" in fold.locator("summary").inner_text()
    assert not fold.locator("table.layers").is_visible()
    fold.locator("summary").first.click()
    layers = fold.locator("table.layers td:first-child").all_inner_texts()
    assert layers == ["identity", "tools", "skills", "channel", "memory"]
    assert "load_skill" in fold.locator("p.tools").inner_text()
    new = fold.locator("ol.sent li.new").all_inner_texts()
    assert len(new) == 2 and new[0].startswith("new assistant ≈")
    first = page.locator(f'#task-long-task-turn-1 td[data-column="{column}"] details.request')
    first.locator("summary").first.click()
    first.locator("table.layers summary", has_text="identity").click()
    assert "You are a coding agent" in first.locator("table.layers pre").first.inner_text()


def test_several_records_files_make_one_page(browser: Browser, tmp_path: Path) -> None:
    """A class's runs: each student's file labelled, every run on the page, any two compared."""
    paths = []
    for student, solved in [("ana", True), ("bo", False)]:
        messages = run_of(tool_turn("bash", {"command": "ls"}, f"{student}'s files", "toolu_1"))
        one = record("v1_tool_loop", messages, solved=solved, verdict=f"{student} checked")
        paths.append(tmp_path / f"{student}.json")
        paths[-1].write_text(json.dumps(document(one)), encoding="utf-8")
    page_path = tmp_path / "class.html"
    assert (
        view.main([*map(str, paths), "--label", "Ana", "--label", "Bo", "-o", str(page_path)]) == 0
    )
    visit = browser.open(page_path)
    page = visit.page
    labels = page.locator("th.run .label").all_inner_texts()
    assert labels == ["1 · v1_tool_loop · Ana", "1 · v1_tool_loop · Bo"]
    assert "records: Ana (—), Bo (—)" in page.locator(".facts").inner_text()
    assert page.locator("fieldset.picker input").count() == 2
    assert "v1_tool_loop · Bo: not solved: bo checked" in page.locator(".verdicts").inner_text()
    assert "Bo's files" not in page.content() and "bo's files" in page.content()
    assert visit.errors == [] and visit.requests == []


def test_a_hostile_request_stays_text(browser: Browser, tmp_path: Path) -> None:
    """A system prompt or a tool schema is shown as it was sent: as text, never as markup."""
    messages = run_of(tool_turn("bash", {"command": "ls"}, "a.txt", "toolu_1"))
    requests = {
        "systems": [HOSTILE],
        "tools": [[{"name": HOSTILE, "description": HOSTILE, "input_schema": {}}]],
        "extra": [],
        "calls": [{"system": 0, "tools": 0, "messages": [0]}, {"system": 9, "messages": [7, 1]}],
    }
    hostile = record("v1_tool_loop", messages, requests=requests)
    path = tmp_path / "hostile.html"
    view.write_page(path, document(hostile, record("v0_react_text", run_of(), turns=1)))
    visit = browser.open(path)
    page = visit.page
    fold = page.locator("#task-one-bug-turn-1 details.request").first
    fold.locator("summary").first.click()
    assert fold.locator("pre").first.inner_text() == HOSTILE
    assert page.locator("script").count() == 1
    second = page.locator("#task-one-bug-turn-2 details.request").first
    assert "1 message" in second.locator("summary").inner_text()  # the bad index left out
    page.wait_for_timeout(200)
    assert visit.dialogs == [] and visit.errors == [] and visit.requests == []


def sent_line(message: dict[str, Any]) -> str:
    """A message's line in a "what was sent" fold: its role, its size, its first words."""
    glance = " ".join(content_text(message["content"]).split())
    glance = glance if len(glance) <= 110 else glance[:110] + "…"
    return f"{message['role']} ≈{estimate_message(message):,} {glance}"


def test_a_late_turns_request_is_rebuilt_as_it_was_sent(browser: Browser, tmp_path: Path) -> None:
    """Turn 50 of a long run sent 99 messages; the page wrote 97 of them at earlier turns,
    and its fold, opened, lists all 99 in order, the two new ones marked.  A later call
    that sent a summary and a part of the conversation (as chapter 4's compaction does)
    lists exactly those, in their order."""
    from playwright.sync_api import expect

    run = long_run(60)
    summary = {"role": "user", "content": "Summary of turns 1 to 20: modules 1 to 20 read."}
    pool = [*run["messages"], summary]
    last = [0, len(run["messages"]), *range(41, 119)]  # the task, the summary, turns 21 on
    # new at turn 60: the summary, and turn 59's reply and result (its places 78 and 79)
    run["requests"]["extra"] = [summary]
    run["requests"]["calls"][-1]["messages"] = last
    path = tmp_path / "long.html"
    view.write_page(path, document(run))
    visit = browser.open(path)
    for number, sent, new in [(50, list(range(99)), {97, 98}), (60, last, {1, 78, 79})]:
        fold = visit.page.locator(f"#task-long-run-turn-{number} details.request")
        fold.locator("summary").click()
        lines = fold.locator("ol.sent > li")
        expected = [
            ("new " if n in new else "") + sent_line(pool[ref]) for n, ref in enumerate(sent)
        ]
        # the script fills an opened fold after the click: wait until no stretch is left
        expect(fold.locator("li.earlier")).to_have_count(0)
        assert lines.all_inner_texts() == expected
    earlier = visit.page.locator("#task-long-run-turn-50 ol.sent > li")
    assert earlier.count() == 99  # the lines turn 60 took are copies: turn 50 keeps its own
    ids = visit.page.eval_on_selector_all("[id]", "found => found.map(element => element.id)")
    assert len(ids) == len(set(ids))
    assert visit.errors == [] and visit.requests == []


# --- the docs' pictures -------------------------------------------------------------------


def draw_docs_images(targets: dict[str, Path] = DOCS_IMAGES) -> None:
    """The pictures of docs/*/lab.md, one per language: the offline comparison in a
    1400 by 1000 window, on chapter 4's task in a small window: the chart first, the
    tables, and chapters 3 and 4 side by side."""
    problem = missing_browser()
    if problem:
        raise SystemExit(problem)
    with tempfile.TemporaryDirectory() as scratch:
        browser = Browser(Path(scratch) / "profile")
        try:
            for lang, target in targets.items():
                folder = Path(scratch) / lang
                folder.mkdir()
                flags = ("--task", "long-task", "--window", "16000", "--lang", lang)
                _, page_path = offline_comparison(folder, *flags)
                page = browser.open(page_path).page
                page.set_viewport_size({"width": 1400, "height": 1000})
                page.locator("#task-long-task figure.chart").evaluate(
                    "figure => window.scrollTo(0, figure.offsetTop - 12)"
                )
                target.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=target)
                page.close()
                print(f"wrote {target.relative_to(REPO)}", file=sys.stderr)
        finally:
            browser.close()


if __name__ == "__main__":
    draw_docs_images()
