"""The run viewer: a comparison's records as one HTML page, the chapters side by side.

    python -m lab compare --html report.html            run the comparison, write the page
    python -m lab view records.json -o report.html      the page of records saved with --json
    python -m lab view records.json --lang zh           the same, labelled in Chinese
    python -m lab view ana.json bo.json -o class.html   a class's records on one page

A terminal shows one run after the other; a class wants turn 4 of chapter 3 next to
turn 4 of chapter 2.  For each task the page has a chart of the context at every
turn (the picture that tells the story, so it comes first), the comparison's tables,
then one column per run and one row per turn: what was sent (folded), what the model
wrote, each tool call with its result folded, and what the chapter's own idea did at
that turn (a format error, a plan, a child agent, a compaction).  Two runs stand side
by side when the page opens, the task's own chapter and the one before it; a tick
brings in any other.

The page is one file that fetches nothing: it opens from disk, travels by e-mail,
and reads without JavaScript (the script only adds the keys and the "differences"
switch).  Everything a run wrote is escaped and every long text is cut, so a tool's
output can neither break the page nor make it heavy.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import html
import json
import re
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any, get_origin, get_type_hints

from llm.console import content_text
from llm.tokens import estimate_message, estimate_request, estimate_text, estimate_tool
from llm.types import RUNTIME_TAG
from v0_react_text.agent import INVENTED_NOTE
from v0_react_text.parser import FinalAnswer, FormatError, parse
from v4_memory.context import default_budget
from v4_memory.prompt import TITLES

from . import report
from .plots import COLOURS
from .runs import Record
from .tasks import TaskError, load_task
from .words import LANGS, word

LIMIT = 4_000  # characters shown of one text (a tool's result, the model's reply)
GLIMPSE = 100  # characters of a call's arguments shown on its folded line
GLANCE = 110  # characters of a message shown on its line in a "what was sent" fold
PLAN_MARKS = {"completed": "✓", "in_progress": "▶", "pending": "○"}

# What the page says, by what it says it about; `word` gives the Chinese (lab/words.py).
TEXTS = {
    "title": "Runs side by side",
    "created": "written",
    "replies": "replies",
    "window": "context window: {:,} tokens",
    "colon": ": ",
    "semicolon": "; ",
    "interrupted": "interrupted: only the runs that finished",
    "contents": "Tasks",
    "task": "Task",
    "brings out": "(brings out chapter {})",
    "turn": "turn",
    "chart": "Context at each turn (tokens)",
    "point": "{}, turn {}: {} tokens",
    "differences": "Show only the differences",
    "differences note": "hides the turns where every run called the same tools in the same "
    "order (key d)",
    "keys": "↑ ↓ turn by turn in every column · d: only the differences · o: open the row's "
    "tool calls",
    "not solved": "not solved",
    "error": "error",
    "arguments": "arguments",
    "no result": "no result: the run ended here",
    "answer": "answer",
    "format_error": "format error",
    "invented": "invented observation, discarded",
    "plan": "plan updated",
    "reminder": "reminder",
    "note": "added to the results",
    "compaction": "compaction",
    "stopped": "the loop stopped",
    "stage": "stage {}: {} → {} tokens",
    "recalled": "recalled memories",
    "child": "child agent",
    "child of type": "child agent ({})",
    "child line": "{} · {} turns · {} tool calls · {} tokens in",
    "ended": "ended",
    "cut": "… {:,} more characters not shown",
    "scripted": "scripted cassette",
    "recorded": "recorded run",
    "live": "live run",
    "run": "run {}",
    "no runs": "No run finished: there is nothing to show.",
    "pick": "Side by side:",
    "pick note": "tick the runs to compare; the task's own chapter and the one before it "
    "come first",
    "window line": "context window",
    "budget line": "chapter 4's budget",
    "compacted": "compaction before turn {}",
    "sent": "what was sent: {} messages, {} tokens",
    "sent one": "what was sent: {} message, {} tokens",
    "sent new": "{} new",
    "sent rewritten": "rewritten since the turn before",
    "system prompt": "system prompt",
    "layer": "layer",
    "tokens": "tokens",
    "same as turn": "the same as at turn {}",
    "tools offered": "tools offered",
    "messages": "messages",
    "new": "new",
    "files": "records",
    "could not finish": "could not finish",
    "rate limited": "rate limited",
    "provider error": "provider error",
    "window full": "window full",
    "model error": "model error",
}
LABELS = {lang: {key: word(text, lang) for key, text in TEXTS.items()} for lang in LANGS}


class ViewError(Exception):
    """Records the viewer cannot read, or a page it cannot write: one line, exit code 2."""


# --- from records to turns ------------------------------------------------------------------


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
    children = {child.get("call_id"): child for child in listed(details, "children")}
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
        if block.get("type") == "tool_result":
            results[block.get("tool_use_id")] = block
        elif block.get("type") == "text":  # a reminder, or another note the loop added
            turn.after.append(Event("note", str(block.get("text", ""))))
    texts = []
    for block in reply:
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            result = results.get(block.get("id"))
            turn.calls.append(
                Call(
                    name=str(block.get("name", "")),
                    arguments=arguments_text(block.get("input")),
                    result=None if result is None else result_text(result.get("content")),
                    is_error=bool(result and result.get("is_error")),
                    child=children.get(block.get("id")),
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


def typed(mapping: Any, key: str, kind: type) -> Any:
    """mapping[key] if it is of the kind expected, else an empty one: a field a chapter
    does not record, or records otherwise, leaves a part of the page out, no more."""
    value = mapping.get(key) if isinstance(mapping, dict) else None
    return value if isinstance(value, kind) else kind()


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


# --- reading a records file -----------------------------------------------------------------


def load_document(path: Path) -> dict[str, Any]:
    """The records `python -m lab compare --json FILE` wrote, or a one-line ViewError."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ViewError(f"cannot read {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise ViewError(f"{path} is not UTF-8 text") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ViewError(f"{path} is not JSON ({error.msg}, line {error.lineno})") from None
    except RecursionError:  # valid JSON nested deeper than Python's stack
        raise ViewError(f"{path} is JSON nested too deeply to read") from None
    if not isinstance(document, dict) or document.get("format") != report.FORMAT:
        raise ViewError(
            f"{path} is not a {report.FORMAT} file: write one with python -m lab compare --json"
        )
    return document


def records_of(document: dict[str, Any]) -> list[Record]:
    """The records of a document, each field checked; fields this version does not know are
    left out, as the format asks of a reader."""
    entries = document.get("records")
    if not isinstance(entries, list):
        raise ViewError("the file has no list of records")
    return [record_of(number, entry) for number, entry in enumerate(entries, 1)]


def record_of(number: int, entry: Any) -> Record:
    if not isinstance(entry, dict):
        raise ViewError(f"record {number} is not an object")
    values = {}
    for name, kind in RECORD_FIELDS.items():
        if name not in entry and name not in OPTIONAL:
            raise ViewError(f"record {number} has no field {name!r}")
        value = entry.get(name, {})
        if not isinstance(value, kind):
            raise ViewError(f"record {number}: {name!r} is not {kind_name(kind)}")
        if problem := content_problem(name, value):
            raise ViewError(f"record {number}: {name!r} {problem}")
        values[name] = value
    return Record(**values)


def content_problem(name: str, value: Any) -> str | None:
    """What is wrong inside a field of the right type (an empty name, counts given as text):
    a record file is read from anywhere, and the page must refuse it, not trace back."""
    if name in ("chapter", "task") and not value.strip():
        return "is empty"
    if name == "counts" and not all(_whole(count) for count in value.values()):
        return "must map each name to a whole number"
    if name == "context_per_turn" and not all(_whole(tokens) for tokens in value):
        return "must be a list of whole numbers"
    if name == "messages" and not all(isinstance(message, dict) for message in value):
        return "must be a list of message objects"
    return None


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def expected_kind(hint: Any) -> type | tuple[type, ...]:
    """What isinstance can check of a field's type hint: `list[int]` as list, float as a number."""
    kind = get_origin(hint) or hint
    return (int, float) if kind is float else kind


RECORD_FIELDS = {name: expected_kind(hint) for name, hint in get_type_hints(Record).items()}
OPTIONAL = ("details", "requests")  # a record may leave these out: a page without those parts


def kind_name(kind: type | tuple[type, ...]) -> str:
    return "a number" if isinstance(kind, tuple) else f"a {kind.__name__}"


# --- from turns to HTML ----------------------------------------------------------------------


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
    records: list[Record], words: dict[str, str], sources: list[str] | None = None
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


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def shown(text: str, words: dict[str, str], limit: int = LIMIT) -> str:
    """Escaped, and cut after `limit` characters with a note saying how much is left out."""
    if len(text) <= limit:
        return esc(text)
    note = words["cut"].format(len(text) - limit)
    return f'{esc(text[:limit])}<span class="cut">{esc(note)}</span>'


def tokens(value: int, estimated: bool) -> str:
    return ("≈" if estimated else "") + f"{value:,}"


def render_page(document: dict[str, Any], lang: str = "en") -> str:
    """The whole page, as text: one section per task, in the order of the records."""
    words = LABELS[lang]
    records = records_of(document)
    sources = sources_of(document, len(records))
    names = list(dict.fromkeys(record.task for record in records))
    window = document.get("window") if isinstance(document.get("window"), int) else None
    sections = []
    for name in names:
        picked = [n for n, record in enumerate(records) if record.task == name]
        runs = [records[n] for n in picked]
        labels = [sources[n] for n in picked] if sources else None
        sections.append(task_section(name, runs, words, lang, window, labels))
    body = header(document, records, words) + contents(names, words) + "".join(sections)
    if not records:  # a comparison stopped before its first run finished
        body += f'<p class="empty">{esc(words["no runs"])}</p>'
    title = words["title"] + words["colon"] + ", ".join(names)
    return TEMPLATE.substitute(lang=lang, title=esc(title), body=body, script_hash=SCRIPT_HASH)


def sources_of(document: dict[str, Any], count: int) -> list[str] | None:
    """The label of the records file each record came from, when several were merged."""
    labels = document.get("sources")
    if not isinstance(labels, list) or not labels:
        return None
    found = []
    for entry in typed(document, "records", list)[:count]:
        index = entry.get("source") if isinstance(entry, dict) else None
        ok = isinstance(index, int) and 0 <= index < len(labels)
        found.append(str(typed(labels[index], "label", str)) if ok else "")
    return found


def merge(documents: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Several records files (a class's, one per student) as one document: every record
    keeps the label of its file in `source`, and the header lists each file."""
    if len(documents) == 1:
        return documents[0][1]
    records = []
    sources = []
    for index, (label, document) in enumerate(documents):
        entries = document.get("records")
        if not isinstance(entries, list):
            raise ViewError(f"{label} has no list of records")
        records += [{**e, "source": index} if isinstance(e, dict) else e for e in entries]
        sources.append(
            {
                "label": label,
                "created_at": document.get("created_at"),
                "model": document.get("model"),
                "window": document.get("window"),
                "interrupted": document.get("interrupted"),
            }
        )
    windows = {source["window"] for source in sources}
    return {
        "format": report.FORMAT,
        "created_at": max(str(source["created_at"] or "") for source in sources),
        "model": None,
        "window": windows.pop() if len(windows) == 1 else None,
        "interrupted": any(source["interrupted"] for source in sources),
        "sources": sources,
        "records": records,
    }


def header(document: dict[str, Any], records: list[Record], words: dict[str, str]) -> str:
    sources = dict.fromkeys(words.get(r.provenance, r.provenance) for r in records)
    facts = [f"{words['created']} {esc(document.get('created_at', ''))}"]
    facts.append(esc(words["replies"] + words["colon"] + ", ".join(sources)))
    if document.get("model"):
        facts[-1] += f" · <code>{esc(document['model'])}</code>"
    if isinstance(document.get("window"), int):
        facts.append(esc(words["window"].format(document["window"])))
    if document.get("interrupted"):
        facts.append(esc(words["interrupted"]))
    files = [source for source in typed(document, "sources", list) if isinstance(source, dict)]
    if files:
        listed_files = ", ".join(
            f"{source.get('label', '')} ({source.get('model') or '—'})" for source in files
        )
        facts.append(esc(words["files"] + words["colon"] + listed_files))
    return (
        f'<header><h1>{esc(words["title"])}</h1><p class="facts">{" · ".join(facts)}</p>'
        f'<p class="controls" id="controls" hidden><button type="button" id="differences" '
        f'aria-pressed="false" title="{esc(words["differences note"])}">'
        f'{esc(words["differences"])}</button> <span class="keys">{esc(words["keys"])}</span>'
        "</p></header>"
    )


def contents(names: list[str], words: dict[str, str]) -> str:
    if len(names) < 2:
        return ""
    items = "".join(
        f'<li><a href="#{anchor(name)}">{esc(name)}</a> {esc(task_title(name))}</li>'
        for name in names
    )
    return f'<nav class="contents"><h2>{esc(words["contents"])}</h2><ol>{items}</ol></nav>'


def anchor(task: str) -> str:
    return "task-" + re.sub(r"[^A-Za-z0-9_-]", "-", task)


def task_section(
    name: str,
    records: list[Record],
    words: dict[str, str],
    lang: str,
    window: int | None = None,
    sources: list[str] | None = None,
) -> str:
    """A task: its prompt, the chart that tells its story, the choice of runs side by side,
    the tables, and the runs turn by turn."""
    columns = columns_of(records, words, sources)
    peak = max((t.context or 0 for c in columns for t in c.turns), default=0) or 1
    parts = [
        task_heading(name, words),
        task_prompt(records, words),
        context_chart(columns, peak, words, window),
        summary_table(records, lang),
        not_solved(records, words, sources),
        picker(name, columns, words),
        runs_table(name, columns, peak, words),
    ]
    return f'<section class="task" id="{anchor(name)}">{"".join(parts)}</section>'


def unfinished(record: Record, words: dict[str, str]) -> str:
    """What stopped a run before it could finish, in the page's language."""
    return words["could not finish"] + words["colon"] + words.get(record.outcome, record.outcome)


def picker(name: str, columns: list[Column], words: dict[str, str]) -> str:
    """The runs that stand side by side: a box per run; the script applies the choice, and
    without it every run is shown."""
    if len(columns) < 2:
        return ""
    boxes = "".join(
        f'<label style="--c:{column.colour}"><input type="checkbox" data-column="{column.key}"'
        f"{' checked' if column.shown else ''}> {esc(column.label)}</label>"
        for column in columns
    )
    return (
        f'<fieldset class="picker" hidden title="{esc(words["pick note"])}">'
        f"<legend>{esc(words['pick'])}</legend>{boxes}</fieldset>"
    )


def task_heading(name: str, words: dict[str, str]) -> str:
    try:
        task = load_task(name)
    except TaskError:  # records of a task this checkout does not have
        return f"<h2>{esc(name)}</h2>"
    number = chapter_number(task.brings_out)
    brings_out = words["brings out"].format(number if number is not None else task.brings_out)
    return f"<h2>{esc(name)}: {esc(task.title)} <small>{esc(brings_out)}</small></h2>"


def task_title(name: str) -> str:
    try:
        return load_task(name).title
    except TaskError:
        return ""


def task_prompt(records: list[Record], words: dict[str, str]) -> str:
    first = records[0].messages[0] if records[0].messages else {}
    prompt = first.get("content") if isinstance(first, dict) else None
    if not isinstance(prompt, str):
        return ""
    label = esc(words["task"] + words["colon"])
    return f'<p class="prompt"><strong>{label}</strong>{shown(prompt, words)}</p>'


def summary_table(records: list[Record], lang: str) -> str:
    """The terminal's two tables, from the same cells: the shared columns, then each
    chapter's own counts, side by side within the page's width."""
    tables = []
    for kind, (headers, rows) in [
        ("summary", report.table_cells(records, wall=True, lang=lang)),
        ("counts", report.counts_cells(records, lang)),
    ]:
        if not rows:
            continue
        head = "".join(f"<th>{esc(cell)}</th>" for cell in headers)
        body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows)
        tables.append(
            f'<table class="{kind}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        )
    return f'<div class="tables">{"".join(tables)}</div>'


def not_solved(
    records: list[Record], words: dict[str, str], sources: list[str] | None = None
) -> str:
    lines = []
    runs = [(r.chapter, sources[n] if sources else "") for n, r in enumerate(records)]
    several = len(set(runs)) < len(runs)
    for n, record in enumerate(records):
        if record.solved:
            continue
        colon = words["colon"]
        which = record.chapter + (" · " + words["run"].format(record.run) if several else "")
        which += f" · {sources[n]}" if sources and len(set(sources)) > 1 else ""
        if record.finished:
            line = esc(which + colon + words["not solved"] + colon)
            line += f"<code>{esc(record.verdict)}</code>"
        else:
            line = esc(which + colon + unfinished(record, words))
        if record.error:
            line += esc(words["semicolon"] + words["error"] + colon)
            line += f"<code>{esc(record.error)}</code>"
        lines.append(f"<li>{line}</li>")
    return f'<ul class="verdicts">{"".join(lines)}</ul>' if lines else ""


def context_chart(
    columns: list[Column], peak: int, words: dict[str, str], window: int | None = None
) -> str:
    """Context per turn, one line per run, on the scale the bars of the columns share; the
    window (`--window`) and chapter 4's budget drawn across, its compactions marked."""
    width, height, left, right, top, bottom = 960, 240, 80, 20, 16, 48
    turns = max((len(c.turns) for c in columns), default=1)
    budgets = {budget_of(c.record) for c in columns if c.record.chapter.startswith("v4")}
    limits = [(window, "window", words["window line"])] if window else []
    # The budget is drawn where the runs come near it; on a short task it would only
    # flatten every line at the bottom of the chart.
    limits += [
        (budget, "budget", words["budget line"])
        for budget in sorted(b for b in budgets if b)
        if peak >= budget / 2
    ]
    scale = nice_ceiling(max([peak, *(value for value, _, _ in limits)]))

    def x(turn: int) -> float:
        return left + (turn - 1) * (width - left - right) / max(turns - 1, 1)

    def y(value: int) -> float:
        return top + (1 - value / scale) * (height - top - bottom)

    steps = 4 if str(scale).rstrip("0") == "2" else 5  # gridlines at round values: 500, not 400
    grid = []
    for step in range(steps + 1):
        value = scale * step // steps
        grid.append(
            f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y(value):.1f}" '
            f'y2="{y(value):.1f}"/><text x="{left - 8}" y="{y(value) + 5:.1f}" '
            f'text-anchor="end">{value:,}</text>'
        )
    every = max(1, -(-turns // 20))  # at most about twenty labels along the turns
    for turn in range(1, turns + 1, every):
        grid.append(
            f'<text x="{x(turn):.1f}" y="{height - bottom + 22}" text-anchor="middle">{turn}</text>'
        )
    grid.append(
        f'<text x="{(left + width - right) / 2}" y="{height - 6}" text-anchor="middle">'
        f"{esc(words['turn'])}</text>"
    )
    for value, kind, label in limits:
        grid.append(
            f'<line class="limit {kind}" x1="{left}" x2="{width - right}" y1="{y(value):.1f}" '
            f'y2="{y(value):.1f}"/><text class="limit" x="{width - right - 4}" '
            f'y="{y(value) - 6:.1f}" text-anchor="end">{esc(label)} {value:,}</text>'
        )
    lines = [chart_line(column, x, y, words) for column in columns]
    legend = "".join(
        f'<li><span class="swatch" style="background:{c.colour}"></span>{esc(c.label)}</li>'
        for c in columns
    )
    return (
        f'<figure class="chart"><figcaption>{esc(words["chart"])}'
        f'</figcaption><svg viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{esc(words["chart"])}">{"".join(grid)}{"".join(lines)}</svg>'
        f'<ul class="legend">{legend}</ul></figure>'
    )


def budget_of(record: Record) -> int | None:
    """The budget chapter 4 kept its requests in: from the model it talked to, as the
    chapter works it out (a replay's fixed budget, or the live model's window)."""
    replayed = record.provenance in ("scripted", "recorded")
    try:
        return default_budget("replay:" if replayed else record.model)
    except (TypeError, ValueError):
        return None


def chart_line(column: Column, x: Any, y: Any, words: dict[str, str]) -> str:
    points = [(t.number, t.context) for t in column.turns if t.context is not None]
    if not points:
        return ""
    path = " ".join(f"{x(n):.1f},{y(v):.1f}" for n, v in points)
    estimated = column.record.estimated
    dots = "".join(
        f'<circle cx="{x(n):.1f}" cy="{y(v):.1f}" r="4"><title>'
        f"{esc(words['point'].format(column.label, n, tokens(v, estimated)))}</title></circle>"
        for n, v in points
    )
    at = dict(points)
    marks = "".join(
        f'<path class="compaction" d="M{x(n):.1f},{y(at[n]) - 14:.1f} l-7,-12 h14 z">'
        f"<title>{esc(column.label + ': ' + words['compacted'].format(n))}</title></path>"
        for n in compaction_turns(column)
        if n in at
    )
    return (
        f'<g style="--c:{column.colour}" data-column="{column.key}">'
        f'<polyline points="{path}"/>{dots}{marks}</g>'
    )


def compaction_turns(column: Column) -> list[int]:
    """The turns chapter 4 compacted its context before (`details.compactions`)."""
    entries = listed(column.record.details, "compactions")
    return sorted({entry["turn"] for entry in entries})


def nice_ceiling(value: int) -> int:
    """The smallest 1, 2, 2.5 or 5 times a power of ten at or above `value`: round gridlines."""
    power = 10 ** max(len(str(max(value, 1))) - 1, 0)
    for factor in (1, 2, 2.5, 5, 10):
        if factor * power >= value:
            return int(factor * power)
    return 10 * power


def runs_table(name: str, columns: list[Column], peak: int, words: dict[str, str]) -> str:
    """One row per turn, one column per run: the same turn of every chapter side by side."""
    head = f'<th class="number">{esc(words["turn"])}</th>' + "".join(
        column_heading(column, words) for column in columns
    )
    sent = {column.key: requests_html(column, words) for column in columns}
    rows = []
    for number in range(1, max(len(c.turns) for c in columns) + 1):
        present = [c.turns[number - 1] for c in columns if number <= len(c.turns)]
        same = len(columns) > 1 and len(present) == len(columns)
        same = same and len({turn.signature for turn in present}) == 1
        cells = "".join(
            turn_cell(column, number, peak, words, sent[column.key]) for column in columns
        )
        rows.append(
            f'<tr class="turn{" same" if same else ""}" id="{anchor(name)}-turn-{number}">'
            f'<th class="number">{number}</th>{cells}</tr>'
        )
    return (
        f'<div class="runs-wrap"><table class="runs" style="--n:{len(columns)}"><thead><tr>'
        f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def column_heading(column: Column, words: dict[str, str]) -> str:
    record = column.record
    verdict = "✓" if record.solved else "✗ " + words["not solved"]
    if not record.finished:
        verdict = "✗ " + unfinished(record, words)
    source = words.get(record.provenance, record.provenance)
    label = f'<span class="label">{esc(column.label)}</span>'
    return (
        f'<th class="run" data-column="{column.key}" style="--c:{column.colour}">{label}'
        f'<span class="verdict {"solved" if record.solved else "failed"}">{esc(verdict)}</span>'
        f"<small>{esc(record.stop)} · {esc(source)} · <code>{esc(record.model)}</code></small></th>"
    )


def turn_cell(
    column: Column, number: int, peak: int, words: dict[str, str], sent: list[str] | None = None
) -> str:
    where = f'data-column="{column.key}" style="--c:{column.colour}"'
    if number > len(column.turns):
        return f'<td class="ended" {where}>{esc(words["ended"])}</td>'
    request = sent[number - 1] if sent and number <= len(sent) else ""
    body = turn_body(column.turns[number - 1], column.record.estimated, peak, words, request)
    return f"<td {where}>{body}</td>"


# --- what was sent at every turn --------------------------------------------------------------


def requests_html(column: Column, words: dict[str, str]) -> list[str]:
    """A fold per answered call of the run: the request as the model received it.

    The system prompt (by layer, for chapter 4) and the tool schemas are written out
    where they first appear or change, and otherwise named with their sizes, so the
    page grows by a line per message and turn, not by the whole conversation again."""
    requests = typed(column.record.requests, "calls", list)
    systems = typed(column.record.requests, "systems", list)
    toolsets = typed(column.record.requests, "tools", list)
    pool = [*column.record.messages, *typed(column.record.requests, "extra", list)]
    folds = []
    before: dict[str, Any] = {}
    for number, call in enumerate(requests, 1):
        if not isinstance(call, dict):
            folds.append("")
            continue
        system = pick(systems, call.get("system"), str)
        tools = [t for t in pick(toolsets, call.get("tools"), list) if isinstance(t, dict)]
        refs = [
            r for r in typed(call, "messages", list) if isinstance(r, int) and 0 <= r < len(pool)
        ]
        messages = [pool[r] for r in refs if readable(pool[r])]
        folds.append(request_html(number, system, tools, messages, before, words))
        before = {
            "number": number, "system": system, "tools": tools,
            "keys": [sent_key(message) for message in messages],
            "system at": before.get("system at") if before.get("system") == system else number,
            "tools at": before.get("tools at") if before.get("tools") == tools else number,
        }  # fmt: skip
    return folds


def readable(message: Any) -> bool:
    """A message the fold can show and size: a role, and text or a list of blocks."""
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        return False
    content = message.get("content")
    return isinstance(content, str) or (
        isinstance(content, list) and all(isinstance(block, dict) for block in content)
    )


def pick(pool: list[Any], index: Any, kind: type) -> Any:
    """pool[index] if there is such an entry of that kind, else an empty one."""
    ok = isinstance(index, int) and 0 <= index < len(pool) and isinstance(pool[index], kind)
    return pool[index] if ok else kind()


def sent_key(message: dict[str, Any]) -> str:
    """A message as the conversation holds it, for telling what is new in a request:
    chapter 4's runtime note rides on each request's last message and is never kept, so
    a message that lost its note at the next call is the same message, not a new one."""
    content = message.get("content")
    if isinstance(content, list):
        content = [
            block
            for block in content
            if not str(block.get("text", "")).startswith(RUNTIME_TAG) or block.get("type") != "text"
        ]
        if len(content) == 1 and content[0].get("type") == "text":
            content = content[0].get("text")
    return json.dumps([message.get("role"), content], sort_keys=True, default=str)


def request_html(
    number: int,
    system: str,
    tools: list[dict[str, Any]],
    messages: list[dict[str, Any]],
    before: dict[str, Any],
    words: dict[str, str],
) -> str:
    keys = [sent_key(message) for message in messages]
    known = set(before.get("keys", []))
    new = [key not in known for key in keys]
    kept = before.get("keys", [])
    rewritten = bool(kept) and keys[: len(kept)] != kept
    sizes = [estimate_message(message) for message in messages]
    total = estimate_request(system, messages, tools)  # the figure the turn's bar shows
    summary = words["sent" if len(messages) != 1 else "sent one"].format(
        len(messages), f"≈{total:,}"
    )
    if before:
        summary += " · " + words["sent new"].format(sum(new))
    if rewritten:
        summary += " · " + words["sent rewritten"]
    parts = [
        system_html(system, before, words),
        tools_html(tools, before, words),
        f'<h4>{esc(words["messages"])}</h4><ol class="sent">',
    ]
    for message, size, fresh in zip(messages, sizes, new, strict=False):
        glance = " ".join(content_text(message.get("content", "")).split())
        glance = glance if len(glance) <= GLANCE else glance[:GLANCE] + "…"
        if before and not fresh:  # its words are in the fold of the turn that first sent it
            glance = ""
        mark = f'<span class="new-mark">{esc(words["new"])}</span> ' if fresh and before else ""
        parts.append(
            f'<li class="{"new" if fresh and before else ""}">{mark}'
            f'<span class="role">{esc(str(message.get("role", "")))}</span> '
            f'<span class="size">≈{size:,}</span> {esc(glance)}</li>'
        )
    parts.append("</ol>")
    return f'<details class="request"><summary>{esc(summary)}</summary>{"".join(parts)}</details>'


def layers_of(system: str) -> list[tuple[str, str]]:
    """Chapter 4's prompt by layer (each starts with its heading, `# Identity`, …); any
    other prompt is one part."""
    headings = {f"# {title}": name for name, title in TITLES.items()}
    parts: list[tuple[str, list[str]]] = []
    for paragraph in system.split("\n\n"):
        first = paragraph.split("\n", 1)[0]
        if first in headings or not parts:
            parts.append((headings.get(first, ""), [paragraph]))
        else:
            parts[-1][1].append(paragraph)
    found = [(name, "\n\n".join(texts)) for name, texts in parts]
    return found if any(name for name, _ in found) else [("", system)]


def system_html(system: str, before: dict[str, Any], words: dict[str, str]) -> str:
    layers = layers_of(system)
    same = before and before.get("system") == system
    title = f"{words['system prompt']} ≈{estimate_text(system):,} {words['tokens']}"
    if same:
        title += " · " + words["same as turn"].format(before["system at"])
    if len(layers) == 1:
        body = "" if same else f"<pre>{shown(system, words)}</pre>"
        return f"<h4>{esc(title)}</h4>{body}"
    rows = []
    for name, text in layers:
        size = f"≈{estimate_text(text):,}"
        cell = (
            esc(name)
            if same
            else f"<details><summary>{esc(name)}</summary><pre>{shown(text, words)}</pre></details>"
        )
        rows.append(f'<tr><td>{cell}</td><td class="size">{size}</td></tr>')
    head = f"<tr><th>{esc(words['layer'])}</th><th>{esc(words['tokens'])}</th></tr>"
    return f'<h4>{esc(title)}</h4><table class="layers">{head}{"".join(rows)}</table>'


def tools_html(tools: list[dict[str, Any]], before: dict[str, Any], words: dict[str, str]) -> str:
    same = before and before.get("tools") == tools
    total = sum(map(estimate_tool, tools))
    title = f"{words['tools offered']} ({len(tools)}) ≈{total:,} {words['tokens']}"
    if same:
        names = ", ".join(str(tool.get("name", "")) for tool in tools)
        title += " · " + words["same as turn"].format(before["tools at"])
        return f'<h4>{esc(title)}</h4><p class="tools">{esc(names)}</p>'
    items = "".join(
        f"<li><details><summary>{esc(str(tool.get('name', '')))} "
        f'<span class="size">≈{estimate_tool(tool):,}</span></summary>'
        f"<pre>{shown(json.dumps(tool, ensure_ascii=False, indent=1), words)}</pre></details></li>"
        for tool in tools
    )
    return f'<h4>{esc(title)}</h4><ul class="tools">{items}</ul>'


def turn_body(
    turn: Turn, estimated: bool, peak: int, words: dict[str, str], request: str = ""
) -> str:
    """Everything of one turn: what came before the call, what the call sent (`request`,
    folded), the call's context, the reply, its tool calls, and what the loop did after."""
    parts = [event_html(event, words) for event in turn.before] + [request]
    if turn.context is not None:
        parts.append(
            f'<div class="context"><span class="bar"><span style="width:'
            f'{100 * turn.context / peak:.1f}%"></span></span> {tokens(turn.context, estimated)}'
            "</div>"
        )
    if turn.text:
        parts.append(f'<div class="text">{shown(turn.text, words)}</div>')
    if turn.answer:
        parts.append(
            f'<div class="answer"><strong>{esc(words["answer"])}</strong>'
            f"{shown(turn.answer, words)}</div>"
        )
    for call in turn.calls:
        parts.append(call_html(call, estimated, peak, words))
    parts += [event_html(event, words) for event in turn.after]
    return "".join(parts)


def call_html(call: Call, estimated: bool, peak: int, words: dict[str, str]) -> str:
    """A tool call: its name and arguments on one line, its result folded below."""
    glimpse = call.arguments if len(call.arguments) <= GLIMPSE else call.arguments[:GLIMPSE] + "…"
    badge = f' <span class="badge">{esc(words["error"])}</span>' if call.is_error else ""
    inside = ""
    if len(call.arguments) > GLIMPSE:
        title = esc(words["arguments"])
        inside += f'<pre class="arguments" title="{title}">{shown(call.arguments, words)}</pre>'
    if call.result is None:
        inside += f'<p class="missing">{esc(words["no result"])}</p>'
    else:
        inside += f'<pre class="result">{shown(call.result, words)}</pre>'
    folded = (
        f'<details class="call{" error" if call.is_error else ""}"><summary>'
        f'<span class="tool">{esc(call.name)}</span> <code>{esc(glimpse)}</code>{badge}'
        f"</summary>{inside}</details>"
    )
    return folded + (child_html(call.child, estimated, peak, words) if call.child else "")


def child_html(child: dict[str, Any], estimated: bool, peak: int, words: dict[str, str]) -> str:
    """Chapter 3: the child's own run, folded under the call that started it."""
    turns = turns_of(
        typed(child, "messages", list),
        typed(child, "context_per_turn", list),
        typed(child, "details", dict),
        child.get("stop") == "done",
    )
    line = words["child line"].format(
        child.get("stop", ""),
        child.get("turns", len(turns)),
        child.get("tool_calls", ""),
        tokens(typed(child, "input_tokens", int), estimated),
    )
    kind = child.get("agent_type")
    who = words["child of type"].format(kind) if kind else words["child"]
    items = "".join(
        f'<li><span class="number">{esc(words["turn"])} {turn.number}</span>'
        f"{turn_body(turn, estimated, peak, words)}</li>"
        for turn in turns
    )
    return (
        f'<details class="child"><summary><strong>{esc(who + words["colon"])}</strong>'
        f"{esc(child.get('description', ''))} <small>{esc(line)}</small></summary>"
        f"<ol>{items}</ol></details>"
    )


def event_html(event: Event, words: dict[str, str]) -> str:
    figures = words["stage"].format(*map(number, event.figures)) + " " if event.figures else ""
    items = "".join(f"<li>{shown(item, words)}</li>" for item in event.items if item)
    return (
        f'<div class="event {event.kind}"><strong>{esc(words[event.kind])}</strong> '
        f"{esc(figures)}{shown(event.text, words)}{f'<ul>{items}</ul>' if items else ''}</div>"
    )


def number(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else "?" if value is None else str(value)


# --- the template ----------------------------------------------------------------------------


def load_template() -> tuple[Template, str]:
    """The page's HTML, CSS and script; and the script's hash, which the page's security
    policy names as the only script allowed to run, so that a `<script>` a tool printed
    would stay inert even if it escaped the escaping."""
    text = (resources.files("lab") / "view_template.html").read_text(encoding="utf-8")
    script = text.split("<script>", 1)[1].split("</script>", 1)[0]
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return Template(text), f"sha256-{digest}"


TEMPLATE, SCRIPT_HASH = load_template()


def write_page(path: Path, document: dict[str, Any], lang: str = "en") -> None:
    """Write the page of `document` (a `lab-records/1` dict) to `path`."""
    page = render_page(document, lang)
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as error:
        raise ViewError(f"cannot write {path}: {error.strerror or error}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lab view",
        description="Write one HTML page of saved records: the chapters side by side, turn by "
        "turn. Several records files (a class's, one per student) make one page, each run "
        "labelled with its file. It needs no server and fetches nothing.",
    )
    parser.add_argument(
        "records",
        type=Path,
        nargs="+",
        metavar="RECORDS.json",
        help="written by python -m lab compare --json",
    )
    parser.add_argument(
        "-o", "--output", type=Path, metavar="FILE", help="the page (default: RECORDS.html)"
    )
    parser.add_argument(
        "--label",
        action="append",
        metavar="NAME",
        help="the name of each records file on the page, in order (default: the file's name)",
    )
    parser.add_argument("--lang", choices=LANGS, default="en", help="the page's labels")
    args = parser.parse_args(argv)
    labels = args.label or [path.stem for path in args.records]
    output = args.output or args.records[0].with_suffix(".html")
    try:
        if len(labels) != len(args.records):
            raise ViewError(
                f"{len(labels)} --label for {len(args.records)} records files: give one each"
            )
        if len(set(labels)) < len(labels):
            raise ViewError("two records files have the same label: name them with --label")
        documents = [load_document(path) for path in args.records]
        write_page(output, merge(list(zip(labels, documents, strict=True))), lang=args.lang)
    except ViewError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
