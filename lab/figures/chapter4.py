"""Chapter 4's figures of a session across three processes: the demo's steps run in one, what
the window sent and the stages it took, the session file, and the output with its ids fixed."""

from __future__ import annotations

import functools
import importlib
import re
from dataclasses import dataclass
from typing import Any

from lab.chapters import chapter
from lab.words import word
from llm import Message, Model
from llm.cassette import ReplayModel, read_cassette
from llm.demo import copy_private, fresh_folder
from v4_memory.context import CUT_NOTE
from v4_memory.session import SESSIONS_DIR, SessionStore

from .demos import Turn, TurnConsole, WatchedModel, scratch_folder
from .every_chapter import demo_output
from .markdown import listed, number, stamp, table


class SentWatcher(WatchedModel):
    """A WatchedModel that also keeps the messages and system prompt of every call: what
    the window sent."""

    def __init__(self, inner: Model) -> None:
        super().__init__(inner)
        self.sent: list[list[Message]] = []
        self.systems: list[str] = []

    def before(self, system: str, messages: list[Message], tools: list[dict] | None) -> None:
        self.sent.append(list(messages))
        self.systems.append(system)


@dataclass
class SessionStep:
    """One step of chapter 4's demo: a run, in a session new or resumed, and what it left."""

    resumed: bool
    result: Any  # the chapter's SessionRunResult
    turns: list[Turn]
    sent: list[list[Message]]
    systems: list[str]  # the system prompt of every call
    layers: list[Any]  # the system prompt's layers in this step (prompt.Layer)
    runtime: Any  # the runtime note that ends its requests (prompt.Layer)
    session_file: str  # the session file as the step left it


@functools.cache
def session_steps(name: str) -> list[SessionStep]:
    """Chapter 4's demo, its three steps in one process, as `--demo` runs them in three.

    The first step replays the demo cassette in a new session; each step after it replays
    its own cassette, in the latest session when the command line it stands for says
    `--continue`, else in a new one.  Same work directory as `run_demo` and `--demo`
    (the first numbered folder in the scratch folder), and the same model names the
    command line gives (a cassette named from the current folder), so the figures here
    are those of `python -m v4_memory --demo` run from the repository root.
    """
    demo = chapter(name)
    agent, prompt = (importlib.import_module(f"{name}.{module}") for module in ("agent", "prompt"))
    if not demo.sessions or not demo.sessions.demo_steps:
        raise SystemExit(f"{name} has no demo steps: this figure needs chapter 4")
    plan = [
        (demo.demo_cassette, False),
        *((demo.demo_cassette.parent / c, "--continue" in f) for c, f in demo.sessions.demo_steps),
    ]
    steps = []
    with scratch_folder() as scratch:
        workdir = fresh_folder(f"{name}-demo-", scratch)
        copy_private(demo.demo_workspace, workdir)
        store = SessionStore(workdir / SESSIONS_DIR)
        for cassette, resumed in plan:
            header, _ = read_cassette(cassette)
            model = SentWatcher(ReplayModel(cassette))  # named as run_demo_steps names it
            session = store.open(store.latest().id) if resumed else None
            try:
                result = demo.run(
                    header["task"], model=model, workdir=workdir, console=TurnConsole(model),
                    session=session,
                )  # fmt: skip
            finally:
                if session:
                    session.close()
            layers = prompt.layers(workdir, agent.TOOLS_GUIDANCE, result.recalled)
            note = prompt.runtime_now(workdir, model.name)
            text = (store.root / f"{result.session_id}.jsonl").read_text(encoding="utf-8")
            steps.append(
                SessionStep(
                    resumed, result, model.turns, model.sent, model.systems, layers, note, text
                )
            )
    return steps


def step_word(step: SessionStep, number: int, lang: str) -> str:
    """`2 · resumed (`--continue`)`: a step of the demo, and whether it resumed the session."""
    if not step.resumed:
        return f"{number} · {word('new session', lang)}"
    flag = "（`--continue`）" if lang == "zh" else " (`--continue`)"
    return f"{number} · {word('resumed', lang)}{flag}"


