"""The check of chapter 1's exercise 6: the calls of one reply run side by side.

Three commands that each wait for the other two, which meet only if they run at once;
calls that depend on each other (a write, a read, a chain of edits of one file), which
must stay in order; and a Ctrl-C while two commands run, which must stop them and start
no later call.  The commands' numbers and the file's words are made fresh every time.
"""

from __future__ import annotations

import functools
import itertools
import os
import secrets
import shlex
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from random import Random
from typing import Any

from llm import Reply
from llm.result import INTERRUPTED
from llm.wrapper import Wrapper

from .check import (
    FINISH,
    Said,
    Verdict,
    calls,
    fresh_random,
    results,
    run_replies,
    text_of,
    tool_use,
)


def calls_at_once(words: list[str]) -> Verdict:
    """Three commands that each wait for the other two; calls that depend on each other;
    then a Ctrl-C while two commands run.  Each part must hold."""
    rng = fresh_random()
    parts = (commands_meet, dependent_calls_in_order, commands_after_writes)
    for part in (*parts, ctrl_c_stops_commands):
        verdict = part(rng)
        if not verdict.done:
            return verdict
    return Verdict(
        True,
        Said(
            "three commands ran at once, results in call order; a write and edits of one file "
            "stayed in order; Ctrl-C stopped the running commands and ran no later call",
            "三个命令同时运行，结果按调用顺序排列；写入和对同一文件的编辑保持了顺序；"
            "Ctrl-C 停下了正在运行的命令，后面的调用一个也没有运行",
        ),
    )


def commands_meet(rng: Random) -> Verdict:
    """Each command leaves a mark, waits up to 2 s for the marks of the other two, and then
    prints its own product, or "alone": only commands that run at once all meet.  The first
    finishes last, so results gathered as they come are out of order."""
    tag = secrets.token_hex(4)
    met = " && ".join(f"[ -e .{tag}-{n} ]" for n in range(3))
    factors = [(rng.randint(100, 999), rng.randint(100, 999)) for _ in range(3)]
    commands = [
        f"touch .{tag}-{n}; for i in $(seq 40); do {met} && break; sleep 0.05; done; "
        f"sleep 0.{4 - 2 * n}; {met} && echo $(({a} * {b})) || echo alone"
        for n, (a, b) in enumerate(factors)
    ]
    blocks = [tool_use(f"t{n}", "bash", {"command": c}) for n, c in enumerate(commands)]
    answers = results(run_replies("v1_tool_loop", calls(*blocks), FINISH))
    got = [text_of(answer) for answer in answers]
    expected = [str(a * b) for a, b in factors]
    seen = Said(
        f"three commands that each wait for the other two, printing {expected}, answered {got}",
        f"三个命令各自等待另外两个，应打印 {expected}，回答是 {got}",
    )
    if got == expected:
        return Verdict(True, seen)
    if sorted(got) == sorted(expected):
        hint = Said("keep the results in the order of the calls", "让结果保持调用的顺序")
    else:
        hint = Said(
            "the commands ran one after another: run the calls of one reply in a thread pool",
            "这些命令是一个接一个执行的：把同一条回复里的调用放进线程池执行",
        )
    return Verdict(False, seen, hint)


