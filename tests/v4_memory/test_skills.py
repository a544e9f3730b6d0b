"""Chapter 4's skills: front matter, the index, load_skill through the tool door."""

from __future__ import annotations

from pathlib import Path

import pytest

from machine.frontmatter import parse_front_matter
from v1_tool_loop.tools import run_tool
from v4_memory.skills import (
    BUNDLED,
    LOAD_SKILL_TOOL,
    MAX_DESCRIPTION,
    find_skills,
    load_skill,
    read_skill,
    skills_index,
)

SCHEMAS = {"load_skill": LOAD_SKILL_TOOL}
HANDLERS = {"load_skill": load_skill}
# The bundled skills are whatever folders v4_memory/skills holds: adding one needs no edit
# here, only a skill that keeps the rules below (docs/en/teaching.md, section 4).
BUNDLED_NAMES = sorted(p.name for p in BUNDLED.iterdir() if (p / "SKILL.md").is_file())
PAGE_LINES = 60  # a skill's body fits on a page: longer instructions are read past


def call_load_skill(workdir: Path, args: object):
    return run_tool("load_skill", args, workdir, schemas=SCHEMAS, handlers=HANDLERS)


def write_skill(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    return folder


def skill_text(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


# --- front matter ----------------------------------------------------------------------


def test_front_matter_gives_its_fields_and_the_body() -> None:
    text = (
        "---\nname: deploy\n\ndescription: Ship it: the release steps.\nlicense: MIT\n---\n"
        "\n# Deploying\n\n1. Tag the release.\n"
    )
    fields, body = parse_front_matter(text)
    assert fields == {
        "name": "deploy",
        "description": "Ship it: the release steps.",
        "license": "MIT",
    }
    assert body == "# Deploying\n\n1. Tag the release."


def test_windows_line_ends_and_a_byte_order_mark_are_read(tmp_path: Path) -> None:
    folder = tmp_path / "deploy"
    folder.mkdir()
    text = skill_text("deploy", "Ship it.", "1. Tag.\n2. Push.").replace("\n", "\r\n")
    (folder / "SKILL.md").write_bytes(b"\xef\xbb\xbf" + text.encode())
    skill = read_skill(folder)
    assert (skill.name, skill.description, skill.body) == (
        "deploy",
        "Ship it.",
        "1. Tag.\n2. Push.",
    )


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("# Deploy\n\nNo front matter.", "the file must start with a '---' line"),
        (
            "---\nname: deploy\ndescription: Ship it.\n# Deploy",
            "the front matter has no closing '---' line",
        ),
        ("---\nname: deploy\ntags:\n  - release\n---\nBody", "line 4 is not a 'key: value' line"),
        (
            "---\nname: deploy\ndescription: >\n  Ship it.\n---\nBody",
            "line 4 is not a 'key: value'",
        ),
        ("---\nname deploy\n---\nBody", "line 2 is not a 'key: value' line: 'name deploy'"),
        ("---\nname: a\nname: b\n---\nBody", "line 3: 'name' is given twice"),
        ("", "the file must start with a '---' line"),
    ],
)
def test_malformed_front_matter_is_refused_naming_the_line(text: str, error: str) -> None:
    with pytest.raises(ValueError, match="^" + error.replace("(", r"\(")) as raised:
        parse_front_matter(text)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("---\nname: deploy\n---\nBody", "the front matter has no description"),
        ("---\ndescription: Ship it.\n---\nBody", "the front matter has no name"),
        ("---\nlicense: MIT\n---\nBody", "the front matter has no name and no description"),
        ("---\nname: deploy\ndescription:\n---\nBody", "the front matter has no description"),
        (skill_text("deploy", "Ship it.", ""), "there are no instructions"),
        (skill_text("Deploy_Now", "Ship it.", "Body"), "name 'Deploy_Now' must be lower-case"),
        (skill_text("release", "Ship it.", "Body"), "name 'release' differs from its folder's"),
        (skill_text("deploy", "x" * (MAX_DESCRIPTION + 1), "Body"), "the description is 1,025"),
    ],
)
def test_a_skill_without_what_it_needs_is_refused(tmp_path: Path, text: str, error: str) -> None:
    folder = write_skill(tmp_path / "deploy", text)
    with pytest.raises(ValueError, match="^" + error):
        read_skill(folder)


