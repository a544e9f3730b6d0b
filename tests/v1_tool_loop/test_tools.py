"""The chapter 1 tools, run for real in a temporary work directory.

Every failure a model can cause must come back as an error result that says what
to do, and must leave the files as they were.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from v1_tool_loop.tools import OUTPUT_LIMIT, TOOLS, ToolResult, run_tool


def call(workdir: Path, name: str, **args):
    return run_tool(name, args, workdir)


def is_running(pid: int, wait: float = 60.0) -> bool:
    """True if the process is still alive after `wait` seconds (a zombie counts as dead).

    Generous, for a busy machine: a process that dies ends the wait at once.

    A killed process takes a moment to die, and one whose parent is gone lingers as
    a zombie until init reaps it, so the check polls /proc instead of asking once.
    """
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return False
        if state == "Z":
            return False
        time.sleep(0.05)
    return True


# --- the sandbox: paths ----------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["../secret.txt", "sub/../../secret.txt", "/etc/passwd", "~/.bashrc", "a\0b"]
)
def test_paths_leaving_the_workdir_are_refused(tmp_path: Path, path: str) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    (tmp_path / "secret.txt").write_text("top secret")
    for name, args in [
        ("read_file", {"path": path}),
        ("write_file", {"path": path, "content": "x"}),
        ("edit_file", {"path": path, "old_text": "top", "new_text": "no"}),
    ]:
        result = run_tool(name, args, workdir)
        assert result.is_error, (name, path)
        assert "top secret" not in result.content
    assert (tmp_path / "secret.txt").read_text() == "top secret"


def test_symlinks_leading_outside_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret")
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "link.txt").symlink_to(outside / "secret.txt")
    (workdir / "linkdir").symlink_to(outside)

    assert call(workdir, "read_file", path="link.txt").is_error
    assert call(workdir, "read_file", path="linkdir/secret.txt").is_error
    result = call(workdir, "write_file", path="linkdir/new.txt", content="x")
    assert result.is_error and "outside the work directory" in result.content
    assert not (outside / "new.txt").exists()


def test_absolute_paths_inside_and_symlinks_inside_are_fine(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "alias.txt").symlink_to(tmp_path / "notes.txt")
    assert call(tmp_path, "read_file", path=str(tmp_path / "notes.txt")).content == "hello"
    assert call(tmp_path, "read_file", path="alias.txt").content == "hello"


def test_write_file_creates_parent_folders_inside(tmp_path: Path) -> None:
    result = call(tmp_path, "write_file", path="a/b/c.txt", content="one\ntwo\n")
    assert not result.is_error
    assert (tmp_path / "a/b/c.txt").read_text() == "one\ntwo\n"
    assert [p.name for p in (tmp_path / "a/b").iterdir()] == ["c.txt"]  # no temp file left


def test_write_file_keeps_the_mode_of_an_existing_file(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("echo old\n")
    script.chmod(0o755)
    call(tmp_path, "write_file", path="run.sh", content="echo new\n")
    assert os.access(script, os.X_OK)
    assert call(tmp_path, "bash", command="./run.sh").content == "new"


# --- bash ---------------------------------------------------------------------------


def test_bash_runs_in_the_workdir_and_shows_both_streams(tmp_path: Path) -> None:
    result = call(tmp_path, "bash", command="pwd; echo to-out; echo to-err >&2")
    assert not result.is_error
    lines = result.content.splitlines()
    assert Path(lines[0]).resolve() == tmp_path.resolve()
    assert "to-out" in lines and "to-err" in lines


def test_bash_nonzero_exit_is_an_error_with_the_code(tmp_path: Path) -> None:
    result = call(tmp_path, "bash", command="echo partial; exit 3")
    assert result.is_error
    assert "partial" in result.content and "exit code 3" in result.content


def test_bash_does_not_wait_for_input(tmp_path: Path) -> None:
    result = call(tmp_path, "bash", command="cat; read line; echo after")
    assert result.content.strip() == "after"  # not a timeout: nothing waited for input


def test_bash_timeout_kills_the_group_and_keeps_partial_output(tmp_path: Path) -> None:
    result = call(
        tmp_path,
        "bash",
        command="echo started; (sleep 300; echo never) & echo $! > child.pid; sleep 300",
        timeout=1,
    )
    assert result.is_error
    assert "started" in result.content and "timed out after 1s" in result.content
    assert "never" not in result.content
    assert not is_running(int((tmp_path / "child.pid").read_text()))


def test_bash_stops_background_processes_when_the_command_returns(tmp_path: Path) -> None:
    result = call(tmp_path, "bash", command="sleep 300 & echo $! > bg.pid; echo launched")
    assert result.content == "launched"  # not a timeout: nothing waited for the sleeper
    assert not is_running(int((tmp_path / "bg.pid").read_text()))


def test_bash_output_is_capped_keeping_head_and_tail(tmp_path: Path) -> None:
    command = "echo FIRST-LINE; for i in $(seq 1 20000); do echo line $i; done; echo LAST-LINE"
    result = call(tmp_path, "bash", command=command)
    assert len(result.content) < OUTPUT_LIMIT + 200
    assert result.content.startswith("FIRST-LINE")
    assert result.content.endswith("LAST-LINE")
    assert "bytes cut from the middle" in result.content


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf /",
        "rm -rf / --no-preserve-root",
        "rm -fr ~",
        "cd /tmp && rm -rf /*",
        "mkfs.ext4 /dev/sda1",
        "dd if=/dev/zero of=/dev/sda bs=1M",
        ":(){ :|:& };:",
        "shutdown -h now",
        "echo hi; reboot",
        "sudo apt-get install foo",
    ],
)
def test_plainly_destructive_commands_are_refused(tmp_path: Path, command: str) -> None:
    result = call(tmp_path, "bash", command=command)
    assert result.is_error
    assert result.content.startswith("refused:")


@pytest.mark.parametrize("command", ["rm -rf build/", "rm -f ./notes.txt", "echo reboot-notes"])
def test_ordinary_commands_are_not_refused(tmp_path: Path, command: str) -> None:
    assert not call(tmp_path, "bash", command=command).content.startswith("refused:")


# --- read_file ----------------------------------------------------------------------


def test_read_file_errors_say_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "image.bin").write_bytes(b"\x89PNG\x00\x01\x02")
    missing = call(tmp_path, "read_file", path="nope.txt")
    assert missing.is_error and "no such file" in missing.content and "ls" in missing.content
    folder = call(tmp_path, "read_file", path="folder")
    assert folder.is_error and "is a folder" in folder.content
    binary = call(tmp_path, "read_file", path="image.bin")
    assert binary.is_error and "binary file (7 bytes)" in binary.content


@pytest.mark.parametrize(
    ("data", "hint"),
    [
        ("café crème\n".encode("latin-1"), "iconv -f latin1 -t utf-8 old.txt"),
        ("中文注释\n".encode("gbk"), "iconv -f gb18030 -t utf-8 old.txt"),
        ("hello\n".encode("utf-16"), "iconv -f utf-16 -t utf-8 old.txt"),
    ],
)
def test_text_in_another_encoding_is_named_so_with_a_way_to_read_it(
    tmp_path: Path, data: bytes, hint: str
) -> None:
    (tmp_path / "old.txt").write_bytes(data)
    for name, args in [
        ("read_file", {}),
        ("edit_file", {"old_text": "caf", "new_text": "x"}),
    ]:
        result = run_tool(name, {"path": "old.txt", **args}, tmp_path)
        assert result.is_error and "is not UTF-8 text" in result.content
        assert hint in result.content and "binary" not in result.content
    assert (tmp_path / "old.txt").read_bytes() == data


def test_read_file_pages_long_files(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 1001)))
    first = call(tmp_path, "read_file", path="long.txt")
    assert first.content.splitlines()[0] == "line 1"
    assert "lines 1-400 of 1000; 600 more: read_file with offset=401" in first.content
    page = call(tmp_path, "read_file", path="long.txt", offset=991, limit=5)
    assert page.content.splitlines()[:5] == [f"line {n}" for n in range(991, 996)]
    assert "5 more: read_file with offset=996" in page.content
    tail = call(tmp_path, "read_file", path="long.txt", offset=996)
    assert tail.content.splitlines()[-1] == "line 1000" and "more" not in tail.content
    past = call(tmp_path, "read_file", path="long.txt", offset=5000)
    assert past.is_error and "has 1000 lines" in past.content


# --- edit_file ----------------------------------------------------------------------


def test_edit_file_replaces_exactly_one_match(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    result = call(tmp_path, "edit_file", path="a.py", old_text="y = 2", new_text="y = 3")
    assert not result.is_error
    assert (tmp_path / "a.py").read_text() == "x = 1\ny = 3\n"


@pytest.mark.parametrize(
    ("old_text", "expected"),
    [("z = 9", "was not found"), ("= 1", "matches 2 places"), ("", "old_text is empty")],
)
def test_edit_file_refuses_absent_or_ambiguous_text(
    tmp_path: Path, old_text: str, expected: str
) -> None:
    original = "x = 1\nw = 1\n"
    (tmp_path / "a.py").write_text(original)
    result = call(tmp_path, "edit_file", path="a.py", old_text=old_text, new_text="q")
    assert result.is_error and expected in result.content
    assert (tmp_path / "a.py").read_text() == original


# --- bad calls ------------------------------------------------------------------------


def test_unknown_tool_lists_the_available_ones(tmp_path: Path) -> None:
    result = run_tool("delete_everything", {}, tmp_path)
    assert result.is_error
    for tool in TOOLS:
        assert tool["name"] in result.content


HOSTILE_CALLS = [
    (["bash"], {"command": "echo hi"}),
    ({"name": "bash"}, {"command": "echo hi"}),
    (None, {}),
    (7, {}),
    ("", {}),
    ("x" * 10_000, {}),
    ("bash", {1: "echo hi"}),
    ("bash", {"command": "echo hi", None: 1}),
    ("bash", {"command": "echo\0hi"}),
    ("bash", ["echo hi"]),
    ("bash", None),
    ("read_file", {"path": "\ud800"}),
    ("read_file", {"path": "a.txt", "offset": 10**100}),
    ("read_file", {"path": "a.txt", "limit": -(10**100)}),
    ("write_file", {"path": "a.txt", "content": "\ud800"}),
    ("write_file", {"path": "", "content": "x"}),
    ("edit_file", {"path": ".", "old_text": "a", "new_text": "b"}),
]


@pytest.mark.parametrize(("name", "args"), HOSTILE_CALLS)
def test_run_tool_answers_hostile_calls_with_an_error(tmp_path: Path, name, args) -> None:
    (tmp_path / "a.txt").write_text("kept\n")
    result = run_tool(name, args, tmp_path)
    assert isinstance(result.content, str) and result.is_error
    assert len(result.content) < 1000  # a 10,000-character name is not echoed whole
    assert (tmp_path / "a.txt").read_text() == "kept\n"


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)
ARGUMENT_NAMES = st.sampled_from(["path", "content", "offset", "limit", "old_text", "new_text"])


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(["read_file", "write_file", "edit_file"]) | JSON_VALUES,
    args=st.dictionaries(ARGUMENT_NAMES | st.integers(), JSON_VALUES) | JSON_VALUES,
)
def test_run_tool_never_raises_whatever_it_is_sent(name: object, args: object) -> None:
    # bash is left out: a random string that happens to be valid would run as a command.
    with tempfile.TemporaryDirectory() as workdir:
        result = run_tool(name, args, workdir)
    assert isinstance(result, ToolResult) and isinstance(result.content, str)


def test_a_table_of_ones_own_goes_through_the_same_door(tmp_path: Path) -> None:
    notes: list[str] = []

    def note(workdir: Path, text: str) -> str:  # a handler that keeps state between calls
        notes.append(text)
        return f"{len(notes)} note(s)"

    schema = {
        "name": "note",
        "description": "Keep a note.",
        "input_schema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The note."}},
            "required": ["text"],
        },
    }
    table = {"schemas": {"note": schema}, "handlers": {"note": note}}

    assert run_tool("note", {"text": "first"}, tmp_path, **table).content == "1 note(s)"
    for args, expected in [
        ({}, "note: missing argument(s): text. Expected: text (string, required)"),
        ({"text": 3}, "argument 'text' must be of type string"),
        ({"text": "x", "extra": 1}, "unexpected argument(s): extra"),
    ]:
        result = run_tool("note", args, tmp_path, **table)
        assert result.is_error and expected in result.content
    bash = run_tool("bash", {"command": "touch ran"}, tmp_path, **table)
    assert bash.is_error and bash.content.endswith("Available tools: note")
    assert notes == ["first"] and not (tmp_path / "ran").exists()


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("bash", {}, "missing argument(s): command"),
        ("bash", {"command": ["ls"]}, "'command' must be of type string"),
        ("bash", {"command": "ls", "timeout": "5"}, "'timeout' must be of type integer"),
        ("bash", {"command": "ls", "timeout": True}, "'timeout' must be of type integer"),
        ("read_file", {"path": "a", "lines": 3}, "unexpected argument(s): lines"),
        ("write_file", "just text", "arguments must be a JSON object"),
        ("edit_file", {"path": "a.py"}, "missing argument(s): old_text, new_text"),
    ],
)
def test_malformed_arguments_name_the_expected_ones(
    tmp_path: Path, name: str, args: object, expected: str
) -> None:
    result = run_tool(name, args, tmp_path)
    assert result.is_error
    assert expected in result.content
    schema = next(tool for tool in TOOLS if tool["name"] == name)
    for argument in schema["input_schema"]["properties"]:
        assert argument in result.content


def test_bash_timeout_below_one_second_is_an_error(tmp_path: Path) -> None:
    result = call(tmp_path, "bash", command="echo hi", timeout=0)
    assert result.is_error and "at least 1 second" in result.content


def test_a_quick_successful_command_is_never_reported_as_killed(tmp_path: Path) -> None:
    # Output ends a moment before the process exits; the exit status must be awaited.
    results = [call(tmp_path, "bash", command="ls -a") for _ in range(100)]
    assert not [r.content for r in results if r.is_error]


def test_a_command_that_closes_its_output_early_still_reports_its_exit(tmp_path: Path) -> None:
    result = call(tmp_path, "bash", command="echo bye; exec >&- 2>&-; sleep 0.3; exit 3")
    assert result.is_error and result.content == "bye\n[exit code 3]"


def test_a_failing_command_with_no_output_shows_just_the_code(tmp_path: Path) -> None:
    assert call(tmp_path, "bash", command="exit 2").content == "[exit code 2]"


def test_arguments_that_were_not_json_are_reported_as_such(tmp_path: Path) -> None:
    result = run_tool("bash", {"_invalid_json": '{"command": "ls'}, tmp_path)
    assert result.is_error and "not valid JSON" in result.content
    assert '{"command": "ls' in result.content
