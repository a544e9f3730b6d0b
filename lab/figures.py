"""The figures the docs show, printed by the code that produces them: never typed in.

    python -m lab.figures demo-turns v1_tool_loop        print one figure (Markdown)
    python -m lab.figures demo-summary --lang zh         the same with Chinese headers
    python -m lab.figures --update                       rewrite every marked block in docs/
    python -m lab.figures --check                        list the blocks that are out of date

A doc marks a generated block with two HTML comments, which Markdown does not show:

    <!-- figure: demo-turns v1_tool_loop -->
    …whatever the figure printed last time…
    <!-- /figure -->

Blocks in `docs/zh` get Chinese headers, all others English.  When the code changes
(a new cassette, a new token estimate, one more chapter), `--update` brings every
doc up to date in one go, and the docs tests fail until someone runs it.

Figures that run a demo depend on what the tools print, and that depends a little
on the Python version (a traceback's layout, unittest's test names).  They carry a
stamp, `<!-- printed with Python 3.11 -->`, so that a check on another version can
say it cannot compare instead of calling the block stale.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llm import Console, Message, Model, Reply, RunResult, Usage
from llm.cassette import ReplayModel, for_child, read_cassette
from llm.cli import copy_private, fresh_folder
from llm.openai_model import from_chat_message, to_chat_messages, to_chat_tools
from llm.result import tool_uses
from llm.tokens import estimate_block, estimate_message, estimate_text
from llm.wrapper import Wrapper
from machine import USER_ID, ToolError, hold, private_folder
from v1_tool_loop.tools import OUTPUT_LIMIT, TOOLS
from v2_todos.todos import MARKS
from v4_memory.context import CUT_NOTE
from v4_memory.prompt import assemble, shared_prefix_tokens
from v4_memory.session import SESSIONS_DIR, SessionStore
from v4_memory.skills import find_skills, listing_vs_loading

from .chapters import chapter, chapters
from .compare import offline_records
from .report import task_table
from .runs import Record
from .token_check import definitions, first_bytes
from .words import word

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
BLOCK = re.compile(r"(<!-- figure: (.+?) -->\n)(.*?)(<!-- /figure -->)", re.DOTALL)
# The user's own folder for measuring runs, at a fixed place (see `scratch_folder`).
# It is named by the user's id, padded so that every user's path costs the same tokens.
MEASURING = Path("/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir()) / (
    f"agent-course-figures-{USER_ID:010d}"
)
SCRATCH = MEASURING / "run"  # emptied for every measuring run
SCRATCH_LOCK = MEASURING / "lock"  # one measuring run at a time
STAMP = re.compile(r"<!-- printed with Python (\d+\.\d+) -->")
UNITTEST_TIME = re.compile(r"(Ran \d+ tests? in )\d+\.\d+s")
ENV_NOTE = "loaded ./.env: "  # what the command line notes when the current folder has a .env


def stamp() -> str:
    return f"<!-- printed with Python {sys.version_info.major}.{sys.version_info.minor} -->"


def table(headers: list[str], rows: list[list[str]]) -> str:
    lines = [headers, ["---"] * len(headers), *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def listed(items: list[str], lang: str) -> str:
    """Items of a table cell, separated as each language does it."""
    return ("、" if lang == "zh" else ", ").join(items)


def number(value: int) -> str:
    return f"{value:,}"


def about(value: int) -> str:
    """A figure rounded to hundreds, for a measure that moves a little whenever its input does."""
    return f"≈{round(value, -2):,}"


# --- running a chapter's demo, watching each turn --------------------------------------


@dataclass
class Turn:
    """One model call as the demo made it: the reply, what was sent, what the loop did next."""

    reply: Reply
    request: dict[str, int]  # characters of the parts sent before the conversation
    tools: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class WatchedModel(Wrapper):
    """Passes every call on to a model and keeps the reply and the size of the request."""

    def __init__(self, inner: Model) -> None:
        super().__init__(inner)
        self.turns: list[Turn] = []

    def after(self, reply: Reply, system: str, tools: list[dict] | None) -> None:
        request = {
            "system prompt": len(system),
            "tool schemas": len(json.dumps(tools, ensure_ascii=False)) if tools else 0,
        }
        self.turns.append(Turn(reply, request))

    def child(self, key: str) -> Model:
        """A child agent's model (chapter 3): its own section, not watched, since the
        figures tell the parent's turns."""
        return for_child(self.inner, key)


class TurnConsole(Console):
    """A silent console that files each tool call and warning under the turn it belongs to.

    Every chapter's loop reports its tool calls and warnings to its console right
    after the model call that caused them, so this works for every chapter alike:
    chapter 1 reads them from `tool_use` blocks, chapter 0 from parsed text.
    """

    def __init__(self, model: WatchedModel) -> None:
        super().__init__(quiet=True)
        self.model = model

    def tool_call(self, name: str, args: dict[str, Any]) -> None:
        self.model.turns[-1].tools.append(name)

    def warn(self, text: str) -> None:
        self.model.turns[-1].warnings.append(re.split(r"[:;]", text, maxsplit=1)[0])