def dependent_calls_in_order(rng: Random) -> Verdict:
    """A command that writes a file after half a second, a read of it, then a chain of edits
    of that file, each needing the one before: run all at once, the read finds no file
    and the edits find no text."""
    words = [secrets.token_hex(3) for _ in range(rng.randint(4, 6))]
    name = f"{secrets.token_hex(3)}.txt"
    blocks = [tool_use("w", "bash", {"command": f"sleep 0.5; echo {words[0]} > {name}"})]
    blocks.append(tool_use("r1", "read_file", {"path": name}))
    blocks += [
        tool_use(f"e{n}", "edit_file", {"path": name, "old_text": old, "new_text": new})
        for n, (old, new) in enumerate(itertools.pairwise(words))
    ]
    blocks.append(tool_use("r2", "read_file", {"path": name}))
    answers = results(run_replies("v1_tool_loop", calls(*blocks), FINISH))
    wrong = [
        f"{block['name']} {text_of(answer)[:70]!r}"
        for block, answer in zip(blocks, answers, strict=False)
        if answer.get("is_error")
    ]
    read = [text_of(answers[1]), text_of(answers[-1])] if len(answers) == len(blocks) else []
    seen = Said(
        f"in one reply, a command writing {name}, a read of it, {len(words) - 1} edits each "
        f"needing the one before, a read: {'; '.join(wrong) or f'the reads gave {read}'}",
        f"同一条回复里：一个写 {name} 的命令、读它、{len(words) - 1} 次各依赖前一次的编辑、再读："
        f"{'；'.join(wrong) or f'两次读取得到 {read}'}",
    )
    if not wrong and read == [words[0], words[-1]]:
        return Verdict(True, seen)
    hint = Said(
        "run at once only calls that cannot affect each other: commands with commands, file "
        "calls that only read or touch different files; keep the others in order",
        "只让互不影响的调用同时运行：命令和命令一起，只读或涉及不同文件的文件调用一起；"
        "其余的保持顺序",
    )
    return Verdict(False, seen, hint)


LANDS_LATE: dict[str, float] = {}  # a file's name: seconds its write waits before it lands


@functools.cache  # an audit hook stays for the process: added once
def hook_late_writes() -> None:
    sys.addaudithook(_late)


def _late(event: str, args: tuple[Any, ...]) -> None:
    """An audit hook: the rename that puts a file named in LANDS_LATE in place waits first
    (write_file writes a temporary file, then renames it)."""
    if event == "os.rename" and LANDS_LATE and len(args) > 1 and isinstance(args[1], str | Path):
        time.sleep(LANDS_LATE.get(os.path.basename(os.fsdecode(args[1])), 0.0))


def commands_after_writes(rng: Random) -> Verdict:
    """A file written, then a command that counts its lines: a command may read any file,
    so it must wait for the write before it.  The write lands a second late, so a command
    run beside it always finds no file."""
    hook_late_writes()
    count, name = rng.randint(1_000, 5_000), f"{secrets.token_hex(3)}.txt"
    blocks = [
        tool_use("w", "write_file", {"path": name, "content": "x\n" * count}),
        tool_use("c", "bash", {"command": f"wc -l < {name}"}),
    ]
    LANDS_LATE[name] = 1.0
    try:
        answers = results(run_replies("v1_tool_loop", calls(*blocks), FINISH))
    finally:
        LANDS_LATE.pop(name)
    got = text_of(answers[-1]).strip() if len(answers) == len(blocks) else "no answer"
    seen = Said(
        f"in one reply, {name} written ({count} lines, landing a second late), then counted "
        f"by a command: it counted {got!r}",
        f"同一条回复里写了 {name}（{count} 行，晚一秒才落盘），然后由一个命令数行数："
        f"数出来的是 {got!r}",
    )
    if got == str(count):
        return Verdict(True, seen)
    hint = Said(
        "a command may read any file: never run it beside a file call, and keep it after "
        "the write before it",
        "命令可能读任何文件：不要让它和文件调用同时运行，要让它排在前面的写入之后",
    )
    return Verdict(False, seen, hint)


def ctrl_c_stops_commands(rng: Random) -> Verdict:
    """Two commands run side by side, a file call and a command after them, and Ctrl-C
    (SIGINT) comes twice: sent by the first command, as a terminal would, and at the worst
    moment, as the loop starts its first thread for a call.  Each time the run must end
    interrupted, every call answered, the two commands stopped and the later calls never
    run: none of them leaves its mark, even once the commands would have ended."""
    for sent in ("by the first command", "as the first thread starts"):
        verdict = ctrl_c_during_commands(sent)
        if not verdict.done:
            return verdict
    return verdict


