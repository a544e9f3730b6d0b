"""Chapter 4's sessions: saved as they happen, repaired after a crash, resumed identically."""

from __future__ import annotations

import inspect
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm.result import tool_uses
from llm.tokens import estimate_message
from llm.types import Message
from machine import jsonl
from machine.journal import JournalBusy as SessionBusy
from machine.journal import JournalNotFound as SessionNotFound
from tests import REPO
from v2_todos.todos import latest_plan
from v4_memory.session import (
    INTERRUPTED,
    Session,
    SessionError,
    SessionStore,
    plan_of,
)


def user(text: str) -> Message:
    return {"role": "user", "content": text}


def call(tool_id: str, command: str = "ls") -> Message:
    tool = {"type": "tool_use", "id": tool_id, "name": "bash", "input": {"command": command}}
    return {"role": "assistant", "content": [{"type": "text", "text": "Let me look."}, tool]}


def results(*tool_ids: str) -> Message:
    blocks = [
        {"type": "tool_result", "tool_use_id": tool_id, "content": "ok", "is_error": False}
        for tool_id in tool_ids
    ]
    return {"role": "user", "content": blocks}


def answer(text: str) -> Message:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


CONVERSATION = [user("Fix the test."), call("t1"), results("t1"), answer("Fixed.")]


def stored(message: Message) -> Message:
    """`message` as its line holds it: with the estimate of its size."""
    return {**message, "tokens": estimate_message(message)}


def assert_valid_request(messages: list[Message]) -> None:
    """What both APIs, and chat templates that insist on alternating roles, accept."""
    assert messages and messages[0]["role"] == "user"
    asked: list[str] = []
    for number, message in enumerate(messages):
        assert message["content"], "no empty message"
        assert number == 0 or message["role"] != messages[number - 1]["role"], "roles alternate"
        blocks = message["content"] if isinstance(message["content"], list) else []
        answered = [block["tool_use_id"] for block in blocks if block["type"] == "tool_result"]
        expected = asked if message["role"] == "user" else []
        assert answered == expected, "each call answered right after it, and nothing else"
        assert all(block["type"] == "tool_result" for block in blocks[: len(answered)])
        asked = [block["id"] for block in tool_uses(message)]
    assert not asked, "no call left without its result"


def write_session(tmp_path: Path, lines: list[bytes]) -> tuple[SessionStore, str]:
    """A session file as a crash or a bad disk left it, byte for byte."""
    store = SessionStore(tmp_path)
    with store.create() as session:
        pass
    header = session.path.read_bytes()
    session.path.write_bytes(header + b"".join(lines))
    return store, session.id