@dataclass
class DemoRun:
    """A finished demo run and what happened at each of its turns."""

    result: RunResult
    turns: list[Turn]


@contextlib.contextmanager
def scratch_folder() -> Iterator[Path]:
    """An empty folder at a fixed place, for the demo runs a figure is measured from.

    Tool output holds the paths of the files it talks about (a traceback, say), and
    real tool output is part of the token estimates: a random temporary folder, or
    one under TMPDIR, would change the figures with the machine and every run.  So
    the runs happen at one fixed path, emptied first, where the demo's own folder is
    always the first numbered one.  The path is the user's own (MEASURING, readable
    by its owner alone), so students sharing a server neither block nor read each
    other.  Two checkouts of one user measuring at once would empty it under each
    other's feet, so a lock makes the second wait; the folder is removed when done.
    """
    try:
        private_folder(MEASURING)
    except ToolError as error:
        raise SystemExit(str(error)) from None
    lock = hold(SCRATCH_LOCK, wait=True)
    try:
        if SCRATCH.is_symlink():
            SCRATCH.unlink()
        shutil.rmtree(SCRATCH, ignore_errors=True)
        SCRATCH.mkdir(mode=0o700)
        try:
            yield SCRATCH
        finally:
            shutil.rmtree(SCRATCH, ignore_errors=True)
    finally:
        lock.release()


@functools.cache
def run_demo(name: str) -> DemoRun:
    """The chapter's offline demo, as `--demo` runs it, on a fresh copy of its workspace."""
    demo = chapter(name)
    header, _ = read_cassette(demo.demo_cassette)
    model = WatchedModel(ReplayModel(demo.demo_cassette))
    with scratch_folder() as scratch:
        workdir = fresh_folder(f"{name}-demo-", scratch)
        copy_private(demo.demo_workspace, workdir)
        result = demo.run(header["task"], model=model, workdir=workdir, console=TurnConsole(model))
    return DemoRun(result, model.turns)


# --- the figures -----------------------------------------------------------------------


def demo_turns(name: str, lang: str = "en") -> str:
    """Turn by turn: why the reply ended, what the loop ran, and how the context grew."""
    run = run_demo(name)
    warned = any(turn.warnings for turn in run.turns)
    headers = ["turn", "`stop_reason`", "tool calls", "context (tokens in)", "tokens out"]
    headers += ["warnings"] if warned else []
    rows = []
    for index, turn in enumerate(run.turns, start=1):
        calls = listed([f"`{tool}`" for tool in turn.tools], lang) or "—"
        usage = turn.reply.usage
        row = [str(index), f"`{turn.reply.stop_reason}`", calls]
        row += [number(usage.input_tokens), number(usage.output_tokens)]
        row += [listed([f"`{w}`" for w in turn.warnings], lang) or "—"] if warned else []
        rows.append(row)
    total = run.result.usage
    calls = sum(len(turn.tools) for turn in run.turns)
    last = [word("all turns", lang), "", str(calls), number(total.input_tokens)]
    rows.append([*last, number(total.output_tokens), *([""] if warned else [])])
    return stamp() + "\n" + table([word(h, lang) for h in headers], rows)


def demo_summary(lang: str = "en") -> str:
    """Every chapter's demo side by side: the same task, what each design spent on it."""
    headers = ["chapter", "stop", "turns", "tool calls", "tokens in", "tokens out"]
    rows = []
    for name in chapters():
        result = run_demo(name).result
        usage = result.usage
        rows.append(
            [
                f"{name[1]} · `{name}`",
                f"`{result.stop}`",
                str(result.turns),
                str(result.tool_calls),
                number(usage.input_tokens),
                number(usage.output_tokens),
            ]
        )
    return stamp() + "\n" + table([word(h, lang) for h in headers], rows)


def request_sizes(lang: str = "en") -> str:
    """What each chapter sends before the task itself, on every call, in characters."""
    headers = [
        "chapter",
        "system prompt (characters)",
        "tool schemas (characters)",
        "sent on every call (characters)",
    ]
    rows = []
    for name in chapters():
        first = run_demo(name).turns[0].request
        fixed = first["system prompt"] + first["tool schemas"]
        schemas = number(first["tool schemas"]) if first["tool schemas"] else word("none", lang)
        rows.append(
            [f"{name[1]} · `{name}`", number(first["system prompt"]), schemas, number(fixed)]
        )
    return table([word(h, lang) for h in headers], rows)


def code_size(lang: str = "en") -> str:
    """Non-blank lines of each chapter's code: the loop, and the files beside it."""
    headers = ["chapter", "`agent.py`, non-blank lines", "other files"]
    rows = []
    for name in chapters():
        sizes = {
            path.name: sum(
                1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
            )
            for path in sorted((REPO / name).glob("*.py"))
        }
        others = [f"`{file}` {n}" for file, n in sizes.items() if file != "agent.py" and n]
        rows.append([f"{name[1]} · `{name}`", str(sizes.get("agent.py", 0)), listed(others, lang)])
    return table([word(h, lang) for h in headers], rows)


