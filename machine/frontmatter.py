"""Front matter: the `key: value` lines between two `---` lines that open a Markdown file.

Chapter 4's skills (`SKILL.md`) describe themselves so.  Only flat `key: value` lines are
read, not YAML: a skill's name and description need no more, and a parser this small says
exactly which line it cannot read.
"""

from __future__ import annotations

import re

KEY = re.compile(r"[A-Za-z][\w-]*")


def parse_front_matter(text: str) -> tuple[dict[str, str], str]:
    """The `key: value` fields between the `---` lines, and the body; not YAML, so no lists."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError("the file must start with a '---' line, then name: and description:")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise ValueError("the front matter has no closing '---' line")
    fields: dict[str, str] = {}
    for number, line in enumerate(lines[1:end], start=2):
        if not line.strip():
            continue
        key, colon, value = line.partition(":")
        if not colon or not KEY.fullmatch(key):
            raise ValueError(f"line {number} is not a 'key: value' line: {line.strip()!r:.60}")
        if key in fields:
            raise ValueError(f"line {number}: '{key}' is given twice")
        fields[key] = value.strip()
    return fields, "\n".join(lines[end + 1 :]).strip()
