"""Chapter 1's tools against a hostile repository and a careless model.

A repository can ship symlinks, FIFOs, read-only files, huge or oddly encoded files;
a command can detach itself or print the agent's keys.  Each test plants one such
thing, calls the tools through `run_tool` as the agent does, and checks that they
refuse or cope, and that nothing outside the work directory changes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import tracemalloc
from pathlib import Path

import pytest

from machine.files import COUNT_LIMIT, EDIT_LIMIT
from machine.guard import refusal_reason
from tests.v1_tool_loop.test_tools import is_running
from v1_tool_loop.tools import OUTPUT_LIMIT, ToolResult, run_tool

ROOT = os.geteuid() == 0


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "work").mkdir()
    (tmp_path / "outside").mkdir()
    return tmp_path / "work"


def call(workdir: Path, name: str, **args) -> ToolResult:
    return run_tool(name, args, workdir)


def call_within(seconds: float, workdir: Path, name: str, **args) -> ToolResult:
    """The call's result, failing the test if it takes longer than `seconds` (a hang)."""
    results: list[ToolResult] = []
    thread = threading.Thread(target=lambda: results.append(call(workdir, name, **args)))
    thread.daemon = True  # a call that hangs must not keep the test run alive
    thread.start()
    thread.join(seconds)
    assert results, f"{name} {args} was still running after {seconds} s"
    return results[0]


# --- writing -------------------------------------------------------------------------


def test_a_link_planted_at_a_temporary_name_is_never_written_through(workdir: Path) -> None:
    secret = workdir.parent / "outside" / "secret.txt"
    secret.write_text("top secret\n")
    (workdir / "notes.txt").write_text("old\n")
    # The names a predictable scheme picks (the file's name and this process's id).
    for name in ("notes.txt", "new.txt"):
        (workdir / f".{name}.{os.getpid()}.tmp").symlink_to(secret)

    assert not call(workdir, "write_file", path="notes.txt", content="new\n").is_error
    assert not call(
        workdir, "edit_file", path="notes.txt", old_text="new", new_text="newer"
    ).is_error
    assert not call(workdir, "write_file", path="new.txt", content="fresh\n").is_error

    assert secret.read_text() == "top secret\n"
    for name, content in [("notes.txt", "newer\n"), ("new.txt", "fresh\n")]:
        assert not (workdir / name).is_symlink() and (workdir / name).read_text() == content


def test_a_file_name_of_255_bytes_can_be_written(workdir: Path) -> None:
    name = "é" * 127 + "x"  # 255 bytes of UTF-8, the most a Linux file name may have
    result = call(workdir, "write_file", path=name, content="long\n")
    assert not result.is_error, result.content
    assert (workdir / name).read_text() == "long\n"
    edit = call(workdir, "edit_file", path=name, old_text="long", new_text="longer")
    assert not edit.is_error and (workdir / name).read_text() == "longer\n"


def test_a_path_ending_in_a_separator_is_refused(workdir: Path) -> None:
    result = call(workdir, "write_file", path="build/", content="x")
    assert result.is_error and "names a folder" in result.content
    assert list(workdir.iterdir()) == []


def test_new_files_get_the_mode_the_umask_allows(workdir: Path) -> None:
    previous = os.umask(0o027)
    try:
        call(workdir, "write_file", path="new.txt", content="x")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((workdir / "new.txt").stat().st_mode) == 0o640


@pytest.mark.root
@pytest.mark.skipif(not ROOT, reason="only root may give a file to another owner")
def test_a_changed_file_keeps_its_owner_and_mode(workdir: Path) -> None:
    path = workdir / "shared.txt"
    path.write_text("one\n")
    os.chown(path, 1234, 2345)
    path.chmod(0o640)
    call(workdir, "edit_file", path="shared.txt", old_text="one", new_text="two")
    call(workdir, "write_file", path="shared.txt", content="three\n")
    info = path.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (1234, 2345, 0o640)
    assert path.read_text() == "three\n"