def demo_output(name: str, lang: str = "en") -> str:
    """What `python -m NAME --demo` prints, run from the repository root."""
    return stamp() + "\n```\n" + demo_stdout(name) + "\n```"


def demo_stdout(name: str) -> str:
    """The demo's output, without its last newline.

    It runs in the fixed scratch folder (see `scratch_folder`), shown as `/tmp`.
    The time unittest reports (`Ran 3 tests in 0.001s`) depends on the machine and
    its load, so it is shown as `0.000s`: a timing is not what the figure is about.
    A learner's own ./.env (a class key, say) changes nothing a demo does, so the
    line that names its settings is left out.
    """
    with scratch_folder() as folder:
        done = subprocess.run(
            [sys.executable, "-m", name, "--demo"],
            cwd=REPO,
            env={**os.environ, "TMPDIR": str(folder), "NO_COLOR": "1"},
            capture_output=True,
            text=True,
            timeout=600,  # a guard against a hang: seconds, even on a busy machine
        )
    output = UNITTEST_TIME.sub(r"\g<1>0.000s", done.stdout.replace(str(folder), "/tmp"))
    output = "".join(line for line in output.splitlines(True) if not line.startswith(ENV_NOTE))
    if done.returncode != 0:
        raise RuntimeError(f"python -m {name} --demo failed: {done.stderr.strip()}")
    return output.rstrip("\n")


def output_limit(lang: str = "en") -> str:
    """What the tools' output cap of OUTPUT_LIMIT bytes holds, in characters and tokens.

    Measured on chapter 1's own texts (its doc in each language, its code, its demo
    cassette and tool schemas, repeated where shorter than the cap) with the estimate of
    `llm/tokens.py`, which needs no tokenizer; `python -m lab.token_check` sets a real
    tokenizer's count beside it.  Rounded, since every edit of those texts moves it a little.
    """
    chapter = REPO / "v1_tool_loop"
    modules = sorted(chapter.glob("*.py"))
    cassette = (chapter / "demo/cassette.jsonl").read_text(encoding="utf-8").splitlines()
    kinds = {
        "English prose": prose(DOCS / "en/v1_tool_loop.md"),
        "Chinese prose": prose(DOCS / "zh/v1_tool_loop.md"),
        "Python code": [part for path in modules for part in definitions(path)],
        "JSON tool traffic": [*cassette, *(json.dumps(tool, ensure_ascii=False) for tool in TOOLS)],
    }
    rows = []
    for kind, samples in kinds.items():
        text = first_bytes(samples, OUTPUT_LIMIT)
        rows.append([word(kind, lang), about(len(text)), about(estimate_text(text))])
    headers = ["kind of text", "characters", "tokens (estimated)"]
    return table([word(h, lang) for h in headers], rows)


def prose(doc: Path) -> list[str]:
    """The paragraphs of a doc, without its code blocks and the figures printed into it."""
    text = BLOCK.sub("", doc.read_text(encoding="utf-8"))
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return [part.strip() for part in re.split(r"\n\s*\n", text) if part.strip()]


# --- the plan of chapter 2, read back from the demo's messages -------------------------


def requests(run: DemoRun) -> list[list[Message]]:
    """The conversation as each model call received it: everything before its reply."""
    messages = run.result.messages
    replies = [index for index, message in enumerate(messages) if message["role"] == "assistant"]
    return [messages[:index] for index in replies[: len(run.turns)]]


def plan_call_ids(messages: list[Message]) -> set[str]:
    return {
        call["id"]
        for message in messages
        if message["role"] == "assistant"
        for call in tool_uses(message)
        if call["name"] == "todo_write"
    }


def tokens_after(messages: list[Message], index: int, block: int | None = None) -> int:
    """Estimated tokens that follow message `index` (or only its block `block`) to the end."""
    rest = sum(estimate_message(message) for message in messages[index + 1 :])
    if block is None:
        return rest
    return rest + sum(estimate_block(later) for later in messages[index]["content"][block + 1 :])


def latest_plan_result(messages: list[Message]) -> tuple[int, int] | None:
    """(message, block) of the last todo_write result that was accepted, if any."""
    calls = plan_call_ids(messages)
    found = None
    for index, message in enumerate(messages):
        if isinstance(message["content"], str):
            continue
        for number, block in enumerate(message["content"]):
            accepted = block.get("type") == "tool_result" and not block.get("is_error")
            if accepted and block["tool_use_id"] in calls:
                found = (index, number)
    return found


def plan_tokens(messages: list[Message]) -> int:
    """Estimated tokens of the plan's own blocks: every todo_write call and its result."""
    calls = plan_call_ids(messages)
    return sum(
        estimate_block(block)
        for message in messages
        if not isinstance(message["content"], str)
        for block in message["content"]
        if block.get("id") in calls or block.get("tool_use_id") in calls
    )


