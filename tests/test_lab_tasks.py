"""The lab's tasks: each checker says "not solved" on the workspace as given, "solved" once the
work is really done, and "not solved" when the agent only deleted or weakened the tests.

Every fix below is applied to a scratch copy, as an agent would make it.  The checkers are
called directly (`verdict`), which spares a process per call; the child process the lab runs
them in, with its timeout, has tests of its own at the end.
"""

from __future__ import annotations

import re
import runpy
import shutil
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from lab.compare.record import Job
from lab.compare.runs import run_job
from lab.compare.sources import Scripted
from lab.tasks import (
    Task,
    TaskError,
    _problem,
    check,
    featured_names,
    load_task,
    make_inputs,
    task_names,
)
from lab.tasks.__main__ import load_checker
from lab.tasks.checks import Verdict, answer_line, run_hidden_tests
from llm import Model
from llm.wrapper import Wrapper

TASKS = Path(__file__).resolve().parent.parent / "lab" / "tasks"


def workspace(task: str, tmp_path: Path) -> Path:
    """A scratch copy of the task's workspace, as the lab gives one to an agent."""
    copy = tmp_path / "workspace"
    shutil.copytree(load_task(task).workspace, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def verdict(name: str, folder: Path, answer: str) -> Verdict:
    """The task's checker on `folder`, called in this process."""
    return load_checker(load_task(name).folder / "check.py")(folder, answer)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} is not once in {path.name}"
    path.write_text(text.replace(old, new), encoding="utf-8")


# --- the fixes an agent would make ------------------------------------------------------


def fix_one_bug(folder: Path) -> None:
    edit(
        folder / "stats.py",
        "(ordered[middle] + ordered[middle + 1]) / 2",
        "(ordered[middle - 1] + ordered[middle]) / 2",
    )


def fix_several_steps(folder: Path) -> None:
    source = folder / "textstats.py"
    edit(source, 'text.split(" ")', "text.split()")
    edit(source, "        found.append(word)", "        if word:\n            found.append(word)")
    edit(source, "(pair[1], pair[0])", "(-pair[1], pair[0])")
    with source.open("a", encoding="utf-8") as file:
        file.write(
            "\n\ndef reading_time(text, words_per_minute=200):\n"
            "    return -(-word_count(text) // words_per_minute)\n"
        )


def fix_wide_reading(folder: Path) -> None:
    edit(
        folder / "invoicing" / "invoice.py",
        "line.total - percent_of(line.total, discount_percent(line.quantity))",
        "line.total",
    )
    edit(
        folder / "invoicing" / "storage.py",
        "return Invoice(customer, lines)",
        'return Invoice(customer, lines, number=data["number"])',
    )


def fix_long_task(folder: Path) -> None:
    (folder / "stuck.txt").write_text("\n".join(stuck_orders(folder / "logs")) + "\n")


def fix_add_flag(folder: Path) -> None:
    source = folder / "wordfreq.py"
    edit(
        source,
        "    args = parser.parse_args(argv)\n",
        '    parser.add_argument("--min-length", type=int, default=1, help="shortest word")\n'
        "    args = parser.parse_args(argv)\n",
    )
    edit(
        source,
        "        counts = count_words(file.read())\n",
        "        counts = count_words(file.read())\n"
        "    counts = Counter({w: n for w, n in counts.items() if len(w) >= args.min_length})\n",
    )
    with (folder / "test_wordfreq.py").open("a") as file:
        file.write("\n# main(['sample.txt', '--min-length', '4']) leaves out the short words\n")


def fix_from_docstring(folder: Path) -> None:
    edit(
        folder / "duration.py",
        "    raise NotImplementedError",
        "    import re\n"
        "\n"
        "    parts = r'\\s*(?:(\\d+)d)?\\s*(?:(\\d+)h)?\\s*(?:(\\d+)m)?\\s*(?:(\\d+)s)?\\s*'\n"
        "    match = re.fullmatch(parts, text, re.IGNORECASE)\n"
        "    if not match or not any(match.groups()):\n"
        "        raise ValueError(f'not a duration: {text!r}')\n"
        "    parts = [int(part or 0) for part in match.groups()]\n"
        "    return sum(n * unit for n, unit in zip(parts, UNITS.values()))",
    )