class CtrlCAsAThreadStarts(Wrapper):
    """The model, and a Ctrl-C at the worst moment of the tool phase after its reply: just
    after the main thread starts its first thread to run a call.  A KeyboardInterrupt raised
    there comes out of the middle of starting the calls, which a `try` around the waiting
    for their results does not see; a terminal's Ctrl-C can come at that moment too."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.armed = False

    def after(self, reply: Reply, system: str, tools: Any) -> None:
        if reply.stop_reason != "tool_use" or self.armed:
            return
        self.armed = True
        start = threading.Thread.start

        def start_then_ctrl_c(thread: threading.Thread) -> None:
            start(thread)
            if threading.current_thread() is threading.main_thread():
                threading.Thread.start = start  # once: every later thread starts as usual
                signal.raise_signal(signal.SIGINT)

        threading.Thread.start = start_then_ctrl_c  # type: ignore[method-assign]


def ctrl_c_during_commands(sent: str) -> Verdict:
    """One run of two commands and two later calls, with a Ctrl-C sent as `sent` says."""
    start = threading.Thread.start  # put back whatever happens
    with tempfile.TemporaryDirectory() as marks:
        mark = {n: shlex.quote(os.path.join(marks, n)) for n in ("first", "second", "later")}
        by_command = sent == "by the first command"
        ctrl_c = f"kill -INT {os.getpid()}; " if by_command else ""  # this process: the loop's
        blocks = [
            tool_use("c1", "bash", {"command": f"{ctrl_c}sleep 1; touch {mark['first']}"}),
            tool_use("c2", "bash", {"command": f"sleep 1; touch {mark['second']}"}),
            tool_use("f3", "write_file", {"path": "after.txt", "content": "x"}),
            tool_use("c4", "bash", {"command": f"touch {mark['later']}"}),
        ]
        wrap = (lambda model: model) if by_command else CtrlCAsAThreadStarts
        started = time.monotonic()
        try:
            result = run_replies(
                "v1_tool_loop", calls(*blocks), FINISH, wrap=wrap, inside=Path(marks)
            )
            took = time.monotonic() - started
            time.sleep(max(0.0, started + 2 - time.monotonic()))  # past the commands' end
        except KeyboardInterrupt:
            seen = Said("Ctrl-C came out of the run", "Ctrl-C 从运行里漏了出来")
            hint = Said(
                "let the interrupt reach run's `except KeyboardInterrupt`",
                "让中断到达 run 的 `except KeyboardInterrupt`",
            )
            return Verdict(False, seen, hint)
        finally:
            threading.Thread.start = start  # type: ignore[method-assign]
        left = sorted(name for name in os.listdir(marks) if name in mark)
    answered = [text_of(answer) for answer in results(result)]
    zh_sent = "由第一个命令发出" if by_command else "在第一个线程启动时到来"
    seen = Said(
        f"Ctrl-C during two commands, sent {sent}: the run ended with `{result.stop}` after "
        f"{took:.1f} s, {len(answered)} of 4 calls answered, marks left "
        f"by {left or 'none'}",
        f"两个命令运行时按下 Ctrl-C（{zh_sent}）：运行在 {took:.1f} 秒后以 "
        f"`{result.stop}` 结束，4 个调用中 {len(answered)} 个有回答，留下记号的有 {left or '无'}",
    )
    if result.stop == "interrupted" and not left and answered[2:] == [INTERRUPTED] * 2:
        return Verdict(True, seen)
    hint = Said(
        "on Ctrl-C, stop the commands still running (stop_running_commands, in machine) "
        "and start no later call",
        "按下 Ctrl-C 时，停下仍在运行的命令（machine 里的 stop_running_commands），"
        "也不再开始后面的调用",
    )
    return Verdict(False, seen, hint)
