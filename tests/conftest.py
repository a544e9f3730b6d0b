"""Fixtures shared by the whole suite: a clean environment and a fake model provider."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from llm.anthropic_model import AnthropicModel
from llm.openai_model import OpenAIModel
from machine.locks import Lock, hold
from tests import REPO
from tests.fake_provider import FakeProvider

# A shell that starts a command in the background (`pytest &`, nohup, some CI runners)
# starts it with SIGINT ignored, and Python then never turns Ctrl-C into
# KeyboardInterrupt, nor do the programs the tests start: the tests of what Ctrl-C does
# would fail for a reason of the shell's.  They get Python's usual handler back.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The programs the tests start run this clone's code, wherever they start: on a class server
# the shared environment holds the course's dependencies only (teaching.md, section 2), and
# a program started outside the clone would otherwise find no course, or another's.
os.environ["PYTHONPATH"] = os.pathsep.join(
    dict.fromkeys([str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])
)

# A busy machine (a shared server, a CI runner) may take many times longer than usual
# for one example: hypothesis checks behaviour here, never speed.
settings.register_profile("course", deadline=None)
settings.load_profile("course")

# Variables that would make a test pick, or talk to, a real provider.
PROVIDER_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_CUSTOM_HEADERS",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "AGENT_MODEL",
    "AGENT_TEXT_TOOL_CALLS",
    "AGENT_RECORD_SETUP",
)


@pytest.fixture(autouse=True)
def no_real_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach a real provider or depend on the developer's keys.

    Loopback is also exempted from any proxy the developer has set, so requests to
    the fake provider never leave the machine.
    """
    for name in PROVIDER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def fake_provider() -> Iterator[FakeProvider]:
    """A scripted Anthropic/OpenAI server on 127.0.0.1, stopped after the test."""
    server = FakeProvider().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def anthropic_model(fake_provider: FakeProvider) -> AnthropicModel:
    """The real Anthropic adapter, pointed at the fake provider."""
    return AnthropicModel("claude-test", api_key="sk-ant-test", base_url=fake_provider.url)


@pytest.fixture
def openai_model(fake_provider: FakeProvider) -> OpenAIModel:
    """The real OpenAI adapter, pointed at the fake provider like any compatible server."""
    return OpenAIModel("gpt-test", api_key="sk-test", base_url=fake_provider.url + "/v1")


@dataclass(frozen=True)
class OfflineComparison:
    """What `python -m lab compare --json … --html …` printed and wrote, offline."""

    stdout: str
    stderr: str
    records: Path
    page: Path

    @property
    def document(self) -> dict[str, Any]:
        return json.loads(self.records.read_text(encoding="utf-8"))


def shared_folder(factory: pytest.TempPathFactory, name: str) -> tuple[Path, Lock]:
    """A folder of this test run that every pytest-xdist worker sees, and its lock held:
    what is expensive to build is built by the first worker that asks, read by the others."""
    root = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, above each worker's own
    return root / name, hold(root / f"{name}.lock", wait=True)


@pytest.fixture(scope="session")
def offline_comparison(tmp_path_factory: pytest.TempPathFactory) -> OfflineComparison:
    """The offline comparison of every chapter on the featured tasks, run once for the
    whole run, whichever workers ask (its tables, its records and its page are read by
    three test files), from a folder away from any `.env` beside the clone."""
    folder, lock = shared_folder(tmp_path_factory, "offline")
    records, page, printed = folder / "records.json", folder / "page.html", folder / "printed.json"
    with lock:
        if not printed.exists():
            folder.mkdir(exist_ok=True)
            repo = REPO
            done = subprocess.run(
                [sys.executable, "-m", "lab", "compare",
                 "--json", str(records), "--html", str(page)],
                cwd=folder,
                env={**os.environ, "PYTHONPATH": str(repo)},
                capture_output=True,
                text=True,
                timeout=600,  # a guard against a hang: about 5 s when idle, more when busy
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            printed.write_text(json.dumps([done.stdout, done.stderr]), encoding="utf-8")
    stdout, stderr = json.loads(printed.read_text(encoding="utf-8"))
    assert f"wrote the runs side by side to {page}" in stderr
    return OfflineComparison(stdout, stderr, records, page)


# The slow end-to-end cases: a whole comparison or every demo run again on a changed
# machine (no POSIX calls, Windows' line endings), a real browser, a benchmark, a nested
# test run, every notebook executed.  Each checks what the faster tests check piece by
# piece, all together; CI runs them on every change (`.ci/run`).  A learner's `pytest`
# leaves them out, so that it answers while they work, and says how many it left.
def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow",
        action="store_true",
        help="also run the slow end-to-end tests (marked slow), as CI does",
    )


def runs_slow(config: pytest.Config) -> bool:
    """`--slow`, or a marker expression that names `slow` (`pytest -m slow`)."""
    return bool(config.getoption("--slow")) or "slow" in (config.getoption("markexpr") or "")


def named_files(config: pytest.Config) -> set[Path]:
    """The test files named on the command line (`pytest tests/lab/test_view_browser.py`,
    or one test of it): asked for by name, they run whole, slow cases too."""
    paths = (Path(config.invocation_params.dir, arg.split("::")[0]) for arg in config.args)
    return {path.resolve() for path in paths if path.is_file()}


LEFT_OUT = pytest.StashKey[int]()  # how many slow cases this run left out


@pytest.hookimpl(trylast=True)  # after -k and -m: count only what they would have run
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if runs_slow(config):
        return
    named = named_files(config)
    slow = [i for i in items if i.get_closest_marker("slow") and i.path.resolve() not in named]
    if slow:
        config.hook.pytest_deselected(items=slow)
        left = set(slow)
        items[:] = [item for item in items if item not in left]
        config.stash[LEFT_OUT] = len(slow)
        if hasattr(config, "workeroutput"):  # a pytest-xdist worker: tell the main process
            config.workeroutput["slow left out"] = len(slow)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """A pytest-xdist worker ended: every worker collects the same tests, so any one's count."""
    left = getattr(node, "workeroutput", {}).get("slow left out", 0)
    node.config.stash[LEFT_OUT] = max(node.config.stash.get(LEFT_OUT, 0), left)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    left = config.stash.get(LEFT_OUT, 0)
    if left:
        terminalreporter.write_line(
            f"{left} slow end-to-end tests left out: `pytest --slow` runs them too (CI does)"
        )