REFACTORED = '''"""Monthly summaries, refactored."""


def summary(title, rows, key, amount):
    totals = {}
    for row in rows:
        totals[row[key]] = totals.get(row[key], 0) + amount(row)
    lines = [title]
    for name, total in sorted(totals.items(), key=lambda item: (-item[1], item[0])):
        lines.append(f"  {name:<20} {total / 100:>10.2f}")
    lines.append(f"  {'total':<20} {sum(totals.values()) / 100:>10.2f}")
    return "\\n".join(lines)


def sales_summary(rows):
    return summary("Sales by product", rows, "product", lambda r: r["quantity"] * r["unit_price"])


def refund_summary(rows):
    return summary("Refunds by reason", rows, "reason", lambda r: r["amount"])


def stock_summary(rows):
    return summary("Stock moved by warehouse", rows, "warehouse", lambda r: abs(r["change"]) * 100)
'''


def fix_refactor(folder: Path) -> None:
    (folder / "report.py").write_text(REFACTORED)


FIXES: dict[str, Callable[[Path], None]] = {
    "one-bug": fix_one_bug,
    "several-steps": fix_several_steps,
    "wide-reading": fix_wide_reading,
    "long-task": fix_long_task,
    "add-flag": fix_add_flag,
    "from-docstring": fix_from_docstring,
    "refactor": fix_refactor,
}
TESTED = [name for name in task_names() if name in FIXES]


def test_there_are_eight_tasks_and_the_four_featured_ones_bring_out_chapters_1_to_4() -> None:
    assert len(task_names()) >= 8
    featured = {name: load_task(name).brings_out for name in featured_names()}
    assert featured == {
        "one-bug": "v1_tool_loop",
        "several-steps": "v2_todos",
        "wide-reading": "v3_subagents",
        "long-task": "v4_memory",
    }


@pytest.mark.parametrize("name", TESTED)
def test_the_workspace_as_given_is_not_solved(name: str, tmp_path: Path) -> None:
    outcome = verdict(name, workspace(name, tmp_path), "Done: everything works now.")
    assert not outcome.solved, outcome.detail


@pytest.mark.parametrize("name", TESTED)
def test_the_work_done_is_solved(name: str, tmp_path: Path) -> None:
    folder = workspace(name, tmp_path)
    FIXES[name](folder)
    outcome = verdict(name, folder, "Done.")
    assert outcome.solved, outcome.detail


TAMPERED = {
    # name: what an agent that fakes the work leaves in the workspace
    "one-bug": {"test_stats.py": None, "unittest.py": "def main(*a, **k): pass\n"},
    "several-steps": {"test_textstats.py": "import unittest\n"},
    "wide-reading": {"tests/test_invoice.py": None, "tests/test_storage.py": None},
    "add-flag": {"test_wordfreq.py": "# min_length is tested elsewhere\n"},
    "from-docstring": {"test_duration.py": None},
    "refactor": {"test_report.py": "import unittest\n"},
}


@pytest.mark.parametrize("name", sorted(TAMPERED))
def test_deleting_or_weakening_the_tests_does_not_pass(name: str, tmp_path: Path) -> None:
    folder = workspace(name, tmp_path)
    for path, content in TAMPERED[name].items():
        if content is None:
            (folder / path).unlink()
        else:
            (folder / path).write_text(content)
    outcome = verdict(name, folder, "All tests pass.")
    assert not outcome.solved, outcome.detail