def plan_distance(name: str, lang: str = "en") -> str:
    """At each call: how far back the first reply lies, and how far back the latest plan.

    Without a plan (chapter 1), the only statement of what remains to do is the
    model's first reply, and every turn pushes it further back.  With one, the latest
    accepted todo_write result is rewritten near the end each time the plan moves.
    Measured in the tokens the model reads after it, by `llm`'s token estimate.
    """
    run = run_demo(name)
    headers = [
        "turn",
        "context (tokens in)",
        "plan blocks in it (tokens)",
        "after the first reply (tokens)",
        "after the latest plan (tokens)",
    ]
    rows = []
    for index, (turn, request) in enumerate(zip(run.turns, requests(run), strict=True), start=1):
        first = next((i for i, m in enumerate(request) if m["role"] == "assistant"), None)
        plan = latest_plan_result(request)
        rows.append(
            [
                str(index),
                number(turn.reply.usage.input_tokens),
                number(plan_tokens(request)),
                "—" if first is None else number(tokens_after(request, first)),
                "—" if plan is None else number(tokens_after(request, *plan)),
            ]
        )
    return stamp() + "\n" + table([word(h, lang) for h in headers], rows)


def plan_history(name: str, lang: str = "en") -> str:
    """Every item of the plan at every turn the model rewrote it, and when it was reminded.

    `[x]` done, `[>]` in progress, `[ ]` not started; an empty cell is a turn
    without a todo_write, which is what the reminder counts.
    """
    run = run_demo(name)
    if not hasattr(run.result, "plan_history"):
        raise SystemExit(f"{name} keeps no plan: plan-history needs chapter 2 or later")
    statuses = {
        turn: {item["content"]: item["status"] for item in plan}
        for turn, plan in run.result.plan_history
    }
    turns = range(1, len(run.turns) + 1)
    items = dict.fromkeys(content for plan in statuses.values() for content in plan)
    rows = []
    for content in items:
        marks = [statuses.get(turn, {}).get(content) for turn in turns]
        rows.append([content, *(f"`{MARKS[mark]}`" if mark else "" for mark in marks)])
    sent = [word("sent", lang) if turn in run.result.reminders else "" for turn in turns]
    rows.append([word("reminder", lang), *sent])
    return table([word("item \\ turn", lang), *map(str, turns)], rows)


# --- chapter 3's children, and the context they spare the parent ---------------------


def calls_in(calls: list[str], lang: str) -> str:
    """Tool calls by name, counted: `read_file` ×4, `task` ×2."""
    counts = Counter(calls)
    shown = [f"`{name}`" + (f" ×{n}" if n > 1 else "") for name, n in counts.items()]
    return listed(shown, lang) or "—"


def context_growth(task: str, *names: str, lang: str = "en") -> str:
    """Turn by turn, on one lab task: what each chapter's tool calls brought into its context.

    What a tool returns stays in the conversation and is read again by every later
    call: a file chapter 1 reads is paid for until the end of the run.  A child agent's
    reading stays in the child, and only its report reaches the parent.  The last row
    is what every call carries before the conversation (system prompt and tool
    schemas), worked out from the first call of the scripted run, whose usage is the
    estimate of exactly those parts plus the task.
    """
    records = {record.chapter: record for record in lab_records(task, None)}
    missing = [name for name in names if name not in records]
    if missing or not names:
        raise SystemExit(f"context-growth needs chapters with a scripted run of {task}")
    headers = [word("turn", lang)]
    for name in names:
        headers += [f"`{name}` · " + word("tool calls", lang)]
        headers += [word("their results (tokens)", lang), word("context (tokens in)", lang)]
    turns = max(len(records[name].context_per_turn) for name in names)
    rows = [[str(turn)] for turn in range(1, turns + 1)]
    fixed = [word("system prompt and tool schemas, on every call", lang)]
    for name in names:
        record = records[name]
        messages = record.messages
        replies = [i for i, message in enumerate(messages) if message["role"] == "assistant"]
        for row, index, context in zip(rows, replies, record.context_per_turn, strict=False):
            answer = messages[index + 1] if index + 1 < len(messages) else None
            results = estimate_message(answer) if answer else 0
            called = [call["name"] for call in tool_uses(messages[index])]
            row += [calls_in(called, lang), number(results) if called else "—", number(context)]
        for row in rows[len(record.context_per_turn) :]:
            row += ["", "", ""]
        fixed += ["", "", number(record.context_per_turn[0] - estimate_message(messages[0]))]
    return stamp() + "\n" + table(headers, [*rows, fixed])


def children_of(name: str) -> list[Any]:
    """The child agents of the chapter's demo run, in the order of the calls that started them."""
    children = getattr(run_demo(name).result, "children", None)
    if not children:
        raise SystemExit(f"{name} starts no child agents: this figure needs chapter 3 or later")
    return children


def own_work(child: Any) -> int:
    """Estimated tokens of a child's conversation after the prompt the parent wrote for it:
    everything it read and wrote, the same measure as `DelegationRunResult.highlights`."""
    return sum(estimate_message(message) for message in child.result.messages[1:])


