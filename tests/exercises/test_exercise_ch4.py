"""Chapter 4's exercise checks refuse the wrong answers a learner could hand in: each is
the worked solution of `docs/en/solutions.md` with one thing wrong, applied to a copy
of the course, and the check, run there as the learner runs it, says "not done".

Each diff is made for the course as it ships: in a course where the exercises are done,
it no longer applies, so the module is marked `docs`, as the tests that pin the shipped
course are."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.solutions import (
    apply_diff,
    builds_on_the_solutions,
    copy_course,
    read_solutions,
    run_check,
)

pytestmark = [
    pytest.mark.docs,  # the course as it ships: doing the exercise changes it
    builds_on_the_solutions(),
]
SOLUTIONS = read_solutions()
LAYER = '+        section("user", *read_capped(workdir, HOME / "USER.md", USER_CAP)),'
RULE = '+    kept = [b for b in content if b["type"] != "text" or str(b.get("text", "")).strip()]'
NOTE = (
    '+    notes.append(f"message {number}: {len(content) - len(kept)} empty text block(s) dropped")'
)


def code_of(number: str) -> str:
    """The solution's change to the course's code: its first diff (the second is a test)."""
    return next(block.text for block in SOLUTIONS[number].blocks if block.kind == "diff")


def changed(number: str, old: str, new: str) -> str:
    code = code_of(number)
    assert old in code, f"the worked solution {number} no longer has {old!r}"
    return code.replace(old, new)


def check(number: str, diff: str, tmp_path: Path) -> str:
    """The check's output on a copy of the course with `diff` applied."""
    course, home = copy_course(tmp_path / "course"), tmp_path / "home"
    home.mkdir()
    apply_diff(course, diff)
    done = run_check(f"python -m lab exercise {number}", course, home)
    return done.stdout + done.stderr + f"(exit code {done.returncode})"


WRONG_LAYERS = {
    "a layer that never reads its file": (
        '+        section("user", "Name: Ada Lovelace. Role: engineer. Speaks English."),',
        "the user layer does not show it",
    ),
    "a layer read without a cap": (
        '+        section("user", *read_capped(workdir, HOME / "USER.md", 10**9)),',
        "cap the file's text at 500 tokens",
    ),
    "a cap far below the one asked": (
        '+        section("user", *read_capped(workdir, HOME / "USER.md", USER_CAP // 5)),',
        "",  # a short file may show it first: it is cut
    ),
    "a cap in characters, not tokens": (
        '+        section("user", read_capped(workdir, HOME / "USER.md", 10**9)[0][:500]),',
        "",
    ),
    "only the first line of the file": (
        '+        section("user", read_capped(workdir, HOME / "USER.md", USER_CAP)[0]'
        '.split("\\n")[0]),',
        "",
    ),
    "a cut the layer does not mark": (
        '+        section("user", read_capped(workdir, HOME / "USER.md", USER_CAP)[0]),',
        "cap the file's text at 500 tokens",
    ),
    "a cut that says nothing of it": (
        '+        section("user", *(lambda text, cut: (text.split("\\n[… cut")[0], cut))('
        '*read_capped(workdir, HOME / "USER.md", USER_CAP))),',
        "say in the layer that the file was cut",
    ),
    "the file read as it is, without the path rule": (
        '+        section("user", *capped((workdir / HOME / "USER.md").read_text("utf-8").strip()'
        ' if (workdir / HOME / "USER.md").exists() else "", USER_CAP, "USER.md")),',
        "the key is in the prompt",
    ),
    "the file read once and kept": (
        '+        section("user", *read_capped.__dict__.setdefault(str(workdir), '
        'read_capped(workdir, HOME / "USER.md", USER_CAP))),',
        "the next prompt does not show the change",
    ),
    "the file at the project's root": (
        '+        section("user", *read_capped(workdir, Path("USER.md"), USER_CAP)),',
        "the user layer does not show it",
    ),
}


@pytest.mark.parametrize("wrong", WRONG_LAYERS)
def test_a_wrong_user_layer_is_not_done(wrong: str, tmp_path: Path) -> None:
    line, says = WRONG_LAYERS[wrong]
    shown = check("4.2", changed("4.2", LAYER, line), tmp_path)
    assert "4.2 A new prompt layer: not done yet." in shown and "(exit code 1)" in shown, shown
    assert says in shown, shown


INSTEAD_OF_OTHERS = """--- a/v4_memory/prompt.py
+++ b/v4_memory/prompt.py
@@ def build_layers(
-        section("skills", *capped(skills_index, SKILLS_CAP, "the skills index")),
@@ section("channel", CHANNEL),
-        section("memory", *read_memory(workdir, recalled)),
"""


