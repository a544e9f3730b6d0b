"""The viewer's input: a records file read and checked, and several files merged into one.

A records file comes from anywhere (a student's laptop, an old checkout, an editor), so
every field is checked before the page uses it: what is wrong is one line naming the
record and the field (`ViewError`, exit code 2), never a traceback halfway through a page.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_origin, get_type_hints

from ..compare import report
from ..compare.record import Record


class ViewError(Exception):
    """Records the viewer cannot read, or a page it cannot write: one line, exit code 2."""


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


def typed(mapping: Any, key: str, kind: type) -> Any:
    """mapping[key] if it is of the kind expected, else an empty one: a field a chapter
    does not record, or records otherwise, leaves a part of the page out, no more."""
    value = mapping.get(key) if isinstance(mapping, dict) else None
    return value if isinstance(value, kind) else kind()
