"""The checks of chapter 1's exercises: the tool loop, its tools and its cassettes."""

from __future__ import annotations

import importlib
import shutil
import tempfile
import time
from pathlib import Path

from llm.cassette import ReplayModel, read_cassette

from .check import (
    EXPLAIN,
    FINISH,
    Exercise,
    Said,
    Verdict,
    calls,
    named_file,
    results,
    run_chapter,
    run_replies,
    text_of,
    tool_use,
)


def list_dir_tool(words: list[str]) -> Verdict:
    listing = calls(tool_use("t1", "list_dir", {"path": "."}))
    answer = results(run_replies("v1_tool_loop", listing, FINISH))[0]
    shown = repr(text_of(answer)[:80])
    seen = Said(f"list_dir answered: {shown}", f"list_dir 的回答：{shown}")
    if not answer.get("is_error") and "stats.py" in text_of(answer):
        return Verdict(True, seen)
    hint = Said(
        "add its schema to TOOLS and its handler to HANDLERS in tools.py",
        "在 tools.py 里把它的 schema 加进 TOOLS，处理函数加进 HANDLERS",
    )
    return Verdict(False, seen, hint)


def strict_replay(words: list[str]) -> Verdict:
    path = named_file(words, Said("recording", "录制文件"), "1.4")
    header, entries = read_cassette(path)
    if header.get("provenance") != "recorded" or not all("request" in e for e in entries):
        kind = header.get("provenance", "not a recording")
        seen = Said(f"{path} is {kind}, without request digests", f"{path} 是 {kind}，没有请求摘要")
        hint = Said(
            "record it with --record FILE, live or on the fake provider",
            "用 --record FILE 录制，在线模型或假服务商都可以",
        )
        return Verdict(False, seen, hint)
    spec = importlib.import_module("v1_tool_loop.__main__").CHAPTER
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch) / "ws"
        shutil.copytree(spec.demo_workspace, workdir)
        model = ReplayModel(path, strict=True)
        result = spec.run(header.get("task", ""), model=model, workdir=workdir)
    seen = Said(
        f"the strict replay ended with `{result.stop}` {result.error}".strip(),
        f"严格回放以 `{result.stop}` 结束 {result.error}".strip(),
    )
    if result.stop == "done":
        return Verdict(True, seen)
    hint = Said(
        "record on a task whose tools print the same thing every time",
        "选一个工具每次输出都相同的任务来录制",
    )
    return Verdict(False, seen, hint)


def door_holds(words: list[str]) -> Verdict:
    result = run_chapter("v1_tool_loop", named_file(words, Said("cassette", "录像带"), "1.5"))
    refused = [block for block in results(result) if block.get("is_error")]
    seen = Said(
        f"{len(refused)} call(s) refused, and the run ended with `{result.stop}`",
        f"{len(refused)} 个调用被拒绝，运行以 `{result.stop}` 结束",
    )
    if len(refused) >= 3 and result.stop == "done":
        return Verdict(True, seen)
    hint = Said(
        "three bash calls (bad argument, sudo, timeout), then end_turn",
        "三个 bash 调用（错误的参数、sudo、超时），然后 end_turn",
    )
    return Verdict(False, seen, hint)


def calls_at_once(words: list[str]) -> Verdict:
    sleeps = [tool_use(f"t{n}", "bash", {"command": "sleep 1"}) for n in range(1, 4)]
    started = time.monotonic()
    result = run_replies("v1_tool_loop", calls(*sleeps), FINISH)
    took = time.monotonic() - started
    order = [block["tool_use_id"] for block in results(result)]
    seen = Said(
        f"three `sleep 1` calls took {took:.1f} s, results in the order {order}",
        f"三个 `sleep 1` 调用用了 {took:.1f} 秒，结果的顺序是 {order}",
    )
    if took < 2.5 and order == ["t1", "t2", "t3"]:
        return Verdict(True, seen)
    if order != ["t1", "t2", "t3"]:
        hint = Said("keep the results in the order of the calls", "让结果保持调用的顺序")
        return Verdict(False, seen, hint)
    hint = Said(
        "the calls ran one after another: run them in a thread pool",
        "这些调用是一个接一个执行的：放进线程池里执行",
    )
    return Verdict(False, seen, hint)


EXERCISES = {
    "1.1": Exercise(Said("Stop early", "提前停下"), unchecked=EXPLAIN),
    "1.2": Exercise(Said("Run a cassette dry", "把录像带放完"), unchecked=EXPLAIN),
    "1.3": Exercise(Said("Add a list_dir tool", "加一个 list_dir 工具"), list_dir_tool),
    "1.4": Exercise(Said("Record, then replay strictly", "先录制，再严格回放"), strict_replay),
    "1.5": Exercise(Said("Watch the door hold", "看看这个入口守不守得住"), door_holds),
    "1.6": Exercise(Said("Run independent calls at once", "同时执行互不相关的调用"), calls_at_once),
}
