"""`--step`: a model that waits for a key before each call, so a learner sees each request go.

A wrapper (`llm/wrapper.py`) around whatever model runs, outside any recording: before
each call it shows how many messages are about to be sent, how big the request is and
what was added since the call before, then waits.  Enter sends it, `r` shows the whole
request as the model receives it, `c` runs to the end.  A child agent's model (chapter 3)
pauses too, labelled, one pause on the screen at a time.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from .console import Console, content_text, is_terminal, visible
from .types import blocks, without_runtime
from .wrapper import Wrapper

STEP_KEYS = "Enter: send it · r: show the whole request · c: run to the end"


class Stepping(Wrapper):
    """A model that waits for a key before each call (`--step`): a learner sees what is
    about to be sent, how big it is and what was added since the call before, before
    it goes.

    Keys are read a line at a time from `keys` (stdin): Enter sends the request, `r`
    shows it whole (system prompt, tools, every message) and asks again, `c` runs to
    the end without pausing.  Input that ends (a closed pipe, `< /dev/null`) runs to
    the end too, saying so once, so a script can step through the first calls and let
    the rest run.  What it shows is made visible as every tool result is (ESC as \\x1b).
    """

    def __init__(
        self,
        inner: Any,
        keys: TextIO | None = None,
        out: TextIO | None = None,
        label: str = "",
        running: list[bool] | None = None,
    ) -> None:
        super().__init__(inner)
        self.keys = keys or sys.stdin
        self.out = out or sys.stdout
        self.label = label  # a child agent's, so its pauses are told apart from the parent's
        self.running = running if running is not None else [False]  # shared with children
        self.sent: list[Any] | None = None  # the messages of the call before

    def before(self, system: str, messages: list[Any], tools: list[dict] | None) -> None:
        if not self.running[0]:
            self._pause(system, messages, tools)
        self.sent = [as_sent(message) for message in messages]

    def child(self, key: str) -> Stepping:
        """A child agent's model (chapter 3) pauses too, labelled; `c` runs them all."""
        make = getattr(self.inner, "child", None)
        inner = make(key) if callable(make) else self.inner
        return Stepping(inner, self.keys, self.out, f"{self.label}child {key} · ", self.running)

    def _pause(self, system: str, messages: list[Any], tools: list[dict] | None) -> None:
        with Console.held():  # the spinner of the call under way neither shows nor counts
            if not self.running[0]:  # `c` at another agent's pause, while this one waited
                self._ask(system, messages, tools)

    def _ask(self, system: str, messages: list[Any], tools: list[dict] | None) -> None:
        self._write(self._summary(system, messages, tools))
        while True:
            self._write(f"[{STEP_KEYS}] ", end="")
            line = self.keys.readline()
            if not is_terminal(self.keys):  # keys from a pipe were not echoed: show them
                self._write(line.strip() or "(Enter)")
            if not line:  # the input ended: nothing will ever press Enter
                self._write("\n(no more input: running to the end)")
                self.running[0] = True
                return
            key = line.strip().lower()
            if key == "r":
                self._write(whole_request(system, messages, tools))
            elif key == "c":
                self.running[0] = True
                return
            elif not key:
                return
            else:
                self._write(f"{key!r} is not a key here ({STEP_KEYS})")

    def _summary(self, system: str, messages: list[Any], tools: list[dict] | None) -> str:
        from .tokens import estimate_message, estimate_request

        size = estimate_request(system, messages, tools)
        head = (
            f"── {self.label}about to send: {len(messages)} message"
            f"{'' if len(messages) == 1 else 's'}, ≈{size:,} tokens "
            f"(system prompt {len(system):,} characters, {len(tools or [])} tools)"
        )
        before = self.sent
        if before is None:
            return head + "\n   the first call: everything is new"
        # Chapter 4 ends each request with a runtime note on its last message: the note
        # moves on, and the message it left is the same message.
        old = list(map(as_sent, messages[: len(before)]))
        grown = len(old) == len(before)  # not shortened by a summary
        pairs = enumerate(zip(before, old, strict=True)) if grown else []
        rewritten = [n for n, (was, now) in pairs if was != now]
        if grown and len(rewritten) <= 3:  # appended to, with a few old messages rewritten
            shown = [("~", messages[n]) for n in rewritten]  # rewritten (stage 1's previews)
            shown += [("+", message) for message in messages[len(before) :]]
            lines = [f"   added since the last call: {len(messages) - len(before)}"]
            if rewritten:
                numbers = ", ".join(str(n + 1) for n in rewritten)
                lines[0] += f"; rewritten (~): message {numbers}"
        else:  # chapter 4 summarised older turns: the history is another one now
            shown = [("+", message) for message in messages]
            lines = [f"   the messages were rewritten since the last call ({len(before)} before)"]
        for mark, message in shown:
            glimpse = " ".join(content_text(message["content"]).split())[:70]
            tokens = estimate_message(message)
            lines.append(f"   {mark} {message['role']:<9} ≈{tokens:>6,} tokens  {glimpse}")
        return "\n".join([head, *lines])

    def _write(self, text: str, end: str = "\n") -> None:
        with Console._lock:
            Console._wait_for_the_screen()
            print(visible(text), end=end, file=self.out, flush=True)


def as_sent(message: Any) -> tuple[str, list[Any]]:
    """What a pause compares of a message: its role and blocks, without a runtime note (a
    text given as a string or as one text block is the same text)."""
    return message["role"], blocks(without_runtime(message))


def whole_request(system: str, messages: list[Any], tools: list[dict] | None) -> str:
    """The request as the model receives it: system prompt, tools offered, every message.

    The tool calls are numbered in the order they were made, and each result opens with
    the number and name of the call it answers: two results in one message (two calls
    in one reply) read as two, however many lines each has."""
    tool_names = ", ".join(tool["name"] for tool in tools or []) or "none"
    parts = [f"── system prompt\n{system}", f"── tools: {tool_names}"]
    calls: dict[Any, str] = {}  # by each call's id: "call 2: bash"
    for number, message in enumerate(messages, 1):
        parts.append(f"── message {number}: {message['role']}\n{message_text(message, calls)}")
    return "\n".join(parts) + "\n── end of the request"


def message_text(message: dict[str, Any], calls: dict[Any, str]) -> str:
    """One message of `whole_request`: its text, its tool calls numbered (and noted in
    `calls`), its tool results headed by the call they answer."""
    content = message["content"]
    if isinstance(content, str):
        return content
    lines = []
    for block in content:
        if block.get("type") == "tool_use":
            lines.append(f"[call {len(calls) + 1}] {content_text([block])}")
            calls[block.get("id")] = f"call {len(calls) + 1}: {block.get('name')}"
        elif block.get("type") == "tool_result":
            answers = calls.get(block.get("tool_use_id"), "a call not in this request")
            error = ", an error" if block.get("is_error") else ""
            lines.append(f"[result of {answers}{error}]\n{content_text([block])}")
        else:
            lines.append(content_text([block]))
    return "\n".join(lines)