def delegation(name: str, lang: str = "en") -> str:
    """At each of the parent's calls: its context, and about what it would have been had the
    parent done its children's work in its own conversation.

    The last column adds to the parent's context the conversations of the children that
    had reported by then, as `DelegationRunResult.highlights` does for the peak.  It is
    an approximation: the parent doing the work itself would not have written the
    prompts nor read the reports (which the column still counts), and might have read
    the code another way, more or less of it.
    """
    children = children_of(name)
    run = run_demo(name)
    headers = [
        "turn",
        "tool calls",
        "context (tokens in)",
        "children's work done by then (tokens)",
        "without delegation, about (tokens)",
    ]
    rows = []
    for index, (turn, request) in enumerate(zip(run.turns, requests(run), strict=True), start=1):
        answered = {
            block.get("tool_use_id")
            for message in request
            if isinstance(message["content"], list)
            for block in message["content"]
        }
        back = sum(own_work(child) for child in children if child.call_id in answered)
        context = turn.reply.usage.input_tokens
        row = [str(index), calls_in(turn.tools, lang), number(context)]
        rows.append([*row, number(back), number(context + back)])
    return stamp() + "\n" + table([word(h, lang) for h in headers], rows)


def children_table(name: str, lang: str = "en") -> str:
    """Each agent of the demo run: its own turns and tokens, what stayed in its context, and
    what of it reached the parent (the report, as the tool result of its task call).

    The tokens of the last row are the run's total, the figure the summary line shows:
    a child's tokens are paid like the parent's, delegation only moves them.
    """
    children = children_of(name)
    result = run_demo(name).result
    reports = {
        block["tool_use_id"]: estimate_block(block)
        for message in result.messages
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    }
    headers = ["agent", "type", "turns", "tool calls", "tokens in", "tokens out"]
    headers += ["kept in its own context (tokens)", "reached the parent (tokens)"]
    own = sum(result.turn_usage, Usage())
    parent = [word("the parent", lang), "—", str(result.turns), str(result.tool_calls)]
    rows = [[*parent, number(own.input_tokens), number(own.output_tokens), "—", "—"]]
    for child in children:
        usage = child.result.usage
        row = [child.description, f"`{child.agent_type}`", str(child.result.turns)]
        row += [str(child.result.tool_calls), number(usage.input_tokens)]
        row += [number(usage.output_tokens), number(own_work(child))]
        rows.append([*row, number(reports[child.call_id])])
    total = result.usage
    everyone = [word("all agents", lang), "", "", "", number(total.input_tokens)]
    rows.append([*everyone, number(total.output_tokens), "", ""])
    return stamp() + "\n" + table([word(h, lang) for h in headers], rows)


def demo_output_by_agent(name: str, lang: str = "en") -> str:
    """What `python -m NAME --demo` prints, each child's lines gathered under its task call.

    Children run at the same time, so in the terminal their lines interleave with each
    other's and the parent's, in an order that changes from run to run.  Gathered after
    the parent's `→ task` line for the child, the output reads the same every time.
    """
    descriptions = [child.description for child in children_of(name)]
    parent, lines_of = [], {description: [] for description in descriptions}
    for line in demo_stdout(name).split("\n"):
        whose = next((d for d in descriptions if line.startswith(f"    {d} │")), None)
        (lines_of[whose] if whose else parent).append(line)
    shown = []
    for line in parent:
        shown.append(line)
        started = next((d for d in descriptions if line == f"→ task  {d}"), None)
        if started:
            shown += lines_of.pop(started)
    if any(lines_of.values()):
        raise RuntimeError(f"no '→ task' line for the children {', '.join(lines_of)}")
    return stamp() + "\n```\n" + "\n".join(shown) + "\n```"


# A small conversation, enough to show each kind of block once.
EXAMPLE_SYSTEM = "You are a coding agent."
EXAMPLE_MESSAGES: list[Message] = [
    {"role": "user", "content": "How many lines does stats.py have?"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "I'll count them."},
            {
                "type": "tool_use",
                "id": "toolu_01",
                "name": "bash",
                "input": {"command": "wc -l stats.py"},
            },
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01",
                "content": "24 stats.py",
                "is_error": False,
            }
        ],
    },
]
EXAMPLE_CALL = {"name": "bash", "arguments": '{"command": "wc -l stats.py"}'}
EXAMPLE_TOOL = {
    "name": "bash",
    "description": "Run a shell command in the work directory.",
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
    },
}


def wire_shapes(part: str, lang: str = "en") -> str:
    """One request in the course's (Anthropic) shape, as `OpenAIModel` sends it, and a reply.

    `ours`: the messages, system prompt and tool schema as the loop holds them;
    `chat`: the same request in Chat Completions form; `reply`: a Chat Completions
    answer that asks for a tool, as the `Reply` the loop receives.
    """
    if part == "ours":
        shapes = [*EXAMPLE_MESSAGES, {"system": EXAMPLE_SYSTEM, "tools": [EXAMPLE_TOOL]}]
    elif part == "chat":
        chat = to_chat_messages(EXAMPLE_SYSTEM, EXAMPLE_MESSAGES)
        shapes = [*chat, {"tools": to_chat_tools([EXAMPLE_TOOL])}]
    elif part == "reply":
        call = {"id": "call_1", "type": "function", "function": EXAMPLE_CALL}
        answer = {"role": "assistant", "content": None, "tool_calls": [call]}
        choice = {"message": answer, "finish_reason": "tool_calls"}
        usage = {"prompt_tokens": 812, "completion_tokens": 41}
        reply = from_chat_message(
            answer["content"],
            [(call["id"], EXAMPLE_CALL["name"], EXAMPLE_CALL["arguments"])],
            choice["finish_reason"],
            Usage(usage["prompt_tokens"], usage["completion_tokens"]),
        )
        shapes = [{"choices": [choice], "usage": usage}, reply.to_dict()]
    else:
        raise SystemExit(f"wire-shapes takes ours, chat or reply, not '{part}'")
    lines = "\n".join(json.dumps(shape, ensure_ascii=False) for shape in shapes)
    return f"```json\n{lines}\n```"