def test_a_read_only_file_is_refused_and_left_as_it_is(workdir: Path) -> None:
    path = workdir / "locked.txt"
    path.write_text("keep me\n")
    path.chmod(0o444)
    for name, args in [
        ("write_file", {"content": "changed\n"}),
        ("edit_file", {"old_text": "keep", "new_text": "lose"}),
    ]:
        result = run_tool(name, {"path": "locked.txt", **args}, workdir)
        assert result.is_error and "not writable for this user (mode 444" in result.content
    assert path.read_text() == "keep me\n" and stat.S_IMODE(path.stat().st_mode) == 0o444


@pytest.mark.root
@pytest.mark.skipif(not ROOT, reason="needs root to set up a file of another user")
def test_a_file_another_user_may_not_write_is_not_replaced() -> None:
    # In a folder everyone may write (like /tmp without its sticky bit), a rename could
    # replace root's file, though 'nobody' may not write the file itself.
    shared = Path(tempfile.mkdtemp())
    try:
        shared.chmod(0o777)
        (shared / "roots.txt").write_text("root's\n")
        reader, writer = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child becomes 'nobody' and asks the tools to change the file
            try:
                os.setgid(65534)
                os.setuid(65534)
                result = run_tool(
                    "write_file", {"path": "roots.txt", "content": "nobody's\n"}, shared
                )
                os.write(writer, json.dumps([result.is_error, result.content]).encode())
            finally:
                os._exit(0)
        os.close(writer)
        with os.fdopen(reader) as pipe:
            is_error, content = json.loads(pipe.read())
        os.waitpid(pid, 0)
        assert is_error and "not writable for this user (mode 644, owner uid 0)" in content
        assert (shared / "roots.txt").read_text() == "root's\n"
        assert (shared / "roots.txt").stat().st_uid == 0
    finally:
        shutil.rmtree(shared)


# --- what may be read ----------------------------------------------------------------


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def make_socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()  # the socket file stays


def make_device(path: Path) -> None:
    if not ROOT:
        pytest.skip("only root may create a device file")
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the same device as /dev/null


@pytest.mark.parametrize(
    "make", [make_fifo, make_socket, pytest.param(make_device, marks=pytest.mark.root)]
)
def test_only_regular_files_are_read_or_changed(workdir: Path, make) -> None:
    path = workdir / "special"
    make(path)
    try:
        for name, args in [
            ("read_file", {}),
            ("edit_file", {"old_text": "a", "new_text": "b"}),
            ("write_file", {"content": "x"}),
        ]:
            result = call_within(5, workdir, name, path="special", **args)
            assert result.is_error and "not a regular file" in result.content, result.content
        assert not stat.S_ISREG(path.lstat().st_mode)
    finally:
        if stat.S_ISFIFO(path.lstat().st_mode):  # release a reader left waiting, if any
            with contextlib.suppress(OSError):  # ENXIO: no reader is waiting
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


# --- reading large files -------------------------------------------------------------


def grow(path: Path, size: int, head: bytes) -> None:
    """A file of `size` bytes: `head`, then a sparse tail that costs no disk."""
    with open(path, "wb") as file:
        file.write(head)
        file.truncate(size)


