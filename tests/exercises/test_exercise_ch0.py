"""Chapter 0's exercise checks say "not done" to the wrong answers a learner would hand in.

Each wrong answer is made in a copy of the course, as a learner's clone holds it, and the
check runs there as the learner runs it, `python -m lab exercise N.M`, in a process of its
own.  Wrong answers written as changes to the shipped code are marked `docs`: on a course
where the exercise is done, the same change no longer applies.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests import REPO
from tests.solutions import (
    apply_diff,
    builds_on_the_solutions,
    copy_course,
    read_solutions,
    run_check,
)

pytestmark = builds_on_the_solutions()
SOLUTIONS = read_solutions()  # none in a class fork
CORPUS = Path("tests") / "data" / "react_replies.jsonl"


def course(tmp_path: Path, *diffs: str) -> tuple[Path, Path]:
    """A copy of the course with these diffs applied, and the learner's home beside it."""
    root, home = copy_course(tmp_path / "course"), tmp_path / "home"
    home.mkdir()
    for diff in diffs:
        apply_diff(root, diff)
    return root, home


def check(root: Path, home: Path, number: str, *words: str) -> subprocess.CompletedProcess[str]:
    command = " ".join(["python -m lab exercise", number, *map(shlex.quote, words)])
    return run_check(command, root, home)  # a path may hold a space


def not_done(done: subprocess.CompletedProcess[str], hint: str) -> None:
    """The check said "not done yet", with a hint that names what is missing."""
    said = done.stdout + done.stderr
    assert done.returncode == 1 and "not done yet" in done.stdout, said
    assert hint in done.stdout, said