def print_a_passing_report(folder: Path) -> None:
    """The agent's module prints what unittest prints for a pass, then ends the run."""
    (folder / "stats.py").write_text(
        "import os\nprint('Ran 9 tests in 0.001s\\n\\nOK', flush=True)\nos._exit(0)\n"
    )


def bring_a_test_module_in_the_package(folder: Path) -> None:
    """A test module inside the package that makes every assertion pass."""
    (folder / "invoicing" / "test_zz_quiet.py").write_text(
        "import unittest\n"
        "for name in dir(unittest.TestCase):\n"
        "    if name.startswith('assert'):\n"
        "        setattr(unittest.TestCase, name, lambda *args, **kwargs: None)\n"
    )


def link_the_answer_to_the_checkers_own(folder: Path) -> None:
    """stuck.txt a link to a right list kept outside the workspace."""
    outside = folder.parent / "right.txt"
    outside.write_text("\n".join(stuck_orders(folder / "logs")) + "\n")
    (folder / "stuck.txt").symlink_to(outside)


def link_a_folder_on_the_way(folder: Path) -> None:
    """`invoicing` itself a link to a fixed copy elsewhere: the files in it are no links."""
    fixed = folder.parent / "fixed"
    shutil.copytree(folder / "invoicing", fixed / "invoicing")
    FIXES["wide-reading"](fixed)
    shutil.rmtree(folder / "invoicing")
    (folder / "invoicing").symlink_to(fixed / "invoicing", target_is_directory=True)


def keep_the_bug(folder: Path, before: str) -> None:
    """stats.py as given, the bug left in, with `before` run when it is imported."""
    source = folder / "stats.py"
    source.write_text(before + "\n" + source.read_text(encoding="utf-8"), encoding="utf-8")


def write_the_runners_result_and_exit(folder: Path) -> None:
    """At import, a passing result file wherever a runner might read one, then a clean exit."""
    keep_the_bug(
        folder,
        "import json, os\n"
        "for up in ['.', '..', '../result', '../..']:\n"
        "    for name in ['result.json', 'results.json']:\n"
        "        try:\n"
        "            with open(os.path.join(up, name), 'w') as file:\n"
        "                json.dump({'ran': 8, 'failed': [], 'loaded': True}, file)\n"
        "        except OSError:\n"
        "            pass\n"
        "os._exit(0)\n",
    )


def replace_unittest_when_imported(folder: Path) -> None:
    """At import, every test run counts as a pass and no assertion can fail."""
    keep_the_bug(
        folder,
        "import unittest\n"
        "def passed(self, result=None):\n"
        "    result = result or unittest.TestResult()\n"
        "    result.startTest(self)\n"
        "    result.addSuccess(self)\n"
        "    result.stopTest(self)\n"
        "    return result\n"
        "unittest.TestCase.run = passed\n"
        "for name in dir(unittest.TestCase):\n"
        "    if name.startswith('assert'):\n"
        "        setattr(unittest.TestCase, name, lambda *args, **kwargs: None)\n",
    )


def answer_before_being_asked(folder: Path) -> None:
    """At import, answers written ahead on every descriptor the answers might go out by."""
    keep_the_bug(
        folder,
        "import json, os\n"
        "line = (json.dumps({'value': '2.5'}) + '\\n').encode() * 50\n"
        "for fd in range(1, 10):\n"
        "    try:\n"
        "        os.write(fd, line)\n"
        "    except OSError:\n"
        "        pass\n",
    )


TRICKS = [
    ("one-bug", print_a_passing_report),
    ("one-bug", write_the_runners_result_and_exit),
    ("one-bug", replace_unittest_when_imported),
    ("one-bug", answer_before_being_asked),
    ("wide-reading", bring_a_test_module_in_the_package),
    ("long-task", link_the_answer_to_the_checkers_own),
    ("wide-reading", link_a_folder_on_the_way),
]


