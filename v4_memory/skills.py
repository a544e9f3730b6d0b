"""Skills: know-how for particular jobs, listed in every prompt, read only when needed.

A skill is a folder with a `SKILL.md`: `name` and `description` as `key: value` lines
between two `---` lines, then the instructions.  The prompt lists each in one line
(`skills_index`); `load_skill(name)` returns the instructions when the model needs them.
Bundled in `v4_memory/skills/`; the person's own, in `.agent/skills/`, win on a name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm import Console
from machine import ToolError, read_agent_text, shown_name
from machine.frontmatter import parse_front_matter

BUNDLED = Path(__file__).parent / "skills"
HOME_SKILLS = Path(".agent", "skills")  # inside the work directory
NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
MAX_DESCRIPTION = 1_024  # characters; it is in every prompt, one line per skill
MAX_SKILL_BYTES = 100_000  # a SKILL.md larger than this would crowd the context out

USING_SKILLS = (
    "Skills are instructions for particular jobs. When a job matches a description "
    "below, call load_skill with the skill's name first, then follow what it says."
)
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


def read_skill(folder: Path, workdir: Path | None = None) -> Skill:
    """The skill in `folder`, read as the agent's own files are (inside `workdir`, never
    through a link, since a clone may ship any `.agent/skills/`); ValueError says what to fix."""
    text = read_agent_text(workdir or folder, folder / "SKILL.md", MAX_SKILL_BYTES)
    fields, body = parse_front_matter(text)
    missing = [key for key in ("name", "description") if not fields.get(key)]
    if missing:
        raise ValueError(f"the front matter has no {' and no '.join(missing)}")
    name, description = fields["name"], fields["description"]
    if not NAME.fullmatch(name):
        raise ValueError(f"name {name!r:.70} must be lower-case letters, digits and hyphens")
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


def find_skills(workdir: str | Path) -> tuple[dict[str, Skill], list[str]]:
    """Every usable skill by name, sorted, and a line for each folder skipped; home's last."""
    skills: dict[str, Skill] = {}
    problems: list[str] = []
    for boundary, root in ((BUNDLED, BUNDLED), (Path(workdir), Path(workdir) / HOME_SKILLS)):
        folders = sorted(root.iterdir()) if root.is_dir() else []
        for folder in (folder for folder in folders if folder.is_dir()):
            try:  # a skill's name is its folder's
                skills[folder.name] = read_skill(folder, boundary)
            except FileNotFoundError:
                problems.append(f"{shown_name(folder)}: skipped, it has no SKILL.md")
            except (ValueError, ToolError, OSError) as error:
                problems.append(f"{shown_name(folder / 'SKILL.md')}: skipped, {error}")
    return dict(sorted(skills.items())), problems


def skills_index(skills: Mapping[str, Skill]) -> str:
    """What the prompt says about skills: how to use them, then one line per skill."""
    if not skills:
        return ""
    return "\n".join([USING_SKILLS, *(index_line(skill) for skill in skills.values())])


def skills_for(workdir: Path, console: Console) -> str:
    """The skills index for a run, read once (parsing them takes time); each skipped, said."""
    found, skipped = find_skills(workdir)
    for problem in skipped:
        console.warn(f"skill {problem}")
    return skills_index(found)


def index_line(skill: Skill) -> str:
    return f"- {shown_name(skill.name)}: {skill.description}"


def load_skill(workdir: Path, name: str) -> str:
    """The tool's handler: a skill's instructions, read afresh, or an error listing the skills."""
    skills, _ = find_skills(workdir)
    if name not in skills:
        listed = ", ".join(skills) or "none"
        raise ToolError(f"there is no skill named {name!r:.60}; the skills are: {listed}")
    return skills[name].body


SKILLS = {"load_skill": load_skill}  # the skills' tool handler, by name
