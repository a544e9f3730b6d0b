"""Chapter 3's figures: the children of the demo, and the context they spare the parent."""

from __future__ import annotations

from typing import Any

from lab.words import word
from llm import Usage
from llm.result import tool_uses
from llm.tokens import estimate_block, estimate_message

from .demos import demo_stdout, lab_records, requests, run_demo
from .markdown import calls_in, number, stamp, table


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