def test_a_session_resumes_with_the_same_messages(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    with store.create({"model": "replay:demo.jsonl"}) as session:
        for message in CONVERSATION:
            session.append(message)
        assert session.messages() == CONVERSATION

    with SessionStore(tmp_path).open(session.id) as resumed:
        assert resumed.messages() == CONVERSATION
        assert resumed.repairs == []
        assert resumed.header["model"] == "replay:demo.jsonl"

    header, *lines = session.path.read_text().splitlines()
    header = json.loads(header)
    assert header["type"] == "session" and header["schema"] == 1 and header["id"] == session.id
    assert header["model"] == "replay:demo.jsonl" and header["chapter"] == "v4_memory"
    assert header["created"].startswith(time.strftime("%Y-"))
    assert lines == [jsonl.encode(stored(message)).decode().strip() for message in CONVERSATION]


def test_a_torn_last_line_is_dropped_and_the_next_message_starts_a_fresh_line(
    tmp_path: Path,
) -> None:
    torn = jsonl.encode(answer("never finished"))[:20]
    store, session_id = write_session(tmp_path, [jsonl.encode(m) for m in CONVERSATION[:3]])
    with open(store.root / f"{session_id}.jsonl", "ab") as file:
        file.write(torn)

    with store.open(session_id) as session:
        assert session.messages() == CONVERSATION[:3]
        assert session.repairs == [f"{session_id}.jsonl:5: torn last line dropped (20 bytes)"]
        session.append(answer("Fixed."))

    with store.open(session_id) as session:
        assert session.messages() == CONVERSATION
        assert session.repairs == [f"{session_id}.jsonl:5: undecodable line skipped (20 bytes)"]
    assert session.path.read_bytes().endswith(torn + b"\n" + jsonl.encode(stored(answer("Fixed."))))


def test_a_tool_call_without_its_result_is_answered_with_an_error(tmp_path: Path) -> None:
    store, session_id = write_session(tmp_path, [jsonl.encode(m) for m in CONVERSATION[:2]])
    written = (store.root / f"{session_id}.jsonl").read_bytes()

    with store.open(session_id) as session:
        interrupted = {
            "type": "tool_result",
            "tool_use_id": "t1",
            "content": INTERRUPTED,
            "is_error": True,
        }
        assert session.messages() == [*CONVERSATION[:2], {"role": "user", "content": [interrupted]}]
        assert session.repairs == [
            f"message 2: tool call t1 (bash) had no result, answered '{INTERRUPTED}'"
        ]
        assert session.path.read_bytes() == written, "a repair is never written back"

        # The user goes on: the new request follows the error results in one message.
        session.append(user("Try again."))
        expected = [
            *CONVERSATION[:2],
            {"role": "user", "content": [interrupted, {"type": "text", "text": "Try again."}]},
        ]
        assert session.messages() == expected
        assert_valid_request(session.messages())

    with store.open(session_id) as session:
        assert session.messages() == expected


def test_a_corrupt_line_in_the_middle_is_skipped_and_the_rest_kept(tmp_path: Path) -> None:
    lines = [jsonl.encode(m) for m in CONVERSATION]
    garbage = b'{"role":"assistant","content":[{"type":"text","te\xff'
    lines.insert(2, garbage + b"\n")
    store, session_id = write_session(tmp_path, lines)

    with store.open(session_id) as session:
        assert session.messages() == CONVERSATION
        assert session.repairs == [
            f"{session_id}.jsonl:4: undecodable line skipped ({len(garbage)} bytes)"
        ]


def test_a_session_past_any_size_limit_opens_lists_and_goes_on(tmp_path: Path) -> None:
    """A session is read one line at a time, at any size: one 300 MB hole in the file (a
    sparse file, so the disk holds almost nothing) makes it larger than any cap a loader
    once had; the line it makes is passed over without being held in memory."""
    before = [jsonl.encode(m) for m in CONVERSATION[:2]]
    store, session_id = write_session(tmp_path, before)
    path = tmp_path / f"{session_id}.jsonl"
    with open(path, "r+b") as file:
        file.seek(300_000_000, os.SEEK_END)  # a line of 300 MB of zero bytes
        file.write(b"\n" + b"".join(jsonl.encode(m) for m in CONVERSATION[2:]))
    assert path.stat().st_size > 300_000_000

    tracemalloc.start()
    try:
        with store.open(session_id) as session:
            assert session.messages() == CONVERSATION
            skipped = f"{session_id}.jsonl:4: a line over 16,000,000 bytes skipped"
            assert session.repairs == [skipped]
            session.append(user("And the next one."))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100_000_000, f"opening took {peak:,} bytes at its peak"
    [info] = store.list()
    assert (info.id, info.messages, info.size) == (session_id, 5, path.stat().st_size)
    with store.open(session_id) as session:
        assert session.messages()[-1] == user("And the next one.")


def test_a_lost_tool_call_takes_its_results_with_it(tmp_path: Path) -> None:
    lines = [jsonl.encode(m) for m in CONVERSATION]
    lines[1] = b"garbage\n"  # the assistant's tool call is lost; its result is left over
    store, session_id = write_session(tmp_path, lines)

    with store.open(session_id) as session:
        assert session.messages() == [CONVERSATION[0], CONVERSATION[3]]
        assert session.repairs == [
            f"{session_id}.jsonl:3: undecodable line skipped (7 bytes)",
            "message 2: result for unknown tool call t1 dropped",
        ]


def test_two_user_messages_in_a_row_are_joined_and_a_final_one_is_kept(
    tmp_path: Path,
) -> None:
    # The process died while the model was thinking; on resume the user asked again.
    store, session_id = write_session(tmp_path, [jsonl.encode(user("Fix the test."))])
    with store.open(session_id) as session:
        assert session.messages() == [user("Fix the test.")], "a valid request as it is"
        session.append(user("Please, fix it."))
        joined = [
            {"type": "text", "text": "Fix the test."},
            {"type": "text", "text": "Please, fix it."},
        ]
        assert session.messages() == [{"role": "user", "content": joined}]
    with store.open(session_id) as session:
        assert session.messages() == [{"role": "user", "content": joined}]
        assert session.repairs == ["message 2: second user message in a row, joined"]


def test_a_history_that_starts_with_the_model_gets_a_user_message_first(tmp_path: Path) -> None:
    store, session_id = write_session(tmp_path, [b"lost\n", jsonl.encode(answer("Fixed."))])
    with store.open(session_id) as session:
        assert_valid_request(session.messages())
        assert session.messages()[1] == answer("Fixed.")


def test_compaction_is_saved_and_replayed(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    summary = user("Summary: the test failed on the last line; fixed.")
    with store.create() as session:
        for message in [*CONVERSATION, user("Now the docs."), answer("Done.")]:
            session.append(message)
        assert session.boundaries() == [1, 3, 4, 5, 6]
        session.compact(4, summary)
        compacted = [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": summary["content"]},
                    {"type": "text", "text": "Now the docs."},
                ],
            },
            answer("Done."),
        ]
        assert session.messages() == compacted
        session.append(user("Thanks."))

    with store.open(session.id) as resumed:
        assert resumed.messages() == [*compacted, user("Thanks.")]
    records = jsonl.load(session.path).records
    assert records[7] == {"type": "compaction", "upto": 4, "summary": summary}
    assert [r for r in records if "role" in r] == [
        *map(stored, CONVERSATION),
        stored(user("Now the docs.")),
        stored(answer("Done.")),
        stored(user("Thanks.")),
    ], "every message is stored once, compacted or not"


