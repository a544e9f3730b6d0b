"""From a run's messages to its turns: what the model wrote, the tools it called, and what
the chapter's own idea did at each turn; and a run as a column of the page.

The messages are the conversation each chapter kept, in its own protocol (chapter 0's
ReAct text, the tool blocks from chapter 1 on); `details` adds what a chapter recorded
beside them (a plan, a reminder, a child agent, a compaction, recalled memories).  Reading
them into plain `Turn`s here leaves the HTML modules nothing to parse.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from v0_react_text.agent import INVENTED_NOTE
from v0_react_text.parser import FinalAnswer, FormatError, parse

from ..compare.record import Record
from ..plots import COLOURS
from ..tasks import TaskError, load_task
from .records import typed

PLAN_MARKS = {"completed": "✓", "in_progress": "▶", "pending": "○"}


@dataclass
class Call:
    """One tool call, its result, and (chapter 3) the child agent it started."""

    name: str
    arguments: str  # as JSON
    result: str | None  # None: the run ended before the tool answered
    is_error: bool = False
    child: dict[str, Any] | None = None


@dataclass
class Event:
    """What a chapter's own idea did at a turn: `kind` is its label and its CSS class."""

    kind: str
    text: str = ""
    items: list[str] = field(default_factory=list)
    figures: tuple[Any, ...] = ()  # a compaction's stage, tokens before and after


@dataclass
class Turn:
    """One model call and what the loop did with its reply."""

    number: int
    context: int | None  # tokens the model read at this call
    text: str = ""
    answer: str = ""
    calls: list[Call] = field(default_factory=list)
    before: list[Event] = field(default_factory=list)  # a compaction, recalled memories
    after: list[Event] = field(default_factory=list)  # a format error, a plan, a reminder

    @property
    def signature(self) -> tuple[str, ...]:
        """What "the same" means for the differences switch: the same tools in the same order
        (a reply that could not be read counts as its own kind of step)."""
        if any(event.kind == "format_error" for event in self.after):
            return ("format_error",)
        return tuple(call.name for call in self.calls)


def turns_of(
    messages: list[dict[str, Any]], context: list[int], details: dict[str, Any], done: bool
) -> list[Turn]:
    """A run's turns, read from its messages; `details` adds what the chapter recorded."""
    children = {
        child["call_id"]: child
        for child in listed(details, "children")
        if isinstance(child.get("call_id"), str)  # an id is text; anything else matches nothing
    }
    turns: list[Turn] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        if turns and closing_note(messages, index, len(turns), len(context)):
            turns[-1].after.append(Event("stopped", message["content"].strip("[]")))
            continue
        answered_by = messages[index + 1] if index + 1 < len(messages) else {}
        tokens = context[len(turns)] if len(turns) < len(context) else None
        turn = Turn(len(turns) + 1, tokens if isinstance(tokens, int) else None)
        content = message.get("content")
        if isinstance(content, str):
            read_text_protocol(turn, content, answered_by)
        else:
            read_blocks(turn, blocks(message), answered_by, children)
        turns.append(turn)
    if done and turns and not turns[-1].calls and not turns[-1].answer:
        turns[-1].answer, turns[-1].text = turns[-1].text, ""
    add_chapter_events(turns, details)
    return turns


def closing_note(messages: list[dict[str, Any]], index: int, turns: int, calls: int) -> bool:
    """Whether messages[index] is the note a loop ends on when a run is cut short
    (`close_open_turn`: "[stopped after 30 turns]"): the last message, no model's reply,
    since every model call has been counted already."""
    content = messages[index].get("content")
    last = index == len(messages) - 1 and isinstance(content, str)
    return last and turns >= calls and content.startswith("[") and content.endswith("]")


def read_text_protocol(turn: Turn, text: str, answered_by: dict[str, Any]) -> None:
    """Chapter 0: the reply is text in the ReAct format, the result an `Observation:` text."""
    reply = answered_by.get("content") if isinstance(answered_by, dict) else None
    observation = reply.removeprefix("Observation: ") if isinstance(reply, str) else None
    if observation and INVENTED_NOTE in observation:
        observation = observation.replace(INVENTED_NOTE, "").rstrip()
        turn.after.append(Event("invented"))
    if observation and observation.startswith("Format error: "):
        turn.text = text  # as the model wrote it: what the parser could not read
        why = observation.split("\n\n")[0].removeprefix("Format error: ")
        turn.after.append(Event("format_error", why.removesuffix(" Reply in this format:")))
        return
    try:
        step = parse(text)
    except FormatError:
        turn.text = text
        return
    turn.text = step.thought
    if isinstance(step, FinalAnswer):
        turn.answer = step.answer
        return
    is_error = observation is not None and observation.startswith("Error: ")
    result = observation.removeprefix("Error: ") if observation is not None else None
    turn.calls.append(Call(step.tool, arguments_text(step.args), result, is_error))