@functools.cache
def lab_records(task: str, window: int | None) -> list[Record]:
    """Every chapter's scripted run of a lab task, checked, as `python -m lab compare` makes it.

    In the scratch folder, like the demo runs, so the runs' folder is always the first
    numbered one (lab-compare-1) whatever else the temporary folder holds.
    """
    with scratch_folder() as scratch:
        return offline_records(task, window, scratch)


def compare_table(task: str, window: str = "", lang: str = "en") -> str:
    """The table `python -m lab compare --task TASK [--window TOKENS]` prints offline, without
    its wall times, which differ on every run."""

    records = lab_records(task, int(window) if window else None)
    return stamp() + "\n" + task_table(records, wall=False, lang=lang)


# --- chapter 4: a session across three processes, its prompt, its skills, its memory ----


class SentWatcher(WatchedModel):
    """A WatchedModel that also keeps the messages and system prompt of every call: what
    the window sent."""

    def __init__(self, inner: Model) -> None:
        super().__init__(inner)
        self.sent: list[list[Message]] = []
        self.systems: list[str] = []

    def complete(
        self,
        system: str,
        messages: list[Message],
        tools: list[dict] | None = None,
        stop: list[str] | None = None,
        max_tokens: int = 4096,
    ) -> Reply:
        self.sent.append(list(messages))
        self.systems.append(system)
        return super().complete(system, messages, tools=tools, stop=stop, max_tokens=max_tokens)


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
    main = importlib.import_module(f"{name}.__main__")
    agent = importlib.import_module(f"{name}.agent")
    if not hasattr(main, "DEMO_STEPS"):
        raise SystemExit(f"{name} has no demo steps: this figure needs chapter 4")
    plan = [
        (demo.demo_cassette, False),
        *((main.DEMO / c, "--continue" in f) for c, f in main.DEMO_STEPS),
    ]
    steps = []
    with scratch_folder() as scratch:
        workdir = fresh_folder(f"{name}-demo-", scratch)
        copy_private(demo.demo_workspace, workdir)
        store = SessionStore(workdir / SESSIONS_DIR)
        for cassette, resumed in plan:
            header, _ = read_cassette(cassette)
            model = SentWatcher(ReplayModel(cassette))  # named as after_demo names it
            session = store.open(store.latest().id) if resumed else None
            try:
                result = demo.run(
                    header["task"], model=model, workdir=workdir, console=TurnConsole(model),
                    session=session,
                )  # fmt: skip
            finally:
                if session:
                    session.close()
            layers = agent.layers(workdir, result.recalled)
            note = agent.runtime_now(workdir, model.name)
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


def prompt_layers(name: str, lang: str = "en") -> str:
    """The system prompt's layers in each step of the demo, in estimated tokens, then the
    runtime note that ends each request (not in the system prompt, not in the total).

    The last row is how many tokens at the start of the step's prompt are the same as
    at the start of the step before's: what a provider's prefix cache could reuse.
    """
    steps = session_steps(name)
    headers = [word("layer", lang)]
    headers += [step_word(step, n, lang) for n, step in enumerate(steps, start=1)]
    rows = []
    for index, layer in enumerate(steps[0].layers):
        cells = [step.layers[index].tokens for step in steps]
        rows.append([f"{index + 1} · `{layer.name}`", *(number(c) if c else "—" for c in cells)])
    rows.append([word("total", lang), *(number(sum(x.tokens for x in s.layers)) for s in steps)])
    after = ("，" if lang == "zh" else ", ") + word("after the conversation", lang)
    rows.append([f"8 · `runtime`{after}", *(number(step.runtime.tokens) for step in steps)])
    prompts = [assemble(step.layers) for step in steps]
    shared = ["—"] + [number(shared_prefix_tokens(a, b)) for a, b in itertools.pairwise(prompts)]
    rows.append([word("same start as the step before", lang), *shared])
    return stamp() + "\n" + table(headers, rows)


def chat_text(system: str, messages: list[Message]) -> str:
    """A request as a chat template lays it out for a local model: the tool schemas
    first, then each Chat Completions message under its role.  What a prefix cache
    compares, near enough."""
    parts = [json.dumps(to_chat_tools(TOOLS), ensure_ascii=False)]
    for message in to_chat_messages(system, messages):
        calls = json.dumps(message.get("tool_calls", []), ensure_ascii=False)
        parts.append(f"<|{message['role']}|>\n{message.get('content') or ''}{calls}")
    return "\n".join(parts)