def assert_sizes_are_fresh(session: Session) -> None:
    """What the session keeps of each message's size is what estimating it now gives."""
    messages, sizes = session.messages(), list(session.history.sizes)
    assert len(messages) - 1 <= len(sizes) <= len(messages), "one size per message of the history"
    assert sizes == [estimate_message(message) for message in messages[: len(sizes)]]
    assert session.history.tokens() == sum(map(estimate_message, messages))
    calling = [n for n, message in enumerate(messages) if message["role"] == "assistant"]
    calling = [n for n in calling if any(c["name"] == "bash" for c in tool_uses(messages[n]))]
    assert list(session.history.calls("bash")) == calling, "each message that calls bash, once"


def plan_call(tool_id: str, task: str) -> Message:
    items = [{"content": task, "status": "in_progress"}]
    return {"role": "assistant", "content": [
        {"type": "tool_use", "id": tool_id, "name": "todo_write", "input": {"items": items}}
    ]}  # fmt: skip


def test_the_plan_is_read_back_at_its_calls_alone(tmp_path: Path) -> None:
    """`plan_of` reads the session's todo_write calls, the last first: the same plan as
    reading every message, a refused update passed over, a summarised one gone."""
    store = SessionStore(tmp_path)
    refused = {"type": "tool_result", "tool_use_id": "p2", "content": "no", "is_error": True}
    with store.create() as session:
        for message in [
            user("Fix the test."),
            plan_call("p1", "read the test"),
            results("p1"),
            *CONVERSATION[1:3],
            plan_call("p2", "give up"),
            {"role": "user", "content": [refused]},
            answer("Reading."),
        ]:
            session.append(message)
        assert plan_of(session) == [{"content": "read the test", "status": "in_progress"}]
    with store.open(session.id) as resumed:
        assert list(resumed.history.calls("todo_write")) == [1, 5]
        assert plan_of(resumed) == latest_plan(resumed.messages())
        assert plan_of(resumed) == [{"content": "read the test", "status": "in_progress"}]
        resumed.append(user("Go on."))
        resumed.compact(5, user("Summary: the test was read."))
        assert list(resumed.history.calls("todo_write")) == [1], "p2's message, now the second"
        assert plan_of(resumed) == latest_plan(resumed.messages()) == []


