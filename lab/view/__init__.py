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

The page is made in the order it reads, one module of this package for each part:
`records` reads and checks the records files, `turns` turns a run's messages into its
turns, `task` writes a task's section (with `chart`'s chart), and `cell` one turn of one
run, with what was sent (`request`) folded in it; `template.html` is the page's frame,
style and script.  This module is the page around them and the command line.  The
package reads the lab's records (`lab.compare.record`), tasks, words and colours, and the
chapters' own formats (chapter 0's parser, chapter 4's prompt titles) to show them;
nothing in the lab but the comparison's `--html` imports it.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import sys
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from ..compare.record import Record
from ..plots import COLOURS
from ..words import LANGS, word
from .cell import LIMIT, esc
from .records import ViewError, load_document, merge, records_of, sources_of, typed
from .task import anchor, task_section, task_title

# What the rest of the lab and the tests use of the viewer.
__all__ = ["COLOURS", "LANGS", "LIMIT", "ViewError", "esc", "main", "render_page", "write_page"]


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
    "compaction key": "compaction before the turn (chapter 4)",
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
    "sent before": "messages {}: sent before, each listed at the turn that first sent it",
    "files": "records",
    "could not finish": "could not finish",
    "rate limited": "rate limited",
    "provider error": "provider error",
    "window full": "window full",
    "tool-call setting": "tool-call setting",
    "model error": "model error",
}
LABELS = {lang: {key: word(text, lang) for key, text in TEXTS.items()} for lang in LANGS}


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


# --- the template ----------------------------------------------------------------------------


def load_template() -> tuple[Template, str]:
    """The page's HTML, CSS and script; and the script's hash, which the page's security
    policy names as the only script allowed to run, so that a `<script>` a tool printed
    would stay inert even if it escaped the escaping."""
    text = (resources.files("lab.view") / "template.html").read_text(encoding="utf-8")
    script = text.split("<script>", 1)[1].split("</script>", 1)[0]
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return Template(text), f"sha256-{digest}"


TEMPLATE, SCRIPT_HASH = load_template()


def write_page(path: Path, document: dict[str, Any], lang: str = "en") -> None:
    """Write the page of `document` (records as `python -m lab compare --json` writes them)
    to `path`."""
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
