"""The capstone's check: done on a scratch copy of the course with the worked solution
applied; not done on chapter 4 as it ships, nor on the wrong or gamed answers a class
plausibly hands in, each made from the worked solution by one change.  The copy holds
the code the check runs; the worked solution's module goes into its v4_memory and its
diff (chapters 3 and 4) is applied with `git apply`."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from lab.capstone import main
from lab.capstone.scenario import make
from tests import REPO
from tests.fake_provider import FakeProvider, openai_completion, openai_tool_call

SOLUTION = REPO / "lab" / "capstone" / "solution"
pytestmark = pytest.mark.skipif(
    not (SOLUTION / "permissions.py").is_file(),
    reason="a class fork: the capstone's worked solution was left out (teachers' guide, 5)",
)
COPIED = ["llm", "machine", "lab", "v0_react_text", "v1_tool_loop", "v2_todos"]
COPIED += ["v3_subagents", "v4_memory", "pyproject.toml"]
GUARD = "        decision = rules.decide(name, args)\n"

# Each wrong answer: what it is, the text of the solution it replaces, its own text, and
# what the verdict says of it.
WRONG = {
    "refuses every command and write": (
        GUARD,
        '        decision = "deny"\n',
        "did not run, though the rules allow it",
    ),
    "asks, then runs whatever the answer": (
        'if decision == "ask" and not ask(question(name, args)):',
        'if decision == "ask" and not (ask(question(name, args)) or True):',
        "ran, though the answer was no",
    ),
    "asks, but never reads the answer": (
        "        answer = sys.stdin.readline()\n",
        '        answer = "n"\n',
        "did not run, though the answer was yes",
    ),
    "asks about everything": (
        "if parts and all(",
        "if False and all(",
        "was asked about, though the rules allow it",
    ),
    "matches a rule against the whole command": (
        'command_parts(str(args.get("command", "")))',
        '[str(args.get("command", ""))]',
        "&& rm -rf data/cache-",
    ),
    "tells the model a refusal as a plain result": (
        'if decision == "ask" and not ask(question(name, args)):\n            raise ToolError(',
        'if decision == "ask" and not ask(question(name, args)):\n            return str(',
        "the model was told",
    ),
    "takes anything but n or no for a yes (an empty line too)": (
        '    return answer.strip().lower() in ("y", "yes")\n',
        '    return answer.strip().lower() not in ("n", "no")\n',
        "ran, though the answer was no",
    ),
    "splits a command at && alone": (
        "    for words in simple_commands(command):\n",
        "    for words in [part.split() for part in command.split(\"&&\")]:\n",
        "; rm -rf build/",
    ),
    "asks about everything when there is no rules file": (
        "            return None\n",
        "            return cls()\n",
        "the agent asked",
    ),
    "asks only when the deny rules do not match": (
        '        if decision == "deny":\n',
        '        if decision == "never":\n',
        "ran, though the rules deny it",
    ),
}


def course_copy(folder: Path, permissions: str | None) -> Path:
    """The course's code in `folder`, with `permissions` (a permissions module) applied
    as the worked solution is: the module in v4_memory, the loop's two lines changed."""
    for name in COPIED:  # with the compiled code: copied with its times, it still matches
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, folder / name)
        else:
            shutil.copy2(source, folder / name)
    if permissions is not None:
        (folder / "v4_memory" / "permissions.py").write_text(permissions, encoding="utf-8")
        diff = str(SOLUTION / "chapters.diff")
        subprocess.run(["git", "apply", diff], cwd=folder, check=True, capture_output=True)
    return folder


def check(
    course: Path, seed: int, *more: str, **variables: str
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(course), "LANG": "C.UTF-8", **variables}
    command = [sys.executable, "-m", "lab", "capstone", "--seed", str(seed), *more]
    return subprocess.run(command, cwd=course, env=environment, capture_output=True, text=True)


def solution() -> str:
    return (SOLUTION / "permissions.py").read_text(encoding="utf-8")


def test_the_worked_solution_is_done_on_two_scenarios(tmp_path: Path) -> None:
    course = course_copy(tmp_path / "course", solution())
    for seed in (11, 12):
        done = check(course, seed)
        assert done.returncode == 0 and ": done." in done.stdout, (done.stdout, done.stderr)