def test_a_resumed_session_is_not_estimated_again_and_a_wrong_figure_is_not_taken(
    tmp_path: Path,
) -> None:
    """Each line keeps its message's estimate, so a long session opens without estimating
    it again; a line without one (an older file) or with one that is no count is estimated."""
    store = SessionStore(tmp_path)
    with store.create() as session:
        for message in CONVERSATION:
            session.append(message)
    lines = session.path.read_bytes().splitlines(keepends=True)
    assert [json.loads(line)["tokens"] for line in lines[1:]] == list(session.history.sizes)

    header, first, second, third, fourth = lines
    kept = json.loads(second)
    kept["tokens"] = 12_345  # trusted: the figure is the session's own
    older = json.loads(third)
    del older["tokens"]
    path = session.path
    for bad in ["12", -1, True, 2.5, None]:
        wrong = json.loads(fourth) | {"tokens": bad}
        path.write_bytes(b"".join([header, first, *map(jsonl.encode, [kept, older, wrong])]))
        with store.open(session.id) as resumed:
            assert resumed.messages() == CONVERSATION and resumed.repairs == []
            assert list(resumed.history.sizes) == [
                estimate_message(CONVERSATION[0]),
                12_345,
                estimate_message(CONVERSATION[2]),
                estimate_message(CONVERSATION[3]),
            ], f"tokens {bad!r}"


def test_compaction_never_splits_a_call_from_its_result(tmp_path: Path) -> None:
    with SessionStore(tmp_path).create() as session:
        for message in CONVERSATION:
            session.append(message)
        with pytest.raises(ValueError, match="would split tool call t1 from its result"):
            session.compact(2, user("Summary."))
        with pytest.raises(ValueError, match="user message of text"):
            session.compact(1, answer("Summary."))
        with pytest.raises(ValueError, match="between 1 and 4"):
            session.compact(5, user("Summary."))
        assert session.messages() == CONVERSATION, "a refused compaction changes nothing"
    assert len(session.path.read_text().splitlines()) == 5


def test_the_history_holds_what_was_written_not_the_callers_lists(tmp_path: Path) -> None:
    content = [{"type": "text", "text": "Fix the test."}]
    with SessionStore(tmp_path).create() as session:
        session.append({"role": "user", "content": content})
        content.append({"type": "text", "text": "changed after the write"})
        assert session.messages() == [{"role": "user", "content": content[:1]}]


