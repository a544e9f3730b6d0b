"""What reaches the model through an OpenAI-compatible server: the tools, their results, text.

    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 python -m lab.server_check --model NAME
    python -m lab.server_check --model NAME --json FILE --setting "in a few words" --setup "…"

A server shows none of what it does with a request: it renders the messages and the tool
schemas through a chat template, and what the template has no place for never reaches
the model, without an error.  Only the count of prompt tokens the server reports gives it
away.  So each question is asked as a pair of requests that differ in one part, shaped as
chapter 1's agent shapes them (its system prompt, its tool schemas, `tool_choice: "auto"`,
tool results as `role: tool` messages):

    tools        the task alone, then the task and the tool schemas
    results      a call and its result "ok", then the same call with a 60-line result
    text         a question that needs no tool, answered with tools offered: what came back

When a part reaches the model, the second request of its pair counts hundreds of tokens
more than the first; when the server dropped it, the counts are the same or nearly.  The
last line of the table is the text the model wrote when no tool was needed: a server that
blanks it, or sends only the start of a call (`functions.bash:`), leaves the agent no
answer to show.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from llm.openai_model import to_chat_messages, to_chat_tools
from llm.text_calls import begun_call
from llm.tokens import estimate_text
from v1_tool_loop.agent import SYSTEM
from v1_tool_loop.tools import TOOLS

TASK = "List the files"
CALL = {"type": "tool_use", "id": "call_0", "name": "bash", "input": {"command": "ls"}}
SHORT_RESULT = "ok"
LONG_RESULT = "\n".join(
    f"src/module_{n:02d}.py: def function_{n}(value): return value * {n}" for n in range(60)
)
QUESTION = "What is 2 + 2? Answer with the number alone; no tool is needed."
MAX_TOKENS = 64
ARRIVED = 0.25  # a part arrived when the difference is at least a quarter of its estimate


@dataclass
class Probe:
    """One request and what the server said of it."""

    name: str
    prompt_tokens: int
    completion_tokens: int
    text: str
    tool_calls: list[str]


def conversation(result: str | None) -> list[dict[str, Any]]:
    """The task; with `result`, one call to bash and its result after it."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    if result is not None:
        messages.append({"role": "assistant", "content": [CALL]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": CALL["id"], "content": result}
        ]})  # fmt: skip
    return messages


def body(model: str, messages: list[dict[str, Any]], tools: bool) -> dict[str, Any]:
    """The request as chapter 1's agent sends it (`llm/openai_model.py`)."""
    request: dict[str, Any] = {
        "model": model,
        "messages": to_chat_messages(SYSTEM, messages),
        "max_tokens": MAX_TOKENS,
    }
    if tools:
        request["tools"] = to_chat_tools(TOOLS)
        request["tool_choice"] = "auto"
    return request


def ask(base_url: str, name: str, request: dict[str, Any], timeout: float) -> Probe:
    """Send one request; the prompt tokens the server counted and what came back."""
    data = json.dumps(request).encode()
    post = urllib.request.Request(
        base_url.rstrip("/") + "/chat/completions",
        data=data,
        headers={"Content-Type": "application/json", "Authorization": "Bearer local"},
    )
    with urllib.request.urlopen(post, timeout=timeout) as response:
        answer = json.loads(response.read())
    message = answer["choices"][0]["message"]
    calls = [
        f"{call['function']['name']} {call['function'].get('arguments', '')}"
        for call in message.get("tool_calls") or []
    ]
    usage = answer.get("usage") or {}
    return Probe(
        name, usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0),
        message.get("content") or "", calls,
    )  # fmt: skip


def probes(base_url: str, model: str, timeout: float) -> list[Probe]:
    """The five requests, in the order the table shows them."""
    plan = [
        ("task, no tools", conversation(None), False),
        ("task and tools", conversation(None), True),
        ('call and result "ok"', conversation(SHORT_RESULT), True),
        ("call and a 60-line result", conversation(LONG_RESULT), True),
        ("a question, tools offered", [{"role": "user", "content": QUESTION}], True),
    ]
    found = []
    for name, messages, tools in plan:
        print(f"  {name} …", file=sys.stderr, flush=True)
        found.append(ask(base_url, name, body(model, messages, tools), timeout))
    return found


def verdicts(found: list[Probe]) -> dict[str, str]:
    """Did the tools arrive, did the results, did an answer come back: each with its evidence.

    A reply that is only the start of a call (`functions.bash:`) is no answer: the agent's
    own check (`begun_call`) stops a run on it, as it would stop here."""
    bare, tooled, short, long, question = found
    schemas = estimate_text(json.dumps(to_chat_tools(TOOLS)))
    result = estimate_text(LONG_RESULT) - estimate_text(SHORT_RESULT)
    tools_added = tooled.prompt_tokens - bare.prompt_tokens
    result_added = long.prompt_tokens - short.prompt_tokens
    said = question.text.strip()
    shown = json.dumps(said[:60], ensure_ascii=False)
    answered = said and not question.tool_calls
    if answered and begun_call(said, {tool["name"] for tool in TOOLS}) is not None:
        answered, shown = False, f"{shown}, the start of a call"
    calls = f", calls {question.tool_calls}" if question.tool_calls else ""
    return {
        "tools": ("arrive" if tools_added >= ARRIVED * schemas else "dropped")
        + f": {bare.prompt_tokens} tokens in without them, {tooled.prompt_tokens} with them",
        "results": ("arrive" if result_added >= ARRIVED * result else "dropped")
        + f': {short.prompt_tokens} tokens in with the result "ok", '
        + f"{long.prompt_tokens} with a 60-line result",
        "text": f"arrives: {shown}" if answered else f"no answer: {shown}{calls}",
    }


def load(path: Path) -> tuple[dict[str, Any], list[Probe]]:
    """A file written by --json: what it says of the server, and its probes."""
    kept = json.loads(path.read_text(encoding="utf-8"))
    return kept, [Probe(**probe) for probe in kept["probes"]]


def table(found: list[Probe]) -> str:
    rows = [f"{'request':<28} {'tokens in':>9} {'out':>5}  reply"]
    for probe in found:
        reply = "; ".join(probe.tool_calls) or json.dumps(probe.text[:50], ensure_ascii=False)
        rows.append(
            f"{probe.name:<28} {probe.prompt_tokens:>9} {probe.completion_tokens:>5}  {reply}"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lab.server_check", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--model", required=True, help="the model's name on the server")
    parser.add_argument(
        "--base-url",
        default=os.environ.get("OPENAI_BASE_URL"),
        help="the server's API address (default: OPENAI_BASE_URL)",
    )
    parser.add_argument(
        "--setting", default="", help="the server setting in a few words, kept in --json"
    )
    parser.add_argument("--setup", default="", help="how the server was started, kept in --json")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the figures to FILE")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per request")
    args = parser.parse_args(argv)
    if not args.base_url:
        parser.error("give --base-url or set OPENAI_BASE_URL, e.g. http://127.0.0.1:8080/v1")
    try:
        found = probes(args.base_url, args.model, args.timeout)
    except (urllib.error.URLError, OSError, KeyError, ValueError) as error:
        print(f"error: {args.base_url}: {error}", file=sys.stderr)
        return 1
    print(table(found))
    judged = verdicts(found)
    for part, verdict in judged.items():
        print(f"{part}: {verdict}")
    if args.json:
        kept = {
            "model": args.model,
            "setting": args.setting,
            "setup": args.setup,
            "verdicts": judged,
            "probes": [asdict(probe) for probe in found],
        }
        args.json.write_text(
            json.dumps(kept, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