@pytest.mark.parametrize(("name", "trick"), TRICKS, ids=[t.__name__ for _, t in TRICKS])
def test_a_trick_of_the_agents_code_does_not_pass(
    name: str, trick: Callable[[Path], None], tmp_path: Path
) -> None:
    folder = workspace(name, tmp_path)
    trick(folder)
    outcome = verdict(name, folder, "All tests pass.")
    assert not outcome.solved, outcome.detail


def test_editing_the_logs_does_not_change_the_answer(tmp_path: Path) -> None:
    folder = workspace("long-task", tmp_path)
    for log in (folder / "logs").glob("*.log"):
        log.write_text("")
    (folder / "stuck.txt").write_text("")
    outcome = verdict("long-task", folder, "There are no stuck orders.")
    assert not outcome.solved
    assert outcome.detail.startswith("stuck.txt misses 11 of 11")


def test_a_half_right_list_names_what_is_missing_and_what_is_extra(tmp_path: Path) -> None:
    folder = workspace("long-task", tmp_path)
    right = stuck_orders(folder / "logs")
    (folder / "stuck.txt").write_text("\n".join([*right[1:], "A-1001"]))
    assert verdict("long-task", folder, "") == Verdict(
        False, f"stuck.txt misses 1 of 11 ({right[0]}) and lists 1 that are not stuck (A-1001)"
    )


@pytest.mark.parametrize(
    ("answer", "solved"),
    [
        ("The client tries 6 times.\nANSWER: 6", True),
        ("**ANSWER:** 6.", True),
        ("The README says 3.\nANSWER: 3", False),
        ("Six attempts.", False),
    ],
)
def test_the_codebase_question_is_checked_against_the_code(
    answer: str, solved: bool, tmp_path: Path
) -> None:
    folder = workspace("codebase-question", tmp_path)
    # The agent's copy may have been edited; the right number comes from the task's own copy.
    edit(
        folder / "shipit" / "client.py", 'settings.get("retries", 5)', 'settings.get("retries", 2)'
    )
    assert verdict("codebase-question", folder, answer).solved is solved


def test_answer_line_takes_the_last_one() -> None:
    assert answer_line("ANSWER: 3\nno, wait\nANSWER: `6`") == "6"
    assert answer_line("answer : 7") == "7"
    assert answer_line("no answer here") is None


# --- the long task's data and its answer -----------------------------------------------

PAID = ("captured", "authorised and settled", "charge ok")
SHIPPED = ("handed to", "left the dock", "scanned by")
CANCELLED = ("cancelled", "refund issued")


def stuck_orders(logs: Path) -> list[str]:
    """The stuck orders, read from the logs with the phrases a reader learns, not from the
    generator: a second, independent way to the answer the checker keeps."""
    events: dict[str, set[str]] = {}
    for log in sorted(logs.glob("day-*.log")):
        for line in log.read_text().splitlines():
            for order in re.findall(r"A-\d{4}", line):
                for kind, phrases in [("paid", PAID), ("shipped", SHIPPED), ("done", CANCELLED)]:
                    if any(phrase in line for phrase in phrases):
                        events.setdefault(order, set()).add(kind)
    return sorted(order for order, kinds in events.items() if kinds == {"paid"})


def make_logs() -> dict:
    return runpy.run_path(str(TASKS / "long-task" / "make_logs.py"), run_name="make_logs")


def test_the_long_task_answer_is_what_the_logs_say(tmp_path: Path) -> None:
    """The generator's answer and a reader's agree, on the demo's logs and on fresh ones."""
    maker = make_logs()
    assert stuck_orders(load_task("long-task").workspace / "logs") == maker["generate"]()[1]
    for seed in (1, 2**61 + 7):
        stuck = maker["write_logs"](tmp_path / str(seed), seed)
        assert stuck_orders(tmp_path / str(seed)) == stuck and stuck, seed


def test_the_logs_are_what_their_generator_writes() -> None:
    files, _ = make_logs()["generate"]()
    logs = load_task("long-task").workspace / "logs"
    assert sorted(files) == sorted(path.name for path in logs.glob("*.log"))
    for name, text in files.items():
        assert (logs / name).read_text() == text, name


