"""Cassettes: model replies saved as JSON lines, so any run can be replayed offline.

A cassette is one header line and then one line per model reply, in order:

    {"format": "cassette/1", "provenance": "scripted", "chapter": "v1_tool_loop", "task": "…"}
    {"reply": {"content": [...], "stop_reason": "tool_use", "usage": {...}}, "request": {...}}

Replaying only returns the stored replies; the tools still run for real.  Every line
is checked when the file is loaded, so a malformed cassette stops before the run
starts, naming the file and the line.  The optional `request` field holds short
digests of what the agent sent when the reply was recorded; in strict mode a replay
stops at the first turn whose request differs and says which part changed.  The
format is described in `llm/README.md`.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import tempfile
import threading
from pathlib import Path
from typing import Any

from .console import counted, shown_path
from .errors import CassetteError
from .text_calls import check_tool_calls
from .tokens import estimate_usage
from .types import (
    STOP_REASONS,
    Message,
    Reply,
    unique_call_ids,
    without_runtime,
)

FORMAT = "cassette/1"

# What the tools print that may differ between a recording and its strict replay, since
# they run again, for real: how long something took (pytest's `in 0.59s`), and where a
# temporary folder was (a demo's copy, a test's scratch folder).  In the user's side of
# the conversation, the only side the tools write, each is replaced by its placeholder
# before the digest is taken, on record and on replay alike; the model's side, the
# system prompt, the tools and everything else are compared exactly.
TEMPORARY_ROOT = (
    r"(?:(?:/private)?/tmp|/var/folders/[^\s/]+/[^\s/]+/T|"
    + re.escape(tempfile.gettempdir().rstrip("/\\"))
    + r")[/\\]"
)
VARYING_OUTPUT: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("temporary paths", re.compile(TEMPORARY_ROOT + r"[^\s'\"`:;,()\[\]]*"), "<tmp>"),
    ("durations", re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds?)\b"), "<duration>"),
)
STRICT_RULE = (
    "a strict replay compares what the tools printed with its "
    + " and ".join(name for name, _, _ in VARYING_OUTPUT)
    + " left out: VARYING_OUTPUT in llm/cassette.py"
)


def read_cassette(
    path: str | Path, *, strict: bool = False
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Return (header, entries), every line checked; each problem names the file and the line.

    `strict` also checks the `request` digests that a strict replay compares, and
    refuses a cassette that has none, since a strict replay of it would check nothing.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CassetteError(f"no cassette at {path}: check the path after 'replay:'") from None
    except OSError as exc:
        raise CassetteError(f"cannot read cassette {path}: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CassetteError(
            f"{path}:{line}: not UTF-8 text (byte {data[exc.start]:#04x})"
        ) from None
    rows = []
    # Split at "\n" only: str.splitlines() would also cut at U+2028 or U+0085, which
    # JSON leaves unescaped inside a string.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rows.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise CassetteError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
        except RecursionError:  # valid JSON nested deeper than Python's stack
            raise CassetteError(f"{path}:{number}: JSON nested too deeply to read") from None
    if not rows:
        raise CassetteError(f"{path} is empty: a cassette starts with a header line")
    problems = [(rows[0][0], _header_problem(rows[0][1]))]
    problems += [(number, _line_problem(row, strict)) for number, row in rows[1:]]
    for number, problem in problems:
        if problem:
            raise CassetteError(f"{path}:{number}: {problem}")
    entries = [row for _, row in rows[1:]]
    if strict and not any("request" in entry for entry in entries):
        raise CassetteError(
            f"{path} holds no request digests, so --strict has nothing to check: "
            "record one with --record, or drop --strict"
        )
    return rows[0][1], entries


def _header_problem(header: Any) -> str | None:
    if not isinstance(header, dict):
        example = f'{{"format": "{FORMAT}", …}}'
        return f"the header must be an object such as {example}; it is {_shown(header)}"
    if header.get("format") != FORMAT:
        shown = _shown(header.get("format"), header, "format")
        return f'the header needs "format": "{FORMAT}"; it is {shown}'
    if header.get("task") is not None and not isinstance(header["task"], str):
        return f"the header's task must be a string or null; it is {_shown(header['task'])}"
    return None


def _line_problem(row: Any, strict: bool) -> str | None:
    """What is wrong with one reply line, or None.  The rules are those of llm/README.md."""
    if not isinstance(row, dict):
        return f'a reply line must be an object such as {{"reply": {{…}}}}; it is {_shown(row)}'
    reply = row.get("reply")
    if not isinstance(reply, dict):
        return f'a reply line needs "reply" to be an object; it is {_shown(reply, row, "reply")}'
    content = reply.get("content")
    if not isinstance(content, list):
        return f"reply.content must be a list of blocks; it is {_shown(content, reply, 'content')}"
    for index, block in enumerate(content):
        problem = _block_problem(block)
        if problem:
            return f"reply.content[{index}] {problem}"
    if reply.get("stop_reason") not in STOP_REASONS:
        shown = _shown(reply.get("stop_reason"), reply, "stop_reason")
        return f"reply.stop_reason must be one of {', '.join(STOP_REASONS)}; it is {shown}"
    if "usage" in reply:
        problem = _usage_problem(reply["usage"])
        if problem:
            return problem
    if "child" in row and not (isinstance(row["child"], str) and row["child"]):
        return f"child must name the tool call that started the child; it is {_shown(row['child'])}"
    if strict and "request" in row:
        return _request_problem(row["request"])
    return None


def _block_problem(block: Any) -> str | None:
    if not isinstance(block, dict):
        return f"must be a block object; it is {_shown(block)}"
    kind = block.get("type")
    if kind == "text":
        return _wrong_fields(block, {"text": str})
    if kind == "tool_use":
        return _wrong_fields(block, {"id": str, "name": str, "input": dict})
    if kind == "tool_result":
        return "is a tool_result: results are written by the program, never by the model"
    if kind is None:
        return 'has no "type": a reply holds "text" and "tool_use" blocks'
    return f'has type {_shown(kind)}: a reply holds "text" and "tool_use" blocks'


def _usage_problem(usage: Any) -> str | None:
    if not isinstance(usage, dict):
        return f"reply.usage must be an object; it is {_shown(usage)}"
    for name in ("input_tokens", "output_tokens"):
        count = usage.get(name)
        # type() and not isinstance(): true and false are ints in Python, not counts.
        if type(count) is not int or count < 0:
            shown = _shown(count, usage, name)
            return f"reply.usage.{name} must be a whole number, 0 or more; it is {shown}"
    return None


def _request_problem(request: Any) -> str | None:
    if not isinstance(request, dict):
        return f"request must be an object of digests; it is {_shown(request)}"
    problem = _wrong_fields(request, {"system": str, "tools": str, "stop": list, "messages": list})
    if not problem and not all(isinstance(s, str) for s in request["stop"] + request["messages"]):
        problem = "must hold lists of strings in stop and messages"
    return f"request {problem}" if problem else None


def _wrong_fields(obj: dict[str, Any], fields: dict[str, type]) -> str | None:
    """Name the first field of `obj` that is missing or of the wrong JSON type."""
    names = {str: "a string", dict: "an object", list: "a list"}
    for name, kind in fields.items():
        if not isinstance(obj.get(name), kind):
            return f'needs "{name}" to be {names[kind]}; it is {_shown(obj.get(name), obj, name)}'
    return None


def _shown(value: Any, parent: dict[str, Any] | None = None, key: str = "") -> str:
    """A JSON value as an error message shows it: `missing`, `null`, `a list`, `"done"`…"""
    if parent is not None and key not in parent:
        return "missing"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    shown = json.dumps(value, ensure_ascii=False)
    return shown if len(shown) <= 40 else shown[:40] + "…"


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    # surrogatepass: a lone surrogate, which a model can send, still gets a digest.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def request_digest(
    system: str, messages: list[Message], tools: list[dict] | None, stop: list[str] | None
) -> dict[str, Any]:
    """Digest each part of a request separately, so a mismatch can say which part changed.

    A runtime note (a text block that begins with RUNTIME_TAG) is left out: it says when,
    with which model spec and where the call was made, which a replay never repeats.  So
    is what may vary in what the tools printed (`comparable`).
    """
    return {
        "system": _digest(system),
        "tools": _digest(tools or []),
        "stop": list(stop or []),
        "messages": [_digest(comparable(without_runtime(message))) for message in messages],
    }


def comparable(message: Message) -> Message:
    """The message as a strict replay compares it: a user message (a task, tool results,
    chapter 0's observations) with the VARYING_OUTPUT in its text replaced by their
    placeholders; the model's own messages as they are."""
    if message.get("role") != "user":
        return message
    content = message["content"]
    if isinstance(content, str):
        return {**message, "content": without_varying(content)}
    return {**message, "content": [_comparable_block(block) for block in content]}


def _comparable_block(block: Any) -> Any:
    if not isinstance(block, dict):
        return block
    if block.get("type") == "text" and isinstance(block.get("text"), str):
        return {**block, "text": without_varying(block["text"])}
    inner = block.get("content")
    if block.get("type") == "tool_result" and isinstance(inner, str):
        return {**block, "content": without_varying(inner)}
    if block.get("type") == "tool_result" and isinstance(inner, list):
        return {**block, "content": [_comparable_block(part) for part in inner]}
    return block


def without_varying(text: str) -> str:
    """`text` with every VARYING_OUTPUT replaced by its placeholder: `in <duration>`."""
    for _, pattern, placeholder in VARYING_OUTPUT:
        text = pattern.sub(placeholder, text)
    return text


def describe_difference(
    recorded: dict[str, Any], actual: dict[str, Any], messages: list[Message]
) -> str | None:
    """Name the first part of the request that differs from the recording, or None."""
    if recorded.get("system") != actual["system"]:
        return "the system prompt differs"
    if recorded.get("tools") != actual["tools"]:
        return "the tool schemas differ"
    if recorded.get("stop", []) != actual["stop"]:
        return f"the stop sequences differ (recorded {recorded.get('stop')}, now {actual['stop']})"
    old, new = recorded.get("messages", []), actual["messages"]
    for index, (was, now) in enumerate(zip(old, new, strict=False)):
        if was != now:
            preview = json.dumps(messages[index]["content"], ensure_ascii=False)[:100]
            role = messages[index]["role"]
            rule = f" ({STRICT_RULE})" if role == "user" else ""
            return f"message {index + 1} ({role}) differs{rule}; it now begins {preview}…"
    if len(old) != len(new):
        return f"the recording sent {counted(len(old), 'message')}, this run sends {len(new)}"
    return None


class SectionKeys:
    """The key of each child's section of a cassette, never the same twice in one run.

    A child is keyed by the id of the call that started it, and a provider may use an
    id again once the turns that held it were summarised away (a local server that
    numbers calls afresh in every reply).  The second child asked for under a key
    gets `KEY#2`, the third `KEY#3`: the same on record and on replay, so each child
    replays its own replies, never an earlier child's.
    """

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()  # children start from their own threads

    def fresh(self, key: str) -> str:
        with self._lock:
            self._seen[key] = count = self._seen.get(key, 0) + 1
        return key if count == 1 else f"{key}#{count}"


class ReplayModel:
    """A Model that answers from a cassette, in order, and never invents a reply."""

    def __init__(
        self, source: str | Path | list[Reply], *, strict: bool = False, child: str | None = None
    ) -> None:
        """Replay a cassette file, or a list of Reply objects held in memory (benchmarks).

        A cassette can hold the replies of child agents too (chapter 3), each line
        tagged with the id of the tool call that started its child: `child` picks
        that section; without it, the lines with no tag are replayed.
        """
        if isinstance(source, list):
            self.path = Path("memory")
            self.header = {"format": FORMAT, "provenance": "scripted"}
            self.all_entries = [{"reply": reply.to_dict()} for reply in source]
        else:
            self.path = Path(source)
            self.header, self.all_entries = read_cassette(self.path, strict=strict)
        self.entries = [entry for entry in self.all_entries if entry.get("child") == child]
        self.key = child
        self.keys = SectionKeys()  # shared by every section: copies keep the same one
        self.strict = strict
        self.turn = 0
        self.name = f"replay:{shown_path(self.path)}"  # it may be shown in a prompt

    def child(self, key: str) -> ReplayModel:
        """The replay of the child agent started by tool call `key`, from its own section.

        Each child reads only its own lines, so children that run at the same time
        get the same replies whatever order their threads happen to run in.
        """
        section = copy.copy(self)
        key = self.keys.fresh(key)
        section.entries = [entry for entry in self.all_entries if entry.get("child") == key]
        section.key, section.turn = key, 0
        return section

    def complete(
        self,
        system: str,
        messages: list[Message],
        tools: list[dict] | None = None,
        stop: list[str] | None = None,
        max_tokens: int = 4096,
    ) -> Reply:
        if self.turn >= len(self.entries):
            whose = f" for {section_owner(self.key)}" if self.key else ""
            raise CassetteError(
                f"the cassette {self.path} has {counted(len(self.entries), 'reply', 'replies')}"
                f"{whose} and the run "
                f"asked for reply {self.turn + 1}; a replay never invents one. Record a longer "
                "run with --record, or run live with --model."
            )
        entry = self.entries[self.turn]
        self.turn += 1
        if self.strict and "request" in entry:
            actual = request_digest(system, messages, tools, stop)
            difference = describe_difference(entry["request"], actual, messages)
            if difference:
                raise CassetteError(
                    f"turn {self.turn} of {self.path} was recorded for another request: "
                    f"{difference}. Re-record the cassette, or replay without --strict."
                )
        reply = Reply.from_dict(copy.deepcopy(entry["reply"]))
        # A cassette written by hand, or recorded from a server before its ids were
        # repaired, may repeat a call id: replayed, it gets the same repair as live.
        reply.content = unique_call_ids(reply.content, messages)
        if self.header.get("provenance") != "recorded":
            # Hand-written usage is typed in, not measured: estimate it from what this
            # run really sent (real tool output included) and from the reply itself.
            reply.usage = estimate_usage(system, messages, tools, reply)
        return check_tool_calls(reply, tools, messages)  # a call left in text stops here too


# Sections of a cassette that belong to no child: chapter 4's side calls, keyed `summary-1`, …
SIDE_CALLS = {"summary": "the summary", "flush": "the memory flush"}


def section_owner(key: str) -> str:
    """Who a tagged section of a cassette answers, in words: a child, or a side call."""
    kind = key.split("-")[0]
    if kind in SIDE_CALLS:
        return f"{SIDE_CALLS[kind]} side call {key}"
    return f"the child of call {key}"