def clock_in_prompt(system: str, messages: list[Message], minute: int) -> str:
    """The same request laid out as it was before the runtime note left the system prompt:
    the runtime facts at the end of the system prompt, the clock `minute` minutes on."""
    *before, last = messages
    note = last["content"][-1]["text"]  # with_runtime put it there
    kept = [*before, {**last, "content": last["content"][:-1]}]
    facts = note.splitlines()[1:-1]  # without the <runtime> tags
    clock = re.sub(r"\d\d:\d\d", f"{9 + minute // 60:02}:{minute % 60:02}", facts[0], count=1)
    runtime = "\n".join(["# Runtime", "", clock, *facts[1:]])
    return chat_text(f"{system}\n\n{runtime}", kept)


def prefix_cache(name: str, lang: str = "en") -> str:
    """What a prefix cache can reuse in each step of chapter 4's demo, with the runtime facts
    at the end of the system prompt or in the note that ends the request.

    Each call's request is laid out as a chat template would (`chat_text`), and compared
    with the call before: the identical start (`shared_prefix_tokens`) is what a provider
    or a local server can take from its cache.  The clock moves on one minute per call,
    as on a local model on a laptop's CPU; with a fast hosted model most calls fall in
    the same minute and both rows come closer.  Compaction rewrites the history now and
    then, which no layout can keep cached.
    """
    steps = session_steps(name)
    headers = [word("step", lang), word("model calls", lang), word("tokens sent", lang)]
    headers += [word("cached: clock in the system prompt", lang)]
    headers += [word("cached: runtime note last", lang)]
    rows = []
    for number_, step in enumerate(steps, start=1):
        calls = list(zip(step.systems, step.sent, strict=True))
        new = [chat_text(system, sent) for system, sent in calls]
        old = [clock_in_prompt(system, sent, minute) for minute, (system, sent) in enumerate(calls)]
        sent_tokens = sum(estimate_text(text) for text in new)
        cells = []
        for texts in (old, new):
            reused = sum(shared_prefix_tokens(a, b) for a, b in itertools.pairwise(texts))
            cells.append(f"≈{number(reused)} ({round(100 * reused / sent_tokens)} %)")
        rows.append([step_word(step, number_, lang), str(len(calls)), f"≈{number(sent_tokens)}"])
        rows[-1] += cells
    return stamp() + "\n" + table(headers, rows)


def skill_costs(name: str, lang: str = "en") -> str:
    """What skills cost on every call: the index and `load_skill`, or every body in the prompt.

    Measured on the skills the demo's agent finds: the chapter's own and the demo
    workspace's, with the shared token estimate (`skills.listing_vs_loading`).
    """
    skills, _ = find_skills(chapter(name).demo_workspace)
    costs = listing_vs_loading(skills)
    headers = ["skill", "its line in the index (tokens)", "its instructions (tokens)"]
    rows = [[f"`{skill}`", number(line), number(body)] for skill, line, body in costs.per_skill]
    listed_ = word("listed: the index and `load_skill`, every call", lang)
    loaded = word("loaded: every skill's instructions, every call", lang)
    rows += [[listed_, number(costs.listing), ""], [loaded, "", number(costs.everything)]]
    return table([word(h, lang) for h in headers], rows)


def bm25_example(lang: str = "en") -> str:
    """The worked example of `python -m lab.bench_memory --example`, as tables: the memories
    and their terms, then for each query every term's share of every memory's score.

    A share is `bm25_term(idf, count, length, average)`; the totals are checked against
    what `MemoryStore.search` returns, so the tables are the store's own arithmetic.
    """
    import tempfile

    from lab.bench_memory import EXAMPLE_MEMORIES, EXAMPLE_QUERIES
    from v4_memory.memory import MemoryStore, bm25_term, idf, tokenize

    with tempfile.TemporaryDirectory() as root:
        store = MemoryStore(root, sync=False)
        ids = {store.add(text): name for name, text in EXAMPLE_MEMORIES.items()}
        index = store.index
        total = len(index.lengths)
        average = index.total_length / total
        rows = [
            [name, text, " ".join(f"`{t}`" for t in tokenize(text)), str(len(tokenize(text)))]
            for name, text in EXAMPLE_MEMORIES.items()
        ]
        rows.append([word("average length", lang), "", "", f"{average:.2f}"])
        parts = [table([word(h, lang) for h in ["memory", "text", "its terms", "length"]], rows)]
        for query in EXAMPLE_QUERIES:
            terms = list(dict.fromkeys(tokenize(query)))
            scores = dict.fromkeys(ids, 0.0)
            rows = []
            for term in terms:
                postings = index.postings.get(term, {})
                weight = idf(len(postings), total)
                row = [f"`{term}`", str(len(postings)), f"{weight:.3f}" if postings else "—"]
                for memory_id in ids:
                    if memory_id in postings:
                        share = bm25_term(
                            weight, postings[memory_id], index.lengths[memory_id], average
                        )
                        scores[memory_id] += share
                        row.append(f"{share:.3f}")
                    else:
                        row.append("—")
                rows.append(row)
            found = {hit.id: hit.score for hit in store.search(query, k=total)}
            if found != {i: s for i, s in scores.items() if s}:
                raise RuntimeError(f"the shares of {query!r} do not add up to the store's scores")
            rows.append(
                [
                    word("score", lang),
                    "",
                    "",
                    *(f"**{s:.3f}**" if s else "—" for s in scores.values()),
                ]
            )
            colon = "：" if lang == "zh" else ": "
            heading = f"{word('query', lang)}{colon}`{query}`"
            headers = [word("term", lang), "n", "idf", *ids.values()]
            parts.append(heading + "\n\n" + table(headers, rows))
    return "\n\n".join(parts)


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
    return masked(_render("demo-output", (name,), lang))


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


