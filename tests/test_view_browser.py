"""The run viewer's page in a real browser: Debian's headless Chromium, driven by Playwright.

Every column and turn is there, a folded tool call opens on a click, the arrow keys move the
highlight, the differences switch hides identical turns, a hostile tool output stays text, and
the page logs no error and asks the network for nothing.  Without a browser these tests are
skipped, except under CI=true, where a missing browser is a failure (.ci/run installs it).

    python -m tests.test_view_browser      draws docs/images/viewer.png again
    python -m tests.test_view_browser zh   the Chinese page, docs/images/viewer.zh.png
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
from tests.test_view import (
    HOSTILE,
    REPO,
    document,
    offline_comparison,
    record,
    run_of,
    tool_turn,
)

pytestmark = pytest.mark.docs  # pins the docs: see README, "Two commands"

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
VIEWPORT = {"width": 1600, "height": 1000}
DOCS_IMAGE = REPO / "docs" / "images" / "viewer.png"


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


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    records, page = offline_comparison(tmp_path_factory.mktemp("offline"))
    return {"page": page, "records": json.loads(records.read_text(encoding="utf-8"))["records"]}


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
            assert section.locator(f"#task-{task}-turn-{number} td").count() == len(runs)
    page.screenshot(path=tmp_path / "viewer.png", full_page=False)
    assert (tmp_path / "viewer.png").stat().st_size > 10_000


def test_clicking_a_folded_call_shows_its_result(visit: Visit, offline: dict) -> None:
    run = next(r for r in offline["records"] if r["chapter"] == "v1_tool_loop")
    answer = next(m for m in run["messages"] if m["role"] == "user" and m is not run["messages"][0])
    result = answer["content"][0]["content"]
    call = visit.page.locator(f"#task-{run['task']}-turn-1 td").nth(1).locator("details.call")
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
    colours = row.locator("td").evaluate_all(
        "cells => cells.map(c => getComputedStyle(c).backgroundColor)"
    )
    assert len(set(colours)) == 1 and colours[0] != "rgba(0, 0, 0, 0)"
    page.locator("#task-long-task-turn-5 th").click()
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
    assert page.locator("#task-one-bug-turn-1 td").count() == 2  # </div> closed nothing
    page.wait_for_timeout(200)
    assert visit.dialogs == [] and visit.errors == [] and visit.requests == []


# --- the docs' picture --------------------------------------------------------------------


def draw_docs_image(lang: str = "en") -> None:
    """The picture of docs/<lang>/lab.md: the offline comparison, on the task of chapter 2,
    with a highlighted turn and one call opened, in the page's language."""
    target = DOCS_IMAGE if lang == "en" else DOCS_IMAGE.with_suffix(f".{lang}.png")
    problem = missing_browser()
    if problem:
        raise SystemExit(problem)
    with tempfile.TemporaryDirectory() as scratch:
        _, page_path = offline_comparison(Path(scratch), "--lang", lang)
        browser = Browser(Path(scratch) / "profile")
        try:
            page = browser.open(page_path).page
            page.set_viewport_size({"width": 1720, "height": 1300})
            page.locator("#task-several-steps-turn-1 th").click()
            page.keyboard.press("ArrowDown")
            page.locator("#task-several-steps-turn-2 td").nth(2).locator("summary").first.click()
            chart = page.locator("#task-several-steps figure.chart")
            chart.evaluate("figure => window.scrollTo(0, figure.offsetTop - 16)")
            target.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=target)
        finally:
            browser.close()
    print(f"wrote {target.relative_to(REPO)}", file=sys.stderr)


if __name__ == "__main__":
    draw_docs_image(*sys.argv[1:2])