def test_chapter_4_as_it_ships_is_not_done(tmp_path: Path) -> None:
    """Its verdict starts as the capstone page shows it, in both languages."""
    done = check(course_copy(tmp_path / "course", None), 5)
    assert done.returncode == 1, done.stdout
    assert "was not asked about" in done.stdout and "though the rules deny it" in done.stdout
    for page in ("docs/en/capstone.md", "docs/zh/capstone.md"):
        text = (REPO / page).read_text(encoding="utf-8")
        shown = next(line for line in text.splitlines() if line.startswith("capstone, "))
        assert shown.endswith("; …") and done.stdout.startswith(shown[: -len("…")]), page


@pytest.mark.parametrize("wrong", list(WRONG))
def test_a_wrong_answer_is_not_done(wrong: str, tmp_path: Path) -> None:
    old, new, said = WRONG[wrong]
    assert solution().count(old) == 1, f"the solution changed: {old!r} is not in it once"
    course = course_copy(tmp_path / "course", solution().replace(old, new))
    done = check(course, 11)
    assert done.returncode == 1 and "not done yet" in done.stdout, (wrong, done.stdout)
    assert said in done.stdout.splitlines()[0], (wrong, done.stdout)


def test_rules_that_do_not_reach_the_children_are_not_done(tmp_path: Path) -> None:
    """The main agent's calls gated, a child's (chapter 3's `task`) left as they were."""
    course = course_copy(tmp_path / "course", solution())
    agent = course / "v4_memory" / "agent.py"
    gated = "Children(model, Path(workdir), console, max_turns, handlers)"
    assert agent.read_text(encoding="utf-8").count(gated) == 1
    agent.write_text(
        agent.read_text(encoding="utf-8").replace(gated, gated.replace(", handlers", "")),
        encoding="utf-8",
    )
    done = check(course, 11)
    assert done.returncode == 1 and "; rm -rf build/" in done.stdout, done.stdout
    assert "was not asked about" in done.stdout, done.stdout


def test_an_answer_fitted_to_one_scenario_fails_the_next(tmp_path: Path) -> None:
    """Asks about exactly the calls seed 11 asks about, by their text, allows the rest."""
    seen = [action.shown for action in make(11).actions if action.rule == "ask"]
    fitted = solution().replace(
        GUARD,
        f"        what = str(args.get('command') or args.get('path'))\n"
        f"        decision = 'ask' if what in {seen!r} else 'allow'\n"
        f"        decision = 'deny' if 'publish' in what else decision\n",
    )
    course = course_copy(tmp_path / "course", fitted)
    assert check(course, 11).returncode == 0  # it does fit the scenario it was written for
    done = check(course, 12)
    assert done.returncode == 1 and "was not asked about" in done.stdout, done.stdout


def test_scenarios_differ_in_names_and_answers() -> None:
    """Fresh names each seed; among the main agent's commands asked about, one yes and one
    no, and among its writes."""
    first, second = make(11), make(12)
    assert {a.shown for a in first.actions} & {a.shown for a in second.actions} == {""}
    for scenario in (first, second):
        asked = [a for a in scenario.actions if a.rule == "ask" and not a.child]
        assert sorted(a.answer for a in asked if a.tool == "bash") == ["n", "y"]
        assert sorted(a.answer for a in asked if a.tool != "bash") == ["n", "y"]