FIGURES: dict[str, Callable[..., str]] = {
    "demo-turns": demo_turns,
    "demo-summary": demo_summary,
    "demo-output": demo_output,
    "code-size": code_size,
    "request-sizes": request_sizes,
    "wire-shapes": wire_shapes,
    "output-limit": output_limit,
    "plan-distance": plan_distance,
    "plan-history": plan_history,
    "context-growth": context_growth,
    "delegation": delegation,
    "children": children_table,
    "demo-output-by-agent": demo_output_by_agent,
    "compare-table": compare_table,
    "context-stages": context_stages,
    "prompt-layers": prompt_layers,
    "prefix-cache": prefix_cache,
    "skill-costs": skill_costs,
    "bm25-example": bm25_example,
    "demo-output-masked": demo_output_masked,
    "session-file": session_file,
}


def render(spec: str, lang: str = "en") -> str:
    """The Markdown a figure spec such as `demo-turns v1_tool_loop` prints now."""
    name, *args = spec.split()
    if name not in FIGURES:
        raise SystemExit(f"no figure '{name}'; the figures are {', '.join(FIGURES)}")
    return _render(name, tuple(args), lang)


@functools.cache
def _render(name: str, args: tuple[str, ...], lang: str) -> str:
    return FIGURES[name](*args, lang=lang)


# --- the marked blocks in docs/ ---------------------------------------------------------


@dataclass
class Block:
    """One marked block of one doc: where it is, which figure, what it holds now."""

    doc: Path
    line: int
    spec: str
    current: str

    @property
    def lang(self) -> str:
        return language_of(self.doc)

    def expected(self) -> str:
        return "\n" + render(self.spec, self.lang) + "\n\n"

    def comparable(self) -> bool:
        """False when the block was printed by another Python version than this one."""
        found = STAMP.search(self.current)
        return not found or found.group(1) == "{}.{}".format(*sys.version_info[:2])


def language_of(doc: Path) -> str:
    return "zh" if "zh" in doc.resolve().relative_to(REPO).parts else "en"


def blocks(doc: Path) -> list[Block]:
    text = doc.read_text(encoding="utf-8")
    return [
        Block(doc, text.count("\n", 0, match.start()) + 1, match.group(2).strip(), match.group(3))
        for match in BLOCK.finditer(text)
    ]


def all_blocks(root: Path = DOCS) -> list[Block]:
    return [block for doc in sorted(root.rglob("*.md")) for block in blocks(doc)]


def updated(text: str, lang: str) -> str:
    """The doc's text with every marked block replaced by what its figure prints now."""

    def replace(match: re.Match[str]) -> str:
        body = "\n" + render(match.group(2).strip(), lang) + "\n\n"
        return match.group(1) + body + match.group(4)

    return BLOCK.sub(replace, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lab.figures", description=__doc__.split("\n")[0]
    )
    parser.add_argument("figure", nargs="*", help=f"one of {', '.join(FIGURES)}, and its arguments")
    parser.add_argument("--lang", choices=["en", "zh"], default="en", help="language of headers")
    parser.add_argument("--update", action="store_true", help="rewrite every marked block in docs/")
    parser.add_argument("--check", action="store_true", help="report blocks that are out of date")
    args = parser.parse_args(argv)
    if args.update:
        for doc in sorted(DOCS.rglob("*.md")):
            text = doc.read_text(encoding="utf-8")
            new = updated(text, language_of(doc))
            if new != text:
                doc.write_text(new, encoding="utf-8", newline="\n")  # LF, as .gitattributes says
                print(f"updated {doc.relative_to(REPO)}")
        return 0
    if args.check:
        stale = 0
        for block in all_blocks():
            where = f"{block.doc.relative_to(REPO)}:{block.line} ({block.spec})"
            if not block.comparable():
                print(f"not checked: {where} was printed with another Python version")
            elif block.current != block.expected():
                stale += 1
                print(f"stale: {where}")
        if stale:
            print(f"{stale} stale figure(s): run python -m lab.figures --update")
        return 1 if stale else 0
    if not args.figure:
        parser.error("name a figure, or give --update or --check")
    print(render(" ".join(args.figure), args.lang))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
