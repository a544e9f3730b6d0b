"""`python -m lab exercise N.M`: on the course as it is, each checked exercise is not done
and says why with a hint; an exercise done the way its chapter asks is reported done.
Every check runs the real chapter (on a cassette) or calls the real function."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lab.exercises import EXERCISES
from tests import REPO

HEADER = {"format": "cassette/1", "provenance": "scripted", "task": "Fix the tests"}


def exercise(*words: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    """The command as an English-speaking learner runs it (the locale picks the language)."""
    english = {k: v for k, v in os.environ.items() if not k.startswith("LC_")} | {"LANG": "C"}
    return subprocess.run(
        [sys.executable, "-m", "lab", "exercise", *words],
        cwd=cwd,
        env=english,
        capture_output=True,
        text=True,
        timeout=600,
    )


def cassette(path: Path, chapter: str, *replies: dict) -> Path:
    lines = [HEADER | {"chapter": chapter}, *({"reply": reply} for reply in replies)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def calls(*inputs: tuple[str, dict]) -> dict:
    blocks = [
        {"type": "tool_use", "id": f"t{n}", "name": name, "input": args}
        for n, (name, args) in enumerate(inputs, start=1)
    ]
    return {"content": blocks, "stop_reason": "tool_use"}


FINISH = {"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"}
CODE_EXERCISES = ["0.2", "0.3", "0.5", "1.3", "1.6", "2.3", "3.3", "4.2", "4.3", "4.5"]


@pytest.mark.docs  # the course as it ships: doing the exercise changes it
@pytest.mark.parametrize("number", CODE_EXERCISES)
def test_an_exercise_not_yet_done_says_what_it_saw_and_hints(number: str) -> None:
    done = exercise(number)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{number} {EXERCISES[number].title.en}: not done yet." in done.stdout
    assert re.search(r"^hint: \w", done.stdout, re.M), done.stdout


def test_three_malformed_replies_are_done(tmp_path: Path) -> None:
    corpus = [json.loads(line) for line in (REPO / "tests/data/react_replies.jsonl").open()]
    texts = {case["id"]: case["text"] for case in corpus}
    replies = [
        {"content": [{"type": "text", "text": texts[name]}], "stop_reason": "end_turn"}
        for name in ("plain-prose", "single-quotes", "two-actions")
    ]
    done = exercise("0.1", str(cassette(tmp_path / "three.jsonl", "v0_react_text", *replies)))
    assert done.returncode == 0, done.stdout
    assert (
        "0.1 Three strikes: done. the run ended with `format_errors` after 3 turns" in done.stdout
    )


def test_a_malformed_reply_that_is_not_third_in_a_row_is_not_done(tmp_path: Path) -> None:
    text = {"content": [{"type": "text", "text": "I will look."}], "stop_reason": "end_turn"}
    done = exercise("0.1", str(cassette(tmp_path / "one.jsonl", "v0_react_text", text)))
    assert done.returncode == 1
    assert "hint: three malformed replies in a row end the run with format_errors" in done.stdout


def test_the_door_holding_three_times_is_done(tmp_path: Path) -> None:
    door = cassette(
        tmp_path / "door.jsonl",
        "v1_tool_loop",
        calls(("bash", {"cmd": "ls"})),
        calls(("bash", {"command": "sudo ls"})),
        calls(("bash", {"command": "sleep 5", "timeout": 1})),
        FINISH,
    )
    done = exercise("1.5", str(door))
    assert done.returncode == 0, done.stdout
    assert "done. the bash calls were refused by [" in done.stdout
    assert "timed out (bash)'], and the run ended with `done`" in done.stdout


def test_a_plan_that_breaks_three_rules_is_done(tmp_path: Path) -> None:
    bad = [
        {"content": "Fix word_count", "status": "in_progress"},
        {"content": "Fix top_words", "status": "in_progress"},
        {"content": "", "status": "done"},
    ]
    good = [{"content": "Fix word_count", "status": "in_progress"}]
    good.append({"content": "Fix top_words", "status": "pending"})
    rules = cassette(
        tmp_path / "rules.jsonl",
        "v2_todos",
        calls(("todo_write", {"items": bad})),
        calls(("todo_write", {"items": good})),
        FINISH,
    )
    done = exercise("2.2", str(rules))
    assert done.returncode == 0, done.stdout
    assert "done. the first plan breaks 3 of the 3 rules" in done.stdout


def test_a_recording_of_the_children_is_done_and_the_scripted_demo_is_not(
    tmp_path: Path,
) -> None:
    recording = tmp_path / "children.jsonl"
    demo = [sys.executable, "-m", "v3_subagents", "--demo", "--record", str(recording)]
    subprocess.run(demo, cwd=REPO, capture_output=True, timeout=600, check=True)
    done = exercise("3.4", str(recording))
    assert done.returncode == 0, done.stdout
    assert "lines by section: parent 6, toolu_03 4, toolu_04 3, toolu_06 3" in done.stdout
    not_recorded = exercise("1.4", str(REPO / "v1_tool_loop/demo/cassette.jsonl"))
    assert not_recorded.returncode == 1
    assert "is scripted, without request digests" in not_recorded.stdout


@pytest.mark.docs  # the shipped STOP line: exercise 0.3 changes it
def test_a_chapter_changed_as_the_exercise_asks_is_done(tmp_path: Path) -> None:
    """Exercise 0.3 done in a copy of chapter 0, run from the folder of the copy, which
    Python searches first, as a fork's checkout would be."""
    shutil.copytree(REPO / "v0_react_text", tmp_path / "v0_react_text")
    agent = tmp_path / "v0_react_text" / "agent.py"
    old = 'STOP = ["\\nObservation:", "Observation:"]'
    assert old in agent.read_text(encoding="utf-8")
    new = 'STOP = ["\\nObservation:", "Observation:", "Observation："]'
    agent.write_text(agent.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    done = exercise("0.3", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0.3 Add the full-width stop sequence: done." in done.stdout


def test_bad_input_is_one_line_and_exit_code_2(tmp_path: Path) -> None:
    unknown = exercise("9.9")
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: no exercise 9.9;")
    no_file = exercise("1.5")
    assert no_file.returncode == 2
    assert no_file.stderr == "error: name the cassette: python -m lab exercise 1.5 FILE\n"
    missing = exercise("1.5", str(tmp_path / "nothing.jsonl"))
    assert missing.returncode == 2 and "no file" in missing.stderr


def test_an_exercise_without_a_check_says_why() -> None:
    done = exercise("2.5")
    assert done.returncode == 0
    assert "no program can check this one; it needs a live model" in done.stdout


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("number", "01234")
def test_each_chapter_names_the_exercises_that_check_themselves(lang: str, number: str) -> None:
    """The chapter's sentence lists exactly the exercises `lab exercise` can check."""
    doc = next((REPO / "docs" / lang).glob(f"v{number}_*.md")).read_text(encoding="utf-8")
    exercises = doc.split("\n## 8. ")[1].split("\n## 9. ")[0]
    checked = [n.split(".")[1] for n, e in EXERCISES.items() if n[0] == number and e.check]
    pattern = (
        r"Exercises ([\d, and]+) check themselves" if lang == "en" else r"练习 ([\d、]+) 可以自检"
    )
    said = re.search(pattern, exercises)
    assert said, f"docs/{lang}: chapter {number}'s exercises do not say which check themselves"
    assert re.findall(r"\d", said.group(1)) == checked, (lang, number, said.group(0), checked)
    assert f"python -m lab exercise {number}." in exercises
    headed = re.findall(r"^(\d)\. \*\*", exercises, re.M)
    assert headed == [n.split(".")[1] for n in EXERCISES if n[0] == number], (lang, number)
