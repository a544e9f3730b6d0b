"""Chapter 4's permission mode: rules that allow, deny or ask about each command and write.

The rules live in the work directory, in `.agent/permissions.json`:

    {"allow": ["bash(python -m pytest*)", "bash(ls*)", "write(src/**)"],
     "deny":  ["bash(git push*)"]}

`bash(PATTERN)` is matched against each simple command of a `bash` call, `write(PATTERN)`
against the path a `write_file` or `edit_file` call writes, as the work directory sees
it (`./a/../b` is `b`).  `*` matches any text, `/` included.  A call is refused when
one of its parts matches a deny rule, runs when every part matches an allow rule, and
is asked about otherwise: the person answers on the terminal, and anything but yes is
no.  Reading, searching, the plan and memory are never asked about: they change nothing
outside the agent's own folder.  Without the file the mode is off and chapter 4 runs
as it did (its demos and tests have no one to answer).  A file that cannot be read as
rules turns no rule on and none off: it is named in a warning, and every command and
write is asked about until it is mended.
"""

from __future__ import annotations

import json
import posixpath
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from llm import Console
from machine import ToolError
from machine.guard import simple_commands

RULES_FILE = Path(".agent", "permissions.json")
RULE = re.compile(r"(bash|write)\((.+)\)")
WRITERS = {"write_file", "edit_file"}
REDIRECTION = re.compile(r"^\d*[<>]")  # `>`, `2>>`, `<`: a file read or written by the shell


@dataclass
class Rules:
    """The allow and deny rules of a work directory, as (kind, pattern) pairs."""

    allow: list[tuple[str, str]] = field(default_factory=list)
    deny: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def load(cls, workdir: Path, console: Console | None = None) -> Rules | None:
        """The work directory's rules; None when it has no rules file (the mode is off).
        A file that is not rules gives none, so that everything is asked about: a typo
        must not let a denied command through, nor stop the agent with a traceback."""
        path = workdir / RULES_FILE
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError('it is not a JSON object such as {"allow": [...]}')
            return cls(parsed(data.get("allow", [])), parsed(data.get("deny", [])))
        except (OSError, ValueError) as error:  # not UTF-8, not JSON, a rule of another shape
            why = f"{RULES_FILE} is not used: {error}; every command and write is asked about"
            (console or Console()).warn(why)
            return cls()

    def decide(self, tool: str, args: Mapping[str, Any]) -> str:
        """One tool call's fate: "allow", "ask" or "deny"."""
        if tool == "bash":
            return self.decide_parts("bash", command_parts(str(args.get("command", ""))))
        if tool in WRITERS:
            return self.decide_parts("write", [written_path(str(args.get("path", "")))])
        return "allow"

    def decide_parts(self, kind: str, parts: list[str | None]) -> str:
        """Denied if any part is, allowed if every part is; None, a part no rule can
        judge (a redirection, an unreadable path), is asked about."""
        if any(part is not None and matches(self.deny, kind, part) for part in parts):
            return "deny"
        if parts and all(part is not None and matches(self.allow, kind, part) for part in parts):
            return "allow"
        return "ask"


def parsed(rules: object) -> list[tuple[str, str]]:
    """`["bash(ls*)"]` as `[("bash", "ls*")]`; a rule of another shape is a ValueError."""
    if not isinstance(rules, list):
        raise ValueError(f"allow and deny are lists of rules, not {json.dumps(rules)[:60]}")
    pairs = []
    for rule in rules:
        found = RULE.fullmatch(rule.strip()) if isinstance(rule, str) else None
        if found is None:
            raise ValueError(f"{json.dumps(rule)[:60]} is not bash(PATTERN) or write(PATTERN)")
        pairs.append((found.group(1), found.group(2)))
    return pairs


def matches(rules: list[tuple[str, str]], kind: str, text: str) -> bool:
    return any(k == kind and fnmatchcase(text, pattern) for k, pattern in rules)


def command_parts(command: str) -> list[str | None]:
    """Each simple command of `command` (`a && b | c` is three), words joined by a space;
    None for one that redirects to or from a file, which no command rule covers."""
    parts: list[str | None] = []
    for words in simple_commands(command):
        redirected = any(REDIRECTION.match(word) for word in words[1:])
        parts.append(None if redirected else " ".join(words))
    return parts


def written_path(path: str) -> str | None:
    """The path as the work directory sees it, or None for one outside it."""
    normal = posixpath.normpath(path.replace("\\", "/"))
    if normal.startswith(("/", "../", "~")) or normal == "..":
        return None
    return normal


def question(tool: str, args: Mapping[str, Any]) -> str:
    """One line that quotes what the call would do."""
    what = args.get("command") if tool == "bash" else args.get("path")
    return f"allow {tool}: {' '.join(str(what).split())} ? [y/N] "


def ask_person(text: str) -> bool:
    """Ask on the terminal and wait for the answer; only y or yes is a yes."""
    with Console.held():  # one question at a time, and no other agent's lines meanwhile
        print(text, end="", flush=True)
        answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def gated(
    handlers: Mapping[str, Callable[..., str]],
    rules: Rules | None,
    ask: Callable[[str], bool] = ask_person,
) -> dict[str, Callable[..., str]]:
    """The same handlers, those that run commands or write behind the rules (if any)."""
    if rules is None:
        return dict(handlers)
    return {name: guard(name, handler, rules, ask) for name, handler in handlers.items()}


def guard(
    name: str, handler: Callable[..., str], rules: Rules, ask: Callable[[str], bool]
) -> Callable[..., str]:
    def guarded(workdir: Path, **args: Any) -> str:
        decision = rules.decide(name, args)
        if decision == "deny":
            raise ToolError(
                f"refused: the rules in {RULES_FILE} deny this {name} call. Do not try it "
                "another way; finish what you can and tell the person what is left."
            )
        if decision == "ask" and not ask(question(name, args)):
            raise ToolError(
                f"refused: the person said no to this {name} call. Do not try it another "
                "way; finish what you can and say what you would have done."
            )
        return handler(workdir, **args)

    return guarded