def test_bad_messages_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    with SessionStore(tmp_path).create() as session:
        size = session.path.stat().st_size
        for bad in [
            {"role": "system", "content": "x"},
            {"role": "user", "content": 3},
            {"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "bash"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "name": "bash"}]},
            {"role": "user", "content": [{"type": "text", "text": Path("x")}]},
        ]:
            with pytest.raises(ValueError, match="not a message"):
                session.append(bad)
        assert session.path.stat().st_size == size
    with pytest.raises(SessionError, match="is closed"):
        session.append(user("late"))


def test_an_unknown_session_says_how_to_list_them(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    for wrong in ("20250101-000000-abcdef", "../etc/passwd"):
        with pytest.raises(SessionNotFound, match="/sessions lists them"):
            store.open(wrong)


def test_a_newer_format_is_refused_not_misread(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    path = tmp_path / "20250101-000000-abcdef.jsonl"
    path.write_bytes(jsonl.encode({"type": "session", "schema": 2, "id": path.stem}))
    with pytest.raises(SessionError, match="format version 2"):
        store.open(path.stem)
    path.write_bytes(jsonl.encode({"type": "session", "schema": 1, "id": path.stem}))
    store.open(path.stem).close()  # the refused open let go of its lock


def test_list_and_latest(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    assert store.list() == [] and store.latest() is None
    with store.create() as first:
        first.append(user("Fix the flaky test\nin test_io.py"))
        first.append(answer("Done."))
    with store.create() as second:
        second.append(user("Add a --verbose flag"))
        for message in CONVERSATION[1:]:
            second.append(message)
        second.compact(3, user("Summary."))
    last_write = second.path.stat().st_mtime_ns
    os.utime(first.path, ns=(last_write - 10**9,) * 2)  # more than a file-system clock tick

    infos = store.list()
    assert [info.id for info in infos] == [second.id, first.id]
    assert [info.messages for info in infos] == [4, 2]
    assert [info.first_line for info in infos] == ["Add a --verbose flag", "Fix the flaky test"]
    assert infos[0].created <= infos[0].last_active
    assert infos[1].last_active < infos[0].last_active
    assert store.latest() == infos[0]

    os.utime(first.path, ns=(last_write + 10**9,) * 2)  # the first one is active again
    assert store.latest().id == first.id


# --- Two processes, and kill -9 ---------------------------------------------------------------

HOLD = """
import sys, time
from v4_memory.session import SessionStore
session = SessionStore(sys.argv[1]).open(sys.argv[2])
print("open", flush=True)
time.sleep(600)
"""

TRY_OPEN = """
import sys
from machine.journal import JournalBusy as SessionBusy
from v4_memory.session import SessionStore
try:
    SessionStore(sys.argv[1]).open(sys.argv[2]).close()
except SessionBusy as error:
    sys.exit(str(error))
"""


def start_python(code: str, *args: object, **options: object) -> subprocess.Popen:
    command = [sys.executable, "-c", code, *map(str, args)]
    return subprocess.Popen(command, cwd=REPO, text=True, **options)


def run_python(code: str, *args: object) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", code, *map(str, args)]
    return subprocess.run(command, cwd=REPO, text=True, capture_output=True, timeout=600)


def test_a_second_process_is_refused_while_the_first_has_the_session(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    with store.create() as session:
        refused = run_python(TRY_OPEN, tmp_path, session.id)
        assert refused.returncode == 1
        assert refused.stderr.strip() == (
            f"session {session.id} is open in another process (pid {os.getpid()}): "
            "close it there first, or start a new session"
        )
        with pytest.raises(SessionBusy, match="open in this process"):
            store.open(session.id)
    assert run_python(TRY_OPEN, tmp_path, session.id).returncode == 0, "close() released it"


def test_the_lock_of_a_killed_process_is_taken_over(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    with store.create() as session:
        pass
    holder = start_python(HOLD, tmp_path, session.id, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline() == "open\n"
        with pytest.raises(SessionBusy, match=f"pid {holder.pid}"):
            store.open(session.id)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=600)
    lock = session.path.with_suffix(".lock")
    assert lock.read_text() == f"{holder.pid}\n", "the dead holder's lock file is still there"
    with store.open(session.id):
        assert lock.read_text() == f"{os.getpid()}\n"


def numbered(n: int) -> dict:
    """Message n of an endless conversation.  Every third one is a tool result of up to
    300 KB, whose write takes long enough for a kill to land inside it now and then."""
    if n % 3 == 0:
        return {"role": "user", "content": f"request {n}"}
    if n % 3 == 1:
        tool = {"type": "tool_use", "id": f"t{n}", "name": "bash", "input": {"command": "ls"}}
        return {"role": "assistant", "content": [tool]}
    output = f"{n} " + "x" * (n * 7919 % 300_000)
    result = {
        "type": "tool_result",
        "tool_use_id": f"t{n - 1}",
        "content": output,
        "is_error": False,
    }
    return {"role": "user", "content": [result]}


APPEND_FOREVER = inspect.getsource(numbered) + textwrap.dedent("""
    import sys
    from v4_memory.session import SessionStore
    root, session_id, acks = sys.argv[1:]
    session = SessionStore(root).open(session_id)
    with open(acks, "w") as acknowledged:
        for n in range(10**9):
            session.append(numbered(n))
            acknowledged.write(f"{n}\\n")
            acknowledged.flush()
""")


def test_kill_9_while_appending_loses_at_most_the_line_being_written(tmp_path: Path) -> None:
    rng = random.Random()
    for run in range(4):
        root = tmp_path / str(run)
        store = SessionStore(root)
        with store.create() as session:
            pass
        acks = root / "acks"  # the writer notes each message once `append` has returned
        writer = start_python(APPEND_FOREVER, root, session.id, acks)
        deadline = time.monotonic() + 120
        while not (acks.exists() and acks.stat().st_size) and time.monotonic() < deadline:
            time.sleep(0.005)
        delay = rng.uniform(0.01, 0.25)
        time.sleep(delay)
        writer.send_signal(signal.SIGKILL)
        assert writer.wait(timeout=600) == -signal.SIGKILL
        where = f"run {run}, killed {delay:.3f} s after its first append"

        loaded = jsonl.load(session.path)
        lines = loaded.records[1:]
        assert lines == [stored(numbered(n)) for n in range(len(lines))], where
        acknowledged = acks.read_text().count("\n")
        assert acknowledged <= len(lines) <= acknowledged + 1, where
        torn = f"{session.path.name}:{len(lines) + 2}: torn last line dropped"
        assert len(loaded.problems) <= 1, where
        assert all(problem.startswith(torn) for problem in loaded.problems), where

        with store.open(session.id) as resumed:  # the dead writer's lock is taken over
            assert_valid_request(resumed.messages())
            resumed.append(user("after the crash"))
            after = resumed.messages()
        with store.open(session.id) as resumed:
            assert resumed.messages() == after, where
        assert jsonl.load(session.path).records[1:] == [*lines, stored(user("after the crash"))], (
            where
        )


# --- Any history, any order: still a valid request, and the same after a reload ----------------

STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.text(max_size=3)),
        st.tuples(st.just("answer"), st.text(min_size=1, max_size=3)),
        st.tuples(st.just("calls"), st.integers(1, 3)),
        st.tuples(st.just("results"), st.lists(st.booleans(), max_size=4)),
        st.tuples(st.just("compact"), st.floats(0, 1)),
        st.tuples(st.just("reopen"), st.none()),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(STEPS)
def test_any_history_stays_valid_and_reloads_identically(steps: list) -> None:
    with tempfile.TemporaryDirectory() as root:
        store = SessionStore(root, sync=False)
        session = store.create()
        last_calls: list[str] = []
        made = 0
        for kind, value in steps:
            if kind == "user":
                session.append(user(value))
            elif kind == "answer":
                session.append(answer(value))
            elif kind == "calls":
                last_calls = [f"t{made + i}" for i in range(value)]
                made += value
                blocks = [tool_uses(call(tool_id))[0] for tool_id in last_calls]
                session.append({"role": "assistant", "content": blocks})
            elif kind == "results":  # some answered, some forgotten, some unknown
                ids = [
                    t for t, keep in zip(last_calls + ["stray"] * 4, value, strict=False) if keep
                ]
                session.append(results(*ids))
            elif kind == "compact" and session.boundaries():
                cuts = session.boundaries()
                session.compact(cuts[int(value * (len(cuts) - 1))], user("Summary."))
            elif kind == "reopen":
                before = session.messages()
                session.close()
                session = store.open(session.id)
                assert session.messages() == before
            if session.messages():
                assert_valid_request(session.messages())
            assert_sizes_are_fresh(session)
        before = session.messages()
        session.close()
        with store.open(session.id) as reloaded:
            assert reloaded.messages() == before
            assert_sizes_are_fresh(reloaded)


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX's")
def test_sessions_are_readable_by_their_owner_alone_whatever_the_umask(tmp_path: Path) -> None:
    """On a shared server a session holds one learner's work: folder 0700, files 0600."""
    previous = os.umask(0)  # the most permissive: the modes are the code's own
    try:
        store = SessionStore(tmp_path / "sessions")
        with store.create() as session:
            session.append({"role": "user", "content": "my secret plan"})
            lock = session.path.with_suffix(".lock")
            assert mode_of(lock) == 0o600
    finally:
        os.umask(previous)
    assert mode_of(store.root) == 0o700
    assert mode_of(session.path) == 0o600


def mode_of(path: Path) -> int:
    return path.stat().st_mode & 0o777