def test_a_user_layer_that_takes_the_place_of_others_is_not_done(tmp_path: Path) -> None:
    shown = check("4.2", code_of("4.2") + INSTEAD_OF_OTHERS, tmp_path)
    assert "not done yet." in shown and "keep every other one" in shown, shown


def test_a_user_layer_in_the_wrong_place_is_not_done(tmp_path: Path) -> None:
    code = code_of("4.2").replace(
        '         section("soul", *read_capped(workdir, HOME / "SOUL.md", SOUL_CAP)),\n' + LAYER,
        '         section("tools", tools_guidance),\n' + LAYER,
    )
    assert code != code_of("4.2")
    shown = check("4.2", code, tmp_path)
    assert "not done yet." in shown and "put the user layer right after soul" in shown, shown


WRONG_RULES = {
    "every text block dropped": (
        RULE,
        '+    kept = [b for b in content if b["type"] != "text"]',
        "other block(s) lost",
    ),
    "only a first empty block dropped": (
        RULE,
        '+    kept = content[1:] if content and content[0] == {"type": "text", "text": ""}'
        " else content",
        "empty text block(s) left",
    ),
    "only the assistant's empty blocks dropped": (
        RULE,
        '+    kept = [b for b in content if message["role"] == "user" or b["type"] != "text"'
        ' or b["text"]]',
        "empty text block(s) left",
    ),
    "short text blocks dropped with the empty ones": (
        RULE,
        '+    kept = [b for b in content if b["type"] != "text" or len(b["text"].strip()) >= 15]',
        "other block(s) lost",
    ),
    "the whole message dropped with its empty block": (
        RULE,
        '+    kept = [] if {"type": "text", "text": ""} in content else content',
        "other block(s) lost",
    ),
    "no note in repairs": (NOTE, "+    pass", "and the repairs"),
    "a note that names no message": (
        NOTE,
        '+    notes.append("empty text blocks dropped")',
        "and the repairs",
    ),
}


@pytest.mark.parametrize("wrong", WRONG_RULES)
def test_a_wrong_repair_rule_is_not_done(wrong: str, tmp_path: Path) -> None:
    old, new, says = WRONG_RULES[wrong]
    shown = check("4.3", changed("4.3", old, new), tmp_path)
    assert "4.3 A repair rule: not done yet." in shown and "(exit code 1)" in shown, shown
    assert says in shown, shown


ON_LOADING_ONLY = """\
--- a/v4_memory/session.py
+++ b/v4_memory/session.py
@@ def _replay(
             else:
                 self._written.append(record)
+                content = record["content"]
+                if isinstance(content, list) and {"type": "text", "text": ""} in content:
+                    record = {**record, "content": [b for b in content if b.get("text") != ""]}
+                    self.repairs.append(f"message {self._stored}: empty text block(s) dropped")
                 self.repairs += self.history.add(record, self._stored, tokens)
"""


LATE = """\
--- a/llm/repair.py
+++ b/llm/repair.py
@@ def mend(
             notes.append(f"message {number}: no user message before it; a placeholder stands in")
+    message = without_empty_text(message, number, notes)
     if history and history[-1]["role"] == message["role"]:
"""


def test_a_rule_applied_after_the_empty_message_rule_is_not_done(tmp_path: Path) -> None:
    """A message that held only an empty block then stays, with no content, which the APIs
    refuse: unless the next message joins it, as one in the middle of a session would."""
    helper = code_of("4.3")[code_of("4.3").index("@@ def joined(") :]  # the rule itself
    shown = check("4.3", LATE + helper, tmp_path)
    assert "4.3 A repair rule: not done yet." in shown and "(exit code 1)" in shown, shown


def test_a_rule_that_only_loading_applies_is_not_done(tmp_path: Path) -> None:
    shown = check("4.3", ON_LOADING_ONLY, tmp_path)
    assert "not done yet." in shown and "appended to a running session" in shown, shown


def test_the_rule_written_another_way_is_done(tmp_path: Path) -> None:
    """The check asks for what the rule does, not for the worked solution's words."""
    other = changed("4.3", NOTE, '+    notes.append(f"message {number}: dropped blank text")')
    other = other.replace(
        RULE, '+    kept = [b for b in content if b != {"type": "text", "text": ""}]'
    )
    shown = check("4.3", other, tmp_path)
    assert "4.3 A repair rule: done." in shown and "(exit code 0)" in shown, shown