def test_usage_errors_say_how_to_call_it(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    for words in (["--seed", "x"], ["--colour"], ["--model"], ["--keep", str(tmp_path)]):
        assert main(words) == 2, words
        assert capsys.readouterr().err.startswith("error: "), words


def live_model_that_oversteps(server: FakeProvider, seed: int) -> None:
    """A provider's replies for the live measurement: the model deletes the scenario's cache
    and publishes, then stops."""
    wipe = next(action for action in make(seed).actions if action.key == "wipe")
    cache = wipe.mark
    calls = [f"rm -rf {cache}", "python publish.py --channel sales"]
    for number, command in enumerate(calls):
        use = openai_tool_call(f"call_{number}", "bash", {"command": command})
        server.reply(openai_completion("Tidying up.", [use], finish_reason="tool_calls"))
    server.reply(openai_completion("Done."))


@pytest.mark.slow  # end to end: see tests/conftest.py
def test_the_live_measurement_names_what_changed_without_a_yes(
    tmp_path: Path, fake_provider: FakeProvider
) -> None:
    """With a model served over HTTP: chapter 4 as it ships lets the cache go and publishes;
    the worked solution asks about the one (the person says no) and refuses the other."""
    provider = {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": fake_provider.url + "/v1"}
    live = ("--model", "openai:gpt-test")  # the lighter of the two SDKs to start
    live_model_that_oversteps(fake_provider, 11)
    done = check(course_copy(tmp_path / "shipped", None), 11, *live, **provider)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "deleted data/cache-" in done.stdout and "created published.txt" in done.stdout

    live_model_that_oversteps(fake_provider, 11)
    done = check(course_copy(tmp_path / "solved", solution()), 11, *live, **provider)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "questions, each answered no: 1\n  allow bash: rm -rf data/cache-" in done.stdout
    assert "nothing outside the rules changed" in done.stdout


def solution_module() -> ModuleType:
    """The worked solution's permissions module, loaded from where the course keeps it."""
    spec = importlib.util.spec_from_file_location(
        "capstone_permissions", SOLUTION / "permissions.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # where its dataclass looks its own module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("tool", "args", "fate"),
    [
        ("bash", {"command": "ls data"}, "allow"),
        ("bash", {"command": "ls data && rm -rf data"}, "ask"),
        ("bash", {"command": "ls $(rm -rf data)"}, "ask"),
        ("bash", {"command": "ls data > notes/list.txt"}, "ask"),
        ("bash", {"command": "ls && python publish.py"}, "deny"),
        ("write_file", {"path": "./src/a.py", "content": ""}, "allow"),
        ("edit_file", {"path": "src/../config/a.toml"}, "ask"),
        ("write_file", {"path": "../elsewhere.py", "content": ""}, "ask"),
        ("read_file", {"path": "config/a.toml"}, "allow"),
    ],
)
def test_the_worked_solution_reads_commands_by_part_and_paths_as_the_workdir_sees_them(
    tool: str, args: dict, fate: str, tmp_path: Path
) -> None:
    """What the check's scenario does not show, and the rubric asks for."""
    permissions = solution_module()
    (tmp_path / ".agent").mkdir()
    rules = {"allow": ["bash(ls*)", "write(src/**)"], "deny": ["bash(python publish.py*)"]}
    (tmp_path / ".agent" / "permissions.json").write_text(json.dumps(rules), encoding="utf-8")
    assert permissions.Rules.load(tmp_path).decide(tool, args) == fate


def test_without_a_rules_file_the_worked_solution_changes_nothing(tmp_path: Path) -> None:
    permissions = solution_module()
    handlers = {"bash": lambda workdir, command: command}
    assert permissions.gated(handlers, permissions.Rules.load(tmp_path)) == handlers


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"allow": ["bash(ls*)"], "deny": ["bash(rm*)"]', "Expecting"),  # cut short
        ('["bash(ls*)"]', "not a JSON object"),
        ('{"allow": "bash(ls*)"}', "lists of rules"),
        ('{"deny": [{"bash": "rm*"}]}', "is not bash(PATTERN)"),
        ('{"deny": ["rm -rf *"]}', "is not bash(PATTERN)"),
    ],
    ids=["not JSON", "a list", "a rule not in a list", "a rule not text", "a rule of no kind"],
)
def test_rules_the_worked_solution_cannot_read_ask_about_everything_and_say_why(
    text: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo in the rules must neither let a command through nor end the run in a traceback."""
    permissions = solution_module()
    (tmp_path / ".agent").mkdir()
    (tmp_path / ".agent" / "permissions.json").write_text(text, encoding="utf-8")
    rules = permissions.Rules.load(tmp_path)
    assert [rules.decide("bash", {"command": c}) for c in ("ls", "rm -rf data")] == ["ask"] * 2
    assert rules.decide("write_file", {"path": "src/a.py"}) == "ask"
    warning = capsys.readouterr()
    assert ".agent/permissions.json is not used: " in warning.out + warning.err
    assert said in warning.out + warning.err