def edit_corpus(root: Path, changes: dict[str, dict | None], *added: dict) -> None:
    """Change corpus cases by id (None removes one) and add cases, as a learner edits it."""
    path = root / CORPUS
    cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    kept = []
    for case in cases:
        if case["id"] in changes:
            if changes[case["id"]] is None:
                continue
            case = case | changes[case["id"]]
        kept.append(case)
    lines = [json.dumps(case, ensure_ascii=False) for case in [*kept, *added]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def corpus_text(name: str) -> str:
    path = REPO / CORPUS
    cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return next(case["text"] for case in cases if case["id"] == name)


def cassette(path: Path, *texts: str) -> Path:
    header = {"format": "cassette/1", "provenance": "scripted", "task": "Fix the tests"}
    replies = [{"content": [{"type": "text", "text": t}], "stop_reason": "end_turn"} for t in texts]
    lines = [json.dumps(header), *(json.dumps({"reply": reply}) for reply in replies)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --- 0.1 Three strikes -------------------------------------------------------------------

MALFORMED = [corpus_text(name) for name in ("plain-prose", "single-quotes", "two-actions")]
STRIKES = "three malformed replies in a row end the run with format_errors"


def test_0_1_two_malformed_replies_are_not_done(tmp_path: Path) -> None:
    root, home = course(tmp_path)
    done = check(root, home, "0.1", str(cassette(tmp_path / "two.jsonl", *MALFORMED[:2])))
    not_done(done, STRIKES)


def test_0_1_a_tolerated_reply_taken_for_a_malformed_one_is_not_done(tmp_path: Path) -> None:
    replies = [MALFORMED[0], corpus_text("zh-fullwidth-colons"), MALFORMED[2]]
    root, home = course(tmp_path)
    not_done(check(root, home, "0.1", str(cassette(tmp_path / "c.jsonl", *replies))), STRIKES)


def test_0_1_more_replies_than_three_are_not_done(tmp_path: Path) -> None:
    root, home = course(tmp_path)
    five = cassette(tmp_path / "five.jsonl", *MALFORMED, *MALFORMED[:2])
    done = check(root, home, "0.1", str(five))
    not_done(done, STRIKES)
    assert "the cassette holds 5 replies" in done.stdout


LIMIT_ONE = """--- a/v0_react_text/agent.py
+++ b/v0_react_text/agent.py
@@ MAX_FORMAT_ERRORS =
-MAX_FORMAT_ERRORS = 3  # in a row: by then the error messages are not helping, turns only cost
+MAX_FORMAT_ERRORS = 1
"""


def test_0_1_one_strike_after_two_good_replies_is_not_done(tmp_path: Path) -> None:
    """A limit lowered to one, so that the third reply, the only malformed one, ends it."""
    root, home = course(tmp_path, LIMIT_ONE)
    good = corpus_text("basic-bash")
    replies = cassette(tmp_path / "c.jsonl", good, good, MALFORMED[0])
    not_done(check(root, home, "0.1", str(replies)), STRIKES)


NO_RESET = """--- a/v0_react_text/agent.py
+++ b/v0_react_text/agent.py
@@ if errors_in_a_row:
             if errors_in_a_row:
                 console.note(f"recovered after {errors_in_a_row} format error(s): this one parses")
-            errors_in_a_row = 0
"""


def test_0_1_a_count_that_never_restarts_is_not_done(tmp_path: Path) -> None:
    """The three strikes end the run, but so would three errors with a good reply between."""
    root, home = course(tmp_path, NO_RESET)
    done = check(root, home, "0.1", str(cassette(tmp_path / "three.jsonl", *MALFORMED)))
    not_done(done, "restarts the count")
    assert "put second it ended with `format_errors`" in done.stdout


REJECT_ALL = """--- a/v0_react_text/parser.py
+++ b/v0_react_text/parser.py
@@ def parse(text: str) -> Step:
     \"\"\"The one step a reply asks for; raises FormatError with a message for the model.\"\"\"
+    raise FormatError("nothing is ever read")
"""


def test_0_1_a_parser_that_rejects_every_reply_is_not_done(tmp_path: Path) -> None:
    """Three well-formed replies, and a parser changed to refuse them all."""
    root, home = course(tmp_path, REJECT_ALL)
    good = [corpus_text(name) for name in ("basic-bash", "no-thought", "final-one-line")]
    not_done(check(root, home, "0.1", str(cassette(tmp_path / "c.jsonl", *good))), "restarts")


# --- 0.2 Accept one more variant ---------------------------------------------------------

# the worked solution's change to _unfence
BACKTICKS = SOLUTIONS["0.2"].blocks[0].text if SOLUTIONS else ""
ACTION_LS = {"type": "action", "tool": "bash", "args": {"command": "ls"}, "thought": ""}
UNFENCE = "let `_unfence` take off one backtick on each side"


@pytest.mark.docs  # the shipped _unfence: with the exercise done, the answer passes
def test_0_2_changing_only_what_the_case_expects_is_not_done(tmp_path: Path) -> None:
    root, home = course(tmp_path)
    edit_corpus(root, {"single-backticks": {"expect": ACTION_LS}})
    not_done(check(root, home, "0.2"), UNFENCE)


@pytest.mark.docs  # the shipped _unfence
def test_0_2_taking_the_backticks_out_of_the_case_is_not_done(tmp_path: Path) -> None:
    """Editing the reply text instead of the code."""
    root, home = course(tmp_path)
    text = 'Action: bash\nAction Input: {"command": "ls"}'
    edit_corpus(root, {"single-backticks": {"text": text, "expect": ACTION_LS}})
    not_done(check(root, home, "0.2"), UNFENCE)


EXACT_INPUT = """--- a/v0_react_text/parser.py
+++ b/v0_react_text/parser.py
@@ def _unfence
     text = text.strip()
+    if text == '`{"command": "ls"}`':
+        return '{"command": "ls"}'
"""


@pytest.mark.docs  # a change to the shipped _unfence
def test_0_2_a_special_case_for_the_corpus_input_is_not_done(tmp_path: Path) -> None:
    root, home = course(tmp_path, EXACT_INPUT)
    edit_corpus(root, {"single-backticks": {"expect": ACTION_LS}})
    not_done(check(root, home, "0.2"), UNFENCE)


EVERY_BACKTICK = """--- a/v0_react_text/parser.py
+++ b/v0_react_text/parser.py
@@ def _unfence
     text = text.strip()
+    text = text.replace("`", "")
"""


@pytest.mark.docs  # a change to the shipped _unfence
def test_0_2_removing_every_backtick_is_not_done(tmp_path: Path) -> None:
    """A rule that fires for backticks inside the JSON's strings too."""
    root, home = course(tmp_path, EVERY_BACKTICK)
    edit_corpus(root, {"single-backticks": {"expect": ACTION_LS}})
    not_done(check(root, home, "0.2"), "backticks inside a JSON string belong to it")


EVERY_BACKTICK_WHEN_WRAPPED = """--- a/v0_react_text/parser.py
+++ b/v0_react_text/parser.py
@@ def _arguments(text: str) -> dict[str, Any]:
     text = _unfence(text)
+    if len(text) > 1 and text[0] == text[-1] == "`":
+        try:
+            json.loads(text)
+        except ValueError:
+            text = text.replace("`", "")
"""


@pytest.mark.docs  # a change to the shipped parser
def test_0_2_every_backtick_taken_off_a_wrapped_input_is_not_done(tmp_path: Path) -> None:
    """Right for most wrapped inputs, and wrong for a command in backticks inside one: a
    wrapped input holding backticks of its own is in every check."""
    root, home = course(tmp_path, EVERY_BACKTICK_WHEN_WRAPPED)
    edit_corpus(root, {"single-backticks": {"expect": ACTION_LS}})
    for _ in range(3):
        not_done(check(root, home, "0.2"), "let `_unfence` take off one backtick")


BACKTICKED_BRACES = """--- a/v0_react_text/parser.py
+++ b/v0_react_text/parser.py
@@ def parse(text: str) -> Step:
     \"\"\"The one step a reply asks for; raises FormatError with a message for the model.\"\"\"
+    text = re.sub(r"`(\\{.*?\\})`", r"\\1", text)
"""


@pytest.mark.docs  # a change to the shipped parser
def test_0_2_taking_the_backticks_off_any_braces_is_not_done(tmp_path: Path) -> None:
    """Right for the whole input, and wrong for braces in backticks inside a file's text."""
    root, home = course(tmp_path, BACKTICKED_BRACES)
    edit_corpus(root, {"single-backticks": {"expect": ACTION_LS}})
    not_done(check(root, home, "0.2"), "backticks inside a JSON string belong to it")


ANY_BACKTICKED_COMMAND = """--- a/v0_react_text/parser.py
+++ b/v0_react_text/parser.py
@@ def _unfence
     text = text.strip()
+    if len(text) > 1 and text[0] == text[-1] == "`":
+        inner = text[1:-1]
+        return inner if inner.startswith("{") else json.dumps({"command": inner})
"""


@pytest.mark.docs  # a change to the shipped _unfence
def test_0_2_a_backticked_shell_command_taken_for_json_is_not_done(tmp_path: Path) -> None:
    root, home = course(tmp_path, ANY_BACKTICKED_COMMAND)
    edit_corpus(root, {"single-backticks": {"expect": ACTION_LS}})
    not_done(check(root, home, "0.2"), "a backticked shell command must stay a format error")


@pytest.mark.docs  # the shipped corpus
def test_0_2_the_rule_without_the_corpus_case_moved_is_not_done(tmp_path: Path) -> None:
    root, home = course(tmp_path, BACKTICKS)
    not_done(check(root, home, "0.2"), "make each case's `expect` what the parser now gives")


CLOSED_FENCES_ONLY = """--- a/v0_react_text/parser.py
+++ b/v0_react_text/parser.py
@@ def _unfence
     text = text.strip()
-    if text.startswith("```"):
+    if text.startswith("```") and text.endswith("```") and len(text) > 6:
         text = text[3:].lstrip(string.ascii_letters)  # the language tag: json, JSON, …
         if text.rstrip().endswith("```"):
             text = text.rstrip()[:-3]
+    elif len(text) > 1 and text[0] == text[-1] == "`":  # inline code: `{"command": "ls"}`
+        text = text[1:-1]
"""
UNCLOSED_REFUSED = {"type": "error", "message_contains": ["not valid JSON"]}


@pytest.mark.docs  # a change to the shipped _unfence
def test_0_2_a_tolerated_case_broken_and_its_expect_changed_is_not_done(tmp_path: Path) -> None:
    """The rule written so that a fence the stop sequence left open no longer parses, and
    that case's `expect` changed to match: every case gives what it expects, one wrongly."""
    root, home = course(tmp_path, CLOSED_FENCES_ONLY)
    moved = {"single-backticks": {"expect": ACTION_LS}}
    edit_corpus(root, moved | {"unclosed-fence": {"expect": UNCLOSED_REFUSED}})
    not_done(check(root, home, "0.2"), "`unclosed-fence`")


# --- 0.3 Add the full-width stop sequence --------------------------------------------------


def stop_list(entries: str) -> str:
    """A diff that sets STOP, whatever it holds now."""
    return (
        "--- a/v0_react_text/agent.py\n+++ b/v0_react_text/agent.py\n@@ STOP =\n"
        f"-{stop_line()}\n+STOP = [{entries}]\n"
    )


def stop_line() -> str:
    agent = REPO / "v0_react_text" / "agent.py"
    return next(line for line in agent.read_text(encoding="utf-8").splitlines() if "STOP =" in line)


def test_0_3_only_the_full_width_entry_is_not_done(tmp_path: Path) -> None:
    """The list replaced by the one entry the exercise names."""
    root, home = course(tmp_path, stop_list('"Observation："'))
    not_done(check(root, home, "0.3"), 'keep "Observation:" in STOP')


@pytest.mark.parametrize(
    "entries",
    ['"\\nObservation:", "Observation:", "\\nObservation："', '"\\nObservation:", "Observation："'],
    ids=["no bold full-width", "no bold ASCII"],
)
def test_0_3_a_list_that_misses_one_spelling_is_never_done(entries: str, tmp_path: Path) -> None:
    """`**Observation：**` or `**Observation:**` left uncut: every run has all four spellings."""
    root, home = course(tmp_path, stop_list(entries))
    not_done(check(root, home, "0.3"), "did not cut the reply")


def test_0_3_every_variant_in_the_list_is_not_done(tmp_path: Path) -> None:
    variants = ["\\nObservation:", "Observation:", "Observation：", "\\nObservation："]
    variants += ["**Observation**:", "Observation :"]
    root, home = course(tmp_path, stop_list(", ".join(f'"{v}"' for v in variants)))
    not_done(check(root, home, "0.3"), "OpenAI accepts at most 4 stop sequences")


def test_0_3_the_word_without_its_colon_is_not_done(tmp_path: Path) -> None:
    """Cuts every invented observation, and a thought that only names the word too."""
    root, home = course(tmp_path, stop_list('"Observation"'))
    not_done(check(root, home, "0.3"), "the word alone is no observation")


CUT_IN_THE_LOOP = """--- a/v0_react_text/agent.py
+++ b/v0_react_text/agent.py
@@ text, invented = split_off_observation
-            text, invented = split_off_observation(text_of(reply.content))
+            cut = text_of(reply.content).split("Observation：")[0]
+            text, invented = split_off_observation(cut)
"""


def test_0_3_cutting_the_reply_in_the_loop_instead_is_not_done(tmp_path: Path) -> None:
    """No invented observation is counted, but the provider was never asked to stop."""
    root, home = course(tmp_path, stop_list('"\\nObservation:", "Observation:"'), CUT_IN_THE_LOOP)
    done = check(root, home, "0.3")
    not_done(done, 'add "Observation：" (a full-width colon) to STOP')
    assert "did not cut the reply" in done.stdout


# --- 0.5 Support Chinese keywords ---------------------------------------------------------

# the worked solution's change to the parser
CHINESE = SOLUTIONS["0.5"].blocks[0].text if SOLUTIONS else ""
MOVED = {
    "type": "action",
    "tool": "bash",
    "args": {"command": "ls"},
    "thought": "我先看看有哪些文件。",
}
OWN_CASES = [
    {
        "id": "zh-own-final",
        "group": "tolerated",
        "text": "思考：都通过了。\n最终答案：已修复。",
        "expect": {"type": "final", "answer": "已修复。", "thought": "都通过了。"},
        "invented_observation": False,
    },
    {
        "id": "zh-own-mixed",
        "group": "tolerated",
        "text": 'Thought: 先读。\n行动：read_file\nAction Input: {"path": "a.py"}',
        "expect": {"type": "action", "tool": "read_file", "args": {"path": "a.py"}}
        | {"thought": "先读。"},
        "invented_observation": False,
    },
]
ACCEPT = "accept 思考, 行动, 行动输入 and 最终答案"


def solved_corpus(root: Path) -> None:
    edit_corpus(root, {"zh-translated-keywords": {"expect": MOVED}}, *OWN_CASES)


@pytest.mark.docs  # the shipped parser
def test_0_5_the_corpus_without_the_code_is_not_done(tmp_path: Path) -> None:
    root, home = course(tmp_path)
    solved_corpus(root)
    not_done(check(root, home, "0.5"), ACCEPT)


EXACT_REPLY = """--- a/v0_react_text/parser.py
+++ b/v0_react_text/parser.py
@@ def parse(text: str) -> Step:
     \"\"\"The one step a reply asks for; raises FormatError with a message for the model.\"\"\"
+    if text.startswith("思考：我先看看有哪些文件。"):
+        return Action("bash", {"command": "ls"}, "我先看看有哪些文件。")
"""


@pytest.mark.docs  # a change to the shipped parser
def test_0_5_a_special_case_for_the_corpus_reply_is_not_done(tmp_path: Path) -> None:
    root, home = course(tmp_path, EXACT_REPLY)
    solved_corpus(root)
    not_done(check(root, home, "0.5"), ACCEPT)


ZH_HINTS = (
    "a keyword counts only at the start of a line",
    "keywords inside the Action Input's JSON are text",
    "accept 思考, 行动, 行动输入",
)
REPLACE_EVERYWHERE = """--- a/v0_react_text/parser.py
+++ b/v0_react_text/parser.py
@@ def parse(text: str) -> Step:
     \"\"\"The one step a reply asks for; raises FormatError with a message for the model.\"\"\"
+    english = {"思考": "Thought", "行动输入": "Action Input", "行动": "Action"}
+    english["最终答案"] = "Final Answer"
+    text = re.sub("(思考|行动输入|行动|最终答案)[:：]", lambda m: english[m[1]] + ":", text)
"""


@pytest.mark.docs  # a change to the shipped parser
def test_0_5_translating_the_words_everywhere_in_the_reply_is_not_done(tmp_path: Path) -> None:
    """Right for every keyword line, and wrong inside the JSON of a write_file."""
    root, home = course(tmp_path, REPLACE_EVERYWHERE)
    solved_corpus(root)
    said = check(root, home, "0.5")
    # Refused for the JSON, or first for a keyword line the replacement misses (`**行动**:`,
    # `行动 :`): the replies drawn decide which.
    not_done(said, next((hint for hint in ZH_HINTS if hint in said.stdout), ZH_HINTS[1]))


SEARCH_ANYWHERE = """--- a/v0_react_text/parser.py
+++ b/v0_react_text/parser.py
@@ def _markers
-        match = KEYWORD_LINE.match(line)
+        match = KEYWORD_LINE.match(line) or CHINESE_ANYWHERE.search(line)
         if match:
             keyword = " ".join(match.group(1).lower().split())  # "Action  Input" -> "action input"
+            keyword = CHINESE_KEYWORDS.get(keyword, keyword)
@@ def _lines
+CHINESE_ANYWHERE = re.compile("(思考|行动输入|行动|最终答案)[:：]")
+CHINESE_KEYWORDS = {"思考": "thought", "行动输入": "action input", "行动": "action"}
+CHINESE_KEYWORDS["最终答案"] = "final answer"
+
+
 def _lines(text: str) -> list[str]:
"""


AT_THE_START_ONLY = SEARCH_ANYWHERE.replace("CHINESE_ANYWHERE.search(line)", "ZH_LINE.match(line)")
AT_THE_START_ONLY = AT_THE_START_ONLY.replace("+CHINESE_ANYWHERE = ", "+ZH_LINE = ")
# Bold, indented and either colon, as in English, but no space before the colon (`行动 ：`).
NO_SPACE_BEFORE_THE_COLON = AT_THE_START_ONLY.replace(
    '"(思考|行动输入|行动|最终答案)[:：]"',
    'r"[ \\t]*(?:\\*\\*[ \\t]*)?(思考|行动输入|行动|最终答案)(?:\\*\\*)?[:：][ \\t]*(?:\\*\\*)?"',
)


@pytest.mark.docs  # a change to the shipped parser
def test_0_5_chinese_keywords_read_plain_only_are_not_done(tmp_path: Path) -> None:
    """`行动：` at a line's start is read, `**行动：**`, `  行动：` and `行动 ：` are not, where
    the parser reads every one of these in English: the fresh replies have them all."""
    root, home = course(tmp_path, AT_THE_START_ONLY)
    solved_corpus(root)
    not_done(check(root, home, "0.5"), "accept 思考, 行动, 行动输入")


@pytest.mark.docs  # a change to the shipped parser
def test_0_5_chinese_keywords_without_a_space_before_the_colon_are_not_done(
    tmp_path: Path,
) -> None:
    """Every style but one, where the parser reads that one in English: each check has it."""
    assert NO_SPACE_BEFORE_THE_COLON != AT_THE_START_ONLY
    root, home = course(tmp_path, NO_SPACE_BEFORE_THE_COLON)
    solved_corpus(root)
    not_done(check(root, home, "0.5"), "accept 思考, 行动, 行动输入")


@pytest.mark.docs  # a change to the shipped parser
def test_0_5_a_chinese_keyword_in_the_middle_of_a_line_is_not_done(tmp_path: Path) -> None:
    root, home = course(tmp_path, SEARCH_ANYWHERE)
    solved_corpus(root)
    said = check(root, home, "0.5")
    # Refused for the keyword in prose, or first for a bold or spaced keyword line, or a
    # keyword in the JSON, which the search takes for one: the replies drawn decide which.
    not_done(said, next((hint for hint in ZH_HINTS if hint in said.stdout), ZH_HINTS[0]))


ENGLISH_AND_CHINESE = """+    r"(thought|action[ \\t]+input|action|final[ \\t]+answer|observation"
+    r"|思考|行动输入|行动|最终答案)"
"""
assert not SOLUTIONS or ENGLISH_AND_CHINESE in CHINESE
CHINESE_ONLY = CHINESE.replace(
    ENGLISH_AND_CHINESE, '+    r"(思考|行动输入|行动|最终答案|observation)"\n'
)


@pytest.mark.docs  # a change to the shipped parser
def test_0_5_chinese_keywords_in_place_of_the_english_ones_is_not_done(tmp_path: Path) -> None:
    root, home = course(tmp_path, CHINESE_ONLY)
    solved_corpus(root)
    not_done(check(root, home, "0.5"), "the English keywords must still work")


@pytest.mark.docs  # the shipped parser
def test_0_5_the_code_with_the_moved_case_alone_is_not_done(tmp_path: Path) -> None:
    root, home = course(tmp_path, CHINESE)
    edit_corpus(root, {"zh-translated-keywords": {"expect": MOVED}})
    not_done(check(root, home, "0.5"), "add two cases of your own")


@pytest.mark.docs  # the shipped parser
def test_0_5_two_copies_of_the_moved_case_are_not_done(tmp_path: Path) -> None:
    """Cases that test nothing new: the moved reply again, under other ids."""
    root, home = course(tmp_path, CHINESE)
    text = corpus_text("zh-translated-keywords")
    copies = [  # the same reply, and the same with a space or a line more: no case more
        {"id": f"zh-copy-{n}", "group": "tolerated", "text": text + end, "expect": MOVED}
        | {"invented_observation": False}
        for n, end in enumerate(["", " ", "\n"])
    ]
    edit_corpus(root, {"zh-translated-keywords": {"expect": MOVED}}, *copies)
    not_done(check(root, home, "0.5"), "add two cases of your own")


@pytest.mark.docs  # the shipped parser
def test_0_5_a_case_whose_reply_was_rewritten_is_not_done(tmp_path: Path) -> None:
    """The moved case's reply translated back into English keywords."""
    root, home = course(tmp_path, CHINESE)
    text = 'Thought: 我先看看有哪些文件。\nAction: bash\nAction Input: {"command": "ls"}'
    edit_corpus(root, {"zh-translated-keywords": {"text": text, "expect": MOVED}}, *OWN_CASES)
    not_done(check(root, home, "0.5"), "change only its `expect`")


def test_0_5_the_worked_solution_with_other_cases_of_ones_own_is_done(tmp_path: Path) -> None:
    """Any two cases of translated keywords will do, not only the solution's."""
    root, home = course(tmp_path)
    if "CHINESE_KEYWORDS" not in (root / "v0_react_text" / "parser.py").read_text("utf-8"):
        apply_diff(root, CHINESE)
    solved_corpus(root)
    done = check(root, home, "0.5")
    assert done.returncode == 0 and ": done." in done.stdout, done.stdout + done.stderr


# --- the command -------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["exercise"], ["tasks"], ["--help"]])
def test_a_listing_into_a_pipe_closed_early_ends_without_a_traceback(command: list[str]) -> None:
    """`python -m lab exercise | head`, or any other listing of the lab: the reader has gone
    before it is written."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "lab", *command],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
            timeout=60,
        )
    finally:
        os.close(write)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert done.returncode == 1