CUT_PREVIEW = re.compile(re.escape(CUT_NOTE.split("}", 1)[1].split(";")[0]))


def cut_results(messages: list[Message]) -> int:
    """Tool results sent as stage 1's preview instead of whole."""
    return sum(
        1
        for message in messages
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result" and CUT_PREVIEW.search(str(block.get("content")))
    )


def stage_cell(compaction: Any, lang: str) -> str:
    """`stage 1: ≈12,659 → ≈10,346`: a stage, and the request's size before and after it."""
    sizes = f"≈{number(compaction.tokens_before)} → ≈{number(compaction.tokens_after)}"
    if lang == "zh":
        return f"第 {compaction.stage} 阶段：{sizes}"
    return f"stage {compaction.stage}: {sizes}"


def context_stages(name: str, lang: str = "en") -> str:
    """Every model call of the demo's three steps: what the window sent, and the stages it took.

    `messages sent` counts the messages of the request, `old results cut` the tool results
    in it that stage 1 cut to a preview; the last column is the stage taken just before
    the call, with the request's estimated size before and after it.  The resumed step
    starts from the session as the first left it: the summary and the turns after it.
    """
    headers = ["step", "turn", "tool calls", "messages sent", "old results cut"]
    headers += ["context (tokens in)", "before this call"]
    rows = []
    for number_, step in enumerate(session_steps(name), start=1):
        stages = {c.turn: c for c in step.result.compactions}
        for turn_number, (turn, sent) in enumerate(zip(step.turns, step.sent, strict=True), 1):
            calls = listed([f"`{tool}`" for tool in turn.tools], lang) or "—"
            stage = stages.get(turn_number)
            rows.append(
                [
                    step_word(step, number_, lang) if turn_number == 1 else "",
                    str(turn_number),
                    calls,
                    str(len(sent)),
                    str(cut_results(sent)) if cut_results(sent) else "—",
                    number(turn.reply.usage.input_tokens),
                    stage_cell(stage, lang) if stage else "",
                ]
            )
    return stamp() + "\n" + table([word(h, lang) for h in headers], rows)


MASKED_SESSION = "20250314-153012-{}"  # a session id as session.py's docstring shows one
SESSION_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b")
MEMORY_DAY = re.compile(r"\bm-\d{8}-")
ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d")


def masked(text: str) -> str:
    """`text` with what changes on every run of chapter 4's demo made fixed: each session's
    random id (the first `…-a1b2c3`, the next `…-d4e5f6`, …), the date of memory ids and
    the time a session was created.  Their widths stay the same."""
    fixed = ["a1b2c3", "d4e5f6", "a7b8c9", "d0e1f2"]
    seen: dict[str, str] = {}

    def session(match: re.Match[str]) -> str:
        found = seen.setdefault(match.group(), MASKED_SESSION.format(fixed[len(seen) % 4]))
        return found

    text = SESSION_ID.sub(session, text)
    text = MEMORY_DAY.sub("m-20250314-", text)
    return ISO_TIME.sub("2025-03-14T15:30:12+01:00", text)


def demo_output_masked(name: str, lang: str = "en") -> str:
    """What `python -m NAME --demo` prints (see `demo_output`), with the session ids and the
    dates that differ on every run made fixed (see `masked`)."""
    return masked(demo_output(name, lang))


def session_file(name: str, lang: str = "en") -> str:
    """The session file as the demo's second step leaves it: every line, cut to 110 characters.

    The header, one line per message, the compaction record where stage 2 happened, and
    the lines the resumed step appended after it.  Ids and dates fixed as in `masked`.
    """
    steps = session_steps(name)
    resumed = next((step for step in steps if step.resumed), None)
    if resumed is None:
        raise SystemExit(f"{name}'s demo resumes no session")
    lines = [masked(line) for line in resumed.session_file.splitlines()]
    shown = [line if len(line) <= 110 else line[:109] + "…" for line in lines]
    return "```\n" + "\n".join(shown) + "\n```"
