"""Skills: know-how for particular jobs, listed in every prompt, read only when needed.

A skill is a folder holding one `SKILL.md`: `key: value` lines between two `---` lines
(`name`, the folder's name, and `description` are required; other keys are ignored),
then the instructions in Markdown.  The prompt lists each skill in one line
(`skills_index`); the model calls `load_skill(name)` for the instructions in the one
turn that needs them.  Skills are read afresh from two places, and one in the agent's
home replaces a bundled one of the same name:

    v4_memory/skills/<name>/SKILL.md           bundled with the chapter
    <work dir>/.agent/skills/<name>/SKILL.md   the agent's home: the person's own
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from machine import ToolError, read_agent_file

BUNDLED = Path(__file__).parent / "skills"
HOME_SKILLS = Path(".agent", "skills")  # inside the work directory
NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
KEY = re.compile(r"[A-Za-z][\w-]*")
MAX_NAME = 64  # characters; a name is typed by the model, so it stays short
MAX_DESCRIPTION = 1_024  # characters; it is in every prompt, one line per skill
MAX_SKILL_BYTES = 100_000  # a SKILL.md larger than this would crowd the context out

LOAD_SKILL_TOOL: dict[str, Any] = {
    "name": "load_skill",
    "description": (
        "Load the full instructions of a skill listed under Skills in the system prompt. "
        "Call it before doing a job that a skill's description matches, then follow the "
        "instructions it returns."
    ),
    "input_schema": {
        "type": "object",
        "properties": {"name": {"type": "string", "description": "The skill's name, as listed."}},
        "required": ["name"],
    },
}


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str
    path: Path


def parse_front_matter(text: str) -> tuple[dict[str, str], str]:
    """The `key: value` fields between the two `---` lines, and the body after them; not YAML,
    so a YAML list or an indented line is a ValueError that names the line."""
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


def skill_from(text: str, folder: Path) -> Skill:
    """The skill a SKILL.md describes, checked; ValueError says what to fix."""
    fields, body = parse_front_matter(text)
    missing = [key for key in ("name", "description") if not fields.get(key)]
    if missing:
        raise ValueError(f"the front matter has no {' and no '.join(missing)}")
    name, description = fields["name"], fields["description"]
    if not NAME.fullmatch(name) or len(name) > MAX_NAME:
        raise ValueError(
            f"name {name!r:.70} must be lower-case letters, digits and hyphens, "
            f"at most {MAX_NAME} characters"
        )
    if name != folder.name:
        raise ValueError(f"name {name!r} differs from its folder's name {folder.name!r}")
    if len(description) > MAX_DESCRIPTION:
        raise ValueError(
            f"the description is {len(description):,} characters, at most "
            f"{MAX_DESCRIPTION:,}: say what the skill does and when to use it, no more"
        )
    if not body:
        raise ValueError("there are no instructions after the front matter")
    return Skill(name, description, body, folder / "SKILL.md")


def read_skill(folder: Path, workdir: Path | None = None) -> Skill:
    """The skill in `folder`, read as the agent's own files are (inside `workdir`, never
    through a link), since a cloned repository may ship any `.agent/skills/`; ValueError,
    ToolError or OSError when its SKILL.md cannot be used."""
    data = read_agent_file(workdir or folder, folder / "SKILL.md", MAX_SKILL_BYTES)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(f"SKILL.md is not UTF-8 text (byte at offset {error.start:,})") from None
    return skill_from(text, folder)


def find_skills(workdir: str | Path) -> tuple[dict[str, Skill], list[str]]:
    """Every usable skill by name, sorted, and one line for each folder that was skipped; the
    home's skills are read last, so they replace bundled ones of the same name."""
    skills: dict[str, Skill] = {}
    problems: list[str] = []
    for boundary, root in ((BUNDLED, BUNDLED), (Path(workdir), Path(workdir) / HOME_SKILLS)):
        folders = sorted(root.iterdir()) if root.is_dir() else []
        for folder in (folder for folder in folders if folder.is_dir()):
            try:
                skill = read_skill(folder, boundary)
            except FileNotFoundError:
                problems.append(f"{folder}: skipped, it has no SKILL.md")
            except (ValueError, ToolError, OSError) as error:
                problems.append(f"{folder / 'SKILL.md'}: skipped, {error}")
            else:
                skills[skill.name] = skill
    return dict(sorted(skills.items())), problems


def skills_index(skills: Mapping[str, Skill]) -> str:
    """What the prompt says about skills: how to use them, then one line per skill."""
    if not skills:
        return ""
    lines = [
        "Skills are instructions for particular jobs. When a job matches a description "
        "below, call load_skill with the skill's name first, then follow what it says."
    ]
    lines += [index_line(skill) for skill in skills.values()]
    return "\n".join(lines)


def index_line(skill: Skill) -> str:
    return f"- {skill.name}: {skill.description}"


def load_skill(workdir: Path, name: str) -> str:
    """The tool's handler: a skill's instructions, read afresh, or an error listing the skills."""
    skills, _ = find_skills(workdir)
    if name not in skills:
        listed = ", ".join(skills) or "none"
        raise ToolError(f"there is no skill named {name!r:.60}; the skills are: {listed}")
    return skills[name].body