def peak_memory(work) -> tuple[object, int]:
    """What `work()` returns and the most memory it had allocated at once, in bytes."""
    tracemalloc.start()
    try:
        return work(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_reading_two_lines_of_a_large_file_reads_little(workdir: Path) -> None:
    size = COUNT_LIMIT + 10_000_000
    head = b"".join(b"line %d\n" % n for n in range(1, 20_001))  # more than the first block
    grow(workdir / "big.log", size, head)
    result, peak = peak_memory(lambda: call(workdir, "read_file", path="big.log", limit=2))
    assert result.content.startswith("line 1\nline 2\n[lines 1-2; ")
    assert f"{size - len('line 1 line 2 '):,} more bytes" in result.content
    assert result.content.endswith("read_file with offset=3]")
    assert peak < 1_000_000, f"read_file(limit=2) on {size:,} bytes allocated {peak:,} bytes"


def test_a_large_binary_file_is_judged_by_its_first_block(workdir: Path) -> None:
    grow(workdir / "disk.img", 200_000_000, b"")
    result, peak = peak_memory(lambda: call(workdir, "read_file", path="disk.img"))
    assert result.is_error and "binary file (200,000,000 bytes)" in result.content
    assert peak < 1_000_000


def test_edit_file_refuses_a_file_over_its_limit_and_says_its_size(workdir: Path) -> None:
    grow(workdir / "huge.txt", EDIT_LIMIT + 1, b"needle\n")
    result = call(workdir, "edit_file", path="huge.txt", old_text="needle", new_text="pin")
    assert result.is_error
    assert f"is {EDIT_LIMIT + 1:,} bytes" in result.content and f"{EDIT_LIMIT:,}" in result.content
    assert (workdir / "huge.txt").read_bytes()[:7] == b"needle\n"


def test_lines_are_counted_to_the_end_when_that_is_cheap(workdir: Path) -> None:
    (workdir / "log.txt").write_text("".join(f"{n}\n" for n in range(1, 300_001)))
    result = call(workdir, "read_file", path="log.txt", offset=7, limit=2)
    assert result.content == "7\n8\n[lines 7-8 of 300000; 299992 more: read_file with offset=9]"


def test_a_line_longer_than_the_output_limit_is_cut_and_the_note_goes_on_after_it(
    workdir: Path,
) -> None:
    (workdir / "min.js").write_text("é" * OUTPUT_LIMIT + "\nsecond\n")
    result = call(workdir, "read_file", path="min.js")
    first, note = result.content.split("\n", 1)
    assert set(first) == {"é"} and len(first.encode()) <= OUTPUT_LIMIT
    assert "line 1 is longer than" in note and f"cut -c {OUTPUT_LIMIT + 1}-" in note
    assert note.endswith("[lines 1-1 of 2; 1 more: read_file with offset=2]")
    assert call(workdir, "read_file", path="min.js", offset=2).content == "second"


def test_the_paging_note_points_at_the_first_line_not_shown(workdir: Path) -> None:
    (workdir / "wide.txt").write_text("".join(f"{n:04d} {'x' * 195}\n" for n in range(1, 1001)))
    first = call(workdir, "read_file", path="wide.txt")
    *lines, note = first.content.split("\n")
    shown = len(lines)
    assert len("\n".join(lines).encode()) <= OUTPUT_LIMIT < len("\n".join(lines).encode()) + 201
    assert lines[-1].startswith(f"{shown:04d} ")
    assert note == (
        f"[lines 1-{shown} of 1000, as many as fit in {OUTPUT_LIMIT} bytes; "
        f"{1000 - shown} more: read_file with offset={shown + 1}]"
    )
    following = call(workdir, "read_file", path="wide.txt", offset=shown + 1, limit=1)
    assert following.content.startswith(f"{shown + 1:04d} ")


# --- line breaks ---------------------------------------------------------------------


def test_lines_end_at_newline_only_as_for_sed(workdir: Path) -> None:
    (workdir / "odd.txt").write_text("one\ftwo\nthree\u2028four\vfive\r\nsix\x1c\n")
    second = call(workdir, "read_file", path="odd.txt", offset=2, limit=1).content
    sed = call(workdir, "bash", command="sed -n 2p odd.txt").content
    assert second.split("\n")[0] == "three\u2028four\vfive" == sed.rstrip("\r")
    assert second.endswith("[lines 2-2 of 3; 1 more: read_file with offset=3]")


def test_a_crlf_file_is_edited_with_text_copied_from_read_file(workdir: Path) -> None:
    (workdir / "win.py").write_bytes(b"x = 1\r\ny = 2\r\nz = 3\r\n")
    shown = call(workdir, "read_file", path="win.py").content
    assert shown == "x = 1\ny = 2\nz = 3"
    result = call(
        workdir, "edit_file", path="win.py", old_text="x = 1\ny = 2\n", new_text="y = 20\nw = 0\n"
    )
    assert not result.is_error, result.content
    assert (workdir / "win.py").read_bytes() == b"y = 20\r\nw = 0\r\nz = 3\r\n"


def test_overlapping_matches_are_ambiguous(workdir: Path) -> None:
    (workdir / "a.txt").write_text("aaa\n")
    result = call(workdir, "edit_file", path="a.txt", old_text="aa", new_text="b")
    assert result.is_error and "matches 2 places" in result.content
    assert (workdir / "a.txt").read_text() == "aaa\n"


def test_a_symlink_loop_is_an_error_that_says_so(workdir: Path) -> None:
    (workdir / "loop").symlink_to(workdir / "loop")
    result = call(workdir, "read_file", path="loop")
    assert result.is_error and "symlink loop" in result.content


# --- commands ------------------------------------------------------------------------


def test_commands_do_not_see_the_agents_keys(workdir: Path, monkeypatch) -> None:
    secrets = {
        "ANTHROPIC_API_KEY": "sk-ant-secret-1",
        "ANTHROPIC_AUTH_TOKEN": "secret-2",
        "ANTHROPIC_BASE_URL": "https://secret-3.example",
        "OPENAI_API_KEY": "sk-secret-4",
        "OPENAI_BASE_URL": "https://secret-5.example/v1",
        "DEEPSEEK_API_KEY": "sk-secret-6",
    }
    for name, value in {**secrets, "PROJECT_SETTING": "kept"}.items():
        monkeypatch.setenv(name, value)
    output = call(workdir, "bash", command="env").content
    assert "PROJECT_SETTING=kept" in output and "PATH=" in output
    assert not [value for value in secrets.values() if value in output]
    assert os.environ["ANTHROPIC_API_KEY"] == "sk-ant-secret-1"  # the agent keeps its own


DAEMON = (
    "import os, sys, time\n"
    "if os.fork(): sys.exit()\n"
    "os.setsid()\n"
    "if os.fork(): sys.exit()\n"
    "open('daemon.pid', 'w').write(str(os.getpid()))\n"
    "time.sleep(300)\n"
)


def test_detached_processes_are_stopped_when_the_command_returns(workdir: Path) -> None:
    (workdir / "daemon.py").write_text(DAEMON)
    command = (
        "setsid sleep 300 & echo $! > setsid.pid; python daemon.py; "
        "while [ ! -s daemon.pid ]; do sleep 0.05; done; echo launched"
    )
    result = call(workdir, "bash", command=command)
    assert result.content == "launched"  # not a timeout: nothing waited for the sleepers
    for name in ("setsid.pid", "daemon.pid"):
        pid = int((workdir / name).read_text())
        assert not is_running(pid), f"{name}: {pid} survived the command"


def test_a_timed_out_command_leaves_no_detached_process(workdir: Path) -> None:
    result = call(
        workdir, "bash", command="setsid sleep 300 & echo $! > s.pid; sleep 300", timeout=1
    )
    assert result.is_error and "timed out after 1s" in result.content
    assert not is_running(int((workdir / "s.pid").read_text()))


REFUSED = [
    "rm -rf /",
    "rm -rf / --no-preserve-root",
    "rm -fr ~",
    "cd /tmp && rm -rf /*",
    'rm -rf "$HOME"',
    "rm -rf ${HOME}",
    "rm -rf '/'",
    'rm -rf "/"',
    "rm -rf ~/",
    "rm -rf $HOME/*",
    "rm -rf -- /",
    "/bin/rm -rf //",
    "echo hi; rm -rf ~",
    "true && rm -rf /",
    "false || rm -rf /",
    "ls | rm -rf /",
    "ls\nrm -rf ~",
    "if true; then\n  rm -rf /\nfi",
    "( rm -rf / )",
    "{ rm -rf ~; }",
    "echo $(rm -rf ~)",
    'echo "$(rm -rf ~)"',
    "echo `rm -rf /`",
    "x=$(echo; rm -rf /)",
    "bash -c 'rm -rf /'",
    'sh -ec "cd /; rm -rf ~"',
    "eval rm -rf /",
    "env FOO=1 rm -rf /",
    "FOO=1 nohup rm -rf ~",
    "echo / | xargs rm -rf /",
    "find / -delete",
    "find ~ -name '*' -exec rm {} +",
    "kill -9 -1",
    "kill -KILL -1",
    "kill -- -1",
    "mkfs.ext4 /dev/sda1",
    "mkfs -t ext4 /dev/sdb",
    "dd if=/dev/zero of=/dev/sda bs=1M",
    "cat image > /dev/nvme0n1",
    "echo x >/dev/sda",
    ":(){ :|:& };:",
    "bomb(){ bomb|bomb& };bomb",
    "shutdown -h now",
    "echo hi; reboot",
    "systemctl poweroff",
    "sudo apt-get install foo",
    "chmod -R 777 /",
    "chown -R nobody ~",
    "rm -rf / 'unbalanced",
]

ALLOWED = [
    "rm -rf build/",
    "rm -f ./notes.txt",
    'rm -rf "$HOME/project/build"',
    "rm -rf /tmp/agent-scratch",
    "echo reboot-notes",
    "echo reboot",
    "echo 'rm -rf /'",
    "grep mkfs setup.sh",
    "grep -rn shutdown src/",
    "git log --grep=sudo",
    "man shutdown",
    "dd if=data.bin of=/dev/null",
    "dd if=/dev/zero of=blank.img bs=1M count=1",
    "echo x > /dev/null 2>&1",
    "find . -name '*.pyc' -delete",
    "find / -name python3 2>/dev/null",
    "ls /",
    "du -sh ~",
    "kill -9 12345",
    "kill -1 12345",
    "chmod -R u+w src",
    "chmod 755 ~/bin/tool",
    "python -c 'print(1)'",
    "bash -c 'ls -la'",
    "echo it's",
]


@pytest.mark.parametrize("command", REFUSED)
def test_destructive_commands_are_refused_however_they_are_spelled(
    workdir: Path, command: str
) -> None:
    result = call(workdir, "bash", command=command)
    assert result.is_error and result.content.startswith("refused: this command ")
    assert result.content.endswith("Do the task without it.")


@pytest.mark.parametrize("command", ALLOWED)
def test_commands_that_merely_mention_a_word_are_allowed(command: str) -> None:
    # Checked without running: several of these would act on the machine.
    assert refusal_reason(command) is None


@pytest.mark.parametrize(
    "command",
    ["a" * 30_000, "$(" * 20_000, "/" * 30_000 + "x", ";" * 50_000, "f(){ " * 10_000],
    ids=["long word", "open substitutions", "slashes", "semicolons", "definitions"],
)
def test_the_guard_reads_pathological_commands(command: str) -> None:
    """How fast the guard reads such commands is measured by `python -m lab bench`."""
    assert refusal_reason(command) is None or isinstance(refusal_reason(command), str)


def test_refusals_name_what_the_command_would_do() -> None:
    reasons = {
        command: refusal_reason(command)
        for command in ['rm -rf "$HOME"', "find / -delete", "kill -9 -1", "sudo ls"]
    }
    assert reasons == {
        'rm -rf "$HOME"': "deletes all of / or of your home folder",
        "find / -delete": "deletes all of / or of your home folder",
        "kill -9 -1": "signals every process you may signal",
        "sudo ls": "asks for root rights",
    }


def test_the_model_still_gets_control_characters_as_they_are(workdir: Path) -> None:
    result = call(workdir, "bash", command=r"printf '\033[31mred\033[0m\a'")
    assert result.content == "\x1b[31mred\x1b[0m\x07"


def test_bash_runs_nothing_for_a_command_with_a_nul_byte(workdir: Path) -> None:
    result = call(workdir, "bash", command="touch made\0; echo")
    assert result.is_error and "NUL byte" in result.content
    assert not (workdir / "made").exists()


DETACH = "setsid env -i sh -c 'echo $$ > pid; exec sleep 600' & sleep 0.3; echo started"
ASK = "sleep 0.5; if kill -0 $(cat pid) 2>/dev/null; then echo ALIVE; else echo GONE; fi"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="orphans are adopted on Linux")
def test_a_process_that_drops_its_group_and_its_marker_is_stopped_too(tmp_path: Path) -> None:
    """`setsid env -i` leaves both the process group and the marker: the chapter's process
    adopts it as an orphan and stops it when the command returns."""
    rows = [
        {"format": "cassette/1", "provenance": "scripted", "task": "t"},
        *(
            {"reply": {"content": [block], "stop_reason": "tool_use"}}
            for block in (
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": DETACH}},
                {"type": "tool_use", "id": "t2", "name": "bash", "input": {"command": ASK}},
            )
        ),
        {"reply": {"content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn"}},
    ]
    cassette = tmp_path / "detach.jsonl"
    cassette.write_text("".join(json.dumps(row) + "\n" for row in rows))
    done = subprocess.run(
        [sys.executable, "-m", "v1_tool_loop", "--model", f"replay:{cassette}", "t"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert "│ started" in done.stdout and "│ GONE" in done.stdout, done.stdout
    pid = int((tmp_path / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