# --- finding and listing -------------------------------------------------------------


def test_the_bundled_skills_are_found_sorted_and_each_fits_on_a_page(tmp_path: Path) -> None:
    skills, problems = find_skills(tmp_path)
    assert list(skills) == BUNDLED_NAMES and problems == []
    for skill in skills.values():
        where = f"v4_memory/skills/{skill.name}/SKILL.md"
        assert skill.path == BUNDLED / skill.name / "SKILL.md", f"{where}: name it as its folder"
        assert "Use when" in skill.description, (
            f"{where}: the description should say when to load it ('Use when …'): the model "
            "reads only that line until it loads the skill"
        )
        lines = len(skill.body.splitlines())
        assert lines <= PAGE_LINES, (
            f"{where}: the body has {lines} lines; a skill fits on a page, {PAGE_LINES} at most"
        )


def test_the_index_lists_names_and_descriptions_only(tmp_path: Path) -> None:
    skills, _ = find_skills(tmp_path)
    index = skills_index(skills)
    lines = index.splitlines()
    assert "load_skill" in lines[0]
    assert lines[1:] == [f"- {s.name}: {s.description}" for s in skills.values()]
    assert all(skill.body.splitlines()[0] not in index for skill in skills.values())
    assert skills_index({}) == ""


def test_a_skill_in_the_home_replaces_the_bundled_one_of_its_name(tmp_path: Path) -> None:
    home = tmp_path / ".agent" / "skills"
    write_skill(home / "commit-message", skill_text("commit-message", "Our style.", "Use ABC-1:"))
    skills, problems = find_skills(tmp_path)
    assert list(skills) == BUNDLED_NAMES and problems == []
    assert skills["commit-message"].path == home / "commit-message" / "SKILL.md"
    assert "- commit-message: Our style." in skills_index(skills)
    assert call_load_skill(tmp_path, {"name": "commit-message"}).content == "Use ABC-1:"


def test_a_skill_added_to_the_home_is_listed_at_once(tmp_path: Path) -> None:
    before, _ = find_skills(tmp_path)
    write_skill(tmp_path / ".agent" / "skills" / "deploy", skill_text("deploy", "Ship.", "Tag."))
    after, _ = find_skills(tmp_path)
    assert "deploy" not in before and list(after) == sorted([*BUNDLED_NAMES, "deploy"])


def test_a_broken_skill_is_skipped_with_a_line_saying_why(tmp_path: Path) -> None:
    home = tmp_path / ".agent" / "skills"
    write_skill(home / "broken", "---\nname: broken\n")
    (home / "empty").mkdir()
    (home / "latin").mkdir()
    (home / "latin" / "SKILL.md").write_bytes(skill_text("latin", "Café", "Body").encode("latin-1"))
    (home / "notes.txt").write_text("not a skill folder")
    skills, problems = find_skills(tmp_path)
    assert list(skills) == BUNDLED_NAMES
    assert problems == [
        f"{home / 'broken' / 'SKILL.md'}: skipped, the front matter has no closing '---' line",
        f"{home / 'empty'}: skipped, it has no SKILL.md",
        f"{home / 'latin' / 'SKILL.md'}: skipped, SKILL.md is not UTF-8 text (byte at offset 32)",
    ]


# --- load_skill through chapter 1's tool door ----------------------------------------


def test_load_skill_returns_the_body(tmp_path: Path) -> None:
    result = call_load_skill(tmp_path, {"name": "write-test"})
    assert not result.is_error
    assert result.content == read_skill(BUNDLED / "write-test").body
    assert result.content.startswith("# Writing a test")


def test_an_unknown_skill_is_an_error_result_listing_the_skills(tmp_path: Path) -> None:
    result = call_load_skill(tmp_path, {"name": "pdf"})
    assert result.is_error
    assert result.content == (
        f"there is no skill named 'pdf'; the skills are: {', '.join(BUNDLED_NAMES)}"
    )


def test_a_malformed_call_is_an_error_result(tmp_path: Path) -> None:
    result = call_load_skill(tmp_path, {"skill": "write-test"})
    assert result.is_error and "missing argument(s): name" in result.content
