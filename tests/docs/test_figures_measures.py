"""The measures chapter 4's figures are made of: what listing skills saves, and what two
prompts share at their start.  They count the chapter's own skills and prompts, but the agent
never needs them, so they live with the figures."""

from __future__ import annotations

from pathlib import Path

from lab.figures.chapter4_prompt import listing_vs_loading, shared_prefix_tokens
from llm.tokens import estimate_text, estimate_tool
from v4_memory.skills import BUNDLED, LOAD_SKILL_TOOL, find_skills, skills_index

# The bundled skills are whatever folders v4_memory/skills holds
# (see tests/v4_memory/test_skills.py).
BUNDLED_NAMES = sorted(p.name for p in BUNDLED.iterdir() if (p / "SKILL.md").is_file())
SAVING = 5  # the body is at least five times its index line, or listing it saves nothing


def write_skill(folder: Path, name: str, description: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")


# --- what listing saves ----------------------------------------------------------------


def test_listing_costs_a_line_per_skill_and_loading_costs_the_body(tmp_path: Path) -> None:
    skills, _ = find_skills(tmp_path)
    costs = listing_vs_loading(skills)
    assert [name for name, _, _ in costs.per_skill] == BUNDLED_NAMES
    for name, listed, loaded in costs.per_skill:
        assert listed == estimate_text(f"- {name}: {skills[name].description}")
        assert loaded == estimate_text(skills[name].body)
        assert listed * SAVING < loaded, (
            f"v4_memory/skills/{name}/SKILL.md: its body ({loaded} tokens) is under {SAVING} "
            f"times its index line ({listed}): listing it saves nothing; write more, or put "
            "it in the prompt"
        )
    assert costs.listing == estimate_text(skills_index(skills)) + estimate_tool(LOAD_SKILL_TOOL)
    assert costs.listing < costs.everything
    assert costs.everything >= sum(loaded for _, _, loaded in costs.per_skill)


def test_one_more_skill_adds_its_line_to_the_listing_and_its_body_to_everything(
    tmp_path: Path,
) -> None:
    before = listing_vs_loading(find_skills(tmp_path)[0])
    body = "1. Tag the release.\n2. Push the tag.\n3. Watch the pipeline."
    write_skill(tmp_path / ".agent" / "skills" / "deploy", "deploy", "Ship.", body)
    after = listing_vs_loading(find_skills(tmp_path)[0])
    line = estimate_text("- deploy: Ship.")
    assert line <= after.listing - before.listing <= line + 1
    assert after.everything - before.everything >= estimate_text(body)


# --- what a prefix cache can reuse -----------------------------------------------------


def test_shared_prefix_counts_the_identical_start_only() -> None:
    assert shared_prefix_tokens("same start, then one", "same start, then two") == estimate_text(
        "same start, then "
    )
    assert shared_prefix_tokens("abc", "xyz") == 0