def test_no_file_holds_the_long_tasks_answer() -> None:
    """The answer of the demo's logs is in none of the task's files: the checker works it
    out, as it does for a live run's fresh logs."""
    answer = "\n".join(make_logs()["generate"]()[1])
    task = load_task("long-task")
    for path in task.folder.rglob("*"):
        if path.is_file() and path.suffix != ".jsonl":  # the cassettes write it, as a model would
            assert answer not in path.read_text(encoding="utf-8", errors="replace"), path


def test_fresh_logs_have_an_answer_of_their_own(tmp_path: Path) -> None:
    """A live run's logs come from a seed only the lab knows: the demo's answer, copied
    into the workspace, does not solve them; their own does, given the seed."""
    task = load_task("long-task")
    folder = workspace("long-task", tmp_path)
    demo = stuck_orders(folder / "logs")
    make_inputs(task, folder, 424242)
    fresh = stuck_orders(folder / "logs")
    assert fresh != demo
    (folder / "stuck.txt").write_text("\n".join(demo) + "\n")
    assert not check(task, folder, "", seed=424242).solved
    (folder / "stuck.txt").write_text("\n".join(fresh) + "\n")
    assert check(task, folder, "", seed=424242) == Verdict(
        True, f"stuck.txt lists all {len(fresh)} stuck orders"
    )
    assert not check(task, folder, "").solved  # without the seed: the demo's logs


def test_each_log_is_a_few_thousand_tokens() -> None:
    from llm.tokens import estimate_text

    logs = load_task("long-task").workspace / "logs"
    sizes = [estimate_text(path.read_text()) for path in logs.iterdir()]
    assert len(sizes) == 12 and all(2_000 <= size <= 4_000 for size in sizes), sizes


# --- checkers that hang, crash or meet an endless loop ----------------------------------


def a_task(folder: Path, check_source: str, timeout: float = 30) -> Task:
    (folder / "check.py").write_text(check_source)
    (folder / "workspace").mkdir()
    return Task(
        "made-up", folder, "t", "p", "v1_tool_loop", 5, False, folder / "workspace", {}, timeout
    )


def test_a_checker_that_crashes_is_not_solved_with_the_reason(tmp_path: Path) -> None:
    task = a_task(tmp_path, "def check(workspace, answer):\n    raise KeyError('stats.py')\n")
    outcome = check(task, task.workspace, "")
    assert outcome == Verdict(False, "the checker failed: KeyError: 'stats.py'")


def test_a_checker_must_return_a_verdict(tmp_path: Path) -> None:
    task = a_task(tmp_path, "def check(workspace, answer):\n    return True\n")
    outcome = check(task, task.workspace, "")
    assert outcome == Verdict(
        False, "the checker failed: TypeError: check() returned bool, not a Verdict"
    )


def test_a_checker_that_hangs_is_stopped(tmp_path: Path) -> None:
    source = "import time\n\ndef check(workspace, answer):\n    time.sleep(60)\n"
    task = a_task(tmp_path, source, timeout=0.5)
    assert check(task, task.workspace, "") == Verdict(False, "the checker did not finish in 0.5 s")


def test_agent_code_that_never_ends_is_stopped(tmp_path: Path) -> None:
    folder = workspace("one-bug", tmp_path)
    (folder / "stats.py").write_text("while True:\n    pass\n")
    hidden = TASKS / "one-bug" / "hidden"
    outcome = run_hidden_tests(folder, hidden, ["stats.py"], timeout=0.5)
    assert not outcome.solved
    assert outcome.detail.startswith("8 of 8 hidden tests fail: test_mean, ")
    assert outcome.detail.endswith("(first: `mean([1, 2, 3, 4])` gave no answer in 0.5 s)")