def read_blocks(
    turn: Turn,
    reply: list[dict[str, Any]],
    answered_by: dict[str, Any],
    children: dict[Any, dict[str, Any]],
) -> None:
    """Chapter 1 on: text and tool_use blocks, answered by tool_result blocks."""
    results = {}
    for block in blocks(answered_by):
        if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
            results[block["tool_use_id"]] = block
        elif block.get("type") == "text":  # a reminder, or another note the loop added
            turn.after.append(Event("note", str(block.get("text", ""))))
    texts = []
    for block in reply:
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            call_id = block.get("id")
            result = results.get(call_id) if isinstance(call_id, str) else None
            turn.calls.append(
                Call(
                    name=str(block.get("name", "")),
                    arguments=arguments_text(block.get("input")),
                    result=None if result is None else result_text(result.get("content")),
                    is_error=bool(result and result.get("is_error")),
                    child=children.get(call_id) if isinstance(call_id, str) else None,
                )
            )
    turn.text = "\n\n".join(texts)


def add_chapter_events(turns: list[Turn], details: dict[str, Any]) -> None:
    """The plan (chapter 2 on), reminders, compactions and recalled memories (chapter 4)."""
    reminded = {turn for turn in typed(details, "reminders", list) if isinstance(turn, int)}
    for turn in turns:
        for event in turn.after:
            if event.kind == "note" and turn.number in reminded:
                event.kind = "reminder"
    for entry in listed(details, "plan_history"):
        items = [plan_line(item) for item in typed(entry, "items", list) if isinstance(item, dict)]
        place(turns, entry, Event("plan", items=items), before=False)
    for entry in listed(details, "compactions"):
        figures = tuple(entry.get(key) for key in ("stage", "tokens_before", "tokens_after"))
        place(turns, entry, Event("compaction", str(entry.get("detail") or ""), figures=figures))
    for entry in listed(details, "recalled"):
        hits = [hit.get("text", "") if isinstance(hit, dict) else hit for hit in entry["hits"]]
        place(turns, entry, Event("recalled", items=[str(hit) for hit in hits]))


def place(turns: list[Turn], entry: dict[str, Any], event: Event, before: bool = True) -> None:
    """Put an event at its turn; one dated before the first turn or after the last goes to
    the nearest turn there is, so that nothing recorded is left off the page."""
    if not turns:
        return
    number = min(max(entry["turn"], 1), len(turns) + 1)
    if number > len(turns):
        turns[-1].after.append(event)
    else:
        (turns[number - 1].before if before else turns[number - 1].after).append(event)


def listed(details: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The entries of one kind of detail that the page can place; absent means none."""
    entries = [entry for entry in typed(details, key, list) if isinstance(entry, dict)]
    if key == "children":
        return entries
    entries = [entry for entry in entries if isinstance(entry.get("turn"), int)]
    return [entry for entry in entries if key != "recalled" or typed(entry, "hits", list)]


def plan_line(item: dict[str, Any]) -> str:
    return f"{PLAN_MARKS.get(str(item.get('status')), '·')} {item.get('content', '')}"


def blocks(message: Any) -> list[dict[str, Any]]:
    return [block for block in typed(message, "content", list) if isinstance(block, dict)]


def arguments_text(arguments: Any) -> str:
    return json.dumps(arguments, ensure_ascii=False)


def result_text(content: Any) -> str:
    """A tool_result's content: a string, or (as the APIs allow) a list of text blocks."""
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "" if content is None else str(content)


# --- a run as a column of the page ----------------------------------------------------------


@dataclass
class Column:
    """One run of one chapter on a task: a column of the page."""

    record: Record
    label: str
    colour: str
    turns: list[Turn]
    key: int = 0  # its number on the page, for the choice of columns shown side by side
    shown: bool = True  # side by side when the page opens


def columns_of(
    records: list[Record], words: dict[str, str], sources: list[str] | None
) -> list[Column]:
    """A column per run, labelled by chapter, by run when a chapter has several, and by
    records file when several were merged."""
    labels = [chapter_label(record, words, records, sources, n) for n, record in enumerate(records)]
    featured = featured_pair(records)
    columns = []
    for key, (record, label) in enumerate(zip(records, labels, strict=True)):
        number = chapter_number(record.chapter)
        colour = COLOURS[(number or 0) % len(COLOURS)]
        done = record.stop == "done"
        turns = turns_of(record.messages, record.context_per_turn, record.details, done)
        shown = record.chapter in featured if featured else True
        columns.append(Column(record, label, colour, turns, key, shown))
    if not any(column.shown for column in columns):
        for column in columns[:2]:
            column.shown = True
    return columns


def chapter_label(
    record: Record, words: dict[str, str], records: list[Record], sources: list[str] | None, n: int
) -> str:
    number = chapter_number(record.chapter)
    label = f"{number} · {record.chapter}" if number is not None else record.chapter
    if sources and len(set(sources)) > 1:
        label += f" · {sources[n]}"
    runs = [(r.chapter, sources[i] if sources else "") for i, r in enumerate(records)]
    if runs.count((record.chapter, sources[n] if sources else "")) > 1:
        label += " · " + words["run"].format(record.run)
    return label


def featured_pair(records: list[Record]) -> set[str]:
    """The chapters side by side when the page opens: the one the task brings out, and the
    one before it (chapter 4's task: chapters 3 and 4), when the records have them."""
    try:
        chapter = load_task(records[0].task).brings_out
    except (TaskError, IndexError):
        return set()
    number = chapter_number(chapter)
    before = [r.chapter for r in records if number and chapter_number(r.chapter) == number - 1]
    present = {r.chapter for r in records}
    return {chapter, *before[:1]} if chapter in present else set()


def chapter_number(chapter: str) -> int | None:
    match = re.match(r"v(\d+)", chapter)
    return int(match.group(1)) if match else None