def test_a_missing_source_is_named(tmp_path: Path) -> None:
    folder = workspace("one-bug", tmp_path)
    (folder / "stats.py").unlink()
    assert check(load_task("one-bug"), folder, "") == Verdict(
        False, "stats.py is missing from the workspace"
    )


def test_a_source_that_is_a_link_is_refused(tmp_path: Path) -> None:
    folder = workspace("one-bug", tmp_path)
    fixed = tmp_path / "elsewhere.py"
    (folder / "stats.py").rename(fixed)
    (folder / "stats.py").symlink_to(fixed)
    outcome = verdict("one-bug", folder, "")
    assert not outcome.solved and outcome.detail.startswith("stats.py cannot be used")
    assert "symbolic link" in outcome.detail


def test_the_checker_runs_without_api_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "test_env.py").write_text(
        "from lab.tasks.checks import AgentTest\n\nclass T(AgentTest):\n"
        "    def test_no_key(self):\n"
        "        self.assertFalse(self.value('import os\\n\"ANTHROPIC_API_KEY\" in os.environ'))\n"
        "    def test_no_key_in_a_program(self):\n"
        "        done = self.program('-c', 'import os; print(sorted(os.environ))')\n"
        "        self.assertNotIn('ANTHROPIC_API_KEY', done.output)\n"
    )
    (tmp_path / "ws").mkdir()
    assert run_hidden_tests(tmp_path / "ws", hidden, []) == Verdict(True, "all 2 hidden tests pass")


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ([], "the file must hold one JSON object"),
        ({"title": "t"}, '"prompt" is missing or not a string'),
        (
            {"title": "t", "prompt": "p", "brings_out": "v1", "max_turns": "5", "featured": True},
            '"max_turns" is missing or not a number',
        ),
        (
            {"title": "t", "prompt": "p", "brings_out": "v1", "max_turns": 5, "featured": 1},
            '"featured" is missing or not a true or false',
        ),
        (
            {
                "title": "t",
                "prompt": "p",
                "brings_out": "v1",
                "max_turns": 5,
                "featured": True,
                "colour": "red",
            },
            "unknown field(s) colour; the fields are title, prompt, brings_out, max_turns, "
            "featured, workspace, cassettes, check_timeout",
        ),
    ],
)
def test_a_task_file_that_cannot_be_used_says_why(data: object, problem: str) -> None:
    assert _problem(data) == problem


def test_an_unknown_task_lists_the_tasks() -> None:
    with pytest.raises(
        TaskError, match="no task 'nope'; the tasks are add-flag, codebase-question"
    ):
        load_task("nope")


def test_no_task_keeps_its_hidden_tests_in_the_workspace() -> None:
    for name in task_names():
        task = load_task(name)
        hidden = task.folder / "hidden"
        assert hidden not in [task.workspace, *task.workspace.parents], name
        assert not list(task.workspace.rglob("hidden")), name


# --- what the agent's bash can reach around the checker ------------------------------------


class EditsTheChecker(Wrapper):
    """The scripted run, with the hidden tests made to pass anything, as an agent's `bash`
    could do while it works: the task's folder is the user's to write."""

    def __init__(self, inner: Model, hidden: Path) -> None:
        super().__init__(inner)
        self.hidden = hidden

    def before(self, system: str, messages: list, tools: list | None) -> None:
        self.hidden.write_text(
            "from lab.tasks.checks import AgentTest\n\n"
            "class T(AgentTest):\n    def test_nothing(self):\n        pass\n"
        )


class Tampering:
    def __init__(self, edits: bool) -> None:
        self.edits = edits

    def seed(self, job: Job) -> int | None:
        return None

    def open(self, job: Job) -> tuple[Model, str]:
        model, provenance = Scripted().open(job)
        hidden = job.task.folder / "hidden" / "test_stats.py"
        return (EditsTheChecker(model, hidden) if self.edits else model), provenance


@pytest.mark.parametrize("edits", [False, True])
def test_a_checker_edited_during_the_run_is_no_judge(edits: bool, tmp_path: Path) -> None:
    task = load_task("one-bug")
    folder = tmp_path / "tasks" / "one-bug"
    shutil.copytree(task.folder, folder)
    job = Job("v2_todos", replace(task, folder=folder))
    record = run_job(job, Tampering(edits), tmp_path)
    if not edits:
        assert record.solved, record.verdict
        return
    assert not record.solved
    assert record.verdict == (
        f"the checker's own files changed during the run: {folder / 'hidden' / 'test_stats.py'}"
    )


def test_no_sitecustomize_or_pth_file_runs_in_the_checkers_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files the agent could leave where Python looks at start-up: on PYTHONPATH, and in
    the user's own site-packages (HOME is the user's to write), each printing a pass."""
    fake = (
        'print(\'{"solved": true, "detail": "all 8 hidden tests pass"}\'); import os; os._exit(0)'
    )
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "sitecustomize.py").write_text(fake + "\n")
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    user_site = tmp_path / "home" / ".local" / "lib" / version / "site-packages"
    user_site.mkdir(parents=True)
    (user_site / "usercustomize.py").write_text(fake + "\n")
    (user_site / "planted.pth").write_text("import os; os._exit(0)\n")
    monkeypatch.setenv("PYTHONPATH", str(planted))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PYTHONUSERBASE", str(tmp_path / "home" / ".local"))
    folder = workspace("one-bug", tmp_path)
    outcome = check(load_task("one-bug"), folder, "All tests pass.")
    assert not outcome.solved and outcome.detail.startswith("3 of 8 hidden tests fail"), outcome


def test_odd_answers_of_the_agents_code_fail_their_test_and_no_other(tmp_path: Path) -> None:
    """An object instead of a value, an answer too long to read, an exit in the middle: each
    fails the test that asked, with the reason, and the next test gets a fresh process."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "odd.py").write_text(
        "import os\n"
        "def thing():\n    return object()\n"
        "def huge():\n    return 'x' * 3_000_000\n"
        "def leave():\n    os._exit(3)\n"
        "def fine():\n    return {'a': [1, 2.5, None]}\n"
    )
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "test_odd.py").write_text(
        "from lab.tasks.checks import AgentTest\n\n"
        "class T(AgentTest):\n"
        "    setup = 'from odd import thing, huge, leave, fine'\n"
        "    def test_a_thing(self):\n        self.value('thing()')\n"
        "    def test_b_huge(self):\n        self.value('huge()')\n"
        "    def test_c_leave(self):\n        self.value('leave()')\n"
        "    def test_d_fine(self):\n"
        "        self.assertEqual(self.value('fine()'), {'a': [1, 2.5, None]})\n"
    )
    outcome = run_hidden_tests(tmp_path / "ws", hidden, ["odd.py"])
    assert outcome.detail.startswith(
        "3 of 4 hidden tests fail: test_a_thing, test_b_huge, test_c_leave"
    )
    assert (
        "`thing()` gave <object object at" in outcome.detail
        and "not a plain value" in outcome.detail
    )
    from lab.tasks.agent_code import AgentCode, AgentCodeFailed

    code = AgentCode(tmp_path / "ws")
    try:
        with pytest.raises(AgentCodeFailed, match="longer than 1,000,000 bytes"):
            code.value("from odd import huge", "huge()")
        with pytest.raises(AgentCodeFailed, match="the process ended"):
            code.value("from odd import leave", "leave()")
        assert code.value("from odd import fine", "fine()") == {"a": [1, 2.5, None]}
    finally:
        code.close()


@pytest.mark.parametrize("name", ["../one-bug", "one-bug/../add-flag", "/etc", "x" * 5000, ""])
def test_a_task_name_is_a_name_never_a_path(name: str) -> None:
    with pytest.raises(TaskError, match="^no task '.*'; the tasks are add-flag"):
        load_task(name)
